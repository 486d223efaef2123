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
from .gate_slopes import GateSlope, gate_slopes
from .gradient_cuts import NoGradient, ZeroDerivativeNodes, connected_ops, custom_derivative_scopes
from .hard_thresholds import HardThreshold, HardThresholdCut, hard_threshold_cuts, hard_thresholds
from .hidden_divisions import HiddenDivision, hidden_divisions
from .leak_factors import LeakFactor, leak_factors
from .locate import Locator
from .plain_uses import PlainUse, plain_uses
from .record_kinds import reported_kinds
from .relu_constraints import ClipCeiling, ReluConstraint, clip_ceilings, relu_constraints
from .roundings import Rounding, RoundingCut, rounding_cuts, roundings
from .shift_removed_biases import ShiftRemovedBiasCut, ShiftRemover, shift_removed_bias_cuts, shift_removers
from .softmaxes import OneUnitSoftmaxCut, Softmax, one_unit_softmax_cuts, softmaxes
from .step_flow import TOP, BufferedUse, CarriedState, Node, StepFlow
from .stopped_weights import StoppedWeight, stop_gradients, stopped_weights
from .weight_casts import WeightCast, weight_casts
from .weight_divisions import WeightDivision, weight_divisions
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
from .zero_weight_products import (
    WeightProduct,
    ZeroProductCut,
    weight_products,
    zero_product_cuts,
    zero_weight_products,
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
        return stopped_weights(self.sites, self.weight_paths, self.flow, ends, self.connected_ops)

    @functools.cached_property
    def hard_thresholds(self) -> list[HardThreshold]:
        """The step's hard thresholds of a float value outside a custom-derivative function (a comparison,
        ``jnp.heaviside``, ``jnp.sign``, a cast to integers), each as the user wrote it: their derivative is zero
        wherever it is defined, so no gradient passes back through them."""
        return hard_thresholds(self.flow, self.sites, self.locator.jit_parents)

    @functools.cached_property
    def hard_threshold_cuts(self) -> list[HardThresholdCut]:
        """The weights whose every float path to the step's output runs through hidden states whose values pass
        on only through a hard threshold (a spike with no surrogate gradient, ``(v > 1.0).astype(float)``,
        ``jnp.heaviside``): BPTT gives them no gradient, and neither does braintrace's online rule unless an ETP op
        reads the weight through the threshold."""
        return hard_threshold_cuts(self.flow, self.sites, self.hard_thresholds, self.weight_paths,
                                   self.carried_states, self.output_vars, self.connected_ops)

    @functools.cached_property
    def softmaxes(self) -> list[Softmax]:
        """The step's softmaxes and log-softmaxes (``jax.nn.softmax``, ``jax.nn.log_softmax``), found by the equations
        JAX writes for them, each with the shape it normalises, its axes and how many values it normalises together:
        over one value it is a constant, through which no gradient passes."""
        return softmaxes(self.sites, self.locator.producer)

    @functools.cached_property
    def one_unit_softmax_cuts(self) -> list[OneUnitSoftmaxCut]:
        """The weights whose every float path to the step's output, at this step or through the states it carries to
        a later one, crosses a softmax over one value (exactly 1, a log_softmax exactly 0): BPTT gives them no
        gradient, and neither does braintrace's online rule unless an ETP op reads the weight through the softmax."""
        return one_unit_softmax_cuts(self.flow, self.softmaxes, self.weight_paths, self.carried_states,
                                     self.output_vars, self.connected_ops)

    @functools.cached_property
    def roundings(self) -> list[Rounding]:
        """The step's roundings of a float value to whole numbers (``jnp.round``, ``jnp.floor``, ``jnp.ceil``,
        ``jnp.trunc``) outside a custom-derivative function, each with how the user called it: their derivative is
        zero everywhere, so no gradient passes back through them."""
        return roundings(self.sites, self.locator.jit_parents)

    @functools.cached_property
    def rounding_cuts(self) -> list[RoundingCut]:
        """The weights whose every float path to the step's output, at this step or through the states it carries to
        a later one, crosses a rounding (``jnp.round``, ``jnp.floor``, ``jnp.ceil``, ``jnp.trunc``): BPTT gives them
        no gradient, and neither does braintrace's online rule unless an ETP op reads the weight through the
        rounding."""
        return rounding_cuts(self.flow, self.sites, self.roundings, self.weight_paths, self.carried_states,
                             self.output_vars, self.connected_ops)

    @functools.cached_property
    def shift_removers(self) -> list[ShiftRemover]:
        """The step's operations whose value does not change when their operand is shifted by a constant along some
        axes (a softmax over them, a subtraction of the mean over them, a variance over them), each with its operand,
        those axes and its result's nodes."""
        return shift_removers(self.sites, self.locator.producer, self.softmaxes)

    @functools.cached_property
    def shift_removed_bias_cuts(self) -> list[ShiftRemovedBiasCut]:
        """The weights added to a value uniformly along some axes (a scalar bias) whose every float path to the
        step's output, at this step or a later one, is such a sum that goes only into operations removing a shift
        along those axes (``shift_removers``): they change nothing the loss sees, and BPTT gives them no gradient."""
        if not self.shift_removers:
            return []  # most models: no walk to build
        return shift_removed_bias_cuts(self.flow, self.sites, self.locator.producer, self.shift_removers,
                                       self.weight_invars, self.weight_paths, self.carried_states, self.output_vars,
                                       self.connected_ops)

    @functools.cached_property
    def weight_products(self) -> list[WeightProduct]:
        """The step's products of two weights' values (``w_a @ w_b``, ``g[:, None] * m``,
        ``braintrace.lora_matmul``'s two factors), each with the ParamStates of its factors."""
        return weight_products(self.sites, self.locator.producer, self.weight_invars)

    @functools.cached_property
    def zero_weight_products(self) -> list[WeightProduct]:
        """The step's products of two weights' values whose factors both start all zero, each with the ParamStates
        of its factors: the derivative of the product with respect to each factor is the other's value, zero."""
        return zero_weight_products(self.weight_products, self.weight_values)

    @functools.cached_property
    def zero_product_cuts(self) -> list[ZeroProductCut]:
        """The weights whose every float path to the step's output, at this step or through the states it carries to
        a later one, crosses products of weights that all start and stay at zero: no gradient reaches them, online
        or by BPTT, so gradient descent never moves them."""
        if not self.zero_weight_products:
            return []  # most models: no need to read the compiler's relations
        return zero_product_cuts(self.flow, self.sites, self.zero_weight_products, self.weight_paths,
                                 self.carried_states, self.output_vars, self.connected_ops)

    @functools.cached_property
    def connected_ops(self) -> dict[StatePath, tuple[jv.EqnSite, ...]]:
        """The ETP ops of the step the compiler connected to each weight, by ParamState path, in the step's order: its
        relations, which follow a weight to an op's weight operand through any chain of equations (a rounding, a
        ``stop_gradient``, a product), where ``flow.weights_read_by`` follows it through layout equations only."""
        return connected_ops(self.flow, self.relations)

    @functools.cached_property
    def zero_derivative_nodes(self) -> ZeroDerivativeNodes:
        """The nodes of the step no gradient passes back through, online or by BPTT: the outputs of its
        ``stop_gradient``s, roundings, hard thresholds, softmaxes over one unit and products of weights that start
        and stay at zero, and its integer and boolean values outside custom-derivative functions. A plain path
        through one carries no gradient."""
        flow = self.flow
        cuts = {node for site in stop_gradients(self.sites) for node in flow.outputs_of(site)}
        cuts.update(node for rounding in self.roundings for site in rounding.sites for node in flow.outputs_of(site))
        cuts.update(node for threshold in self.hard_thresholds for node in threshold.made)
        cuts.update(node for softmax in self.softmaxes if softmax.size == 1 for node in flow.outputs_of(softmax.site))
        starved = {cut.weight for cut in self.zero_product_cuts}
        cuts.update(node for product in self.zero_weight_products if set(product.factors) <= starved
                    for node in flow.outputs_of(product.site))
        return ZeroDerivativeNodes(frozenset(cuts), NoGradient(custom_derivative_scopes(self.sites)))

    @functools.cached_property
    def carried_states(self) -> dict[StatePath, CarriedState]:
        """The states the step carries to the next one, by path: its hidden states, then the states it writes that
        the compiler does not follow, each with its input and output vars (``flow.starved_weights`` reads them)."""
        ins: dict[StatePath, list[jv.Var]] = {}
        outs: dict[StatePath, list[jv.Var]] = {}
        for var, path in self.hidden_invars.items():
            ins.setdefault(path, []).append(var)
            outs.setdefault(path, [])
        for var, path in self.hidden_outvars.items():
            outs.setdefault(path, []).append(var)
            ins.setdefault(path, [])
        carried = {path: CarriedState(tuple(ins[path]), tuple(outs[path]), True) for path in ins}
        for state in self.untraced_states:
            carried.setdefault(state.path, CarriedState(tuple(state.invars), tuple(state.outvars), False))
        return carried

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
    def weight_divisions(self) -> list[WeightDivision]:
        """The divisions of the step by a weight's value (``dt / self.tau.value``, ``self.tau.value ** -1``, or
        ``braintrace.element_wise``'s output of it), each with how many of the values it divides by start at zero
        before the first step."""
        return weight_divisions(self.sites, self.locator.producer, self.weight_invars, self.weight_values)

    @functools.cached_property
    def weight_fn_slopes(self) -> list[WeightFnSlope]:
        """The element-wise and matmul ETP ops (``braintrace.element_wise(w, weight_fn=f)``,
        ``braintrace.matmul(x, w, weight_fn=f)``) whose ``weight_fn`` is element-wise, each with the magnitude of its
        slope at each of its weight's values before the first step: the factor the op multiplies that value's
        gradient by, online and by BPTT alike."""
        return weight_fn_slopes(self.sites, self.locator.producer, self.weight_invars, self.weight_values)

    @functools.cached_property
    def gate_slopes(self) -> list[GateSlope]:
        """The sigmoids and tanhs of the step whose input adds a weight's value (a gate's bias: ``jax.nn.sigmoid(x
        @ w + self.b.value)``), each with the activation's slope where the biases start it before the first step:
        the factor the gradient of the bias and of every weight reaching the same sum is multiplied by, online and
        by BPTT alike."""
        return gate_slopes(self.sites, self.locator.producer, self.weight_invars, self.weight_values,
                           self.weight_provenance)

    @functools.cached_property
    def relu_constraints(self) -> list[ReluConstraint]:
        """The ReLUs the step applies to a weight's value in plain code (``jax.nn.relu(w)``, ``jnp.maximum(w, 0.0)``,
        ``jnp.clip(w, 0.0)``), each with how many of the weight's values start where its slope is zero: BPTT gives
        those values no gradient, and braintrace's online rule, reading the weight through the ReLU to an ETP op,
        leaves the slope out."""
        return relu_constraints(self.sites, self.locator.producer, self.locator.jit_parents, self.weight_invars,
                                self.weight_values, self.connected_ops)

    @functools.cached_property
    def clip_ceilings(self) -> list[ClipCeiling]:
        """The ceilings the step clips a weight's value to in plain code (``jnp.minimum(w, 0.25)``, ``jnp.clip(w,
        max=0.25)``, ``jnp.clip(w, -0.25, 0.25)``), each with how many of the weight's values start above it, where
        its slope is zero: BPTT gives those values no gradient, and braintrace's online rule, reading the weight
        through the clip to an ETP op, leaves the slope out."""
        return clip_ceilings(self.sites, self.locator.producer, self.locator.jit_parents, self.weight_invars,
                             self.weight_values, self.connected_ops)

    @functools.cached_property
    def gradient_free_weights(self) -> frozenset[StatePath]:
        """The weights no gradient reaches at all, online or by BPTT, whatever learning rule: integer or boolean
        weights (ETL214), weights used only through a conversion to integers (ETL215), weights whose hidden states
        pass on only through a hard threshold (ETL216), weights every use of which is stopped (ETL220), weights
        that reach the output only through a softmax over one unit (ETL221), weights that reach it only through
        a rounding (ETL222); of the last four, not those an ETP op reads through the construct (``read_through``),
        which braintrace moves online; weights multiplied only by weights that, as they, start and stay at zero
        (ETL224); and biases added only where a softmax or a mean subtraction removes them (ETL225), unless an ETP
        op reads them through the sum. A rule that denies a weight an online gradient for another reason (ETL201,
        ETL207, ETL208, ETL209) skips them: its fix would not give them one. A new fact of that kind is added here."""
        found = {tuple(w.weight) for w in self.weight_dtypes if not w.has_gradient}
        found |= {tuple(c.weight) for c in self.weight_casts if c.only_use}
        found |= {tuple(c.weight) for c in self.hard_threshold_cuts if not c.read_through}
        found |= {tuple(s.weight) for s in self.stopped_weights if not s.read_through}
        found |= {tuple(c.weight) for c in self.one_unit_softmax_cuts if not c.read_through}
        found |= {tuple(c.weight) for c in self.rounding_cuts if not c.read_through}
        found |= {tuple(c.weight) for c in self.zero_product_cuts}
        found |= {tuple(c.weight) for c in self.shift_removed_bias_cuts if not c.read_through}
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
    def plain_uses(self) -> list[PlainUse]:
        """Every plain (not ETP) use of a weight that reaches a hidden state, in the step's order."""
        return plain_uses(self.flow, self.weight_invars, self.learning_weights, explained_weights(self),
                          self.zero_derivative_nodes)

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
    def reaching_the_output_around_hidden(self) -> frozenset[StatePath]:
        """Weights, and hidden states by their value at the step's start, whose value reaches the step's return
        value by a path through no hidden state's new value: those whose same-step gradient, which braintrace adds
        along such a path (ETL019), reaches the loss. The compiler's record counts every value the step keeps as
        its output, the new values of states the loss never reads (a BatchNorm's running statistics, a
        ShortTermState) too; a weight that reaches only those gets nothing from it."""
        ends = {(TOP, v): True for v in self.output_vars}
        avoid = frozenset((TOP, v) for v in self.hidden_outvars)
        sources: dict[StatePath, list[jv.Var]] = {path: list(invars) for path, invars in self.weight_paths.items()}
        for var, path in self.hidden_invars.items():
            sources.setdefault(path, []).append(var)
        return frozenset(path for path, invars in sources.items()
                         if self.flow.reached(tuple((TOP, v) for v in invars), ends, avoid))

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
