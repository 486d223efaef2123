from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator

from etrace_lint.core.details import NamesHiddenStates
from etrace_lint.core.findings import Level
from etrace_lint.core.json_types import JsonObject
from etrace_lint.core.naming import display_name, joined
from etrace_lint.core.rule import AnalysisRule, Hit
from etrace_lint.core.weight_verdict import WeightVerdict

if TYPE_CHECKING:  # the analysis imports JAX and braintrace: annotations only
    from etrace_lint.analysis.context import AnalysisContext


@dataclass(frozen=True)
class WeightThroughBuffer(NamesHiddenStates):
    """A weight's op output is kept in a state the compiler carries no trace through, read next step."""

    weight: str
    state: str  # the state that keeps the op's output
    state_kind: str  # its kind
    hidden_states: tuple[str, ...]  # the hidden states that read it in the next step

    def message(self) -> str:
        weight, buffer, kind, hidden = self.weight, self.state, self.state_kind, joined(self.hidden_states)
        readers = "reads" if len(self.hidden_states) == 1 else "read"
        return (f"{weight}'s op output is stored in {buffer}, a {kind}, which {hidden} {readers} only "
                f"in the next step; the compiler does not carry eligibility traces through a "
                f"{kind}, so {weight} gets no online gradient through {hidden}: keep that value in "
                f"a brainstate.HiddenState, or feed the op's output into the update of {hidden} in the same "
                f"step")

    def properties(self) -> JsonObject:
        return {"state": self.state, "stateKind": self.state_kind}


def check(context: AnalysisContext) -> Iterator[Hit[WeightThroughBuffer]]:
    for use in context.first_buffered_uses:
        buffer = display_name(use.buffer)
        violation = WeightThroughBuffer(display_name(use.weight), buffer, use.buffer_kind,
                                        tuple(display_name(h) for h in use.hidden))
        yield Hit(violation, weight_path=use.weight, eqn=use.site,
                  related=(("weight created here", use.weight), (f"{buffer} created here", use.buffer)))


RULE = AnalysisRule(
    id="ETL206",
    name="weight-through-untraced-state",
    level=Level.WARNING,
    says=WeightVerdict.ZERO,
    summary="A weight's ETP op output is stored in a state the compiler does not follow (not a HiddenState) "
            "before it reaches a hidden state, so the weight gets no online gradient",
    tags=("learning", "analysis"),
    violations=(WeightThroughBuffer,),
    check=check,
    flow="weight",
)
