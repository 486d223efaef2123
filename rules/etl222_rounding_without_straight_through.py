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
class RoundingWithoutStraightThrough(NamesHiddenStates):
    """A weight whose every path to the step's output crosses a rounding written without a straight-through
    estimator (``jnp.round``, ``jnp.floor``, ``jnp.ceil``, ``jnp.trunc``)."""

    weight: str
    hidden_states: tuple[str, ...]  # the hidden states it reaches whose values reach the output only rounded
    rounding: str  # the function as the user called it: 'jnp.round', 'jnp.floor', 'jnp.ceil', 'jnp.trunc'
    rounding_count: int  # such roundings the weight meets first: this line's and the others'

    def message(self) -> str:
        weight, rounding = self.weight, self.rounding
        if self.hidden_states:
            one = len(self.hidden_states) == 1
            route = (f"{weight} reaches the step's output only through {joined(self.hidden_states)}, whose "
                     f"value{'' if one else 's'} reach{'es' if one else ''} it only through")
            value = self.hidden_states[0]
        else:
            route = f"{weight} reaches the step's output only through"
            value = weight
        others = self.rounding_count - 1
        where = "on this line" if others == 0 else f"on this line and {others} other{'s' if others > 1 else ''}"
        return (f"{route} `{rounding}` ({where}), whose derivative is zero everywhere: no gradient passes back "
                f"through it, so {weight} gets none, online or by BPTT, and keeps its initial value: to keep the "
                f"rounding in the forward pass and train {weight}, round {value} with a straight-through estimator, "
                f"`x + jax.lax.stop_gradient({rounding}(x) - x)`")

    def properties(self) -> JsonObject:
        # its weight and hidden states are the subject: the writers print them
        return {"rounding": self.rounding, "roundingCount": self.rounding_count}


def check(context: AnalysisContext) -> Iterator[Hit[RoundingWithoutStraightThrough]]:
    for cut in context.rounding_cuts:
        if cut.read_through:
            continue  # an ETP op braintrace reads it through still gives it an online gradient: not a zero
        violation = RoundingWithoutStraightThrough(display_name(cut.weight), tuple(display_name(h) for h in cut.hidden),
                                                   cut.rounding.function, cut.rounding_count)
        yield Hit(violation, weight_path=cut.weight, eqn=cut.rounding.site,
                  related=(("weight created here", cut.weight),))


RULE = AnalysisRule(
    id="ETL222",
    name="rounding-without-straight-through",
    level=Level.WARNING,
    summary="A weight reaches the step's output only through jnp.round, jnp.floor, jnp.ceil or jnp.trunc, whose "
            "derivative is zero, with no straight-through estimator, so no gradient reaches it, online or by BPTT",
    tags=("learning", "analysis"),
    says=WeightVerdict.ZERO,
    # the compiler's "learns online" of the ETP ops before a rounded output, the same-step gradient of a rounded
    # readout, and a multi-step VJP's plain path: none of them passes the rounding
    supersedes=("ETL001", "ETL003", "ETL213"),
    blocker=Blocker("rounded without a straight-through estimator"),
    violations=(RoundingWithoutStraightThrough,),
    check=check,
)
