"""Evaluate a jaxpr with NumPy, without compiling it with XLA.

The probe runs a few steps of two small programs (BPTT and one online step)
once per target. Compiled by XLA, they cost seconds per target (bench/bench_probe.py:
most of the probe's time was XLA's compiler), for programs that then run in
milliseconds. Interpreted equation by equation with NumPy, the same programs
cost their tracing and a few milliseconds more.

What keeps the answer the one XLA would give:

- each equation's result is cast to the dtype its output variable declares, so
  a float32 program stays float32 (NumPy would promote to float64 in places);
- a primitive without a NumPy rule here (convolutions, gathers, random bits,
  braintrace's own primitives, a callback) is bound as JAX binds it outside
  ``jit``: JAX runs it, compiled alone;
- higher-order primitives (``jit``, ``scan``, ``while``, ``cond``, ``remat``,
  custom JVP/VJP calls) are entered and their bodies interpreted the same way.

One difference is kept: XLA's CPU flushes subnormal floats (below 1.2e-38 in
float32) to zero, NumPy computes with them; no gradient the probe compares
is that small.

``interpreted(function)`` is ``brainstate.transform.jit(function)`` with the
compile replaced by this evaluation: the states the function reads and writes
are handled by brainstate's ``StatefulFunction``, as its ``jit`` handles them.
"""

from __future__ import annotations

import functools
import string
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ParamSpec, Protocol, TypeAlias, TypeVar

import brainstate
import jax
import jax.core
import numpy as np
import numpy.typing as npt
import scipy.special

# JAX 0.12 folds ClosedJaxpr into Jaxpr (it has ``jaxpr`` and ``consts`` too) and keeps the name without re-exporting it
from jax.extend.core import ClosedJaxpr as ClosedJaxpr  # type: ignore[attr-defined, unused-ignore]
from jax.extend.core import Jaxpr, JaxprEqn, Literal, Primitive, Var
from jax.typing import DTypeLike

# one value of the evaluation: a NumPy array or scalar, a Python scalar a literal holds, or a JAX array
# (a PRNG key array, which NumPy cannot hold, or what a primitive JAX ran returned)
Value: TypeAlias = "npt.NDArray[np.generic] | np.generic | jax.Array | int | float | bool"
# what the NumPy rules compute on: a boolean or numeric array of any precision
Array: TypeAlias = "npt.NDArray[np.bool_ | np.number[Any]]"
# what one equation gives: its one value, or the list of a primitive with several results
Result: TypeAlias = "Value | list[Value]"
# an equation's parameters as ``JaxprEqn.params`` holds them: each primitive's own, of its own types
Params: TypeAlias = Mapping[str, Any]
# a NumPy rule: the equation's operand values and parameters -> its result
Rule: TypeAlias = Callable[[list[Value], Params], Result]

_P = ParamSpec("_P")
_R = TypeVar("_R")


class _Reduction(Protocol):
    """A NumPy reduction over several axes (``np.sum``, ``np.all``)."""

    def __call__(self, x: Array, /, *, axis: tuple[int, ...]) -> Value: ...


class _AlongAxis(Protocol):
    """A NumPy function along one axis (``np.argmax``, ``np.cumsum``)."""

    def __call__(self, x: Array, /, *, axis: int) -> npt.NDArray[np.generic] | np.generic: ...

# the parameter holding a call-like primitive's body, by primitive name
_CALLS = {
    "pjit": "jaxpr", "jit": "jaxpr", "closed_call": "call_jaxpr", "core_call": "call_jaxpr",
    "remat2": "jaxpr", "checkpoint": "jaxpr", "remat": "jaxpr",
    "custom_jvp_call": "call_jaxpr", "custom_vjp_call": "call_jaxpr", "custom_vjp_call_jaxpr": "fun_jaxpr",
}


def interpreted(function: Callable[_P, _R]) -> Callable[_P, _R]:
    """``function`` traced once per input shapes (as ``brainstate.transform.jit`` traces it) and evaluated
    with NumPy on each call; the states it writes are written back."""
    stateful = brainstate.transform.StatefulFunction(function, return_only_write=True)

    def call(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        if kwargs:
            raise TypeError(f"an interpreted function takes its arguments by position, not {', '.join(kwargs)}")
        trace = stateful.get_state_trace(*args, compile_if_miss=True)
        read = trace.get_read_state_values(True)
        program, consts = _parts(stateful.get_jaxpr(*args, compile_if_miss=True))
        tree = stateful.get_out_treedef(*args, compile_if_miss=True)
        flat = jax.tree.flatten((args, {}, trace.get_state_values()))[0]
        outs = evaluate(program, consts, flat)
        out, written = jax.tree.unflatten(tree, [_to_jax(value) for value in outs])
        trace.assign_state_vals_v2(read, written)
        result: _R = out
        return result

    return call


def evaluate(jaxpr: Jaxpr, consts: Sequence[Value], args: Sequence[Value]) -> list[Value]:
    """The values of ``jaxpr``'s outputs for ``args``."""
    env: dict[Var, Value] = {}

    def read(atom: Var | Literal) -> Value:
        value: Value = atom.val if isinstance(atom, Literal) else env[atom]
        return value

    for var, value in zip(jaxpr.constvars, consts):
        env[var] = _to_numpy(value)
    for var, value in zip(jaxpr.invars, args):
        env[var] = _to_numpy(value)
    for eqn in jaxpr.eqns:
        values = [read(atom) for atom in eqn.invars]
        outs = _outputs(eqn, _equation(eqn, values))
        for var, value in zip(eqn.outvars, outs):
            env[var] = _as_declared(value, var.aval)
    return [read(atom) for atom in jaxpr.outvars]


def _outputs(eqn: JaxprEqn, result: Result) -> list[Value]:
    """An equation's result as the list of its output values."""
    if not eqn.primitive.multiple_results:
        return [result] if not isinstance(result, list) else [np.asarray(result)]
    assert isinstance(result, list)  # every rule of a primitive with several results gives a list
    return result


def _equation(eqn: JaxprEqn, values: list[Value]) -> Result:
    name = eqn.primitive.name
    params = eqn.params
    rule = _RULES.get(name)
    if rule is not None and all(isinstance(v, (np.ndarray, np.generic, int, float, bool)) for v in values):
        return rule(values, params)
    body = _CALLS.get(name)
    if body is not None and body in params:
        return _call(params[body], values)
    structured = _STRUCTURED.get(name)
    if structured is not None:
        try:
            return structured(values, params)
        except _Unsupported as unsupported:
            if unsupported.args and unsupported.args[0] is not params:
                raise  # an equation inside the body: the body's own equation falls back, not this one
    return _bound(eqn.primitive, values, params)


class _Unsupported(Exception):
    """A form of a primitive this module does not know: JAX runs it instead."""


def _parts(body: ClosedJaxpr | Jaxpr) -> tuple[Jaxpr, list[Value]]:
    """(the jaxpr, its constants) of a closed jaxpr, or of an open one (no constants)."""
    if isinstance(body, ClosedJaxpr):
        return body.jaxpr, list(body.consts)
    return body, []


def _call(body: ClosedJaxpr | Jaxpr, values: list[Value]) -> list[Value]:
    return evaluate(*_parts(body), values)


def _bound(primitive: Primitive, values: list[Value], params: Params) -> Result:
    """JAX runs the primitive as it runs it outside ``jit``."""
    outs = primitive.bind(*[_to_jax(v) for v in values], **params)  # type: ignore[no-untyped-call]  # JAX leaves bind unannotated
    if primitive.multiple_results:
        return [_to_numpy(o) for o in outs]
    return _to_numpy(outs)


def _to_numpy(value: Value) -> Value:
    """A NumPy array for a JAX array of an ordinary dtype; a PRNG key array (an extended dtype) stays JAX's."""
    if isinstance(value, jax.Array) and not _extended(value.dtype):
        return np.asarray(value)
    return value


def _to_jax(value: Value) -> Value:
    # device_put hands NumPy's buffer over; ``jnp.asarray`` would compile a copy for each shape and dtype
    return jax.device_put(value) if isinstance(value, (np.ndarray, np.generic)) else value


def _as_declared(value: Value, aval: object) -> Value:
    dtype = getattr(aval, "dtype", None)
    if dtype is None or isinstance(value, jax.Array) or _extended(dtype):
        return value
    array = np.asarray(value)
    return array if array.dtype == dtype else array.astype(dtype)


@functools.cache
def _extended(dtype: DTypeLike) -> bool:
    """A JAX-only dtype (a PRNG key's), which NumPy cannot hold; asked of every value the evaluation converts."""
    return bool(jax.numpy.issubdtype(dtype, jax.dtypes.extended))


# ---------------------------------------------------------------- structured control flow


def _scan(values: list[Value], params: Params) -> list[Value]:
    body = params["jaxpr"]
    if "num_consts" in params:
        consts_n, carry_n = params["num_consts"], params["num_carry"]
    else:  # newer JAX: the operands in groups (constants, carry, scanned)
        sizes = _group_sizes(params.get("ft_in"))
        if sizes is None or len(sizes) != 3 or sum(sizes) != len(values):
            raise _Unsupported(params)
        consts_n, carry_n = sizes[0], sizes[1]
    consts, carry, xs = values[:consts_n], values[consts_n:consts_n + carry_n], values[consts_n + carry_n:]
    length = params["length"]
    order = range(length - 1, -1, -1) if params["reverse"] else range(length)
    program, body_consts = _parts(body)
    ys: list[list[Value]] = [[] for _ in program.outvars[carry_n:]]
    for index in order:
        outs = evaluate(program, body_consts, [*consts, *carry, *(_at(x, index) for x in xs)])
        carry = outs[:carry_n]
        for stack, y in zip(ys, outs[carry_n:]):
            stack.append(y)
    if params["reverse"]:
        ys = [stack[::-1] for stack in ys]
    stacked = [_stack(stack) if length else _empty(var) for stack, var in zip(ys, program.outvars[carry_n:])]
    return [*carry, *stacked]


def _at(x: Value, index: int) -> Value:
    """Step ``index`` of a scanned operand."""
    at: Value = x[index] if isinstance(x, (np.ndarray, jax.Array)) else np.asarray(x)[index]
    return at


def _empty(var: Var | Literal) -> Value:
    """The stacked outputs of a scan of length 0: no step, of the shape and dtype the variable declares."""
    aval = var.aval
    assert isinstance(aval, jax.core.ShapedArray)  # a scanned output is an array
    return np.zeros((0, *aval.shape), aval.dtype)


def _stack(values: list[Value]) -> Value:
    """The scanned outputs along a new first axis: with JAX for PRNG keys (NumPy cannot hold them)."""
    if any(isinstance(v, jax.Array) for v in values):
        return jax.numpy.stack([v if isinstance(v, jax.Array) else np.asarray(v) for v in values])
    return np.stack([np.asarray(v) for v in values])


def _group_sizes(groups: object) -> list[int] | None:
    """How many operands each group of a newer scan's ``ft_in`` holds (JAX's flat tree of the operands:
    its length is its number of leaves, ``unpack`` gives its groups); None for another form."""
    if not hasattr(groups, "unpack"):
        return None
    try:
        return [len(group) for group in groups.unpack()]
    except (AssertionError, TypeError, ValueError):
        return None


def _while(values: list[Value], params: Params) -> list[Value]:
    cond, body = params["cond_jaxpr"], params["body_jaxpr"]
    cond_n, body_n = params["cond_nconsts"], params["body_nconsts"]
    cond_consts, body_consts, carry = values[:cond_n], values[cond_n:cond_n + body_n], values[cond_n + body_n:]
    while bool(np.asarray(_call(cond, [*cond_consts, *carry])[0])):
        carry = _call(body, [*body_consts, *carry])
    return carry


def _cond(values: list[Value], params: Params) -> list[Value]:
    branches = params["branches"]
    index = int(np.clip(int(np.asarray(values[0])), 0, len(branches) - 1))
    return _call(branches[index], values[1:])


_STRUCTURED: dict[str, Rule] = {
    "scan": _scan, "while": _while, "cond": _cond,
}


# ---------------------------------------------------------------- NumPy rules


def _unary(function: Callable[[Array], Value]) -> Rule:
    return lambda values, params: function(np.asarray(values[0]))


def _binary(function: Callable[[Array, Array], Value]) -> Rule:
    return lambda values, params: function(np.asarray(values[0]), np.asarray(values[1]))


def _divide(x: Array, y: Array) -> Value:
    if np.issubdtype(np.result_type(x, y), np.integer):  # XLA's integer division rounds towards zero
        return np.trunc(np.true_divide(x, np.where(y == 0, 1, y))).astype(np.result_type(x, y))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.true_divide(x, y)


def _quiet(function: Callable[_P, _R]) -> Callable[_P, _R]:
    """NumPy's warnings for a division by zero or an overflow: XLA gives the same inf or NaN silently."""
    def run(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        with np.errstate(all="ignore"):
            return function(*args, **kwargs)
    return run


def _logistic(x: Array) -> Value:
    return 1.0 / (1.0 + np.exp(np.negative(x)))


def _round(values: list[Value], params: Params) -> Value:
    x = np.asarray(values[0])
    if int(params.get("rounding_method", 0)) == 1:  # to nearest even
        return np.round(x)
    rounded: Value = np.sign(x) * np.floor(np.abs(x) + 0.5)
    return rounded


def _integer_pow(values: list[Value], params: Params) -> Value:
    x, y = np.asarray(values[0]), int(params["y"])
    if y >= 0:
        power: Value = x ** y
        return power
    inverse: Value = _quiet(lambda: np.asarray(1, x.dtype) / x ** (-y))()
    return inverse


def _convert(values: list[Value], params: Params) -> Value:
    x = np.asarray(values[0])
    dtype = np.dtype(params["new_dtype"])
    if np.issubdtype(dtype, np.integer) and np.issubdtype(x.dtype, np.floating):
        truncated: Value = _quiet(lambda: np.trunc(x).astype(dtype))()
        return truncated
    converted: Value = x.astype(dtype)
    return converted


def _broadcast_in_dim(values: list[Value], params: Params) -> Value:
    x = np.asarray(values[0])
    shape = tuple(params["shape"])
    kept = [1] * len(shape)
    for axis, size in zip(params["broadcast_dimensions"], x.shape):
        kept[axis] = size
    return np.broadcast_to(x.reshape(kept), shape)


def _reduce(function: _Reduction) -> Rule:
    return lambda values, params: function(np.asarray(values[0]), axis=tuple(params["axes"]))


def _arg(function: _AlongAxis) -> Rule:
    def run(values: list[Value], params: Params) -> Value:
        (axis,) = params["axes"]
        return function(np.asarray(values[0]), axis=axis).astype(params["index_dtype"])
    return run


def _dot_general(values: list[Value], params: Params) -> Value:
    lhs, rhs = np.asarray(values[0]), np.asarray(values[1])
    (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = params["dimension_numbers"]
    dtype = params.get("preferred_element_type") or np.result_type(lhs, rhs)
    if not lhs_batch:
        # the common case, straight to BLAS: the result's axes are the free ones of lhs, then of rhs,
        # as dot_general orders them; einsum would first search for a contraction order
        contracted: Value = np.tensordot(lhs, rhs, axes=(tuple(lhs_contract), tuple(rhs_contract)))
        return np.asarray(contracted).astype(dtype, copy=False)
    letters = iter(string.ascii_letters)
    left = [next(letters) for _ in range(lhs.ndim)]
    right = [""] * rhs.ndim
    for l_axis, r_axis in zip((*lhs_contract, *lhs_batch), (*rhs_contract, *rhs_batch)):
        right[r_axis] = left[l_axis]
    right = [name or next(letters) for name in right]
    batch = [left[a] for a in lhs_batch]
    free_left = [name for a, name in enumerate(left) if a not in lhs_contract and a not in lhs_batch]
    free_right = [name for a, name in enumerate(right) if a not in rhs_contract and a not in rhs_batch]
    spec = f"{''.join(left)},{''.join(right)}->{''.join(batch + free_left + free_right)}"
    product: Value = np.einsum(spec, lhs, rhs, optimize=True).astype(dtype)
    return product


def _iota(values: list[Value], params: Params) -> Value:
    shape, axis = tuple(params["shape"]), params["dimension"]
    line = np.arange(shape[axis], dtype=params["dtype"])
    view = [1] * len(shape)
    view[axis] = shape[axis]
    return np.broadcast_to(line.reshape(view), shape)


def _select_n(values: list[Value], params: Params) -> Value:
    which, *cases = (np.asarray(v) for v in values)
    if len(cases) == 1:
        return cases[0]
    if which.dtype == np.bool_:
        return np.where(which, cases[1], cases[0])
    return np.choose(which.astype(np.int64), np.broadcast_arrays(*cases))


def _clamp(values: list[Value], params: Params) -> Value:
    low, x, high = (np.asarray(v) for v in values)
    clamped: Value = np.minimum(np.maximum(x, low), high)
    return clamped


def _slice(values: list[Value], params: Params) -> Value:
    strides = params.get("strides") or (1,) * len(params["start_indices"])
    index = tuple(slice(start, stop, step) for start, stop, step
                  in zip(params["start_indices"], params["limit_indices"], strides))
    return np.asarray(values[0])[index]


def _starts(operand: Array, starts: list[Value], sizes: tuple[int, ...]) -> tuple[int, ...]:
    """XLA's dynamic start indices: clamped so that the whole window lies inside the operand."""
    return tuple(int(np.clip(int(np.asarray(s)), 0, dim - size)) for s, dim, size in zip(starts, operand.shape, sizes))


def _dynamic_slice(values: list[Value], params: Params) -> Value:
    operand = np.asarray(values[0])
    sizes = tuple(params["slice_sizes"])
    starts = _starts(operand, values[1:1 + operand.ndim], sizes)
    return operand[tuple(slice(s, s + n) for s, n in zip(starts, sizes))]


def _dynamic_update_slice(values: list[Value], params: Params) -> Value:
    operand, update = np.array(values[0]), np.asarray(values[1])
    starts = _starts(operand, values[2:2 + operand.ndim], update.shape)
    operand[tuple(slice(s, s + n) for s, n in zip(starts, update.shape))] = update
    return operand


def _pad(values: list[Value], params: Params) -> Value:
    x, fill = np.asarray(values[0]), np.asarray(values[1])
    for axis, (low, high, interior) in enumerate(params["padding_config"]):
        if interior:
            size = x.shape[axis]
            shape = list(x.shape)
            shape[axis] = size + max(size - 1, 0) * interior
            spread = np.full(shape, fill, dtype=x.dtype)
            index = [slice(None)] * x.ndim
            index[axis] = slice(None, None, interior + 1)
            spread[tuple(index)] = x
            x = spread
        if low < 0:
            x = np.take(x, range(-low, x.shape[axis]), axis=axis)
            low = 0
        if high < 0:
            x = np.take(x, range(0, x.shape[axis] + high), axis=axis)
            high = 0
        width = [(0, 0)] * x.ndim
        width[axis] = (low, high)
        x = np.pad(x, width, constant_values=fill)
    return x


def _cumulative(function: _AlongAxis) -> Rule:
    def run(values: list[Value], params: Params) -> Value:
        x, axis = np.asarray(values[0]), params["axis"]
        if params.get("reverse"):
            return np.flip(function(np.flip(x, axis), axis=axis), axis)
        return function(x, axis=axis)
    return run


def _split(values: list[Value], params: Params) -> list[Value]:
    points = np.cumsum(params["sizes"])[:-1]
    return list(np.split(np.asarray(values[0]), points, axis=params["axis"]))


def _add_any(values: list[Value], params: Params) -> Value:
    total: Value = np.add(np.asarray(values[0]), np.asarray(values[1]))
    return total


_RULES: dict[str, Rule] = {
    "neg": _unary(np.negative), "sign": _unary(np.sign), "floor": _unary(np.floor), "ceil": _unary(np.ceil),
    "is_finite": _unary(np.isfinite), "exp": _unary(_quiet(np.exp)), "exp2": _unary(_quiet(np.exp2)),
    "log": _unary(_quiet(np.log)), "log1p": _unary(_quiet(np.log1p)), "expm1": _unary(_quiet(np.expm1)),
    "tanh": _unary(np.tanh), "logistic": _unary(_quiet(_logistic)), "sin": _unary(np.sin), "cos": _unary(np.cos),
    "tan": _unary(np.tan), "asin": _unary(_quiet(np.arcsin)), "acos": _unary(_quiet(np.arccos)),
    "atan": _unary(np.arctan), "sinh": _unary(_quiet(np.sinh)), "cosh": _unary(_quiet(np.cosh)),
    "asinh": _unary(np.arcsinh), "acosh": _unary(_quiet(np.arccosh)), "atanh": _unary(_quiet(np.arctanh)),
    "sqrt": _unary(_quiet(np.sqrt)), "rsqrt": _unary(_quiet(lambda x: 1.0 / np.sqrt(x))),
    "cbrt": _unary(np.cbrt), "abs": _unary(np.abs), "not": _unary(np.invert), "square": _unary(np.square),
    "erf": _unary(scipy.special.erf), "erfc": _unary(scipy.special.erfc), "erf_inv": _unary(scipy.special.erfinv),
    "lgamma": _unary(scipy.special.gammaln), "digamma": _unary(scipy.special.digamma),
    "copy": _unary(np.array), "copy_p": _unary(np.array), "real": _unary(np.real), "imag": _unary(np.imag),
    "one_minus_square": _unary(lambda x: np.multiply(np.add(1, x), np.subtract(1, x))),
    "round": _round, "integer_pow": _integer_pow, "convert_element_type": _convert,
    "add": _binary(_quiet(np.add)), "add_any": _add_any, "sub": _binary(_quiet(np.subtract)),
    "mul": _binary(_quiet(np.multiply)), "div": _binary(_divide), "rem": _binary(_quiet(np.fmod)),
    "pow": _binary(_quiet(np.power)), "max": _binary(np.maximum), "min": _binary(np.minimum),
    "atan2": _binary(np.arctan2), "nextafter": _binary(np.nextafter),
    "and": _binary(np.bitwise_and), "or": _binary(np.bitwise_or), "xor": _binary(np.bitwise_xor),
    "eq": _binary(np.equal), "ne": _binary(np.not_equal), "lt": _binary(np.less), "le": _binary(np.less_equal),
    "gt": _binary(np.greater), "ge": _binary(np.greater_equal),
    "select_n": _select_n, "clamp": _clamp,
    "broadcast_in_dim": _broadcast_in_dim,
    "reshape": lambda values, params: np.reshape(np.asarray(values[0]), tuple(params["new_sizes"])),
    "squeeze": lambda values, params: np.squeeze(np.asarray(values[0]), axis=tuple(params["dimensions"])),
    "expand_dims": lambda values, params: np.expand_dims(np.asarray(values[0]), tuple(params["dimensions"])),
    "transpose": lambda values, params: np.transpose(np.asarray(values[0]), tuple(params["permutation"])),
    "rev": lambda values, params: np.flip(np.asarray(values[0]), tuple(params["dimensions"])),
    "concatenate": lambda values, params: np.concatenate([np.asarray(v) for v in values], axis=params["dimension"]),
    "reduce_sum": _reduce(np.sum), "reduce_max": _reduce(np.max), "reduce_min": _reduce(np.min),
    "reduce_prod": _reduce(np.prod), "reduce_and": _reduce(np.all), "reduce_or": _reduce(np.any),
    "argmax": _arg(np.argmax), "argmin": _arg(np.argmin),
    "dot_general": _dot_general, "iota": _iota, "slice": _slice, "dynamic_slice": _dynamic_slice,
    "dynamic_update_slice": _dynamic_update_slice, "pad": _pad,
    "cumsum": _cumulative(np.cumsum), "cumprod": _cumulative(np.cumprod),
    "cummax": _cumulative(np.maximum.accumulate), "cummin": _cumulative(np.minimum.accumulate),
    "split": _split,
    "stop_gradient": _unary(np.asarray),
}
