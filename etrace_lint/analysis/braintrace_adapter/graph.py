"""Read-only views of a compiled ETraceGraph, for --verify and the rules of our own.

Like :mod:`.compiler`, part of the adapter over braintrace's private layout;
the rest of etrace-lint sees plain records.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

import brainstate
import braintrace
import jax
import jax.numpy as jnp
import numpy as np
import numpy.typing as npt
from braintrace._algorithm import io_dim_vjp as _io_dim_vjp
from braintrace._compiler import hidden_pertubation
from braintrace._compiler.hidden_pertubation import HiddenPerturbation
from jax.extend.core import JaxprEqn

from ...core import algorithms
from ...core.naming import StatePath, callable_name
from .. import jaxpr_view as jv
from ..row_sums import all_ones_row_sums
from .compiler import quiet

if TYPE_CHECKING:  # braintrace's own classes, for annotations only
    from braintrace._compiler.graph import ETraceGraph
    from braintrace._compiler.module_info import ModuleInfo

# --------------------------------------------------------------------------- verify: graph views


@dataclass(frozen=True)
class GroupView:
    """A hidden group as the gradient check needs it: its states and step vars."""

    index: int  # the group's index, as a relation's ``group_indices`` name it
    hidden_paths: tuple[StatePath, ...]  # the hidden states whose traces the compiler keeps together
    invars: tuple[jv.Var, ...]  # their values at the step's start
    outvars: tuple[jv.Var, ...]  # their values at its end (an input var again where the step does not write it)


@dataclass(frozen=True)
class RelationView:
    """One ETP op the compiler connected to hidden groups, and the weights it trains."""

    weight_paths: tuple[StatePath, ...]  # ParamState paths, in trainable-key order
    y_var: jv.Var  # the op's output
    group_indices: tuple[int, ...]  # the hidden groups the op's output reaches
    classifications: tuple[str, ...]  # PathClassification values per connected hidden state
    primitive: str  # the ETP op's primitive (``etp_mv``, ...)
    in_control_flow: bool  # inside a descended scan: its vars are body-scoped


def group_views(graph: ETraceGraph) -> list[GroupView]:
    return [GroupView(group.index, tuple(tuple(p) for p in group.hidden_paths),
                      tuple(group.hidden_invars), tuple(group.hidden_outvars))
            for group in graph.hidden_groups]


def relation_views(graph: ETraceGraph) -> list[RelationView]:
    views = []
    for relation in graph.hidden_param_op_relations:
        paths = tuple(dict.fromkeys(tuple(p) for p in (relation.trainable_paths or {}).values()))
        views.append(RelationView(
            paths, relation.y_var, tuple(g.index for g in relation.hidden_groups),
            tuple(str(c) for c in (relation.path_classification or {}).values()),
            relation.primitive.name,
            getattr(relation, "control_flow_context", None) is not None))
    return views


# --------------------------------------------------------------------------- rules of our own: vmap, online step


_VMAP_WARNING = re.compile(r"ETP primitive '([^']+)' was decomposed into standard JAX ops under vmap")


def vmap_decomposition_warnings(caught: list[tuple[str, str]]) -> list[str]:
    """The compiler-side warnings (captured while tracing) saying an ETP op was decomposed
    under ``vmap``: its weights no longer reach the compiler as ETP weights."""
    return [message for _, message in caught if _VMAP_WARNING.search(message)]


def vmap_warning_primitive(message: str) -> str:
    match = _VMAP_WARNING.search(message)
    return match.group(1) if match else ""


_BATCH_DIMS = re.compile(r"under vmap \(batch dims \(([^)]*)\)\)")


def vmap_warning_maps_input_only(message: str) -> bool:
    """Whether the ``vmap`` a decomposition warning is about mapped the op's data input only: the op has no
    batched form in braintrace, and its weight was not mapped. braintrace writes the batch dims of every
    operand (``None`` for one not mapped), the data input first (its ops' ``x_invar_index``; an element-wise
    op has no data input, only its weight). False when the warning does not say."""
    match = _BATCH_DIMS.search(message)
    if match is None:
        return False
    dims = [d.strip() for d in match.group(1).split(",") if d.strip()]
    return len(dims) > 1 and dims[0] != "None" and all(d == "None" for d in dims[1:])


def is_vmap_decomposition(eqn: JaxprEqn) -> bool:
    """True for a plain equation that an ETP op's batching rule produced: the op was mapped
    over with a batched weight (or without a batched counterpart) and fell back to its
    implementation. The rule's frame stays on the equation's creation traceback even when
    the warning itself was not raised in this trace (a cached jit body)."""
    marker = f"{os.sep}braintrace{os.sep}_op{os.sep}"
    return any(marker in path and function.endswith("_batching")
               for path, function in jv.traceback_functions(eqn.source_info))


def online_gradient_error(model: brainstate.nn.Module, inputs: tuple[object, ...]) -> BaseException | None:
    """Trace, without computing anything, one D-RTRL gradient step of ``model`` on ``inputs``;
    the exception if it cannot be built.

    The model's states are used as they are (the learner is built on the initialised model,
    no re-initialisation with another batch size) and restored afterwards, so the check
    leaves the model as it found it.
    """
    states = brainstate.graph.states(model)
    saved = {path: st.value for path, st in states.items()}
    try:
        with quiet([]):
            learner = braintrace.D_RTRL(model)
            learner.compile_graph(*inputs)
            weights = learner.param_states

            def one_step(*xs: object) -> object:
                def loss(*a: object) -> jax.Array | int:
                    return sum(jnp.sum(jnp.real(leaf) ** 2) for leaf in jax.tree.leaves(learner(*a)))

                return brainstate.transform.grad(loss, weights)(*xs)

            brainstate.transform.eval_shape(one_step, *inputs)
        return None
    except Exception as exc:  # the failure is the finding
        return exc
    finally:
        for path, st in states.items():
            st.value = saved[path]


def algorithm_class(name: str) -> type[braintrace.ETraceAlgorithm] | None:
    """The class ``--verify`` and the probe build a named algorithm from (``"d_rtrl"`` -> ``braintrace.D_RTRL``),
    None for one :data:`~etrace_lint.core.algorithms.BUILT_FROM_CLASS` leaves to ``braintrace.compile``."""
    attribute = algorithms.class_name(name)
    if attribute is None or algorithms.canonical(name) not in algorithms.BUILT_FROM_CLASS:
        return None
    return getattr(braintrace, attribute, None)


def step_param_states(minfo: ModuleInfo) -> brainstate.util.FlattedDict:
    """The ParamStates the traced step reads (a brainstate FlattedDict keyed by path).

    Differentiating a ParamState the step never reads makes brainstate's
    ``grad`` raise, so gradients are taken with respect to these only.
    """
    params = minfo.retrieved_model_states.filter(brainstate.ParamState)
    assert isinstance(params, brainstate.util.FlattedDict)  # one filter: one dict
    return params


def relation_output_ids(graph: ETraceGraph) -> set[int]:
    """Identities of the ETP op outputs the compiler connected to a hidden state."""
    return {id(relation.y_var) for relation in graph.hidden_param_op_relations}


@dataclass(frozen=True)
class ZeroDfRelation:
    """An ETP op whose ``df`` braintrace reads as exactly zero for every hidden state it drives."""

    weight_paths: tuple[StatePath, ...]  # ParamState paths the op trains
    y_var: jv.Var  # the op's output in the traced step
    hidden_paths: tuple[StatePath, ...]  # the hidden states it was connected to
    cancelled_at: jv.JaxprEqn | None  # the equation of the map where the all-ones tangent cancelled, or None


def zero_df_relations(graph: ETraceGraph) -> list[ZeroDfRelation]:
    """The relations whose ``y -> hidden group`` maps all have zero all-ones row sums
    (:mod:`etrace_lint.analysis.row_sums`): the weights get no eligibility trace through them."""
    found = []
    for relation in graph.hidden_param_op_relations:
        if getattr(relation, "control_flow_context", None) is not None:
            continue  # a descended scan's body-scoped map: not read here
        maps = list(getattr(relation, "y_to_hidden_group_jaxprs", None) or ())
        if not maps:
            continue
        sums = [all_ones_row_sums(jaxpr) for jaxpr in maps]
        if not all(s.zero and all(s.zero) for s in sums):
            continue
        paths = tuple(dict.fromkeys(tuple(p) for p in (relation.trainable_paths or {}).values()))
        hidden = tuple(dict.fromkeys(tuple(p) for g in relation.hidden_groups for p in g.hidden_paths))
        cancelled = next((s.cancelled_at for s in sums if s.cancelled_at is not None), None)
        found.append(ZeroDfRelation(paths, relation.y_var, hidden, cancelled))
    return found


def conv_bias_shape(eqn: JaxprEqn) -> tuple[int, ...] | None:
    """The shape of a convolution ETP op's bias operand; None for another op or a conv without a bias.

    braintrace's conv rule for the per-parameter algorithms (``_conv_solve_drtrl``) sums the bias
    gradient over the spatial axes into one value per output channel, shape ``(C,)``, whatever the
    bias's own shape is; the learner's custom VJP then rejects any other shape."""
    if getattr(eqn.primitive, "name", "") != "etp_conv" or not eqn.params.get("has_bias"):
        return None
    operands = list(eqn.invars)
    if len(operands) < 3:
        return None
    return tuple(getattr(getattr(operands[2], "aval", None), "shape", ()))


def _applied(function: Callable[[jax.Array], object] | None,
             value: npt.NDArray[np.generic]) -> npt.NDArray[np.generic] | None:
    """An ETP op's function of its weight (``weight_fn``, a LoRA factor's ``b_fn``) applied to ``value``: the value
    itself without one; None where the user's function raises on it."""
    if function is None:
        return value
    try:
        return np.asarray(function(jnp.asarray(value)))
    except Exception:  # noqa: BLE001 - the user's function: what it cannot make is no fact
        return None


def elementwise_factor(eqn: JaxprEqn, weight_value: npt.NDArray[np.generic]) -> npt.NDArray[np.generic] | None:
    """The value an element-wise ETP op (``braintrace.element_wise``) makes of its weight's value
    ``weight_value``: the value itself, or its ``weight_fn`` applied to it; None for another op, or a
    ``weight_fn`` that raises on it."""
    if jv.primitive_name(eqn) != "etp_elemwise":
        return None
    return _applied(eqn.params.get("weight_fn"), weight_value)


# the ETP ops whose ``weight_fn`` is applied to their weight operand value by value, by primitive: the function as
# the user called it, and the index of the weight operand among the equation's inputs
_WEIGHT_FN_OPS = {"etp_elemwise": ("braintrace.element_wise", 0), "etp_mv": ("braintrace.matmul", 1),
                  "etp_mm": ("braintrace.matmul", 1)}


def weight_fn_operand(eqn: JaxprEqn) -> int | None:
    """The index, among an ETP op's inputs, of the weight operand its ``weight_fn`` is applied to
    (``braintrace.element_wise``'s first, ``braintrace.matmul``'s second); None for another op."""
    op = _WEIGHT_FN_OPS.get(jv.primitive_name(eqn))
    return None if op is None else op[1]


# braintrace's LoRA ETP ops (braintrace.lora_matmul, braintrace.nn.LoRA), whose inputs are x, B (in x rank),
# A (rank x out) and, with has_bias, a bias: the index of each factor among them and the parameter naming the
# function the op applies to it first
_LORA_OPS = frozenset({"etp_lora_mv", "etp_lora_mm"})
_LORA_FACTORS = ((1, "b_fn"), (2, "a_fn"))


def lora_factor_operands(eqn: JaxprEqn) -> tuple[int, int] | None:
    """The indices, among a LoRA ETP op's inputs (``braintrace.lora_matmul``, ``braintrace.nn.LoRA``), of the two
    low-rank factors it multiplies into one weight (braintrace's ``B`` and ``A``); None for another op, or one with a
    bias, whose gradient does not pass through the factors' product."""
    if jv.primitive_name(eqn) not in _LORA_OPS or eqn.params.get("has_bias") or len(jv.invars(eqn)) < 3:
        return None
    return _LORA_FACTORS[0][0], _LORA_FACTORS[1][0]  # B, then A


def lora_factor_value(eqn: JaxprEqn, operand: int,
                      value: npt.NDArray[np.generic]) -> npt.NDArray[np.generic] | None:
    """The value a LoRA ETP op makes of the factor at input ``operand`` whose value is ``value``: the value itself,
    or the op's ``b_fn`` or ``a_fn`` applied to it; None for another input, or a function that raises on it."""
    name = dict(_LORA_FACTORS).get(operand)
    if name is None or jv.primitive_name(eqn) not in _LORA_OPS:
        return None
    return _applied(eqn.params.get(name), value)


@dataclass(frozen=True)
class WeightFnSlopes:
    """What an ETP op's ``weight_fn`` does to its weight's gradient at one value of the weight."""

    weight_fn: str  # the function's name as the user wrote it ('sigmoid', 'exp', '<lambda>')
    slopes: npt.NDArray[np.floating]  # |weight_fn'| at each of the weight's values, in the weight's shape
    op: str  # the ETP op as the user called it: 'braintrace.element_wise', 'braintrace.matmul'


def elementwise_slopes(eqn: JaxprEqn, weight_value: npt.NDArray[np.generic]) -> WeightFnSlopes | None:
    """The slope of an ETP op's ``weight_fn`` (``braintrace.element_wise``'s or ``braintrace.matmul``'s) at each of
    its weight's values ``weight_value``, in magnitude: the factor the op multiplies that value's gradient by. None
    for another op, an op without a ``weight_fn`` (its slope is 1), a weight that is not floating, or a
    ``weight_fn`` that raises on the value, changes its shape or is not element-wise (a ``softmax``: each output
    depends on the other values too), which has no slope per value."""
    op = _WEIGHT_FN_OPS.get(jv.primitive_name(eqn))
    if op is None:
        return None
    weight_fn = eqn.params.get("weight_fn")
    if weight_fn is None or not jnp.issubdtype(weight_value.dtype, jnp.floating):
        return None
    value = jnp.asarray(weight_value)
    # a second tangent, different in every element, tells an element-wise function (J t = slopes * t) apart
    probe = (jnp.arange(value.size, dtype=value.dtype).reshape(value.shape) % 7 + 1) / 7
    try:
        out, slopes = jax.jvp(weight_fn, (value,), (jnp.ones_like(value),))
        _, along = jax.jvp(weight_fn, (value,), (probe,))
        if jnp.shape(out) != value.shape or not bool(jnp.allclose(along, slopes * probe, rtol=1e-4, atol=1e-30)):
            return None
    except Exception:  # noqa: BLE001 - the user's function: what it cannot make is no fact
        return None
    return WeightFnSlopes(callable_name(weight_fn), np.abs(np.asarray(slopes)), op[0])


def braintrace_version() -> str:
    """The version of the braintrace installed, as its messages name it."""
    return str(braintrace.__version__)


def adds_same_step_gradients() -> bool:
    """Whether braintrace's single-step learners give a ParamState the gradient of its same-step
    path to the output (a readout, an op whose output bypasses every new hidden value).

    braintrace 0.2.8's hidden perturbation lists those parameters (``bypass_param_paths``) and its
    backward pass returns their gradient; 0.2.6 files every ParamState as an eligibility-trace
    weight (``split_dict_states_v2``) and its single-step backward pass returns no gradient for
    any of them, so a weight without a trace gets nothing."""
    return "bypass_param_paths" in getattr(HiddenPerturbation, "_fields", ())


def detaches_loops_before_hidden() -> bool:
    """Whether braintrace's hidden perturbation detaches a ``while`` loop whose result reaches a hidden
    state through further ops (``h = tanh(while(...))``), not only one that writes it.

    braintrace 0.2.8 detaches every top-level loop whose outputs reach a hidden state's new value
    (``_while_eqns_reaching``); 0.2.6 only a loop one of whose outputs is that value, and leaves any
    other loop to reverse mode, which cannot go through it (the online step then fails)."""
    return hasattr(hidden_pertubation, "_while_eqns_reaching")


# --------------------------------------------------------------------------- a learner's own checks of the graph


@dataclass(frozen=True)
class TraceShapeRefusal:
    """An ETP op whose output an IO-factorised learner (pp_prop / ES-D-RTRL) cannot size its eligibility trace
    from: its ``compile_graph``, and so ``braintrace.compile``, raises for the model."""

    algorithm: str  # as the target names it: "es_d_rtrl"
    learner: str  # braintrace's class: "pp_prop"
    weight_paths: tuple[StatePath, ...]  # ParamState paths of the op
    y_var: jv.Var  # the op's output, to place the finding on its equation
    primitive: str
    output_shape: tuple[int, ...]
    hidden_paths: tuple[StatePath, ...]  # the hidden group's states whose shape differs from the output's
    group_shape: tuple[int, ...]
    text: str  # braintrace's own words, on one line


def trace_shape_refusals(graph: ETraceGraph, algorithm: str) -> list[TraceShapeRefusal]:
    """The ops of ``graph`` that the learner of ``algorithm`` (a name or alias) refuses while it sizes its
    eligibility traces, asked of braintrace's own sizing function, which builds nothing else: an IO-factorised
    learner keeps one trace per op output and hidden group, and requires their shapes to be equal, where the
    compiler connects any output that broadcasts (``x[None] ... [0]`` around an op under ``vmap`` gives (1, n)
    for a state of (n,)). D-RTRL, whose trace has the weight's shape, does not ask."""
    name = algorithms.class_name(algorithm)
    cls = getattr(braintrace, name, None) if name else None
    if not isinstance(cls, type) or not issubclass(cls, braintrace.IODimVjpAlgorithm):
        return []
    size_traces = _io_dim_vjp._init_IO_dim_state  # the same function on braintrace 0.2.6 and 0.2.8
    found = []
    for relation in graph.hidden_param_op_relations:
        try:
            with quiet([]):
                size_traces({}, {}, relation)
        except ValueError as exc:
            y_shape = jv.aval_shape(relation.y_var)
            for group in relation.hidden_groups:
                if tuple(group.varshape) != y_shape:
                    found.append(TraceShapeRefusal(
                        algorithm, cls.__name__, tuple(tuple(p) for p in (relation.trainable_paths or {}).values()),
                        relation.y_var, relation.primitive.name, y_shape,
                        tuple(tuple(p) for p in group.hidden_paths), tuple(group.varshape),
                        " ".join(str(exc).split())))
                    break
    return found
