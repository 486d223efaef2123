from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator

from etrace_lint.core.details import NamesHiddenStates
from etrace_lint.core.findings import Level
from etrace_lint.core.json_types import JsonObject
from etrace_lint.core.naming import display_name, joined
from etrace_lint.core.rule import AnalysisRule, Blocker, Hit
from etrace_lint.core.weight_verdict import WeightVerdict

if TYPE_CHECKING:  # the analysis imports JAX and braintrace: annotations only
    from etrace_lint.analysis.context import AnalysisContext


@dataclass(frozen=True)
class HardSpikeWithoutSurrogate(NamesHiddenStates):
    """A weight whose hidden states reach the step's output only through a hard threshold (a spike with no
    surrogate gradient)."""

    weight: str
    hidden_states: tuple[str, ...]
    threshold: str  # the threshold as the user wrote it: '>', 'jnp.heaviside'

    def message(self) -> str:
        weight, hidden = self.weight, joined(self.hidden_states)
        their = "its" if len(self.hidden_states) == 1 else "their"
        return (f"{weight} gets no gradient, online or by BPTT: {hidden} reach{'es' if their == 'its' else ''} "
                f"the step's output only through this hard threshold (`{self.threshold}`), a spike without a "
                f"surrogate gradient, whose derivative is zero wherever it is defined, so {their} learning signal "
                f"is zero and {weight} keeps its initial value: give the spike a surrogate gradient "
                f"(braintools.surrogate.sigmoid(v - threshold), or another function of braintools.surrogate)")

    def properties(self) -> JsonObject:
        return {"threshold": self.threshold}  # its weight and hidden states are the subject: the writers print them


def check(context: AnalysisContext) -> Iterator[Hit[HardSpikeWithoutSurrogate]]:
    for cut in context.hard_threshold_cuts:
        if cut.read_through:
            continue  # an ETP op braintrace reads it through still gives it an online gradient: not a zero
        violation = HardSpikeWithoutSurrogate(display_name(cut.weight), tuple(display_name(h) for h in cut.hidden),
                                              cut.threshold)
        yield Hit(violation, weight_path=cut.weight, eqn=cut.site, related=(("weight created here", cut.weight),))


RULE = AnalysisRule(
    id="ETL216",
    name="hard-spike-without-surrogate",
    level=Level.WARNING,
    summary="A weight's hidden states reach the step's output only through a hard threshold, a spike without a "
            "surrogate gradient, so no gradient reaches the weight, online or by BPTT",
    tags=("learning", "analysis"),
    says=WeightVerdict.ZERO,
    # the compiler's "learns online" of the ETP op that drives the spiking layer; a plain op's within a window
    supersedes=("ETL001", "ETL213"),
    blocker=Blocker("hard threshold without a surrogate gradient"),
    violations=(HardSpikeWithoutSurrogate,),
    check=check,
)
