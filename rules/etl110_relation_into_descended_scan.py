from __future__ import annotations

from typing import TYPE_CHECKING

from etrace_lint.core.findings import Level
from etrace_lint.core.rule import ErrorMatch, ErrorRule

if TYPE_CHECKING:  # the adapter imports JAX and braintrace: annotations only
    from etrace_lint.analysis.braintrace_adapter import Compilation
    from etrace_lint.analysis.jaxpr_view import SourceFrame


def describe(exc: BaseException, compilation: Compilation) -> tuple[str, SourceFrame | None]:
    return ("an ETP op outside a long scan drives a hidden state that the scan carries, which structured "
            "descent does not support, so the model cannot be compiled; move the op into the scan body, or "
            "set ControlFlowPolicy(scan_descent='off')"), None


RULE = ErrorRule(
    id="ETL110",
    name="relation-into-descended-scan",
    level=Level.ERROR,
    summary="An ETP op outside a long scan targets a hidden state carried by the scan",
    tags=("compiler", "error"),
    describe=describe,
    error=ErrorMatch(types=("NotImplementedError",), pattern=r"outside a descended scan"),
)
