from __future__ import annotations

import re
from typing import TYPE_CHECKING

from etrace_lint.core.findings import Level
from etrace_lint.core.rule import ErrorMatch, ErrorRule

if TYPE_CHECKING:  # the adapter imports JAX and braintrace: annotations only
    from etrace_lint.analysis.braintrace_adapter import Compilation
    from etrace_lint.analysis.jaxpr_view import SourceFrame


def describe(exc: BaseException, compilation: Compilation) -> tuple[str, SourceFrame | None]:
    limit = re.search(r"within (\d+) sweeps?", str(exc))
    within = f" within {limit.group(1)} sweep{'s' if limit.group(1) != '1' else ''}" if limit else ""
    return (f"the compiler's flattening of loops and branches did not settle{within}, so the model cannot be "
            f"compiled; raise ControlFlowPolicy(fixpoint_iteration_limit=...) in the compile options, or nest "
            f"fewer loops and branches here"), None


RULE = ErrorRule(
    id="ETL107",
    name="control-flow-not-converging",
    level=Level.ERROR,
    summary="Control-flow canonicalisation did not converge",
    tags=("compiler", "error"),
    describe=describe,
    error=ErrorMatch(types=("CompilationError",), pattern=r"did not reach a fixpoint"),
)
