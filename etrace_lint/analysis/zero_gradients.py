"""Weights the compiler connects to a hidden state whose online gradient is nevertheless exactly zero.

Two mechanisms of braintrace, read off the compiled graph:

- the op's ``df`` is zero: a mean-subtracting op between the ETP op and the hidden state
  (:mod:`.row_sums`);
- the learning signal is zero: with ``vjp_method='single-step'`` (the default) each step's
  ``dL/dh`` is read at the hidden states' *new* values (the compiler's hidden perturbation,
  ``h = f(x) + perturb``); when the step's output reads none of the new values of the states
  the weight is connected to (spikes taken from the membrane before its reset), and the op's
  output reaches the output only through another hidden state's new value, the eligibility
  trace is multiplied by zero on every step;
- the learning signal is cut: a ``while`` loop on the way to a hidden state cannot be
  reversed, so the compiler detaches its inputs in the perturbed step (``stop_gradient``);
  when every path from the new values of the states a weight is connected to reaches the
  output only through such a loop, their learning signal is zero on every step.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol, TypeVar

from ..core.naming import StatePath
from . import braintrace_adapter as bt
from . import jaxpr_view as jv
from .step_flow import TOP, Node, StepFacts, StepFlow


@dataclass(frozen=True)
class ZeroTraceUse:
    """A connected weight whose every ETP op braintrace reads with a zero ``df``: it keeps no
    eligibility trace."""

    weight: StatePath
    site: jv.EqnSite | None  # its ETP op
    hidden: tuple[StatePath, ...]  # the hidden states the compiler connected it to
    cancelled_at: jv.EqnSite | None  # where the mean is subtracted


def _etp_sites(context: StepFacts) -> dict[int, jv.EqnSite]:
    return {id(out): site for site in context.flow.etp_sites for out in jv.outvars(site.eqn)}


class _HasWeights(Protocol):
    @property
    def weight_paths(self) -> tuple[StatePath, ...]: ...


Relation = TypeVar("Relation", bound=_HasWeights)


def _by_weight(relations: Iterable[Relation]) -> dict[StatePath, list[Relation]]:
    found: dict[StatePath, list[Relation]] = {}
    for relation in relations:
        for weight in relation.weight_paths:
            found.setdefault(weight, []).append(relation)
    return found


def _whole_weights(relations: Iterable[Relation], context: StepFacts) -> list[tuple[StatePath, list[Relation]]]:
    """The weights all of whose ETP relations are among ``relations`` (else another op of the weight
    still drives a hidden state), in path order, each with its relations."""
    counts = {weight: len(all_) for weight, all_ in _by_weight(context.relations).items()}
    return [(weight, found) for weight, found in sorted(_by_weight(relations).items(), key=lambda item: str(item[0]))
            if len(found) == counts.get(weight, 0)]


def zero_trace_uses(context: StepFacts) -> list[ZeroTraceUse]:
    zero = bt.zero_df_relations(context.graph)
    if not zero:
        return []
    sites = _etp_sites(context)
    found = []
    for weight, relations in _whole_weights(zero, context):
        cancelled = next((r.cancelled_at for r in relations if r.cancelled_at is not None), None)
        hidden = tuple(dict.fromkeys(h for r in relations for h in r.hidden_paths))
        found.append(ZeroTraceUse(weight, sites.get(id(relations[0].y_var)), hidden,
                                  jv.EqnSite(cancelled, ()) if cancelled is not None else None))
    return found


@dataclass(frozen=True)
class UnreadStateUse:
    """A connected weight none of whose hidden states' new values the step's output reads."""

    weight: StatePath
    site: jv.EqnSite | None  # its (first) ETP op
    hidden: tuple[StatePath, ...]  # the hidden states the compiler connected it to


def unread_state_uses(context: StepFacts) -> list[UnreadStateUse]:
    """Only for ``vjp_method='single-step'``, braintrace's default and the method a target is linted
    for (its compile options are the compiler's; the algorithm's ``vjp_method`` is not among them); a
    compile a program made says which its learner uses."""
    if not context.single_step_vjp:
        return []
    outputs = {(TOP, v): "output" for v in context.output_vars}
    if not outputs:
        return []
    flow = context.flow
    groups = {g.index: g for g in context.hidden_groups}
    views = [v for v in context.relations if not v.in_control_flow]
    same_step = bt.adds_same_step_gradients()
    signal: dict[int, bool] = {}  # per hidden group: its new value reaches the output
    silent: list[bt.RelationView] = []
    for view in views:
        for index in view.group_indices:
            if index not in signal:
                starts = tuple((TOP, v) for v in groups[index].outvars if jv.is_var(v))
                signal[index] = bool(flow.reached(starts, outputs))
        if any(signal[i] for i in view.group_indices):
            continue
        # the op's output reaching the output around every new hidden value is a same-step gradient,
        # where braintrace adds one
        if same_step and flow.reached(((TOP, view.y_var),), outputs, avoid=flow.hidden):
            continue
        silent.append(view)
    sites = _etp_sites(context)
    found = []
    for weight, unread in _whole_weights(silent, context):
        hidden = tuple(dict.fromkeys(p for view in unread for i in view.group_indices for p in groups[i].hidden_paths))
        found.append(UnreadStateUse(weight, sites.get(id(unread[0].y_var)), hidden))
    return found


@dataclass(frozen=True)
class WhileCutUse:
    """A connected weight whose hidden states' new values reach the step's output only through a
    ``while`` loop whose inputs the compiler detaches."""

    weight: StatePath
    site: jv.EqnSite | None  # its (first) ETP op
    hidden: tuple[StatePath, ...]  # the hidden states the compiler connected it to
    loop: jv.EqnSite  # the first loop the signal crosses
    loop_hidden: tuple[StatePath, ...]  # the hidden states that loop computes


def _detached_loops(context: StepFacts) -> dict[Node, jv.EqnSite]:
    """The outputs of the step's ``while`` loops whose inputs braintrace detaches -> the loop.

    JAX cannot transpose a ``while``, so braintrace's hidden perturbation routes every input of a
    top-level loop on the way to a hidden state through ``stop_gradient``: on 0.2.8 every loop whose
    outputs reach a hidden state's new value, on 0.2.6 only a loop that writes one. Any other loop on
    the learning signal's way is left to reverse mode, which fails on it (ETL205 says so)."""
    hidden = context.hidden_outvars
    eqns = jv.open_jaxpr(context.jaxpr).eqns
    if bt.detaches_loops_before_hidden():
        needed = set(hidden)  # the vars a hidden state's new value depends on, gathered backwards
        loops = []
        for eqn in reversed(eqns):
            if any(v in needed for v in jv.outvars(eqn) if jv.is_var(v)):
                if jv.primitive_name(eqn) == "while":
                    loops.append(eqn)
                needed.update(v for v in jv.invars(eqn) if jv.is_var(v))
    else:
        loops = [eqn for eqn in eqns if jv.primitive_name(eqn) == "while"
                 and any(v in hidden for v in jv.outvars(eqn) if jv.is_var(v))]
    found: dict[Node, jv.EqnSite] = {}
    for eqn in loops:
        site = jv.EqnSite(eqn, ())
        found.update(((TOP, v), site) for v in jv.outvars(eqn) if jv.is_var(v))
    return found


def while_cut_uses(context: StepFacts) -> list[WhileCutUse]:
    """Weights all of whose ETP ops drive hidden states whose learning signal crosses a detached loop,
    under ``vjp_method='single-step'`` (``'multi-step'`` reverses the whole step and cannot go through
    a ``while`` at all)."""
    if not context.single_step_vjp:
        return []
    loops = _detached_loops(context)
    outputs = {(TOP, v): "output" for v in context.output_vars}
    if not loops or not outputs:
        return []
    flow = context.flow
    groups = {g.index: g for g in context.hidden_groups}
    same_step = bt.adds_same_step_gradients()
    avoid_hidden = set(flow.hidden) | set(loops)
    crossed: dict[int, jv.EqnSite | None] = {}  # per hidden group: the loop its signal crosses, None: not cut
    cut: list[bt.RelationView] = []
    for view in (v for v in context.relations if not v.in_control_flow):
        for index in view.group_indices:
            if index not in crossed:
                crossed[index] = _loop_crossed(flow, groups[index], outputs, loops)
        if not any(crossed[i] for i in view.group_indices):
            continue
        if any(crossed[i] is None and _signal(flow, groups[i], outputs) for i in view.group_indices):
            continue  # another of its states is read around every loop
        if same_step and flow.reached(((TOP, view.y_var),), outputs, avoid=avoid_hidden):
            continue  # a same-step path around the loops, which braintrace 0.2.8 trains
        cut.append(view)
    sites = _etp_sites(context)
    found = []
    for weight, views in _whole_weights(cut, context):
        indices = [i for view in views for i in view.group_indices]
        hidden = tuple(dict.fromkeys(p for i in indices for p in groups[i].hidden_paths))
        loop = next(crossed[i] for i in indices if crossed[i] is not None)
        assert loop is not None
        outs = tuple((TOP, v) for v in jv.outvars(loop.eqn) if jv.is_var(v))
        loop_hidden = tuple(flow.hidden[n] for n in outs if n in flow.hidden) or tuple(
            flow.reached(outs, flow.hidden, past_ends=False))  # the first states its result reaches
        found.append(WhileCutUse(weight, sites.get(id(views[0].y_var)), hidden, loop, loop_hidden))
    return found


def _starts(group: bt.GroupView) -> tuple[Node, ...]:
    return tuple((TOP, v) for v in group.outvars if jv.is_var(v))


def _signal(flow: StepFlow, group: bt.GroupView, outputs: dict[Node, str]) -> bool:
    return bool(flow.reached(_starts(group), outputs))


def _loop_crossed(flow: StepFlow, group: bt.GroupView, outputs: dict[Node, str],
                  loops: dict[Node, jv.EqnSite]) -> jv.EqnSite | None:
    """The detached loop every path from the group's new values to the output crosses (a group's own
    loop is no crossing: the perturbation is added after it), or None."""
    starts = _starts(group)
    if not flow.reached(starts, outputs) or flow.reached(starts, outputs, avoid=loops):
        return None  # unread (ETL208's case), or read around every loop
    own = set(starts)
    reached = flow.reached(starts, {node: node for node in loops if node not in own})
    return loops[reached[0]] if reached else None


@dataclass(frozen=True)
class UntrainedReadout:
    """A weight with no eligibility trace that reaches the step's output, on a braintrace that adds
    no same-step gradient to any ParamState: it gets no online gradient."""

    weight: StatePath
    site: jv.EqnSite | None  # the first op that reads it


def untrained_readouts(context: StepFacts) -> list[UntrainedReadout]:
    """Only for a single-step VJP: a multi-step one differentiates the loss through the whole window,
    readouts included."""
    if bt.adds_same_step_gradients() or not context.single_step_vjp:
        return []
    outputs = {(TOP, v): "output" for v in context.output_vars}
    if not outputs:
        return []
    flow = context.flow
    learning = context.learning_weights
    reaching_hidden = context.weights_reaching_hidden()
    readers: dict[StatePath, jv.EqnSite] = {}
    for site in list(flow.etp_sites) + [c.site for c in flow.consumers]:
        for weight in flow.weights_read_by(site):
            readers.setdefault(weight, site)
    found = []
    for weight, invars in sorted(context.weight_paths.items(), key=lambda item: str(item[0])):
        if weight in learning or weight in reaching_hidden:
            continue  # learns through a trace, or another rule says why it does not
        if flow.reached(tuple((TOP, v) for v in invars), outputs):
            found.append(UntrainedReadout(weight, readers.get(weight)))
    return found
