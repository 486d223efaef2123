from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from etrace_lint.core.details import RuleFacts
from etrace_lint.core.findings import Level
from etrace_lint.core.rule import AnalysisRule, Hit

if TYPE_CHECKING:  # the analysis imports JAX and braintrace: annotations only
    from etrace_lint.analysis.context import AnalysisContext


def check(context: AnalysisContext) -> Iterator[Hit]:
    from etrace_lint.analysis.zero_gradients import while_cut_uses
    from etrace_lint.core.naming import display_name, display_names

    for use in while_cut_uses(context):
        weight, hidden = display_name(use.weight), display_names(use.hidden)
        their = "its" if len(use.hidden) == 1 else "their"
        produced = display_names(use.loop_hidden) if use.loop_hidden else "a hidden state"
        where = ""
        loop, op = context.locator.of_site(use.loop), context.locator.of_site(use.site) if use.site else None
        if loop is not None and (op is None or loop.line != op.line):
            where = f" on line {loop.line}"
        message = (f"{weight} gets no online gradient although the compiler connects it to {hidden}: the step's "
                   f"output reads {their} new value only through the `while` loop{where} that computes {produced}, "
                   f"and braintrace detaches that loop's inputs in the step it differentiates (JAX cannot reverse a "
                   f"`while`), so {hidden}'s learning signal is exactly zero on every step; BPTT's is not: give the "
                   f"loop a fixed trip count (a Python `for`, or `jax.lax.fori_loop` with constant bounds, which "
                   f"braintrace unrolls), or read {hidden} in the output around the loop")
        related = [("weight created here", use.weight), ("the learning signal is cut at this loop", use.loop)]
        yield Hit(message=message, weight_path=use.weight, eqn=use.site, related=tuple(related),
                  facts=RuleFacts(hidden_states=tuple(display_name(h) for h in use.hidden), vjp_method="single-step"))


RULE = AnalysisRule(
    id="ETL212",
    name="learning-signal-crosses-while",
    level=Level.WARNING,
    summary="A connected weight's hidden states reach the step's output only through a hidden-producing while "
            "loop, whose inputs braintrace detaches, so its online gradient is exactly zero",
    tags=("learning", "analysis", "control-flow"),
    check=check,
    supersedes=("ETL001",),
    claims_zero_gradient=True,
)
