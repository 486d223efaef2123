"""(online, BPTT) gradients -> a verdict: the one decision ``--verify``, the probe and the advice share.

Each of them measures a weight leaf's online gradient against exact BPTT's and
asks the same questions in the same order (:func:`decide`): is either side
not finite, is the online one zero where BPTT's is not, is there anything to
compare, is it exact, does it point against BPTT, is it close enough. Only
what they know beforehand differs: ``--verify`` knows whether the weight's
gradient must be exact, the advice does not. The verdicts' names are
:class:`etrace_lint.core.verdict.Verdict`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

from ..core.verdict import Verdict

# input draws a direction is measured over before an online gradient is said to point against BPTT's: one
# draw of random inputs can tip a gradient that is nearly orthogonal to BPTT's either way
DRAWS = 3


# an online gradient this much smaller than BPTT's is a zero: float32 rounding of a gradient that cancels
# exactly (an op output mean-subtracted by a layer norm) leaves about 1e-8 of it
ROUNDING = 1e-5

# a cosine with BPTT's this close to 0 at the first step is as good as orthogonal to it: a first step that must be
# BPTT's points against it only below -ORTHOGONAL (above, it is a deviation with its figure)
ORTHOGONAL = 0.1

_Key = TypeVar("_Key")  # how a run keys its gradient leaves
_Part = TypeVar("_Part")  # how a run names a weight: the first part of its leaves' keys


@dataclass(frozen=True)
class Metrics:
    rel_error: float  # ||online - bptt|| / ||bptt||; NaN (not measured) when BPTT is zero
    cosine: float  # NaN when either side is zero
    online_norm: float
    bptt_norm: float
    finite: bool  # both sides
    bptt_finite: bool = True  # BPTT's own gradient: where it is not, the model is not finite, whatever learns it


def metrics(online: np.ndarray | Sequence[float], bptt: np.ndarray | Sequence[float]) -> Metrics:
    a = np.asarray(online, dtype=np.float64).ravel()
    b = np.asarray(bptt, dtype=np.float64).ravel()
    bptt_finite = bool(np.all(np.isfinite(b)))
    finite = bool(np.all(np.isfinite(a)) and bptt_finite)
    if not finite:
        return Metrics(math.nan, math.nan, math.nan, math.nan, False, bptt_finite)
    na, nb = float(np.linalg.norm(a)), float(np.linalg.norm(b))
    diff = float(np.linalg.norm(a - b))
    rel = diff / nb if nb > 0 else math.nan
    cosine = float(a @ b / (na * nb)) if na > 0 and nb > 0 else math.nan
    return Metrics(rel, cosine, na, nb, True)


def online_gradient(online: Mapping[_Key, np.ndarray], key: _Key, bptt: np.ndarray) -> np.ndarray:
    """The online gradient of a leaf, zero where the learner does not differentiate the leaf at all."""
    grad = online.get(key)
    return np.zeros_like(bptt) if grad is None else grad


def cosine_on_draw(bptt: Mapping[_Key, np.ndarray], online: Mapping[_Key, np.ndarray], key: _Key) -> float | None:
    """The cosine of a leaf's online gradient with BPTT's on one input draw: what confirms, draw by draw, that a
    gradient points against BPTT's. None where BPTT's gradient of the leaf is zero on the draw (it does not drive
    the leaf, so it says nothing of a direction); NaN where the online one is zero or either is not finite."""
    reference = bptt[key]
    if np.all(reference == 0):
        return None
    return metrics(online_gradient(online, key, reference), reference).cosine


def weight_cosine_on_draw(bptt: Mapping[tuple[_Part, str], np.ndarray], online: Mapping[tuple[_Part, str], np.ndarray],
                          weight: _Part, zero_scale: float = 0.0) -> float | None:
    """The cosine of a whole weight's online gradient (every leaf of it, side by side) with BPTT's on one input
    draw, as :func:`cosine_on_draw` reads one leaf's: what a leaf's direction means for the weight it is part of.
    ``weight``: the first part of the leaves' keys; None where BPTT's norm is at most ``zero_scale`` (and not
    above 0): the draw does not drive the weight."""
    keys = [key for key in bptt if key[0] == weight]
    reference = np.concatenate([np.asarray(bptt[key], dtype=np.float64).ravel() for key in keys])
    if reference.size == 0 or np.all(reference == 0) or float(np.linalg.norm(reference)) <= zero_scale:
        return None
    gradient = np.concatenate([np.asarray(online_gradient(online, key, bptt[key]), dtype=np.float64).ravel()
                               for key in keys])
    return metrics(gradient, reference).cosine


def norm_ratio_on_draw(bptt: Mapping[_Key, np.ndarray], online: Mapping[_Key, np.ndarray], key: _Key,
                       zero_scale: float) -> float | None:
    """A leaf's online gradient norm over BPTT's on one input draw; None where BPTT's is zero on it (the draw does
    not drive the weight, so it says nothing of its online gradient), inf where the online one is not finite."""
    reference = bptt[key]
    m = metrics(online_gradient(online, key, reference), reference)
    if not m.finite:
        return math.inf
    return m.online_norm / m.bptt_norm if m.bptt_norm > zero_scale else None


def distance_on_draw(bptt: Mapping[_Key, np.ndarray], online: Mapping[_Key, np.ndarray], key: _Key,
                     zero_scale: float, tolerance: float) -> float | None:
    """A leaf's online gradient's distance from BPTT's, relative to BPTT's norm, on one input draw, where it is
    BPTT's own (:func:`bptts_own`); inf where it is not, or either is not finite; None where BPTT's is zero on it
    (the draw does not drive the weight)."""
    reference = bptt[key]
    m = metrics(online_gradient(online, key, reference), reference)
    if m.bptt_norm <= zero_scale and m.finite:
        return None
    return m.rel_error if m.finite and bptts_own(m, tolerance) else math.inf


def largest_norm(bptt: Iterable[np.ndarray]) -> float:
    """The largest finite norm among BPTT's gradients of one run: a leaf's BPTT norm at or below its dtype's
    tolerance times this is round-off of a zero gradient (its zero scale)."""
    return max((float(np.linalg.norm(g)) for g in bptt if np.all(np.isfinite(g))), default=0.0)


def not_learning(online_norm: float, bptt_norm: float, zero_scale: float) -> bool:
    """Online zero, up to float32 rounding of a zero, while BPTT's is not."""
    return bptt_norm > zero_scale and online_norm <= ROUNDING * bptt_norm


def decide(m: Metrics, exact_expected: bool | None, tolerance: float, cosine_floor: float,
           zero_scale: float) -> Verdict:
    """The verdict of one leaf on one input draw.

    ``exact_expected``: whether the algorithm must give BPTT's gradient here (any difference is then an
    error, whichever way it points); None when that is not known, and a gradient within ``tolerance`` is
    exact. ``zero_scale``: a BPTT norm at or below it counts as zero. :data:`Verdict.AGAINST` holds for this
    draw only: :func:`confirmed` says whether the other draws agree. A BPTT gradient that is not finite compares
    nothing (n/a): the model itself is not finite on these inputs, which no online rule is to blame for."""
    if not m.bptt_finite:
        return Verdict.VACUOUS
    if not m.finite:
        return Verdict.NONFINITE
    if not_learning(m.online_norm, m.bptt_norm, zero_scale):
        return Verdict.NOT_LEARNING
    if m.bptt_norm <= zero_scale and m.online_norm <= zero_scale:
        return Verdict.VACUOUS
    exact = bptts_own(m, tolerance)
    if exact_expected:
        return Verdict.EXACT if exact else Verdict.WRONG
    if m.bptt_norm <= zero_scale:
        return Verdict.MISALIGNED
    if exact_expected is None and exact:
        return Verdict.EXACT
    if m.cosine < 0:
        return Verdict.AGAINST
    return Verdict.APPROXIMATION if m.cosine >= cosine_floor else Verdict.MISALIGNED


def against_on_every_draw(cosines: Sequence[float | None], below: float = 0.0) -> bool:
    """The cosine with BPTT's is below ``below`` on every input draw that drives the leaf, of :data:`DRAWS` draws or
    more (``cosines``: the first draw's first, then :func:`cosine_on_draw`'s; None: a draw that does not drive it, which
    says nothing; NaN: an online gradient that is zero or not finite, which is not against it). Two draws at least
    must drive it, and the warmed one (the last, past :data:`DRAWS`) must be one of them: a direction from rest
    alone says nothing of moved states. A ReLU that one draw's signs keep shut drives no gradient there."""
    driving = [c for c in cosines if c is not None]
    warmed_drives = len(cosines) <= DRAWS or cosines[-1] is not None
    return (len(cosines) >= DRAWS and len(driving) >= 2 and warmed_drives
            and all(math.isfinite(c) and c < below for c in driving))


def below_on_further_draws(cosines: Sequence[float | None], below: float = 0.0) -> bool:
    """Every further draw's cosine (past :data:`DRAWS` and the warmed one, measured while a direction held) that drives
    the leaf (not None) is a number below ``below``: one that is not refutes the direction."""
    return all(c is None or (math.isfinite(c) and c < below) for c in cosines)


def confirmed(verdict_on_first: Verdict, cosines: Sequence[float | None], exact_expected: bool | None) -> Verdict:
    """The verdict once every draw is measured: against BPTT only when the cosine is below 0 on each of them
    (``cosines``, the first draw's included); else what a gradient that points nowhere in particular is."""
    if verdict_on_first is not Verdict.AGAINST or against_on_every_draw(cosines):
        return verdict_on_first
    return Verdict.WRONG if exact_expected else Verdict.MISALIGNED


# a multiple within this of 1, or a relative error within it, is BPTT's own gradient (float32 round-off of a
# program evaluated in another order)
SCALE_TOLERANCE = 1e-3

# |cosine| at least this: the online gradient is a multiple of BPTT's (an angle under about 0.8 degrees)
SCALED_COSINE = 1.0 - 1e-4


def scale(m: Metrics, tolerance: float) -> float | None:
    """``k`` when the online gradient is (nearly) ``k`` times BPTT's with ``k != 1``; None otherwise.

    A negative ``k`` points the opposite way. Told apart from a plain error
    because it says what is wrong: a path counted twice, a sign flipped.
    """
    if not m.finite or m.online_norm == 0 or m.bptt_norm == 0 or abs(m.cosine) < SCALED_COSINE:
        return None
    k = math.copysign(m.online_norm / m.bptt_norm, m.cosine)
    return None if abs(k - 1.0) <= max(tolerance, SCALE_TOLERANCE) else k


def first_step_deviation(m: Metrics, tolerance: float, zero_scale: float) -> tuple[float, float] | None:
    """(online norm / BPTT norm, cosine) when a gradient that must equal BPTT's is not equal to it, and not
    :func:`scale`'s multiple in its direction either; None when it is equal, a multiple, zero on either side
    (the zero and finiteness checks speak of that) or not finite."""
    if (not m.finite or m.bptt_norm <= zero_scale or m.online_norm <= ROUNDING * m.bptt_norm
            or m.rel_error <= max(tolerance, SCALE_TOLERANCE)):
        return None
    return m.online_norm / m.bptt_norm, m.cosine


# a multiple of BPTT's gradient in its direction (``scale``'s) within this of 1 is BPTT's own, rounded: float32
# through an ill-conditioned op (a batch norm over a batch of 2) is 0.1% off where float64 is 1e-11 off (seed 79's
# models 157 and 158: 0.9989x and 1.0013x in float32, 1 + 8e-12 in float64), as whole multiples are told within 1%
NEAR_ONE = 0.01


def near_one(factor: float) -> bool:
    """``scale``'s factor is 1 up to rounding: the online gradient is BPTT's own."""
    return abs(factor - 1.0) < NEAR_ONE


def bptts_own(m: Metrics, tolerance: float) -> bool:
    """The online gradient is BPTT's: within the dtype's ``tolerance``, or BPTT's own rounded (:func:`rounded_bptt`)."""
    return m.rel_error <= tolerance or rounded_bptt(m)


def rounded_bptt(m: Metrics) -> bool:
    """BPTT's own gradient up to float32 round-off through an ill-conditioned op: its direction (``scale``'s
    cosine) and its size within :data:`NEAR_ONE`."""
    return (m.finite and m.online_norm > 0 and m.bptt_norm > 0 and m.cosine >= SCALED_COSINE
            and near_one(m.online_norm / m.bptt_norm))


def whole_multiple(factor: float) -> int | None:
    """N when ``factor`` is a whole multiple N >= 2 (within 1%): one path counted N times."""
    size = abs(factor)
    whole = round(size)
    return whole if factor > 0 and whole >= 2 and abs(size - whole) < 0.01 else None


def times_word(count: int) -> str:
    return {2: "twice", 3: "three times"}.get(count, f"{count} times")


def describe_scale(k: float) -> str:
    """"2.00x BPTT's, same direction"; the factor's digits kept for small ones."""
    size = abs(k)
    factor = f"{size:.2f}" if size >= 0.1 else f"{size:.2g}"
    return f"{factor}x BPTT's, {'same' if k > 0 else 'opposite'} direction"


def describe_draws(cosines: Sequence[float | None]) -> str:
    """"-0.99, -0.97, -0.96 and -0.90 on 4 input draws (the last from states moved from rest)"; a draw not measured
    reads "n/a". The draws past :data:`DRAWS` are the warmed one (``Harness.warmed``), the last."""
    shown = [f"{c:.2f}" if isinstance(c, float) and math.isfinite(c) else "n/a" for c in cosines]
    listed = shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + f" and {shown[-1]}"
    notes = ["the last from states moved from rest"] * (len(shown) > DRAWS)
    notes += ["n/a: a draw on which BPTT's gradient is zero or the online one is"] * ("n/a" in shown)
    return f"{listed} on {len(shown)} input draw{'s' if len(shown) != 1 else ''}" + \
        (f" ({'; '.join(notes)})" if notes else "")


def describe_further_draws(cosines: Sequence[float | None], further: Sequence[float | None]) -> str:
    """:func:`describe_draws`, then the cosines on the draws a direction was searched on past them ("then -0.41 and
    -0.38 on 2 more input draws, from rest and from the states their first steps leave")."""
    shown = [f"{c:.2f}" for c in further if c is not None]
    if not shown:
        return describe_draws(cosines)
    listed = shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + f" and {shown[-1]}"
    plural = "s" if len(shown) != 1 else ""
    return (f"{describe_draws(cosines)}, then {listed} on {len(shown)} more input draw{plural}, "
            f"from rest and from the states their first steps leave")


def json_number(value: float | None) -> float | None:
    """JSON has no NaN or infinity: those become null."""
    return value if isinstance(value, float) and math.isfinite(value) else None
