from etrace_lint.core.findings import Level
from etrace_lint.core.rule import SuppressionRule, UnusedSuppression
from etrace_lint.fixes.suppression import remove_suppression_fix


def explain(facts: UnusedSuppression) -> str:
    """An UnusedSuppression: which codes report nothing there, which name no rule."""
    where = "in this file" if facts.form == "file-ignore" else "on this line"
    reasons = ([f"{', '.join(facts.idle)} reports nothing {where}"] if facts.idle else []) + (
        [f"{', '.join(facts.unknown)} is not a rule of etrace-lint"] if facts.unknown else [])
    return f"unused suppression: {'; '.join(reasons)}"

RULE = SuppressionRule(
    id="ETL301",
    name="unused-suppression",
    level=Level.WARNING,
    summary="A suppression comment names a rule that reports nothing on its line",
    tags=("housekeeping",),
    explain=explain,
    fix=remove_suppression_fix,
)
