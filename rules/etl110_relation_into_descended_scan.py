from etrace_lint.findings import Level
from etrace_lint.rule import ErrorMatch, Rule

RULE = Rule(
    id="ETL110",
    name="relation-into-descended-scan",
    level=Level.ERROR,
    summary="An ETP op outside a long scan targets a hidden state carried by the scan",
    tags=("compiler", "error"),
    error=ErrorMatch(types=("NotImplementedError",), pattern=r"outside a descended scan"),
)
