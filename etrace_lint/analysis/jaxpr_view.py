"""The one place that touches JAX internals: jaxprs, equations, vars, source info.

JAX is merging ``ClosedJaxpr`` into ``Jaxpr`` and moves helpers between
private modules; everything the rest of etrace-lint needs about a jaxpr goes
through the small functions here so that a JAX upgrade touches one file.
"""

from __future__ import annotations

import functools
import os
import sys
import sysconfig
from collections.abc import Mapping
from dataclasses import dataclass
from types import CodeType, FrameType
from typing import Callable, Iterator, NamedTuple, TypeAlias, TypeGuard, cast

import jax.numpy as jnp
import numpy as np
from jax._src import source_info_util as _siu
from jax._src.source_info_util import SourceInfo
from jax.extend.core import ClosedJaxpr as ClosedJaxpr  # type: ignore[attr-defined, unused-ignore]  # JAX 0.12: an alias of Jaxpr it does not re-export
from jax.extend.core import Jaxpr as Jaxpr
from jax.extend.core import JaxprEqn as JaxprEqn  # the equation type, for the modules that read jaxprs
from jax.extend.core import Literal as Literal
from jax.extend.core import Var as Var

from ..core.places import source_path
from ..core.positions import character_column, frame_position, is_pseudo_file, traceback_position

JaxprLike: TypeAlias = Jaxpr | ClosedJaxpr  # JAX is folding ClosedJaxpr into Jaxpr: either
Atom: TypeAlias = Var | Literal  # an equation's operand

_LIBRARY_PACKAGES = ("jax", "jaxlib", "brainstate", "braintrace", "saiunit", "brainunit",
                     "etrace_lint", "numpy", "brainevent", "braintools")


def _library_roots() -> tuple[str, ...]:
    roots = []
    for name in _LIBRARY_PACKAGES:
        module = sys.modules.get(name)
        file = getattr(module, "__file__", None)
        if file:
            roots.append(os.path.dirname(os.path.abspath(file)) + os.sep)
    for key in ("stdlib", "platstdlib"):
        path = sysconfig.get_paths().get(key)
        if path:
            roots.append(os.path.abspath(path) + os.sep)
    return tuple(dict.fromkeys(roots))


_ROOTS: tuple[str, ...] | None = None


@functools.lru_cache(maxsize=4096)
def is_library_file(path: str) -> bool:
    """True for frames of jax, brainstate, braintrace, saiunit, the stdlib or etrace-lint."""
    global _ROOTS
    if _ROOTS is None:
        _ROOTS = _library_roots()
    if is_pseudo_file(path):
        return True
    if path.startswith("<"):  # a terminal IPython cell
        return False
    return os.path.abspath(path).startswith(_ROOTS)


@dataclass(frozen=True)
class SourceFrame:
    path: str
    line: int
    column: int = 1


# etrace_lint/ itself: this module lives in etrace_lint/engine/
_OWN_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


@functools.lru_cache(maxsize=4096)
def _is_linter_frame(path: str) -> bool:
    return bool(path) and os.path.abspath(path).startswith(_OWN_ROOT)


_LINTER, _LIBRARY, _USER = "linter", "library", "user"
_FILE_KINDS: dict[str, str] = {}


def _file_kind(path: str) -> str:
    kind = _FILE_KINDS.get(path)
    if kind is None:
        if _is_linter_frame(path):
            kind = _LINTER
        else:
            kind = _LIBRARY if is_library_file(path) else _USER
        _FILE_KINDS[path] = kind
    return kind


@functools.lru_cache(maxsize=4096)
def _absolute(path: str) -> str:
    return source_path(path)  # a terminal IPython cell keeps its name: its lines are known by it


class _TracebackFrame(NamedTuple):
    kind: str  # _LIBRARY or _USER
    file_name: str
    code: CodeType | None  # the frame's code object; None where this JAX keeps only decoded frames
    where: int  # the code's last instruction, or the decoded frame's line


def _traceback_frames(source_info: SourceInfo | None) -> Iterator[_TracebackFrame]:
    """The frames of the Python traceback that created an equation or a state, innermost first.

    Frames outside the linter's own call (whoever called etrace-lint: a
    script, a test runner) are never the model's code, so the walk stops at
    the first etrace-lint frame. Nothing is decoded here: a caller decodes
    only the frame it returns (:func:`_located`), and this runs for every finding.
    """
    traceback = getattr(source_info, "traceback", None)
    if traceback is None:
        return
    try:
        codes, lastis = traceback.raw_frames()
    except AttributeError:  # a JAX without raw frames: its decoded ones
        for frame in traceback.frames:
            kind = _file_kind(frame.file_name)
            if kind is _LINTER:
                return
            yield _TracebackFrame(kind, frame.file_name, None, frame.line_num)
        return
    kinds = _FILE_KINDS
    for index, code in enumerate(codes):
        file_name = code.co_filename
        kind = kinds.get(file_name) or _file_kind(file_name)
        if kind is _LINTER:
            return
        yield _TracebackFrame(kind, file_name, code, lastis[index])


def _located(frame: _TracebackFrame) -> SourceFrame:
    if frame.code is None:
        return SourceFrame(_absolute(frame.file_name), frame.where, 1)
    # code objects compare equal across files when their bodies do: the file is part of the key
    return _decoded(frame.file_name, frame.code, frame.where)


def user_frame_of(source_info: SourceInfo | None) -> SourceFrame | None:
    """The deepest frame of user code that created an equation or a state."""
    for frame in _traceback_frames(source_info):
        if frame.kind is _USER:
            return _located(frame)
    return None


@functools.lru_cache(maxsize=16384)
def _decoded(file_name: str, code: CodeType, lasti: int) -> SourceFrame:
    """A user frame's line; a loop that builds many layers builds them all on one line."""
    frame = _siu.raw_frame_to_frame(code, lasti)
    return SourceFrame(_absolute(file_name), frame.start_line,
                       character_column(file_name, frame.start_line, frame.start_column))


def user_frame_of_exception(exc: BaseException) -> SourceFrame | None:
    """The deepest frame of user code on an exception's traceback.

    JAX may have filtered its own frames from the traceback; the unfiltered
    chain hangs off ``__cause__``/``__context__`` when that happened, so both
    are searched and the deepest user frame wins.
    """
    best = None
    seen = set()
    pending: list[BaseException | None] = [exc]
    while pending:
        current = pending.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        tb = current.__traceback__
        while tb is not None:
            path = tb.tb_frame.f_code.co_filename
            if not is_library_file(path):
                best = SourceFrame(_absolute(path), *traceback_position(tb))
            tb = tb.tb_next
        if best is not None:
            return best
        pending.extend([current.__cause__, current.__context__])
    return best


def exception_modules(exc: BaseException) -> list[str]:
    """Module names of the frames an exception went through, innermost first."""
    names = []
    tb = exc.__traceback__
    while tb is not None:
        names.append(tb.tb_frame.f_globals.get("__name__", ""))
        tb = tb.tb_next
    return list(reversed(names))


# --------------------------------------------------------------------------- jaxprs


def open_jaxpr(jaxpr_like: JaxprLike) -> Jaxpr:
    """A bare ``Jaxpr`` from a ``ClosedJaxpr`` or a ``Jaxpr``."""
    return jaxpr_like.jaxpr if isinstance(jaxpr_like, ClosedJaxpr) else jaxpr_like


def _duck_jaxpr(item: object) -> Jaxpr:
    """A jaxpr of a type this JAX moved elsewhere, recognised by its ``eqns`` (or its ``jaxpr``'s)."""
    return cast(Jaxpr, getattr(item, "jaxpr", item))


def primitive_name(eqn: JaxprEqn) -> str:
    return str(eqn.primitive.name)


# JAX is folding ClosedJaxpr into Jaxpr: whichever of the two this JAX has.
# A type it moved elsewhere still goes through the duck test below.
_JAXPR_TYPES = (Jaxpr, ClosedJaxpr)
# Param values that never hold a jaxpr (shapes, dtypes, flags, names, nested tuples):
# most params of most equations, so they skip the attribute probes below.
_PLAIN_PARAM_TYPES = (str, int, float, complex, bool, type(None), tuple, list, frozenset, type)
# exact types that are never a jaxpr nor hold one at the top level (a tuple of them is
# looked into below; a tuple of tuples, e.g. dimension numbers, holds none)
_PLAIN_EXACT = frozenset({str, int, float, complex, bool, type(None), frozenset, type})


def sub_jaxprs(eqn: JaxprEqn) -> list[Jaxpr]:
    """Every jaxpr nested in an equation's params (pjit, scan, while, cond, custom_*, remat)."""
    params = eqn.params
    if not params:  # element-wise arithmetic: most equations of a step
        return []
    found = []
    for value in params.values():
        if type(value) in _PLAIN_EXACT:  # the common case, by one set lookup
            continue
        items = value if isinstance(value, (tuple, list)) else (value,)
        for item in items:
            if type(item) in _PLAIN_EXACT:
                continue
            if isinstance(item, _JAXPR_TYPES):
                found.append(open_jaxpr(item))
            elif isinstance(item, _PLAIN_PARAM_TYPES):
                continue
            elif hasattr(item, "eqns") or hasattr(getattr(item, "jaxpr", None), "eqns"):
                found.append(_duck_jaxpr(item))
            elif callable(item) and hasattr(item, "__wrapped__") is False and hasattr(item, "jaxpr"):
                found.append(_duck_jaxpr(item.jaxpr))
    return found


def traced_function_name(eqn: JaxprEqn) -> str:
    """The name of the function a call's body was traced from, as JAX's debug info records it (``_softmax`` for
    the ``custom_jvp`` call ``jax.nn.softmax`` writes under ``jax_softmax_custom_jvp``); ``""`` where none is."""
    bodies = sub_jaxprs(eqn)
    if not bodies:
        return ""
    try:
        info = bodies[0].debug_info
    except AttributeError:  # a JAX that keeps no debug info on its jaxprs
        return ""
    source = info.func_src_info if info is not None else None
    return source.split(" ", 1)[0] if source else ""


class EqnSite(NamedTuple):
    """An equation and the chain of equations that enclose it (outermost first).

    A named tuple: a walk makes one per equation."""

    eqn: JaxprEqn
    parents: tuple[JaxprEqn, ...] = ()

    @property
    def primitive(self) -> str:
        """The name of the equation's primitive: ``dot_general``."""
        return primitive_name(self.eqn)

    @property
    def operand_shapes(self) -> tuple[tuple[int, ...], ...]:
        """The shapes of the equation's variable operands, literals left out."""
        return tuple(aval_shape(v) for v in invars(self.eqn))


def walk(jaxpr_like: JaxprLike, parents: tuple[JaxprEqn, ...] = ()) -> Iterator[EqnSite]:
    """Every equation, recursing explicitly into nested jaxprs."""
    jaxpr = open_jaxpr(jaxpr_like)
    for eqn in jaxpr.eqns:
        yield EqnSite(eqn, parents)
        for sub in sub_jaxprs(eqn):
            yield from walk(sub, parents + (eqn,))


def count_eqns(jaxpr_like: JaxprLike) -> int:
    return sum(1 for _ in walk(jaxpr_like))


def is_eqn(obj: object) -> bool:
    """True for a jaxpr equation (duck-typed where JAX moved the class; an object whose
    attribute lookup raises something else than AttributeError is not one)."""
    if isinstance(obj, JaxprEqn):
        return True
    try:
        return hasattr(obj, "primitive") and hasattr(obj, "source_info") and hasattr(obj, "outvars")
    except Exception:  # a mapping that answers attribute lookups with KeyError
        return False


def _is_jit_call(eqn: JaxprEqn) -> bool:
    return primitive_name(eqn) in ("pjit", "jit") and "jaxpr" in eqn.params


def flatten_jit_calls(jaxpr_like: JaxprLike, parents: tuple[JaxprEqn, ...] = ()) -> Iterator[EqnSite]:
    """The top-level equations as they are once every ``jit`` call is spliced in.

    Each equation of a jit body comes with the jit calls around it (outermost
    first): an equation of a jitted function traced once and cached carries
    only the frames inside that function, so the call site is the way back
    to the user's line.
    """
    for eqn in open_jaxpr(jaxpr_like).eqns:
        if _is_jit_call(eqn):
            yield from flatten_jit_calls(eqn.params["jaxpr"], parents + (eqn,))
        else:
            yield EqnSite(eqn, parents)


def eqn_location(site: EqnSite) -> SourceFrame | None:
    """The user line of an equation; if its traceback stops in library code
    (a cached jit body traced elsewhere), the enclosing equation's line."""
    frame = user_frame_of(site.eqn.source_info)
    if frame is not None:
        return frame
    for parent in reversed(site.parents):
        frame = user_frame_of(parent.source_info)
        if frame is not None:
            return frame
    return None


def is_var(atom: object) -> TypeGuard[Var]:
    """Literals are not variables (they carry a ``val``)."""
    return not isinstance(atom, Literal)


def invars(eqn: JaxprEqn) -> list[Var]:
    # the test inlined: this runs for every equation of every pass
    return [v for v in eqn.invars if not isinstance(v, Literal)]


def outvars(eqn: JaxprEqn) -> list[Var]:
    return list(eqn.outvars)


def literal_number(atom: Atom) -> float | None:
    """The value of a scalar literal operand (``div x 8.0``), or None for a variable or an array."""
    if not isinstance(atom, Literal):
        return None
    value = atom.val
    try:
        return float(value) if value is not None and getattr(value, "shape", ()) == () else None
    except (TypeError, ValueError):
        return None


def call_body(eqn: JaxprEqn) -> Jaxpr | None:
    """The body of a ``jit``/``pjit``/``closed_call`` equation, run on the same inputs, or None."""
    return _call_body(eqn) if primitive_name(eqn) in ("pjit", "jit", "closed_call", "core_call") else None


def aval_shape(var: Atom) -> tuple[int, ...]:
    return tuple(getattr(getattr(var, "aval", None), "shape", ()))


def _dtype_of(var: Atom) -> np.dtype[np.generic] | None:
    """The dtype of a value; None for an abstract value without one (a token)."""
    dtype: np.dtype[np.generic] | None = getattr(var.aval, "dtype", None)
    return dtype


def aval_dtype(var: Atom) -> str:
    """The dtype of a value as NumPy names it (``float32``, ``int32``, ``bool``); empty for one without (a token)."""
    dtype = _dtype_of(var)
    return str(dtype) if dtype is not None else ""


def carries_no_gradient(var: Atom) -> bool:
    """A boolean or integer value: a comparison, a mask, an index. No derivative passes through it, so a value
    computed from it (``where(spike, t, last)``) depends on what it was compared from without a gradient path."""
    dtype = _dtype_of(var)  # an abstract value without one (a token) carries none either
    # JAX's own test: NumPy's calls bfloat16 and the float8 types, which JAX differentiates, not inexact
    return dtype is None or not jnp.issubdtype(dtype, jnp.inexact)


def user_frame_of_stack(skip: int = 2) -> SourceFrame | None:
    """The innermost user frame of the current Python stack, above the ``skip`` innermost frames
    (this function and the linter's hook that called it)."""
    frame: FrameType | None = sys._getframe(skip)
    while frame is not None:
        kind = _file_kind(frame.f_code.co_filename)
        if kind is _LINTER:
            return None
        if kind is _USER:
            return SourceFrame(_absolute(frame.f_code.co_filename), *frame_position(frame))
        frame = frame.f_back
    return None


# Primitives whose output holds its input's values, only laid out or typed anew: a weight or a state passing
# through them is still its value (a slice or a gather keeps only some of them: not these).
SAME_VALUE_PRIMITIVES = frozenset({"transpose", "reshape", "convert_element_type", "broadcast_in_dim", "squeeze",
                                   "expand_dims", "copy", "copy_p"})


def constant_number(atom: Atom, producer: Callable[[Atom], EqnSite | None], limit: int = 8) -> float | None:
    """The number a scalar constant holds, back through :data:`SAME_VALUE_PRIMITIVES` (``jnp.clip``'s bounds, a
    Python float the step casts and broadcasts); None for a value that is not a constant."""
    for _ in range(limit):
        number = literal_number(atom)
        if number is not None:
            return number
        site = producer(atom)
        if site is None or site.primitive not in SAME_VALUE_PRIMITIVES or not site.eqn.invars:
            return None
        atom = site.eqn.invars[0]
    return None


def divisor(site: EqnSite) -> Var | None:
    """The var an equation divides by: a ``div``'s second operand, a negative ``integer_pow``'s base (``x ** -1``,
    ``jnp.reciprocal``); None for another equation, or a divisor that is a literal."""
    operands = site.eqn.invars
    if site.primitive == "div" and len(operands) == 2:
        found = operands[1]
    elif site.primitive == "integer_pow" and len(operands) == 1 and int(site.eqn.params.get("y", 0)) < 0:
        found = operands[0]
    else:
        return None
    return found if is_var(found) else None


def value_origin(var: Var, producer: Callable[[Atom], EqnSite | None], limit: int = 16) -> Var:
    """The var whose values ``var`` holds, back through :data:`SAME_VALUE_PRIMITIVES`: a weight's or a hidden
    state's input var where ``var`` is only it reshaped, broadcast or cast. ``producer``: the equation that
    computes a var, None for an input (the locator's ``producer``)."""
    for _ in range(limit):
        site = producer(var)
        if site is None or site.primitive not in SAME_VALUE_PRIMITIVES or not invars(site.eqn):
            return var
        var = invars(site.eqn)[0]
    return var



def top_level_divisions(sites: list[EqnSite], producer: Callable[[Atom], EqnSite | None]
                        ) -> Iterator[tuple[EqnSite, Var]]:
    """Each division of the step at its top level (outside any loop, branch or call body), in the step's order,
    with the var whose values its divisor holds (:func:`divisor`, back through :func:`value_origin`)."""
    for site in sites:
        found = None if site.parents else divisor(site)
        if found is not None:
            yield site, value_origin(found, producer)

# --------------------------------------------------------------------------- position flow (verify)

# Primitives whose every output position depends only on the same position of
# their inputs. A path made only of these keeps "unit i" as "unit i".
POSITIONWISE_PRIMITIVES = frozenset({
    "add", "add_any", "sub", "mul", "div", "neg", "max", "min", "pow", "integer_pow", "square",
    "sqrt", "rsqrt", "cbrt", "exp", "exp2", "log", "log1p", "expm1", "tanh", "logistic", "sin",
    "cos", "tan", "atan2", "abs", "sign", "floor", "ceil", "round", "is_finite", "erf", "erfc",
    "erf_inv", "select_n", "clamp", "convert_element_type", "copy", "copy_p", "stop_gradient",
    "gt", "lt", "ge", "le", "eq", "ne", "and", "or", "not", "xor", "rem", "nextafter",
    "reduce_precision", "real", "imag", "conj", "optimization_barrier",
})
# Calls whose body is inlined for the purpose of the walk.
_CALL_PRIMITIVES = frozenset({"pjit", "jit", "closed_call", "core_call", "custom_jvp_call",
                              "custom_vjp_call", "custom_vjp_call_jaxpr", "remat", "checkpoint"})


def _call_body(eqn: JaxprEqn) -> Jaxpr | None:
    """The one jaxpr a call equation runs with the same inputs, or None."""
    for key in ("jaxpr", "call_jaxpr", "fun_jaxpr"):
        body = eqn.params.get(key)
        if isinstance(body, _JAXPR_TYPES):
            if len(open_jaxpr(body).invars) == len(eqn.invars):
                return open_jaxpr(body)
    return None


def _keeps_positions(eqn: JaxprEqn, var: Atom, out: Var) -> bool:
    """Whether ``out`` at position p reads ``var`` only at position p."""
    name = primitive_name(eqn)
    in_shape, out_shape = aval_shape(var), aval_shape(out)
    if name == "broadcast_in_dim":
        # only leading (batch) axes added: trailing positions keep their labels
        offset = len(out_shape) - len(in_shape)
        dims = tuple(eqn.params.get("broadcast_dimensions", ()))
        return dims == tuple(range(offset, len(out_shape))) and out_shape[offset:] == in_shape
    if name in ("reshape", "squeeze", "expand_dims"):
        return tuple(d for d in in_shape if d != 1) == tuple(d for d in out_shape if d != 1)
    return name in POSITIONWISE_PRIMITIVES and in_shape == out_shape


def position_flow(jaxpr_like: JaxprLike, sources: Mapping[Var, bool]) -> dict[Var, bool]:
    """Every var reached from ``sources`` -> whether all its paths keep positions.

    ``sources`` maps vars to True (aligned). A var read through anything but a
    position-wise equation (a matmul, a reduction, a roll, a loop) is reached
    but not aligned. Calls (pjit, custom_jvp) are followed into their body.
    """
    state = dict(sources)
    for eqn in open_jaxpr(jaxpr_like).eqns:
        reached = [(i, v) for i, v in enumerate(eqn.invars) if is_var(v) and v in state]
        if not reached:
            continue
        body = _call_body(eqn) if primitive_name(eqn) in _CALL_PRIMITIVES else None
        if body is not None:
            inner = position_flow(body, {body.invars[i]: state[v] for i, v in reached})
            for out, inner_out in zip(eqn.outvars, body.outvars):
                if is_var(inner_out) and inner_out in inner:
                    state[out] = inner[inner_out]
            continue
        for out in eqn.outvars:
            state[out] = all(state[v] and _keeps_positions(eqn, v, out) for _, v in reached)
    return state


# --------------------------------------------------------------------------- data flow into nested jaxprs


@dataclass(frozen=True)
class SubJaxprBinding:
    """How values cross into and out of one jaxpr nested in an equation."""

    jaxpr: Jaxpr  # the open inner jaxpr
    inputs: tuple[tuple[Atom, Var], ...] = ()  # (outer atom, inner invar)
    outputs: tuple[tuple[Atom, Var], ...] = ()  # (inner atom, outer outvar)
    carries: tuple[tuple[Atom, Var], ...] = ()  # (inner outvar, inner invar): a loop feeds its outputs back


def _bind_while(eqn: JaxprEqn) -> list[SubJaxprBinding]:
    cond_n, body_n = eqn.params["cond_nconsts"], eqn.params["body_nconsts"]
    cond, body = open_jaxpr(eqn.params["cond_jaxpr"]), open_jaxpr(eqn.params["body_jaxpr"])
    carry = list(eqn.invars[cond_n + body_n:])
    cond_in = tuple(zip(list(eqn.invars[:cond_n]) + carry, cond.invars))
    body_in = tuple(zip(eqn.invars[cond_n:], body.invars))
    body_out = tuple(zip(body.outvars, eqn.outvars))
    carries = tuple(zip(body.outvars, body.invars[body_n:]))
    return [SubJaxprBinding(cond, cond_in), SubJaxprBinding(body, body_in, body_out, carries)]


def _leaf_count(tree: object) -> int:
    return sum(_leaf_count(t) for t in tree) if isinstance(tree, (tuple, list)) else 1


def _bind_scan(eqn: JaxprEqn) -> list[SubJaxprBinding]:
    body = open_jaxpr(eqn.params["jaxpr"])
    if "num_consts" in eqn.params:
        n_consts, n_carry = eqn.params["num_consts"], eqn.params["num_carry"]
    else:  # newer JAX: operand groups as (consts, carry, xs) trees
        consts, carry = eqn.params["ft_in"][:2]
        n_consts, n_carry = _leaf_count(consts), _leaf_count(carry)
    carries = tuple(zip(body.outvars[:n_carry], body.invars[n_consts:n_consts + n_carry]))
    return [SubJaxprBinding(body, tuple(zip(eqn.invars, body.invars)), tuple(zip(body.outvars, eqn.outvars)),
                            carries)]


_BINDERS: dict[str, Callable[[JaxprEqn], list[SubJaxprBinding]]] = {"while": _bind_while, "scan": _bind_scan}


def _bind_positionally(eqn: JaxprEqn, inner_jaxprs: list[Jaxpr]) -> list[SubJaxprBinding] | None:
    """pjit, remat, custom_jvp/vjp calls, cond branches: trailing operands are the body's inputs
    (a cond's branch index comes first) and the outputs match one to one."""
    found = []
    for inner in inner_jaxprs:
        if len(inner.invars) > len(eqn.invars) or len(inner.outvars) != len(eqn.outvars):
            return None
        operands = eqn.invars[len(eqn.invars) - len(inner.invars):]
        found.append(SubJaxprBinding(inner, tuple(zip(operands, inner.invars)),
                                     tuple(zip(inner.outvars, eqn.outvars))))
    return found


def sub_jaxpr_bindings(eqn: JaxprEqn) -> list[SubJaxprBinding] | None:
    """The nested jaxprs of an equation with their operand mapping; ``[]`` for an equation
    without any, ``None`` when the layout is not understood (treat the equation as a whole)."""
    inner_jaxprs = sub_jaxprs(eqn)
    if not inner_jaxprs:
        return []
    binder = _BINDERS.get(primitive_name(eqn))
    try:
        return binder(eqn) if binder is not None else _bind_positionally(eqn, inner_jaxprs)
    except (KeyError, TypeError, AttributeError, ValueError, IndexError):  # params this JAX lays out otherwise
        return None


def traceback_functions(source_info: SourceInfo) -> list[tuple[str, str]]:
    """(file, function name) of every frame that created an equation, innermost first,
    library frames included."""
    traceback = getattr(source_info, "traceback", None)
    if traceback is None:
        return []
    try:
        return [(f.file_name, f.function_name) for f in traceback.frames]
    except Exception:  # a JAX whose tracebacks cannot be read
        return []


# --------------------------------------------------------------------------- boundaries around an equation

# control-flow and call primitives whose bodies an equation can sit in, by the name the report gives them
BOUNDARY_PRIMITIVES = {"scan": "scan", "while": "while", "cond": "cond", "pjit": "jit", "jit": "jit",
                       "closed_call": "call", "custom_jvp_call": "custom_jvp", "custom_vjp_call": "custom_vjp",
                       "custom_vjp_call_jaxpr": "custom_vjp", "checkpoint": "checkpoint", "remat": "checkpoint",
                       "shard_map": "shard_map"}
# library frames of a mapping transform: jax.vmap's traced function, brainstate's nn.Map around it
_MAPPING_FRAMES = {"vmap.<locals>.vmap_f": "vmap", "Map.update": "Map"}


def mapping_call(source_info: SourceInfo) -> tuple[str, SourceFrame] | None:
    """("vmap" or "Map", the user's line that called it) for an equation traced under jax.vmap (or
    brainstate's vmap) or a brainstate ``nn.Map``; the innermost one. None outside any mapping.

    A vmap leaves no equation of its own in a jaxpr: the batched equations
    carry it only on their Python traceback, where the mapped function's
    frames are inside the transform's and the caller's outside them.
    """
    found = ""
    for frame in _traceback_frames(source_info):
        if frame.kind is _LIBRARY:
            # only raw frames name their function well enough to tell the transform's frames apart
            label = _MAPPING_FRAMES.get(frame.code.co_qualname, "") if frame.code is not None else ""
            if label and found != "Map":  # Map runs a vmap inside: the outer one names it
                found = label
        elif found:
            return found, _located(frame)
    return None
