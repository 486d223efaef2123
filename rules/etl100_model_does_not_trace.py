from __future__ import annotations

from typing import TYPE_CHECKING

from etrace_lint.core.findings import Level
from etrace_lint.core.rule import ErrorMatch, ErrorRule
from etrace_lint.core.wording import error_sentence

if TYPE_CHECKING:  # the adapter imports JAX and braintrace: annotations only
    from etrace_lint.analysis.braintrace_adapter import Compilation
    from etrace_lint.analysis.jaxpr_view import SourceFrame


def describe(exc: BaseException, compilation: Compilation) -> tuple[str, SourceFrame | None]:
    """The exception's first sentence, and the example inputs the step was traced with: a shape or
    dtype error is almost always a mismatch between the two."""
    shown = compilation.inputs_shown
    given = f" with the example inputs {shown}" if shown else " with the example inputs"
    return f"the step does not trace{given}: {error_sentence(exc)}", None


RULE = ErrorRule(
    id="ETL100",
    name="model-does-not-trace",
    level=Level.ERROR,
    summary="The model's step cannot be traced with the target's example inputs",
    tags=("compiler", "error"),
    error=ErrorMatch(types=("Exception",), origin="user"),
    describe=describe,
)
