"""What rules of our own get to look at: one compiled model and facts derived from it.

Derived facts are computed once, on first use, so a rule that does not need
them costs nothing.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol, TypeVar

import brainstate
import numpy as np
import numpy.typing as npt

from ..config.settings import EngineSettings
from ..core.findings import Level
from ..core.naming import StatePath
from ..core.registry import rule_for_record_kind
from . import braintrace_adapter as bt
from . import jaxpr_view as jv
from .carried_states import CarriedUse, carried_uses
from .hard_thresholds import HardThresholdCut, hard_threshold_cuts
from .hidden_divisions import HiddenDivision, hidden_divisions
from .leak_factors import LeakFactor, leak_factors
from .locate import Locator
from .record_kinds import reported_kinds
from .step_flow import TOP, BufferedUse, Node, StepFlow
from .stopped_weights import StoppedWeight, stopped_weights
from .weight_casts import WeightCast, weight_casts
from .weight_dtypes import WeightDtype, weight_dtypes
from .weight_fn_slopes import WeightFnSlope, weight_fn_slopes
from .zero_gradients import (
    UnreadStateUse,
    UntrainedReadout,
    WhileCutUse,
    ZeroTraceUse,
    unread_state_uses,
    untrained_readouts,
    while_cut_uses,
    zero_trace_uses,
)


@dataclass
class AnalysisContext:
    """The rules' view of one compiled model: weights, hidden states, ops and paths.

    Rules read the typed properties below; the compilation itself (graph,
    module info) is for the adapter's views and --verify.
    """

    model: brainstate.nn.Module  # the user's model, as the target's factory built it
    inputs: tuple[object, ...]  # the example inputs of one step
    compilation: bt.Compilation  # what braintrace's compiler made of it: for the adapter's views
    locator: Locator  # where in the user's code an equation or a state is
    settings: EngineSettings  # the run's opt-in flags
    # the learner's VJP: single-step (braintrace's default, and what a target is linted for) reads each
    # step's learning signal at the hidden states' new values; multi-step reverses the whole window
    single_step_vjp: bool = True  # the learner's VJP is single-step (else multi-step)
    algorithms: tuple[str, ...] = ()  # the algorithms the target names (verify={"algorithms": [...]}), or none

    @property
    def graph(self) -> bt.ETraceGraph:
        """braintrace's compiled graph of the model: for the adapter's views, not for a rule to read."""
        graph = self.compilation.graph
        assert graph is not None  # the engine builds a context only for a model that compiled
        return graph

    @property
    def module_info(self) -> bt.ModuleInfo:
        """braintrace's record of the traced step: for the adapter's views, not for a rule to read."""
        module_info = self.compilation.module_info
        assert module_info is not None  # a model that compiled was traced
        return module_info

    @property
    def weight_paths(self) -> dict[StatePath, list[jv.Var]]:
        """The weights the step reads: ParamState path -> its input vars in the traced step. A ParamState of
        the model that the step never reads is not here."""
        return self.locator.weight_vars

    @functools.cached_property
    def weight_dtypes(self) -> list[WeightDtype]:
        """The dtypes of each weight the step reads, as the step reads them: a weight none of whose arrays is
        floating or complex (integers, booleans) gets no gradient from JAX, online or by BPTT."""
        return weight_dtypes(self.weight_paths, self.locator)

    @functools.cached_property
    def weight_casts(self) -> list[WeightCast]:
        """The uses of a weight that convert its value to an integer or boolean dtype (``w.astype(int)``, the mask
        ``w > 0``) and reach a hidden state or the step's output: no gradient flows back to the weight through
        them, online or by BPTT."""
        ends: dict[Node, object] = {(TOP, v): path for v, path in self.hidden_outvars.items()}
        ends.update({(TOP, v): "output" for v in self.output_vars})
        return weight_casts(self.jaxpr, self.weight_paths, self.flow, ends)

    @functools.cached_property
    def stopped_weights(self) -> list[StoppedWeight]:
        """The weights every path of whose value to the step's output and its states' new values passes a
        ``jax.lax.stop_gradient``, each with the stop_gradient equations it meets first: BPTT gives them no
        gradient, and neither does braintrace's online rule unless an ETP op reads the weight through the stop."""
        ends: dict[Node, object] = {(TOP, v): path for v, path in self.hidden_outvars.items()}
        ends.update({(TOP, v): "output" for v in self.output_vars})
        ends.update({(TOP, v): state.path for state in self.untraced_states for v in state.outvars})
        return stopped_weights(self.sites, self.weight_paths, self.flow, ends, self.relation_outputs)

    @functools.cached_property
    def hard_threshold_cuts(self) -> list[HardThresholdCut]:
        """The weights whose every float path to the step's output runs through hidden states whose values pass
        on only through a hard threshold (a spike with no surrogate gradient, ``(v > 1.0).astype(float)``,
        ``jnp.heaviside``): no gradient reaches them, online or by BPTT."""
        carried: dict[StatePath, tuple[tuple[jv.Var, ...], tuple[jv.Var, ...]]] = {}
        for var, path in self.hidden_invars.items():
            ins, outs = carried.get(path, ((), ()))
            carried[path] = (ins + (var,), outs)
        for var, path in self.hidden_outvars.items():
            ins, outs = carried.get(path, ((), ()))
            carried[path] = (ins, outs + (var,))
        hidden = frozenset(carried)
        for state in self.untraced_states:
            carried.setdefault(state.path, (tuple(state.invars), tuple(state.outvars)))
        return hard_threshold_cuts(self.flow, self.sites, self.locator.jit_parents, self.weight_paths, carried,
                                   hidden, self.output_vars)

    @functools.cached_property
    def leak_factors(self) -> list[LeakFactor]:
        """The weights that multiply a hidden state's previous value into its new one (``h = tau * h + ...``, through
        ``braintrace.element_wise`` or a plain ``*``): each recurrence's leak or decay factor, with the magnitudes it
        starts from before the first step."""
        return leak_factors(self.sites, self.locator.producer, self.locator.consumers, self.weight_invars,
                            self.weight_values, self.hidden_invars, self.hidden_outvars)

    @functools.cached_property
    def hidden_divisions(self) -> list[HiddenDivision]:
        """The divisions of the step by a hidden state's value at its start (``x / self.g.value``, ``1.0 /
        self.g.value``), each with how many of the state's elements start at zero before the first step."""
        return hidden_divisions(self.sites, self.locator.producer, self.hidden_invars, self.hidden_values)

    @functools.cached_property
    def weight_fn_slopes(self) -> list[WeightFnSlope]:
        """The element-wise ETP ops (``braintrace.element_wise(w, weight_fn=f)``) whose ``weight_fn`` is
        element-wise, each with the magnitude of its slope at each of its weight's values before the first step:
        the factor the op multiplies that value's gradient by, online and by BPTT alike."""
        return weight_fn_slopes(self.sites, self.locator.producer, self.weight_invars, self.weight_values)

    @functools.cached_property
    def gradient_free_weights(self) -> frozenset[StatePath]:
        """The weights no gradient reaches at all, online or by BPTT, whatever learning rule: integer or boolean
        weights (ETL214), weights used only through a conversion to integers (ETL215), weights whose hidden states
        pass on only through a hard threshold (ETL216), weights every use of which is stopped (ETL220). A rule
        that denies a weight an online gradient for another reason (ETL201, ETL207, ETL208, ETL209) skips them:
        its fix would not give them one. A new fact of that kind is added here."""
        found = {tuple(w.weight) for w in self.weight_dtypes if not w.has_gradient}
        found |= {tuple(c.weight) for c in self.weight_casts if c.only_use}
        found |= {tuple(c.weight) for c in self.hard_threshold_cuts}
        found |= {tuple(s.weight) for s in self.stopped_weights if not s.read_through}
        return frozenset(found)

    @functools.cached_property
    def learning_weights(self) -> set[StatePath]:
        """The weights the compiler connected to a hidden state through an ETP op: they learn online."""
        return bt.relation_weight_paths(self.graph) if self.graph is not None else set()

    @functools.cached_property
    def trace_shape_refusals(self) -> list[bt.TraceShapeRefusal]:
        """The ETP ops whose output the learner of an algorithm the target names cannot size an eligibility
        trace from (an IO-factorised one's trace must have the hidden states' shape): it refuses the model."""
        return [refusal for algorithm in dict.fromkeys(self.algorithms)
                for refusal in bt.trace_shape_refusals(self.graph, algorithm)]

    def etp_site_of(self, var: jv.Var) -> jv.EqnSite | None:
        """The ETP op of the step whose output ``var`` is."""
        return next((site for site in self.flow.etp_sites if any(out is var for out in jv.outvars(site.eqn))), None)

    @functools.cached_property
    def output_vars(self) -> list[jv.Var]:
        """The step's vars that are the model's return value (a flow's end, as the hidden states' new values are)."""
        return bt.step_output_vars(self.module_info)

    @functools.cached_property
    def hidden_groups(self) -> list[bt.GroupView]:
        """The compiler's hidden groups, each the hidden states whose eligibility traces it keeps together."""
        return bt.group_views(self.graph)

    @functools.cached_property
    def relations(self) -> list[bt.RelationView]:
        """The ETP ops the compiler connected to hidden groups, each with the weights it trains (a trace's cover)."""
        return bt.relation_views(self.graph)

    @functools.cached_property
    def weight_invars(self) -> dict[jv.Var, StatePath]:
        """The step's input var of each weight array -> that weight's ParamState path."""
        return bt.weight_invars(self.module_info)

    @functools.cached_property
    def weight_values(self) -> dict[jv.Var, npt.NDArray[np.generic]]:
        """Each weight input var of the step -> the array it holds before the first step (none for a model captured
        inside a trace, whose states hold tracers)."""
        return bt.weight_invar_values(self.module_info)

    @functools.cached_property
    def hidden_values(self) -> dict[jv.Var, npt.NDArray[np.generic]]:
        """Each hidden state's input var of the step -> the array it holds before the first step (none for a model
        captured inside a trace)."""
        return bt.hidden_invar_values(self.module_info)

    @functools.cached_property
    def hidden_invars(self) -> dict[jv.Var, StatePath]:
        """The step's input var of each hidden state (its value at the step's start) -> that hidden state's path."""
        return bt.hidden_invars(self.module_info)

    @functools.cached_property
    def hidden_outvars(self) -> dict[jv.Var, StatePath]:
        """The step's output var of each hidden state -> that hidden state's path."""
        return bt.hidden_outvars(self.module_info)

    @functools.cached_property
    def jaxpr(self) -> jv.ClosedJaxpr:
        """The step as the compiler traced it, after its rewrites of conds and scans and with every jit call inlined
        (``locator.jit_parents(eqn)`` names the calls an equation came from: ``jnp.heaviside``'s, say)."""
        return bt.traced_jaxpr(self.module_info)

    @functools.cached_property
    def sites(self) -> list[jv.EqnSite]:
        """Every equation of the step, nested bodies included, each with the equations around it."""
        return self.locator.sites

    @functools.cached_property
    def flow(self) -> StepFlow:
        """What flows where in the step: which weights each var carries, into which hidden states."""
        return StepFlow(self.jaxpr, self.weight_invars, self.hidden_outvars)

    @functools.cached_property
    def plain_uses(self) -> list["PlainUse"]:
        """Every plain (not ETP) use of a weight that reaches a hidden state, in the step's order."""
        return plain_uses(self)

    @functools.cached_property
    def buffered_uses(self) -> list[BufferedUse]:
        """ETP ops whose output is stored in a state the compiler does not trace, which a hidden state then reads."""
        return buffered_uses(self)

    @functools.cached_property
    def weight_provenance(self) -> dict[jv.Var, frozenset[StatePath]]:
        """Top-level var -> the ParamState paths whose value flows into it."""
        flow: dict[jv.Var, frozenset[StatePath]] = {
            v: frozenset([p]) for v, p in self.weight_invars.items()}
        for eqn in jv.open_jaxpr(self.jaxpr).eqns:
            sources = frozenset().union(*(flow.get(v, frozenset()) for v in jv.invars(eqn)))
            if sources:
                for out in jv.outvars(eqn):
                    flow[out] = sources
        return flow

    @functools.cached_property
    def relation_outputs(self) -> frozenset[int]:
        """Identities of the ETP op outputs the compiler connected to a hidden state."""
        return frozenset(bt.relation_output_ids(self.graph)) if self.graph is not None else frozenset()

    @functools.cached_property
    def fully_connected_weights(self) -> frozenset[StatePath]:
        """Weights each of whose ETP ops in the compiled step the compiler connected to a hidden state:
        a record calling one of them excluded, or reaching no hidden state, comes from another pass over
        the step (brainstate.nn.Map traces it more than once) and is contradicted by the final graph."""
        ops: dict[StatePath, list[jv.EqnSite]] = {}
        step_outputs = {(TOP, v): True for v in jv.open_jaxpr(self.jaxpr).outvars if jv.is_var(v)}
        for site in self.flow.etp_sites:
            if not self.flow.reached(self.flow.outputs_of(site), step_outputs):
                continue  # a dead copy (a probe pass's): its output reaches nothing the step returns or keeps
            for weight in self.flow.weights_read_by(site):
                ops.setdefault(weight, []).append(site)
        connected = self.relation_outputs
        return frozenset(weight for weight, sites in ops.items() if weight in self.learning_weights
                         and all(any(id(out) in connected for out in jv.outvars(s.eqn)) for s in sites))

    @functools.cached_property
    def vmap_warnings(self) -> list[str]:
        """The compiler's warnings that an ETP op was decomposed into plain ops under ``vmap``."""
        return bt.vmap_decomposition_warnings(self.compilation.warnings)

    @functools.cached_property
    def vmap_decomposed_ops(self) -> frozenset[str]:
        """The ETP primitives those warnings name."""
        return frozenset(bt.vmap_warning_primitive(w) for w in self.vmap_warnings) - {""}

    @functools.cached_property
    def vmap_maps_inputs_only(self) -> bool:
        """Every decomposition braintrace warned of mapped only the op's data input: the ops have no batched
        form, and no weight was mapped."""
        return bool(self.vmap_warnings) and all(bt.vmap_warning_maps_input_only(w) for w in self.vmap_warnings)

    def is_vmap_decomposition(self, site: jv.EqnSite) -> bool:
        """Whether a plain equation is what an ETP op became under ``vmap``."""
        return bt.is_vmap_decomposition(site.eqn)

    @functools.cached_property
    def compiler_warned(self) -> bool:
        """Whether a compiler record is reported at warning or error level: it then explains why a
        weight does not learn (a record braintrace grades a warning that is a note of ours, such as a
        readout reaching no hidden state, explains nothing of the kind)."""
        return any(rule_for_record_kind(kind, level).level.rank >= Level.WARNING.rank
                   for kind, level in reported_kinds(self.compilation))

    def online_gradient_error(self) -> BaseException | None:
        """What building one online (D-RTRL) gradient step of the model raises, if anything."""
        return bt.online_gradient_error(self.model, self.inputs)

    @functools.cached_property
    def first_plain_uses(self) -> list[PlainUse]:
        """Each weight's first plain use, leaving out the ETP ops that vmap decomposed (ETL203's)."""
        return first_per_weight([u for u in self.plain_uses if not u.decomposed])

    @functools.cached_property
    def first_decomposed_uses(self) -> list[PlainUse]:
        """Each weight's first use by an ETP op that vmap decomposed into plain ops."""
        return first_per_weight([u for u in self.plain_uses if u.decomposed])

    @functools.cached_property
    def first_buffered_uses(self) -> list[BufferedUse]:
        """Each weight's first ETP op whose output is stored in an untraced state."""
        return first_per_weight(self.buffered_uses)

    @functools.cached_property
    def untraced_states(self) -> list[bt.UntracedState]:
        """States the step writes that the compiler does not follow from step to step."""
        return bt.untraced_states(self.module_info)

    @functools.cached_property
    def zero_trace_uses(self) -> list[ZeroTraceUse]:
        """Connected weights whose every ETP op braintrace reads with a zero ``df``: they keep no eligibility trace."""
        return zero_trace_uses(self)

    @functools.cached_property
    def unread_state_uses(self) -> list[UnreadStateUse]:
        """Connected weights none of whose hidden states' new values the step's output reads."""
        return unread_state_uses(self)

    @functools.cached_property
    def while_cut_uses(self) -> list[WhileCutUse]:
        """Connected weights whose hidden states reach the step's output only through a detached ``while``."""
        return while_cut_uses(self)

    @functools.cached_property
    def untrained_readouts(self) -> list[UntrainedReadout]:
        """Weights without a trace that reach the step's output, on a braintrace that adds no same-step gradient."""
        return untrained_readouts(self)

    @functools.cached_property
    def carried_uses(self) -> list[CarriedUse]:
        """Weights without a trace whose op output is kept in an untraced state that the next step reads."""
        return carried_uses(self)

    @property
    def braintrace_version(self) -> str:
        """The version of the braintrace the model was compiled with."""
        return bt.braintrace_version()

    @property
    def adds_same_step_gradients(self) -> bool:
        """Whether this braintrace's single-step learners add a weight's same-step gradient."""
        return bt.adds_same_step_gradients()

    def is_connected(self, site: jv.EqnSite) -> bool:
        """Whether the compiler connected an output of this ETP op to a hidden state."""
        connected = self.relation_outputs
        return any(id(out) in connected for out in jv.outvars(site.eqn))

    def opaque_transform_of(self, site: jv.EqnSite) -> OpaqueTransform | None:
        """The outermost enclosing transform the compiler does not open."""
        return opaque_transform_of(site)

    def conv_bias_shape(self, site: jv.EqnSite) -> tuple[int, ...] | None:
        """The shape of a convolution ETP op's bias; None for another op or a conv without a bias."""
        return bt.conv_bias_shape(site.eqn)

    def owner_layer(self, weight: StatePath) -> OwnerLayer:
        """The layer that holds a weight, as a rule words its advice about it."""
        owner = owner_module(self.model, weight)
        if owner is None:
            return OwnerLayer()
        cls = type(owner)
        return OwnerLayer(cls.__name__, cls.__module__, bt.etp_layer_for(owner), library_layer(owner),
                          bt.in_braintrace_nn(cls), public_name(cls))

    def weights_reaching_hidden(self) -> dict[StatePath, list[StatePath]]:
        """ParamState path -> hidden state paths whose new value depends on it."""
        reach: dict[StatePath, list[StatePath]] = {}
        for var, hidden in self.hidden_outvars.items():
            for weight in self.weight_provenance.get(var, ()):
                reach.setdefault(weight, []).append(hidden)
        return reach



# Transforms whose bodies the compiler never opens: an ETP op inside one is invisible to it.
OPAQUE_TRANSFORMS = {
    "remat": "jax.checkpoint", "remat2": "jax.checkpoint", "checkpoint": "jax.checkpoint",
    "custom_jvp_call": "jax.custom_jvp", "custom_vjp_call": "jax.custom_vjp",
    "custom_vjp_call_jaxpr": "jax.custom_vjp", "custom_lin": "jax.custom_vjp",
}

@dataclass(frozen=True)
class PlainUse:
    """A weight read by a plain JAX op whose result reaches a hidden state."""

    weight: StatePath
    site: jv.EqnSite
    hidden: tuple[StatePath, ...]  # hidden state paths it reaches
    partial: bool  # the weight also learns through an ETP op; this path is missing from it
    decomposed: bool  # the op is an ETP op that vmap decomposed (braintrace's batching fallback)


def explained_weights(context: AnalysisContext) -> set[StatePath]:
    """Weights a compiler record already explains (besides connecting them).

    A record's rule says whether it does (``Rule.explains_weight``): an
    output-bypass record lists every parameter on the step's output path,
    which says nothing about how a weight reaches the hidden state.
    """
    explained = set()
    for record in context.compilation.records:
        if not rule_for_record_kind(record.kind, record.level).explains_weight:
            continue
        if record.weight_path:
            explained.add(record.weight_path)
        if record.level != "info":  # e.g. weights a descended scan left without a relation
            for path in (record.context.get("weight_paths") or ()):
                if isinstance(path, tuple):
                    explained.add(path)
    return explained


def plain_uses(context: AnalysisContext) -> list[PlainUse]:
    """Every plain use of a weight that reaches a hidden state, in the step's order.

    For a weight the compiler connected through an ETP op, only a plain path
    that reaches the hidden state without crossing an ETP op counts: through
    the ETP op's weight operand (a mask, ``abs``) the compiler follows the
    weight itself.
    """
    flow = context.flow
    if not flow.consumers:  # every weight goes through ETP ops or layout only
        return []
    explained = explained_weights(context)
    learning = context.learning_weights
    found = []
    for consumer in flow.consumers:
        weights = sorted(w for w in consumer.weights if w not in explained)
        if not weights:
            continue
        decomposed = bt.is_vmap_decomposition(consumer.site.eqn)
        for weight in weights:
            partial = weight in learning
            hidden = flow.hidden_reached(consumer.outputs, flow.etp_outputs if partial else frozenset())
            if hidden:
                found.append(PlainUse(weight, consumer.site, tuple(hidden), partial, decomposed))
    return found


def buffered_uses(context: AnalysisContext) -> list[BufferedUse]:
    """Every ETP op of a weight that does not learn online whose output is written into an untraced
    state that feeds a hidden state: one step late, through a value the compiler takes as a constant.

    Only a direct store counts: a path through a hidden state's new value (a spike kept for the
    next step, say) is the hidden state's own business."""
    untraced = bt.untraced_states(context.module_info)
    if not untraced:
        return []
    flow = context.flow
    feeds: dict[StatePath, tuple[bt.UntracedState, tuple[StatePath, ...]]] = {}
    for state in untraced:
        hidden = flow.reached(tuple((TOP, v) for v in state.invars), flow.hidden, past_ends=False)
        if hidden:
            feeds[state.path] = (state, tuple(hidden))
    if not feeds:
        return []
    stored = {(TOP, v): state.path for state, _ in feeds.values() for v in state.outvars}
    learning = context.learning_weights
    found: list[BufferedUse] = []
    for site in flow.etp_sites:
        weights = sorted(w for w in flow.weights_read_by(site) if w not in learning)
        if not weights:
            continue
        for path in flow.reached(flow.outputs_of(site), stored, avoid=flow.hidden):
            state, hidden_paths = feeds[path]
            found.extend(BufferedUse(w, site, path, state.kind, hidden_paths) for w in weights)
    return found


class _WeightUse(Protocol):
    @property
    def weight(self) -> StatePath: ...


_Use = TypeVar("_Use", bound=_WeightUse)


def first_per_weight(uses: list[_Use]) -> list[_Use]:
    """Each weight's first use, in order (a plain op's, a buffered store's)."""
    first: dict[StatePath, _Use] = {}
    for use in uses:
        first.setdefault(use.weight, use)
    return list(first.values())


class OpaqueTransform(NamedTuple):
    """A transform the compiler does not open, around an equation."""

    site: jv.EqnSite  # the transform's own equation
    api: str  # the transform as the user wrote it: ``jax.checkpoint``


def opaque_transform_of(site: jv.EqnSite) -> OpaqueTransform | None:
    """The outermost enclosing transform the compiler does not open, as a site of its own."""
    for index, parent in enumerate(site.parents):
        api = OPAQUE_TRANSFORMS.get(jv.primitive_name(parent))
        if api is not None:
            return OpaqueTransform(jv.EqnSite(parent, site.parents[:index]), api)
    return None


@dataclass(frozen=True)
class OwnerLayer:
    """The object that holds a weight (its layer), by the names a rule's advice gives it."""

    class_name: str = ""  # empty: no object of the model holds the weight
    module: str = ""  # where its class is defined
    etp_twin: str = ""  # the braintrace.nn layer that does the same through an ETP op (the adapter's ``etp_layer_for``)
    library: str = ""  # how a user imports it when another library defines it (:func:`library_layer`)
    in_braintrace_nn: bool = False  # braintrace.nn re-exports this very class
    public_name: str = ""  # how a user imports its class, whoever defines it: ``brainpy.state.Readout``


def owner_module(model: object, path: StatePath) -> object:
    """The object that holds the state at ``path`` (the layer a weight belongs to), or None."""
    node: Any = model  # a module of the user's model, or a list or dict of them
    for part in path[:-1]:
        try:
            node = getattr(node, part) if isinstance(part, str) and hasattr(node, part) else node[part]
        except (KeyError, IndexError, TypeError, AttributeError):
            return None
    return node


def library_layer(layer: object) -> str:
    """``brainstate.nn.LayerNorm``: how a user imports the class of a layer another library defines
    (its module up to the first private part), or nothing for a layer of the user's own code."""
    if layer is None:
        return ""
    if type(layer).__module__.split(".")[0] not in ("brainstate", "brainpy", "braintools", "brainscale"):
        return ""
    return public_name(type(layer))


def public_name(cls: type) -> str:
    """``brainpy.state.Readout``: how a user imports a class, from its module up to the first private
    part (``brainpy.state._readout`` -> ``brainpy.state``)."""
    parts = cls.__module__.split(".")
    first_private = next((i for i, part in enumerate(parts) if part.startswith("_")), len(parts))
    return f"{'.'.join(parts[:first_private] or parts[:1])}.{cls.__name__}"
