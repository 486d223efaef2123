from etrace_lint.findings import Level
from etrace_lint.rule import ErrorMatch, Rule

RULE = Rule(
    id="ETL107",
    name="control-flow-not-converging",
    level=Level.ERROR,
    summary="Control-flow canonicalisation did not converge",
    tags=("compiler", "error"),
    error=ErrorMatch(types=("CompilationError",), pattern=r"did not reach a fixpoint"),
)
