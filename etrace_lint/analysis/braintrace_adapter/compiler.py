"""Running braintrace's compiler and reading what it leaves: records, exceptions, state tables.

``braintrace.compile_etrace_graph`` opens its own nested diagnostic context:
when it raises, the records it emitted so far are dropped with that context.
:func:`compile_model` tees every record into our own list while the compiler
runs, and keeps the ``ModuleInfo`` (the traced jaxpr and state tables) it
produced before failing, so errors can still be located.
"""

from __future__ import annotations

import contextlib
import logging
import sys
import time
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import CodeType, FrameType, ModuleType
from typing import TYPE_CHECKING, Any, Callable, Iterator, TypeVar, cast

import brainstate
import braintrace
import jax
import numpy as np
import numpy.typing as npt
import saiunit
from braintrace._compiler import diagnostics as _diagnostics
from braintrace._compiler import graph as _graph_module
from braintrace._compiler import module_info as _module_info_module
from jax._src.source_info_util import SourceInfo

from ...core.naming import StatePath
from .. import jaxpr_view as jv
from .inclusions import one_inclusion_per_weight
from .records import RecordView, record_view
from .step_states import ConstantHiddenWrite, ModelState, constant_hidden_writes

if TYPE_CHECKING:  # braintrace's own classes, for annotations only
    from braintrace._compiler.graph import ETraceGraph
    from braintrace._compiler.module_info import ModuleInfo


@dataclass
class Compilation:
    """The outcome of running the real compiler once on one model."""

    graph: ETraceGraph | None = None  # when compilation succeeded
    module_info: ModuleInfo | None = None  # as soon as tracing succeeded
    traced_jaxpr: jv.JaxprLike | None = None  # the step's jaxpr before control-flow canonicalisation
    raw_jaxpr: jv.JaxprLike | None = None  # the step's jaxpr as traced, before jit calls are inlined
    records: list[RecordView] = field(default_factory=list)  # every CompilationRecord, in order, as read
    # per record, the equation the compiler was looking at when it emitted it (or None)
    record_subjects: list[jv.JaxprEqn | None] = field(default_factory=list)
    error: BaseException | None = None
    warnings: list[tuple[str, str]] = field(default_factory=list)  # (category name, message) pairs
    state_writes: list[StateWrite] = field(default_factory=list)  # StateWrite per user write, in order
    seconds: float = 0.0
    inputs_shown: str = ""  # the example inputs' shapes, as a message shows them

    @property
    def traced(self) -> bool:
        return self.module_info is not None

    @property
    def step_traced(self) -> bool:
        """Whether JAX finished tracing the step: the compiler's passes had a jaxpr to work on
        (a failure after this point is the compiler's, before it the model's)."""
        return self.module_info is not None or self.raw_jaxpr is not None or self.traced_jaxpr is not None

    @property
    def param_writes(self) -> list[jv.SourceFrame]:
        return [w.frame for w in self.state_writes if w.is_param]

    @property
    def unit_changes(self) -> list[StateWrite]:
        """Writes that changed the unit a state holds."""
        return [w for w in self.state_writes if w.old_unit != w.new_unit]

    @property
    def last_write(self) -> jv.SourceFrame | None:
        return self.state_writes[-1].frame if self.state_writes else None

    def constant_hidden_writes(self, exc: BaseException) -> list[ConstantHiddenWrite]:
        """The hidden states this compilation's step set to a literal, read from the exception the
        compiler raised on them."""
        return constant_hidden_writes(exc)


# per code object: (the code, whether it is the compiler's, whether it has an ``eqn`` local);
# keyed by id (a code's hash reads its whole body), the code kept so that its id stays its own
_CODE_ROLES: dict[int, tuple[CodeType, bool, bool]] = {}


def _code_role(frame: FrameType) -> tuple[CodeType, bool, bool]:
    code = frame.f_code
    role = _CODE_ROLES.get(id(code))
    if role is None:
        compiler = str(frame.f_globals.get("__name__", "")).startswith("braintrace._compiler")
        role = (code, compiler, "eqn" in code.co_varnames or "eqn" in code.co_cellvars)
        _CODE_ROLES[id(code)] = role
    return role


def _subject_eqn(frame: FrameType | None, depth: int = 4) -> jv.JaxprEqn | None:
    """The equation a compiler pass is working on: its local ``eqn``, in the first
    ``depth`` compiler frames from ``frame`` outwards.

    Records carry weight paths and vars but rarely the equation itself; the
    pass that emits one always has the equation at hand under that name.
    """
    while frame is not None and depth:
        _, compiler, has_eqn = _code_role(frame)
        if compiler:
            depth -= 1
            if has_eqn:  # reading f_locals copies every local: only for a frame that has one
                candidate = frame.f_locals.get("eqn")
                if candidate is not None and jv.is_eqn(candidate):
                    return cast(jv.JaxprEqn, candidate)
        frame = frame.f_back
    return None


@contextlib.contextmanager
def _tee_records(sink: list[RecordView], subjects: list[jv.JaxprEqn | None] | None = None,
                 needs_subject: Callable[[RecordView], bool] | None = None) -> Iterator[None]:
    original = _diagnostics.DiagnosticReporter.append

    def append(reporter: _diagnostics.DiagnosticReporter, record: _diagnostics.CompilationRecord) -> None:
        view = record_view(record)
        sink.append(view)
        if subjects is not None:
            subject = None
            if needs_subject is None or needs_subject(view):
                # emit(), the pass that called it and that pass's caller: further out
                # an ``eqn`` is a driver's stale loop variable
                subject = _subject_eqn(sys._getframe(1))
            subjects.append(subject)
        original(reporter, record)

    _diagnostics.DiagnosticReporter.append = append  # type: ignore[method-assign, assignment]  # the tee is the point
    try:
        yield
    finally:
        _diagnostics.DiagnosticReporter.append = original  # type: ignore[method-assign]


_Kept = TypeVar("_Kept")


@contextlib.contextmanager
def _keep(module: ModuleType, name: str, holder: list[_Kept], keep_result: bool = False) -> Iterator[None]:
    """While compiling, remember what ``module.name`` is called with (or returns).

    Used for the jaxpr before jit inlining (the jit calls are the only user
    frames of a cached jit body), the jaxpr before canonicalisation (where the
    rewritten conds and scans still are) and the ModuleInfo, which the compiler
    drops when it raises.
    """
    original = getattr(module, name, None)
    if original is None:  # a braintrace without this pass
        yield
        return

    def spy(*args: object, **kwargs: object) -> object:
        if not keep_result and args:
            holder.append(cast(_Kept, args[0]))  # the pass's first argument, as the caller names its type
        result = original(*args, **kwargs)
        if keep_result:
            holder.append(cast(_Kept, result))
        return result

    setattr(module, name, spy)
    try:
        yield
    finally:
        setattr(module, name, original)


@dataclass(frozen=True)
class StateWrite:
    """One write of the user's code to a state in the step, with the units it held before and after."""

    is_param: bool
    frame: jv.SourceFrame  # the user's line
    old_unit: str
    new_unit: str
    state_id: int = 0  # id() of the state written, to find the write of a state the compiler names


def _unit_text(value: object) -> str:
    if not isinstance(value, saiunit.Quantity):  # an array, a tracer, a pytree: no unit to report
        return ""
    try:
        unit = saiunit.get_unit(value)
        return "" if unit.is_unitless else str(unit)
    except Exception:  # a quantity saiunit cannot read back
        return ""


@contextlib.contextmanager
def _record_state_writes(sink: list[StateWrite]) -> Iterator[None]:
    """Remember the user line of every state write while the step is traced.

    brainstate re-raises a failed write with the traceback of the state's
    creation, so this record is the only trace of the line that wrote it.
    """
    owner = next(cls for cls in brainstate.State.__mro__ if "value" in cls.__dict__)
    original = owner.__dict__["value"]

    def set_value(state: ModelState, value: object) -> None:
        frame = jv.user_frame_of_stack()
        if frame is not None:
            # the stored value, not the getter: a read through the getter would be
            # recorded in the trace being built
            sink.append(StateWrite(isinstance(state, brainstate.ParamState), frame,
                                   _unit_text(getattr(state, "_value", None)), _unit_text(value), id(state)))
        original.fset(state, value)

    setattr(owner, "value", property(original.fget, set_value, original.fdel, original.__doc__))
    try:
        yield
    finally:
        setattr(owner, "value", original)


# Warnings a rule reads (braintrace says only this about an ETP op decomposed
# under vmap); every other warning is dropped without being built: recording
# them all cost a tenth of a large model's compile.
KEPT_WARNINGS = (r"ETP primitive .* was decomposed into standard JAX ops under vmap",)


@contextlib.contextmanager
def quiet(sink: list[tuple[str, str]]) -> Iterator[None]:
    """Keep the compiler's ``warnings.warn`` echoes and JAX's noise off the terminal."""
    jax_logger = logging.getLogger("jax")
    level = jax_logger.level
    jax_logger.setLevel(logging.ERROR)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("ignore")
        for pattern in KEPT_WARNINGS:
            warnings.filterwarnings("always", message=pattern)
        try:
            yield
        finally:
            jax_logger.setLevel(level)
            sink.extend((w.category.__name__, str(w.message)) for w in caught)


def has_hidden_state(model: brainstate.nn.Module) -> bool:
    """Whether the model holds a HiddenState (the walk stops at the first one).

    The attributes of its modules are looked through first: brainstate's own
    graph walk costs a hundred times more, and a model without one (to be
    initialised) is still walked by it before the answer is no.
    """
    return _holds_hidden_state(model) or any(
        isinstance(leaf, brainstate.HiddenState) for _, leaf in brainstate.graph.iter_leaf(model))


_HIDDEN, _NODE, _ITEMS, _MAPPING, _LEAF = range(5)
_NODE_KINDS: dict[type, int] = {}  # by exact type: isinstance against brainstate's metaclasses is slow


def _node_kind(cls: type) -> int:
    kind = _NODE_KINDS.get(cls)
    if kind is None:
        if issubclass(cls, brainstate.HiddenState):
            kind = _HIDDEN
        elif issubclass(cls, brainstate.graph.Node):
            kind = _NODE
        elif issubclass(cls, (list, tuple)):
            kind = _ITEMS
        elif issubclass(cls, dict):
            kind = _MAPPING
        else:
            kind = _LEAF
        _NODE_KINDS[cls] = kind
    return kind


def _holds_hidden_state(model: object) -> bool:
    pending: list[Any] = [model]  # any object a module holds
    seen = set()
    while pending:
        node = pending.pop()
        kind = _node_kind(type(node))
        if kind == _HIDDEN:
            return True
        if kind == _LEAF or id(node) in seen:
            continue
        seen.add(id(node))
        if kind == _NODE:
            pending.extend(getattr(node, "__dict__", {}).values())
        elif kind == _ITEMS:
            pending.extend(node)
        else:
            pending.extend(node.values())
    return False


def ensure_states(model: brainstate.nn.Module, batch_size: int | None = None) -> None:
    """Initialise the model's states when its factory did not (quietly)."""
    if has_hidden_state(model):
        return
    with quiet([]):
        if batch_size is None:
            brainstate.nn.init_all_states(model)
        else:
            brainstate.nn.init_all_states(model, batch_size=batch_size)


def compiled_states(minfo: ModuleInfo) -> dict[StatePath, ModelState]:
    """The states the compiler found in the model, by path: its own walk, free to reuse
    (it leaves out states the step does not use)."""
    retrieved = getattr(minfo, "retrieved_model_states", None) or {}
    return {tuple(path): st for path, st in retrieved.items() if isinstance(path, tuple)}


def compile_model(model: brainstate.nn.Module, inputs: tuple[object, ...],
                  # keywords of braintrace.compile_etrace_graph from the user's configuration, each of its own type
                  compile_options: Mapping[str, Any],
                  needs_subject: Callable[[RecordView], bool] | None = None) -> Compilation:
    """Trace ``model`` and run the ETrace compiler, hidden perturbation included.

    ``needs_subject``: which records will be located (the equation a pass was
    working on is read from its frame while it emits, for those only).
    """
    result = Compilation(inputs_shown=describe_inputs(inputs))
    minfo_holder: list[ModuleInfo] = []
    jaxpr_holder: list[jv.JaxprLike] = []
    raw_holder: list[jv.JaxprLike] = []
    start = time.perf_counter()
    with contextlib.ExitStack() as hooks:
        hooks.enter_context(quiet(result.warnings))
        hooks.enter_context(_tee_records(result.records, result.record_subjects, needs_subject))
        hooks.enter_context(_record_state_writes(result.state_writes))
        hooks.enter_context(_keep(_graph_module, "extract_module_info", minfo_holder, keep_result=True))
        hooks.enter_context(_keep(_module_info_module, "canonicalize_control_flow", jaxpr_holder))
        hooks.enter_context(_keep(_module_info_module, "inline_jit_calls", raw_holder))
        try:
            result.graph = braintrace.compile_etrace_graph(
                model, *inputs,  # type: ignore[arg-type]  # braintrace annotates each input as a tuple
                include_hidden_perturb=True, **compile_options)
        except Exception as exc:  # every compiler failure is a finding about the model
            result.error = exc
    result.seconds = time.perf_counter() - start
    if minfo_holder:
        result.module_info = minfo_holder[-1]
    if jaxpr_holder:
        result.traced_jaxpr = jaxpr_holder[0]
    if raw_holder:
        result.raw_jaxpr = raw_holder[0]
    if result.graph is not None:
        result.module_info = result.graph.module_info
        result.records, result.record_subjects = one_inclusion_per_weight(
            result.graph, result.records, result.record_subjects)
    return result


def describe_inputs(inputs: tuple[object, ...]) -> str:
    """``(4,) float32, (2, 3) int32``: the shape and dtype of each example input (a pytree's leaves
    in brackets); what a shape error while tracing is measured against."""
    def one(value: object) -> str:
        unit = getattr(value, "unit", None)
        if unit is not None and hasattr(value, "shape"):  # a saiunit quantity: one array with a unit
            array = f"{tuple(value.shape)} {getattr(value, 'dtype', '')}".strip()
            return f"{array} {unit}" if not getattr(unit, "is_unitless", False) else array
        leaves = jax.tree.leaves(value)
        shown: list[str] = []
        for leaf in leaves:
            shape = getattr(leaf, "shape", None)
            dtype = getattr(leaf, "dtype", None)
            if shape is None:
                shown.append(type(leaf).__name__)
            else:
                shown.append(f"{tuple(shape)} {dtype}" if dtype is not None else str(tuple(shape)))
        if len(shown) == 1 and leaves and leaves[0] is value:
            return shown[0]
        return "[" + ", ".join(shown) + "]"

    try:
        return ", ".join(one(value) for value in inputs)
    except Exception:  # an input JAX cannot flatten: the message goes without shapes
        return ""


# --------------------------------------------------------------------------- records


@dataclass(frozen=True)
class ErrorSubject:
    """What the compiler was working on when it raised: equations, vars, states."""

    eqns: tuple[jv.JaxprEqn, ...] = ()
    vars: tuple[jv.Var, ...] = ()  # outputs of the equations to show (an ETP op's ``y``)
    states: tuple[ModelState, ...] = ()


def _is_jaxpr_var(value: object) -> bool:
    return type(value).__name__ == "Var" and hasattr(value, "aval")


def exception_subject(exc: BaseException) -> ErrorSubject:
    """Read braintrace's frames on an exception's traceback, innermost first.

    The compiler's exceptions name the offending equation only in their text;
    the frame that raised still holds it (``eqn``), a non-converging
    canonicalisation holds the equations of its last sweep, a rejected
    relation holds the relation, a hidden group holds its states. A crash of
    braintrace itself (a ``KeyError`` deep in a pass) is read the same way:
    the innermost braintrace frame holding an equation, under any name, or
    else a var of the step, says what was being handled.
    """
    frames = []
    tb = exc.__traceback__
    while tb is not None:
        frames.append(tb.tb_frame)
        tb = tb.tb_next
    ours = [f for f in reversed(frames) if str(f.f_globals.get("__name__", "")).startswith("braintrace.")]
    eqns: list[jv.JaxprEqn] = []
    vars_: list[jv.Var] = []
    states: list[ModelState] = []
    for frame in ours:
        local = frame.f_locals
        sweep = local.get("last_sweep")
        if isinstance(sweep, (list, tuple)) and sweep:
            # a driver frame: its ``eqn`` is a stale loop variable
            eqns.extend(e for e in sweep if jv.is_eqn(e))
        elif jv.is_eqn(local.get("eqn")):
            eqns.append(local["eqn"])
        else:
            eqns.extend(v for v in local.values() if jv.is_eqn(v))
            del eqns[1:]
        relation = local.get("relation")
        if relation is not None and getattr(relation, "y_var", None) is not None:
            vars_.append(relation.y_var)
        elif not eqns:
            vars_.extend(v for v in local.values() if _is_jaxpr_var(v))
        owner = local.get("self")
        hidden_states = getattr(owner, "hidden_states", None) if owner is not None else None
        if isinstance(hidden_states, (list, tuple)):
            states.extend(hidden_states)
        if eqns or vars_ or states:
            break
    return ErrorSubject(tuple(eqns), tuple(vars_), tuple(states))


# --------------------------------------------------------------------------- model tables


def is_etp_primitive(eqn: jv.JaxprEqn) -> bool:
    return isinstance(eqn.primitive, braintrace.ETPPrimitive)


def model_states(model: brainstate.nn.Module) -> dict[StatePath, ModelState]:
    """Every state of the model keyed by its module path."""
    return {tuple(path): st for path, st in brainstate.graph.states(model).items()}


def state_role(state: ModelState) -> str:
    """What a state is to online learning: ``weight`` (a ParamState), ``hidden`` (a HiddenState) or ``other``."""
    if isinstance(state, brainstate.ParamState):
        return "weight"
    return "hidden" if isinstance(state, brainstate.HiddenState) else "other"


def state_source_info(state: ModelState) -> SourceInfo | None:
    return getattr(state, "_source_info", None)


def weight_invars(minfo: ModuleInfo) -> dict[jv.Var, StatePath]:
    """Every weight input var of the traced step, mapped to its ParamState path."""
    return {var: tuple(path) for var, path in minfo.invar_to_weight_path.items()}


def _state_invar_values(minfo: ModuleInfo,
                        kind: type[brainstate.State[object]]) -> dict[jv.Var, npt.NDArray[np.generic]]:
    """Every input var of the traced step that stands for a state of ``kind`` -> the array it holds now (a
    quantity's mantissa), pairing the compiled states with their vars as the compiler lists them; a state whose
    value is a tracer (the model was captured while a program was being traced) has none."""
    values: dict[jv.Var, npt.NDArray[np.generic]] = {}
    for state, ins in zip(minfo.compiled_model_states, minfo.state_tree_invars):
        if not isinstance(state, kind):
            continue
        mantissas = [saiunit.get_mantissa(leaf) for leaf in jax.tree.leaves(state.value)]
        if any(isinstance(m, jax.core.Tracer) for m in mantissas):
            continue  # a model captured inside a trace (`etrace-lint run`, the pytest plugin): no value to read
        leaves = [np.asarray(m) for m in mantissas]
        variables = jax.tree.leaves(ins)
        if len(leaves) == len(variables):  # one array per var, in the same order
            values.update((var, leaf) for var, leaf in zip(variables, leaves) if jv.is_var(var))
    return values


def weight_invar_values(minfo: ModuleInfo) -> dict[jv.Var, npt.NDArray[np.generic]]:
    """Every weight input var of the traced step -> the array it stands for now, as the ParamState holds it
    (a quantity's mantissa): before any training step, the value the target's factory gave it."""
    return _state_invar_values(minfo, brainstate.ParamState)


def hidden_invar_values(minfo: ModuleInfo) -> dict[jv.Var, npt.NDArray[np.generic]]:
    """Every hidden state's input var of the traced step -> the array it stands for now, as the HiddenState holds
    it (a quantity's mantissa): before any training step, the value the target's factory (or ``init_state``) gave
    it."""
    return _state_invar_values(minfo, brainstate.HiddenState)


def hidden_invars(minfo: ModuleInfo) -> dict[jv.Var, StatePath]:
    return {var: tuple(path) for var, path in minfo.invar_to_hidden_path.items()}


def hidden_outvars(minfo: ModuleInfo) -> dict[jv.Var, StatePath]:
    return {var: tuple(path) for var, path in minfo.outvar_to_hidden_path.items()}


@dataclass(frozen=True)
class UntracedState:
    """A state the step writes that the compiler does not follow from step to step."""

    path: StatePath
    kind: str  # its class, such as ShortTermState
    invars: tuple[jv.Var, ...]  # its value as the step reads it
    outvars: tuple[jv.Var, ...]  # its value as the step leaves it


def untraced_states(minfo: ModuleInfo) -> list[UntracedState]:
    """States written by the step that are neither hidden states nor weights: the compiler
    treats what they carry into the next step as a constant (a ShortTermState, a buffer)."""
    hidden_paths = {tuple(path) for path in minfo.hidden_path_to_invar}
    found = []
    for state, ins, outs in zip(minfo.compiled_model_states, minfo.state_tree_invars, minfo.state_tree_outvars):
        if isinstance(state, (brainstate.HiddenState, brainstate.ParamState)):
            continue
        path = minfo.state_id_to_path.get(id(state))
        if path is None or tuple(path) in hidden_paths:
            continue
        ins = tuple(v for v in jax.tree.leaves(ins) if jv.is_var(v))
        outs = tuple(v for v in jax.tree.leaves(outs) if jv.is_var(v) and all(v is not i for i in ins))
        if ins and outs:
            found.append(UntracedState(tuple(path), type(state).__name__, ins, outs))
    return found


def traced_jaxpr(minfo: ModuleInfo) -> jv.ClosedJaxpr:
    jaxpr: jv.ClosedJaxpr = minfo.closed_jaxpr  # braintrace imports the type from where this JAX no longer has it
    return jaxpr


def relation_weight_paths(graph: ETraceGraph) -> set[StatePath]:
    """ParamState paths the compiler connected to a hidden state (they learn online)."""
    paths: set[StatePath] = set()
    for relation in graph.hidden_param_op_relations:
        for path in (relation.trainable_paths or {}).values():
            paths.add(tuple(path))
    return paths
