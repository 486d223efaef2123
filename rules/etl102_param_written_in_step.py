from __future__ import annotations

import re
from typing import TYPE_CHECKING

from etrace_lint.core.findings import Level
from etrace_lint.core.rule import ErrorMatch, ErrorRule

if TYPE_CHECKING:  # the adapter imports JAX and braintrace: annotations only
    from etrace_lint.analysis.braintrace_adapter import Compilation
    from etrace_lint.analysis.jaxpr_view import SourceFrame


def describe(exc: BaseException, compilation: Compilation) -> tuple[str, SourceFrame | None]:
    """One message for both braintrace lines (their texts differ)."""
    named = re.search(r"ParamState (\S.*?) is written", str(exc))
    which = f"ParamState {named.group(1)}" if named else "a ParamState"
    return (f"{which} is written inside the online step; parameters must stay constant within a step "
            f"(update them outside the step from the gradients)", None)

RULE = ErrorRule(
    id="ETL102",
    name="param-written-in-step",
    level=Level.ERROR,
    summary="A ParamState is written inside the online step",
    tags=("compiler", "error"),
    describe=describe,
    error=ErrorMatch(types=("NotSupportedError",), pattern=r"written inside the online step|is rewritten in the model",
                     at_write="param"),
)
