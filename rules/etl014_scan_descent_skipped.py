from etrace_lint.core.findings import Level
from etrace_lint.core.rule import RecordFacts, RecordRule


def explain(f: RecordFacts) -> str:
    text = f.text
    reason = text.split(": ", 1)[1] if ": " in text else text
    reason = reason.split(". ")[0].rstrip(".")
    hidden = ", ".join(f.hidden) or "a hidden state"
    return (f"this long scan carrying {hidden} cannot be handled by structured descent ({reason}); it stays "
            f"opaque, so weights used inside it cannot learn online. Move the update before the scan into its "
            f"body, or set ControlFlowPolicy(scan_descent='off')")


RULE = RecordRule(
    id="ETL014",
    name="scan-descent-skipped",
    level=Level.WARNING,
    summary="Structured descent could not be applied to a long scan; the control-flow restrictions apply",
    tags=('compiler', 'control-flow'),
    kinds=("scan_descent_skipped",),
    control_flow="scan",  # its records name no equation: the nth `scan` of the step
    explain=explain,
)
