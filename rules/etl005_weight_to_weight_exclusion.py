from etrace_lint.core.findings import Level
from etrace_lint.core.rule import RecordFacts, RecordRule
from etrace_lint.core.weight_verdict import WeightVerdict


def explain(f: RecordFacts) -> str:
    weight = f.weight_or_op
    through = " and ".join(f.blocking) or "another weight's op"
    if f.weight and any(b.startswith(f"{f.weight}'s op") for b in f.blocking) and f.where_in_scan():
        return (f"{weight}{f.where_in_scan()} reaches the hidden state only through its own use in a later "
                f"iteration, so the compiler excludes that use: {weight} learns online only from the last "
                f"iteration. Learn it by BPTT, or keep the scan out of the online step")
    return (f"{weight}{f.where_in_scan()} reaches a hidden state only through {through}, so the compiler "
            f"excludes {weight}: it will not learn online. Learn it by BPTT, or feed its output into the state "
            f"directly")


RULE = RecordRule(
    id="ETL005",
    name="weight-to-weight-exclusion",
    level=Level.WARNING,
    says=WeightVerdict.ZERO,
    summary=("A weight reaches its hidden state only through another trainable ETP op, so it is excluded "
             "from online learning"),
    tags=("compiler", "learning"),
    kinds=("relation_excluded_weight_to_weight",),
    explain=explain,
    flow="weight",
)
