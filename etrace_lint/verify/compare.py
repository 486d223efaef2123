"""Metrics of one online gradient against BPTT, and what they mean."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

# verdicts, in the order they are decided
NONFINITE = "nonfinite"  # NaN or inf on either side
VACUOUS = "n/a"  # both zero: nothing was compared
NOT_LEARNING = "not-learning"  # online identically zero, BPTT not
EXACT = "exact"  # expected exact, and it is
WRONG = "wrong"  # expected exact, and it is not
APPROXIMATION = "approximation"  # expected approximate, points the right way
MISALIGNED = "misaligned"  # expected approximate, cosine below the floor
AGAINST = "against-bptt"  # the online gradient points against BPTT's (cosine below 0) on every input draw

# input draws a direction is measured over before an online gradient is said to point against BPTT's: one
# draw of random inputs can tip a gradient that is nearly orthogonal to BPTT's either way
DRAWS = 3


# an online gradient this much smaller than BPTT's is a zero: float32 rounding of a gradient that cancels
# exactly (an op output mean-subtracted by a layer norm) leaves about 1e-8 of it
ROUNDING = 1e-5


@dataclass(frozen=True)
class Metrics:
    rel_error: float  # ||online - bptt|| / ||bptt||; NaN (not measured) when BPTT is zero
    cosine: float  # NaN when either side is zero
    online_norm: float
    bptt_norm: float
    finite: bool


def metrics(online: np.ndarray, bptt: np.ndarray) -> Metrics:
    a = np.asarray(online, dtype=np.float64).ravel()
    b = np.asarray(bptt, dtype=np.float64).ravel()
    finite = bool(np.all(np.isfinite(a)) and np.all(np.isfinite(b)))
    if not finite:
        return Metrics(math.nan, math.nan, math.nan, math.nan, False)
    na, nb = float(np.linalg.norm(a)), float(np.linalg.norm(b))
    diff = float(np.linalg.norm(a - b))
    rel = diff / nb if nb > 0 else math.nan
    cosine = float(a @ b / (na * nb)) if na > 0 and nb > 0 else math.nan
    return Metrics(rel, cosine, na, nb, True)


def verdict(m: Metrics, exact_expected: bool, tolerance: float, cosine_floor: float,
            zero_scale: float) -> str:
    """``zero_scale``: a BPTT norm at or below it counts as zero (round-off of a zero gradient)."""
    if not m.finite:
        return NONFINITE
    if m.bptt_norm > zero_scale and m.online_norm <= ROUNDING * m.bptt_norm:
        return NOT_LEARNING
    if m.bptt_norm <= zero_scale and m.online_norm <= zero_scale:
        return VACUOUS
    if exact_expected:  # any difference is a bug, an error whichever way it points
        return EXACT if m.rel_error <= tolerance else WRONG
    if m.bptt_norm > zero_scale and m.cosine < 0:
        return AGAINST  # on this draw: ``confirmed`` says whether the other draws agree
    if m.bptt_norm <= zero_scale:
        return MISALIGNED
    return APPROXIMATION if m.cosine >= cosine_floor else MISALIGNED


def confirmed(verdict_on_first: str, cosines: list[float], exact_expected: bool) -> str:
    """The verdict once every draw is measured: against BPTT only when the cosine is below 0 on each of them
    (``cosines``, the first draw's included); else what a gradient that points nowhere in particular is."""
    if verdict_on_first != AGAINST or all(math.isfinite(c) and c < 0 for c in cosines):
        return verdict_on_first
    return WRONG if exact_expected else MISALIGNED


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
    return None if abs(k - 1.0) <= max(tolerance, 1e-3) else k


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


def describe_draws(cosines: list) -> str:
    """"-0.99, -0.97 and -0.96 on 3 input draws"; a draw not measured reads "n/a"."""
    shown = [f"{c:.2f}" if isinstance(c, float) and math.isfinite(c) else "n/a" for c in cosines]
    listed = shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + f" and {shown[-1]}"
    return f"{listed} on {len(shown)} input draw{'s' if len(shown) != 1 else ''}"


def json_number(value: float) -> float | None:
    """JSON has no NaN or infinity: those become null."""
    return value if isinstance(value, float) and math.isfinite(value) else None
