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
class LearningSignalCrossesWhile(NamesHiddenStates):
    """A connected weight's hidden states reach the step's output only through a `while` loop."""

    weight: str
    hidden_states: tuple[str, ...]
    loop_hidden: tuple[str, ...]  # what the loop computes, when it computes hidden states
    loop_line: int | None  # the loop's line, when it is not the op's own
    vjp_method: str = "single-step"

    def message(self) -> str:
        weight, hidden = self.weight, joined(self.hidden_states)
        their = "its" if len(self.hidden_states) == 1 else "their"
        produced = joined(self.loop_hidden) if self.loop_hidden else "a hidden state"
        where = f" on line {self.loop_line}" if self.loop_line is not None else ""
        return (f"{weight} gets no online gradient although the compiler connects it to {hidden}: the step's "
                f"output reads {their} new value only through the `while` loop{where} that computes {produced}, "
                f"and braintrace detaches that loop's inputs in the step it differentiates (JAX cannot reverse a "
                f"`while`), so {hidden}'s learning signal is exactly zero on every step; BPTT's is not: give the "
                f"loop a fixed trip count (a Python `for`, or `jax.lax.fori_loop` with constant bounds, which "
                f"braintrace unrolls), or read {hidden} in the output around the loop")

    @property
    def about_hidden_states(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(self.hidden_states + self.loop_hidden))

    def properties(self) -> JsonObject:
        return {"vjpMethod": self.vjp_method}


def check(context: AnalysisContext) -> Iterator[Hit[LearningSignalCrossesWhile]]:
    for use in context.while_cut_uses:
        line = None
        loop, op = context.locator.of_site(use.loop), context.locator.of_site(use.site) if use.site else None
        if loop is not None and (op is None or loop.line != op.line):
            line = loop.line
        related = [("weight created here", use.weight), ("the learning signal is cut at this loop", use.loop)]
        violation = LearningSignalCrossesWhile(display_name(use.weight), tuple(display_name(h) for h in use.hidden),
                                               tuple(display_name(h) for h in use.loop_hidden), line)
        yield Hit(violation, weight_path=use.weight, eqn=use.site, related=tuple(related))


RULE = AnalysisRule(
    id="ETL212",
    name="learning-signal-crosses-while",
    level=Level.WARNING,
    says=WeightVerdict.ZERO,
    blocker=Blocker("while loop cuts the learning signal", at="the learning signal is cut at this loop"),
    summary="A connected weight's hidden states reach the step's output only through a hidden-producing while "
            "loop, whose inputs braintrace detaches, so its online gradient is exactly zero",
    tags=("learning", "analysis", "control-flow"),
    violations=(LearningSignalCrossesWhile,),
    check=check,
    supersedes=("ETL001",),
    claims_zero_gradient=True,
)
