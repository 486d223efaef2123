from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator

from etrace_lint.core.details import NamesHiddenStates, NamesWeights
from etrace_lint.core.findings import Level
from etrace_lint.core.json_types import JsonObject
from etrace_lint.core.naming import StatePath, display_name
from etrace_lint.core.rule import AnalysisRule, Hit
from etrace_lint.core.weight_verdict import WeightVerdict

if TYPE_CHECKING:  # the analysis imports JAX and braintrace: annotations only
    from etrace_lint.analysis.context import AnalysisContext


@dataclass(frozen=True)
class NoEtpRelation(NamesWeights, NamesHiddenStates):
    """No weight is connected to a hidden state by an ETP op: braintrace.compile refuses the model."""

    weight_count: int  # the model's ParamStates
    hidden_state_count: int  # its hidden states
    braintrace_version: str
    same_step_gradients: bool  # this braintrace gives an unconnected weight its same-step gradient
    carried: tuple[str, ...]  # the first states the compiler does not follow that carry values across steps
    carried_count: int  # how many there are
    carried_kinds: tuple[str, ...]  # their kinds, sorted
    weights: tuple[str, ...] = ()  # the model's ParamStates, none of which learns online
    hidden_states: tuple[str, ...] = ()  # its hidden states, which no ETP op drives
    multi_step: bool = False  # the target's learner takes a multi-step VJP
    decomposed: tuple[str, ...] = ()  # the ETP primitives braintrace warned vmap decomposed into plain ops

    def message(self) -> str:
        refused = "braintrace.compile refuses this model ('No trainable weights are routed through ETP ops')"
        carried = ", ".join(self.carried)
        count = self.weight_count
        if not count:
            message = f"{refused}: it has no ParamState at all, so nothing learns online"
        else:
            plural = "s" if count != 1 else ""
            message = (f"{refused}: none of its {count} ParamState{plural} is connected to a hidden state through "
                       f"an ETP op, so none has an eligibility trace")
            learner = "a learner built from its class (braintrace.D_RTRL(model))"
            if self.multi_step:
                message += (f"; {learner} with vjp_method='multi-step' learns each weight's plain paths within "
                            f"each window of steps only (ETL213), with nothing carried from one window to the next")
            elif not self.same_step_gradients:
                message += (f", and on braintrace {self.braintrace_version} {learner} gives every weight a zero "
                            f"gradient: nothing learns online")
            elif self.carried_count:
                message += (f"; {learner} gives each weight its same-step gradient only, which ignores what "
                            f"{carried} carries to later steps")
            else:
                message += f"; {learner} gives each weight its same-step gradient only"
        if self.decomposed:
            ops = ", ".join(f"`{op}`" for op in self.decomposed)
            message += (f"; braintrace warned that a vmap decomposed its {ops} op into plain JAX ops (the vmap maps "
                        f"the weight too), so the compiler finds no ETP op to connect: call the op on the batched "
                        f"input directly, or vmap over the data input only")
        if not self.hidden_state_count:
            if self.carried_count:
                message += (f"; it has no brainstate.HiddenState: what it carries from step to step is kept in "
                            f"{carried} ({', '.join(self.carried_kinds)}), which the compiler does not follow: make "
                            f"{'it' if self.carried_count == 1 else 'them'} brainstate.HiddenState")
            else:
                message += "; it has no brainstate.HiddenState, so there is nothing for an eligibility trace to follow"
        return message

    def properties(self) -> JsonObject:
        return {"weightCount": self.weight_count, "hiddenStateCount": self.hidden_state_count}


def check(context: AnalysisContext) -> Iterator[Hit[NoEtpRelation]]:
    if context.learning_weights:
        return
    # a compiler record that excludes a weight (ETL004, ETL005, ...) explains that weight, not that
    # braintrace.compile refuses the whole model: on a braintrace that adds same-step gradients the other
    # weights would read "learns" where braintrace.compile raises.
    # ETL201 / ETL202 / ETL203 / ETL206 say on its line why a weight does not learn; where they say it of every
    # weight, the refusal follows from theirs. A weight none of them names would read as learning (ETL003's
    # same-step gradient, ETL213's window) where braintrace.compile refuses the model: a Conv1d under a vmap
    # whose warning came from a pass the step keeps no decomposition of
    if context.weight_paths and set(context.weight_paths) <= _explained_weights(context):
        return
    kept = context.untraced_states
    hidden = tuple(dict.fromkeys(context.hidden_outvars.values()))
    violation = NoEtpRelation(len(context.weight_paths), len(hidden), context.braintrace_version,
                              context.adds_same_step_gradients, tuple(display_name(s.path) for s in kept[:3]),
                              len(kept), tuple(sorted({s.kind for s in kept})),
                              tuple(display_name(w) for w in context.weight_paths),
                              tuple(display_name(h) for h in hidden), not context.single_step_vjp,
                              tuple(sorted(context.vmap_decomposed_ops)))
    yield Hit(violation, state_path=kept[0].path if kept else None)


def _explained_weights(context: AnalysisContext) -> set[StatePath]:
    """The weights ETL201 (under a single-step VJP; under a multi-step one, ETL213's note says they learn within
    each window), ETL202, ETL203 and ETL206 each name on a line of their own as not learning online."""
    named: set[StatePath] = set()
    if context.single_step_vjp:
        named.update(use.weight for use in context.first_plain_uses)
    named.update(use.weight for use in context.first_decomposed_uses)
    named.update(use.weight for use in context.first_buffered_uses)
    for site in context.flow.etp_sites:
        if context.opaque_transform_of(site) is not None and not context.is_connected(site):
            named.update(context.flow.weights_read_by(site))
    return named


RULE = AnalysisRule(
    id="ETL204",
    name="no-etp-relation",
    level=Level.WARNING,
    says=WeightVerdict.REFUSED,
    summary="No weight is connected to a hidden state by an ETP op, so braintrace.compile refuses the model and "
            "nothing learns online",
    tags=("learning", "analysis"),
    violations=(NoEtpRelation,),
    check=check,
)
