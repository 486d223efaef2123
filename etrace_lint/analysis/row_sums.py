"""Which ETP ops braintrace gives an all-zero ``df``, read symbolically off the compiler's own map.

Every eligibility-trace algorithm of braintrace (D-RTRL, pp_prop / ES-D-RTRL,
e-prop, SnAp, ...) reads an ETP op's ``df``, the op output's effect on the
hidden states it drives, with one ``jax.jvp`` of the compiler's ``y -> hidden
group`` jaxpr carrying an all-ones tangent (``ETraceVjpGraphExecutor.
_compute_hid2weight_jacobian``, braintrace 0.2.6 and 0.2.8 alike). Where that
map is element-wise this is the Jacobian's diagonal; where it mixes the op's
outputs it is the Jacobian's *row sums*. A mean-subtracting (shift-invariant)
op on the way (``y - y.mean()``, a layer norm) has row sums that are exactly
zero: the op's weight then gets no eligibility trace at all, whatever the
values are.

This module pushes the all-ones tangent through such a jaxpr without values.
A tangent is a linear form: a coefficient of the all-ones direction plus
coefficients of primal expressions (``2*mean(y)`` is the tangent of
``mean(y)**2``), so a variance written ``E[y^2] - E[y]^2`` cancels as well as
one written ``E[(y - E[y])^2]``. Anything it cannot follow exactly is
"unknown", never zero: a zero it reports is an identity, not a measurement.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import TypeAlias

from . import jaxpr_view as jv

ONE = ("ones",)  # the all-ones direction
# a primal value up to a scale: a hashable tuple of names, numbers, shapes and other bases (``("var", id)``)
Base: TypeAlias = tuple[object, ...]
Key: TypeAlias = tuple[Fraction, Base]  # (scale, base)
Tangent: TypeAlias = dict[Base, Fraction]  # base -> Fraction; {} is zero; None (the value) is unknown

# a weight-free op that moves or selects entries: all ones stay all ones
_SHAPE_OPS = frozenset({
    "reshape", "broadcast_in_dim", "convert_element_type", "transpose", "squeeze", "expand_dims", "copy",
    "copy_p", "slice", "dynamic_slice", "gather", "rev", "reduce_precision",
})
_ZERO_TANGENT_OPS = frozenset({"stop_gradient", "sign", "floor", "ceil", "round", "iota", "eq", "ne", "lt", "le",
                               "gt", "ge", "and", "or", "not"})


@dataclass(frozen=True)
class RowSums:
    """The all-ones tangent of each output of a ``y -> hidden`` map, and where it cancelled."""

    zero: tuple[bool, ...]  # per output: the tangent is identically zero
    # the first equation whose non-zero inputs gave a zero tangent (a mean subtracted)
    cancelled_at: jv.JaxprEqn | None = None


def _scaled(tangent: Tangent | None, factor: Fraction) -> Tangent | None:
    if tangent is None:
        return None
    return {base: c * factor for base, c in tangent.items() if c * factor != 0}


def _summed(a: Tangent | None, b: Tangent | None, sign: int = 1) -> Tangent | None:
    if a is None or b is None:
        return None
    total = dict(a)
    for base, c in b.items():
        total[base] = total.get(base, Fraction(0)) + sign * c
    return {base: c for base, c in total.items() if c != 0}


def _fraction(number: float) -> Fraction | None:
    try:
        return Fraction(number)
    except (OverflowError, ValueError):  # inf, nan
        return None


class _Walk:
    """One pass over a jaxpr: each var's primal key ``(scale, base)`` and all-ones tangent."""

    def __init__(self) -> None:
        self.keys: dict[jv.Atom, Key] = {}
        self.tangents: dict[jv.Atom, Tangent | None] = {}
        self.cancelled_at: jv.JaxprEqn | None = None

    def key(self, atom: jv.Atom) -> Key:
        number = jv.literal_number(atom)
        if number is not None:
            return Fraction(1), ("literal", number)
        return self.keys.get(atom, (Fraction(1), ("var", id(atom))))

    def tangent(self, atom: jv.Atom) -> Tangent | None:
        if not jv.is_var(atom):
            return {}
        return self.tangents.get(atom, {})  # a value the map is given (a constvar): no tangent

    def run(self, jaxpr: jv.Jaxpr) -> None:
        for eqn in jaxpr.eqns:
            self.equation(eqn)

    def equation(self, eqn: jv.JaxprEqn) -> None:
        name = jv.primitive_name(eqn)
        ins = list(eqn.invars)
        body = jv.call_body(eqn)
        if body is not None:
            for outer, inner in zip(ins, body.invars):
                self.keys[inner] = self.key(outer)
                self.tangents[inner] = self.tangent(outer)
            self.run(body)
            for result, out in zip(body.outvars, eqn.outvars):
                self.keys[out] = self.key(result)
                self.tangents[out] = self.tangent(result)
            return
        tangents = [self.tangent(a) for a in ins]
        key, tangent = self._rule(eqn, name, ins, tangents)
        for out in eqn.outvars:
            self.keys[out] = key if len(eqn.outvars) == 1 else (Fraction(1), ("var", id(out)))
            self.tangents[out] = tangent
        if (tangent == {} and self.cancelled_at is None and name in ("sub", "add", "add_any")
                and any(t for t in tangents)):
            self.cancelled_at = eqn

    def _rule(self, eqn: jv.JaxprEqn, name: str, ins: list[jv.Atom],
              tangents: list[Tangent | None]) -> tuple[Key, Tangent | None]:
        out = eqn.outvars[0] if eqn.outvars else None
        opaque: Key = (Fraction(1), ("var", id(out)))
        if all(t == {} for t in tangents) or name in _ZERO_TANGENT_OPS:
            return self._primal_key(eqn, name, ins, opaque), {}
        if name in ("add", "add_any"):
            return opaque, _summed(tangents[0], tangents[1])
        if name == "sub":
            return opaque, _summed(tangents[0], tangents[1], -1)
        if name == "neg":
            scale, base = self.key(ins[0])
            return (-scale, base), _scaled(tangents[0], Fraction(-1))
        if name == "mul":
            return self._primal_key(eqn, name, ins, opaque), self._product(ins, tangents)
        if name == "div":
            number = jv.literal_number(ins[1])
            factor = _fraction(number) if number else None
            return (self._primal_key(eqn, name, ins, opaque),
                    _scaled(tangents[0], 1 / factor) if factor and tangents[1] == {} else None)
        if name in ("square", "integer_pow"):
            if name == "integer_pow" and eqn.params.get("y") != 2:
                return opaque, None
            scale, base = self.key(ins[0])
            if tangents[0] is not None and set(tangents[0]) == {ONE}:
                return (scale * scale, ("square", base)), {base: 2 * tangents[0][ONE] * scale}
            return (scale * scale, ("square", base)), None
        if name == "reduce_sum":
            return self._primal_key(eqn, name, ins, opaque), self._reduced(eqn, ins[0], tangents[0])
        if name in _SHAPE_OPS:
            return self._primal_key(eqn, name, ins, opaque), self._moved(eqn, name, tangents[0])
        if name == "select_n":
            cases = tangents[1:]
            return opaque, cases[0] if all(c == cases[0] for c in cases) else None
        return opaque, None

    def _primal_key(self, eqn: jv.JaxprEqn, name: str, ins: list[jv.Atom], opaque: Key) -> Key:
        """Scalar factors are kept apart (``x / 8`` is ``1/8`` times ``x``), so that two ways of
        writing one expression get one key."""
        if name in ("mul", "div") and len(ins) == 2:
            for index, other in ((1, 0), (0, 1)):
                number = jv.literal_number(ins[index])
                if number and (name == "mul" or index == 1):
                    factor = _fraction(number)
                    if factor is None:
                        return opaque
                    scale, base = self.key(ins[other])
                    return (scale * factor if name == "mul" else scale / factor), base
            return opaque
        if name == "reduce_sum":
            scale, base = self.key(ins[0])
            return scale, ("reduce_sum", tuple(eqn.params.get("axes", ())), base)
        if name in _SHAPE_OPS and ins:
            scale, base = self.key(ins[0])
            return scale, (name, jv.aval_shape(eqn.outvars[0]), base)
        return opaque

    def _product(self, ins: list[jv.Atom], tangents: list[Tangent | None]) -> Tangent | None:
        """``d(a*b) = da*b + a*db``, kept exact when one factor is a literal or has no tangent and
        the other's tangent is a multiple of all ones."""
        for index, other in ((1, 0), (0, 1)):
            number = jv.literal_number(ins[index])
            if number is not None:
                factor = _fraction(number)
                return _scaled(tangents[other], factor) if factor is not None else None
        for index, other in ((1, 0), (0, 1)):
            moved = tangents[other]
            if tangents[index] == {} and moved is not None and set(moved) == {ONE}:
                scale, base = self.key(ins[index])
                return {base: moved[ONE] * scale}
        return None

    @staticmethod
    def _reduced(eqn: jv.JaxprEqn, operand: jv.Atom, tangent: Tangent | None) -> Tangent | None:
        if tangent is None:
            return None
        axes = tuple(eqn.params.get("axes", ()))
        shape = jv.aval_shape(operand)
        count = 1
        for axis in axes:
            count *= shape[axis] if axis < len(shape) else 1
        return {(ONE if base == ONE else ("reduce_sum", axes, base)): c * (count if base == ONE else 1)
                for base, c in tangent.items()}

    @staticmethod
    def _moved(eqn: jv.JaxprEqn, name: str, tangent: Tangent | None) -> Tangent | None:
        if tangent is None:
            return None
        shape = jv.aval_shape(eqn.outvars[0])
        return {(ONE if base == ONE else (name, shape, base)): c for base, c in tangent.items()}


def all_ones_row_sums(jaxpr_like: jv.JaxprLike) -> RowSums:
    """Push an all-ones tangent in at the map's last input (``y``; the others are the values the
    compiler binds from the forward pass) and say which outputs get an identically zero tangent."""
    jaxpr = jv.open_jaxpr(jaxpr_like)
    walk = _Walk()
    if not jaxpr.invars:
        return RowSums(())
    walk.tangents[jaxpr.invars[-1]] = {ONE: Fraction(1)}
    walk.run(jaxpr)
    zero = tuple(jv.is_var(out) and walk.tangent(out) == {} and _depends(jaxpr, out) for out in jaxpr.outvars)
    return RowSums(zero, walk.cancelled_at)


def _depends(jaxpr: jv.Jaxpr, out: jv.Atom) -> bool:
    """Whether an output is computed from ``y`` at all (an output the map passes through untouched
    is no op's business)."""
    y = jaxpr.invars[-1]
    reached = {y}
    for eqn in jaxpr.eqns:
        if any(v in reached for v in jv.invars(eqn)):
            reached.update(eqn.outvars)
    return out in reached
