import re

from etrace_lint.core.findings import Level
from etrace_lint.core.rule import RecordFacts, RecordRule


def explain(f: RecordFacts) -> str:
    hidden = ", ".join(f.hidden) or "a hidden group"
    n = f.context.get("sparse_n")
    snap = f"SnAp-{n}" if n else "SnAp-n"
    op = re.search(r"equation '(\w+)'|rule of '(\w+)'", f.text)
    what = f"this `{op.group(1) or op.group(2)}` may mix positions" if op else "an op may mix positions"
    return (f"{snap} could not work out which units of {hidden} interact ({what}), so it tracks all of them: "
            f"learning is not degraded, but the trace is as large as the coupled rule's")


RULE = RecordRule(
    id="ETL025",
    name="snap-pattern-conservative",
    level=Level.NOTE,
    summary="The SnAp-n neighbourhood could not be derived and widened to all-to-all",
    tags=('compiler', 'approximation'),
    kinds=("snap_pattern_conservative",),
    explain=explain,
)
