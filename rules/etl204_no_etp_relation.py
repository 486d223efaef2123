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
    inputs_only: bool = False  # that vmap mapped only the ops' data inputs: the ops have no batched form

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
            if self.inputs_only:
                message += (f"; braintrace warned that a vmap over the input of its {ops} op decomposed it into plain "
                            f"JAX ops (braintrace has no batched form of that op), so the compiler finds no ETP op "
                            f"to connect: call the op on the batched input directly, without the vmap")
            else:
                message += (f"; braintrace warned that a vmap decomposed its {ops} op into plain JAX ops (the vmap "
                            f"maps the weight too), so the compiler finds no ETP op to connect: call the op on the "
                            f"batched input directly, or vmap over the data input only")
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


@dataclass(frozen=True)
class LearnerRefusesOutputShape(NamesWeights, NamesHiddenStates):
    """The learner of an algorithm the target names cannot size an eligibility trace from an ETP op's output:
    braintrace.compile, and the learner's compile_graph, raise for the model."""

    algorithm: str  # braintrace's class: pp_prop
    named: str  # as the target names it: es_d_rtrl
    weight: str  # the op's weight
    primitive: str
    output_shape: tuple[int, ...]
    state: str  # the first hidden state of the op's group
    state_shape: tuple[int, ...]
    text: str  # braintrace's words
    weights: tuple[str, ...] = ()  # the model's ParamStates, none of which the learner trains
    hidden_states: tuple[str, ...] = ()  # the op's hidden group

    def message(self) -> str:
        called = (f"braintrace.compile(model, {self.named!r}, ...) refuses this model, as "
                  f"braintrace.{self.algorithm}(model).compile_graph(...) does")
        extra = len(self.output_shape) - len(self.state_shape)
        squeezed = extra > 0 and self.output_shape[extra:] == self.state_shape and set(self.output_shape[:extra]) == {1}
        cause = (f": {self.algorithm} keeps an eligibility trace per ETP op output of its hidden state's shape, and "
                 f"{self.weight}'s `{self.primitive}` op gives {self.output_shape} where {self.state} is "
                 f"{self.state_shape} ({self.text}); the compiler connects them, as they broadcast, but no "
                 f"{self.algorithm} learner can be built, so no weight of the model learns online under it")
        if squeezed:
            fix = (f"; the op's output has {'an axis' if extra == 1 else 'axes'} of size 1 more than {self.state} "
                   f"(a vmap over a batch of one, x[None] ... [0], say): apply the op to the unbatched value, or "
                   f"train with D-RTRL, whose traces take the weight's shape")
        else:
            fix = (f"; give the op's output {self.state}'s shape {self.state_shape}, or train with D-RTRL, whose "
                   f"traces take the weight's shape")
        return called + cause + fix

    def properties(self) -> JsonObject:
        return {"algorithm": self.named, "outputShape": list(self.output_shape),
                "hiddenShape": list(self.state_shape)}


def check(context: AnalysisContext) -> Iterator[Hit[NoEtpRelation | LearnerRefusesOutputShape]]:
    for refusal in context.trace_shape_refusals[:1]:  # the learner raises at its first: one refusal of the model
        group = tuple(display_name(h) for h in refusal.hidden_paths)
        weight = refusal.weight_paths[0] if refusal.weight_paths else None
        refused = LearnerRefusesOutputShape(refusal.learner, refusal.algorithm,
                                            display_name(weight) if weight else "its weight", refusal.primitive,
                                            refusal.output_shape, group[0] if group else "its hidden state",
                                            refusal.group_shape, refusal.text,
                                            tuple(display_name(w) for w in context.weight_paths), group)
        yield Hit(refused, eqn=context.etp_site_of(refusal.y_var),
                  related=(("weight created here", weight),) if weight else ())
        return
    if context.learning_weights:
        return
    # a compiler record that excludes a weight (ETL004, ETL005, ...) explains that weight, not that
    # braintrace.compile refuses the whole model: on a braintrace that adds same-step gradients the other
    # weights would read "learns" where braintrace.compile raises.
    # ETL201 / ETL202 / ETL203 / ETL206 say on its line why a weight does not learn; where they say it of every
    # weight, the refusal follows from theirs. A weight none of them names would read as learning (ETL003's
    # same-step gradient, ETL213's window) where braintrace.compile refuses the model: a Conv1d under a vmap
    # that braintrace warns it decomposed, whose decomposition ETL203 does not find as a plain use.
    # On a braintrace that adds same-step gradients the refusal does not follow from theirs: a learner built from
    # the class gives those weights their same-step gradient (the probe measures it, and their "does not learn"
    # becomes "learns partly"), while braintrace.compile still refuses the model (seed 47's model 675, 0.2.8)
    if (context.weight_paths and set(context.weight_paths) <= _explained_weights(context)
            and not (context.adds_same_step_gradients and context.single_step_vjp)):
        return
    kept = context.untraced_states
    hidden = tuple(dict.fromkeys(context.hidden_outvars.values()))
    violation = NoEtpRelation(len(context.weight_paths), len(hidden), context.braintrace_version,
                              context.adds_same_step_gradients, tuple(display_name(s.path) for s in kept[:3]),
                              len(kept), tuple(sorted({s.kind for s in kept})),
                              tuple(display_name(w) for w in context.weight_paths),
                              tuple(display_name(h) for h in hidden), not context.single_step_vjp,
                              tuple(sorted(context.vmap_decomposed_ops)), context.vmap_maps_inputs_only)
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
    summary="braintrace.compile refuses the model: no weight is connected to a hidden state by an ETP op, or the "
            "named algorithm's learner cannot size an eligibility trace; nothing learns online",
    tags=("learning", "analysis"),
    violations=(NoEtpRelation, LearnerRefusesOutputShape),
    check=check,
)
