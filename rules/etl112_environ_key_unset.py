from __future__ import annotations

from typing import TYPE_CHECKING

from etrace_lint.config.environ import how_to_set, unset_key
from etrace_lint.core.findings import Level
from etrace_lint.core.rule import ErrorMatch, ErrorRule

if TYPE_CHECKING:  # the adapter imports JAX and braintrace: annotations only
    from etrace_lint.analysis.braintrace_adapter import Compilation
    from etrace_lint.analysis.jaxpr_view import SourceFrame


def describe(exc: BaseException, compilation: Compilation) -> tuple[str, SourceFrame | None]:
    """Name the key and the three ways to set it; the line is the user's read of the key."""
    key = unset_key(exc) or "?"
    return f"the model reads brainstate.environ key {key!r}, which is not set; {how_to_set(key)}", None


RULE = ErrorRule(
    id="ETL112",
    name="environ-key-unset",
    level=Level.ERROR,
    summary="The model reads a brainstate.environ key (such as dt) that is not set while it is traced",
    tags=("compiler", "error", "environ"),
    error=ErrorMatch(types=("KeyError",), pattern=r"Key '[^']+' not found in environment"),
    describe=describe,
)
