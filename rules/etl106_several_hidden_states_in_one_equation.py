from __future__ import annotations

from typing import TYPE_CHECKING

from etrace_lint.core.findings import Level
from etrace_lint.core.rule import ErrorMatch, ErrorRule

if TYPE_CHECKING:  # the adapter imports JAX and braintrace: annotations only
    from etrace_lint.analysis.braintrace_adapter import Compilation
    from etrace_lint.analysis.jaxpr_view import SourceFrame


def describe(exc: BaseException, compilation: Compilation) -> tuple[str, SourceFrame | None]:
    return ("one operation here reads two hidden states, and the compiler follows one hidden state per "
            "operation, so the model cannot be compiled; compute each state's contribution in an operation "
            "of its own"), None


RULE = ErrorRule(
    id="ETL106",
    name="several-hidden-states-in-one-equation",
    level=Level.ERROR,
    summary="One equation consumes two hidden states; the compiler supports one",
    tags=("compiler", "error"),
    describe=describe,
    error=ErrorMatch(types=("ValueError",), pattern=r"only support one hidden state in a single equation"),
)
