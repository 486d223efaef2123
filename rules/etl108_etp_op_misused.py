from __future__ import annotations

from typing import TYPE_CHECKING

from etrace_lint.core.findings import Level
from etrace_lint.core.rule import ErrorMatch, ErrorRule
from etrace_lint.core.wording import error_sentence

if TYPE_CHECKING:  # the adapter imports JAX and braintrace: annotations only
    from etrace_lint.analysis.braintrace_adapter import Compilation
    from etrace_lint.analysis.jaxpr_view import SourceFrame


def describe(exc: BaseException, compilation: Compilation) -> tuple[str, SourceFrame | None]:
    return f"an ETP op on this line is called with arguments it does not accept: {error_sentence(exc)}", None


RULE = ErrorRule(
    id="ETL108",
    name="etp-op-misused",
    level=Level.ERROR,
    summary="An ETP op was called with arguments it does not accept",
    tags=("compiler", "error"),
    describe=describe,
    error=ErrorMatch(types=("Exception",), origin="braintrace._op"),
)
