"""What one weight's online gradient is, measured against BPTT's: one vocabulary for ``--verify``, the
probe and the advice.

Plain data, as mypy's error codes are: :mod:`etrace_lint.verify.verdict` decides which verdict a pair of
gradients gets; the rules, the rows and the writers read it from here, so a run served from the cache
names the verdicts without importing NumPy or JAX. Each verdict has two spellings, both shown to users and
kept as they are: ``--verify``'s rows and rules use :attr:`Verdict.value` (``"not-learning"``), the
advice's table uses :attr:`Verdict.advice_text` (``"no online gradient"``).
"""

from __future__ import annotations

from enum import Enum


class Verdict(Enum):
    """In the order :func:`etrace_lint.verify.verdict.decide` decides them."""

    NONFINITE = "nonfinite"  # the online gradient NaN or inf, BPTT's finite
    NOT_LEARNING = "not-learning"  # online zero (up to float32 rounding), BPTT not
    VACUOUS = "n/a"  # both zero, or BPTT's own gradient not finite: nothing was compared
    EXACT = "exact"  # equal to BPTT's within the dtype's tolerance
    WRONG = "wrong"  # expected exact, and it is not
    AGAINST = "against-bptt"  # cosine below 0 on every input draw
    APPROXIMATION = "approximation"  # not exact, points the right way
    MISALIGNED = "misaligned"  # cosine below the floor

    @property
    def advice_text(self) -> str:
        """The word the advice's rows and table use."""
        return _ADVICE_TEXT[self]

    @classmethod
    def from_advice_text(cls, text: str) -> Verdict:
        """The verdict an advice row's JSON names (a cached row read back)."""
        return _FROM_ADVICE_TEXT[text]


_ADVICE_TEXT = {
    Verdict.NONFINITE: "not finite",
    Verdict.NOT_LEARNING: "no online gradient",
    Verdict.VACUOUS: "n/a",
    Verdict.EXACT: "exact",
    Verdict.WRONG: "wrong",
    Verdict.AGAINST: "learns against BPTT",
    Verdict.APPROXIMATION: "approximate",
    Verdict.MISALIGNED: "misaligned",
}
_FROM_ADVICE_TEXT = {text: verdict for verdict, text in _ADVICE_TEXT.items()}
