from etrace_lint.core.findings import Level
from etrace_lint.core.rule import Rule


def explain(facts):
    """AdviceFacts: the configured algorithm's error, and an algorithm that runs."""
    return (f"{facts.algorithm}, the algorithm configured for this model, {facts.stage}: {facts.error}; "
            f"{facts.alternative} runs on it")


RULE = Rule(
    id="ETL302",
    name="configured-algorithm-does-not-run",
    level=Level.ERROR,
    summary="Advice: the configured online-learning algorithm does not compile or its first step raises, "
            "while another runs",
    tags=("advice", "algorithm"),
    explain=explain,
    explains_weight=False,
    opt_in_flag="--advise",
)
