from etrace_lint.core.findings import Level
from etrace_lint.core.rule import MeasuredRule, ProbeFacts
from etrace_lint.core.weight_verdict import WeightVerdict


def explain(p: ProbeFacts) -> str:
    where = ("at the first step, where it must equal BPTT's, its online gradient" if p.steps == 1 else
             f"measured over {p.steps} steps, its online gradient")
    return (f"{p.weight} learns against BPTT under {p.algorithm}: {where} points the opposite way to its BPTT "
            f"gradient, cosine {p.draws}; the weight as a whole, its other leaves beside it, does not point against "
            f"BPTT's on every draw by more than the 0.1 within which a direction is as good as orthogonal, cosine "
            f"{p.weight_draws}, so it learns approximately, and each online update moves this part of it where "
            f"BPTT would not")


RULE = MeasuredRule(
    id="ETL423",
    name="probe-leaf-learns-against-bptt",
    level=Level.WARNING,
    summary=("Probe: one leaf of a weight (a LoRA's lora_a, a layer's bias) points against its BPTT gradient on "
             "every input draw while the weight as a whole does not: the weight learns approximately"),
    tags=("probe", "gradient", "learning"),
    opt_in_flag="--probe",
    explain=explain,
    says=WeightVerdict.APPROXIMATE,
    direction=True,
)
