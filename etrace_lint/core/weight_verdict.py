"""What a weight's online learning is, in one word: the taxonomy etrace-lint's output and its tests' referee share.

A lint says, per weight, which of these its findings claim (:mod:`etrace_lint.core.learning_graph` reads them
off the findings: ``check(...).weights()``); the referee that measures braintrace's own online gradient against
BPTT says which one it measured, in the same words, so the two are compared weight by weight. Plain data, as
:class:`etrace_lint.core.verdict.Verdict` is: a run served from the cache names them without importing JAX.
"""

from __future__ import annotations

from enum import Enum


class WeightVerdict(Enum):
    """The strongest first: a weight whose findings claim several gets the first of them."""

    STEP_RAISES = "step raises"  # the online gradient step raises for the model
    REFUSED = "refused"  # braintrace refuses to compile the model (no online learner exists)
    NOT_FINITE = "not finite"  # its online gradient is NaN or inf where BPTT's is finite
    ZERO = "does not learn"  # its online gradient is zero while BPTT's is not
    AGAINST = "learns against BPTT"  # its online gradient points against BPTT's on every input draw
    PARTLY = "learns partly"  # through some of its uses or paths, not through others
    MULTIPLE = "learns a whole multiple"  # at T=1, a whole multiple (2x, 3x) of BPTT's, in its direction
    APPROXIMATE = "learns approximately"  # at T=1 neither equal to BPTT's nor a whole multiple of it
    WITHIN_WINDOW = "learns within each window"  # a multi-step VJP's gradient, exact within each window only
    LEARNS = "learns"  # exact at T=1, as braintrace's online rule promises
    NOT_MEASURED = "not measured"  # nothing measured or claimed about it (notes hidden, the model did not trace)

    @property
    def rank(self) -> int:
        """0 for the strongest claim."""
        return _ORDER.index(self)

    @property
    def learns(self) -> bool:
        """A claim that the weight learns as braintrace promises: exactly, or exactly within each window."""
        return self in (WeightVerdict.LEARNS, WeightVerdict.WITHIN_WINDOW)

    @property
    def blocks(self) -> bool:
        """A claim that some or all of the weight's online gradient is missing (or that none can be had)."""
        return self.rank <= WeightVerdict.PARTLY.rank and self is not WeightVerdict.AGAINST

    @property
    def learns_nothing(self) -> bool:
        """A claim that the weight gets no usable online gradient at all (through none of its uses)."""
        return self.rank <= WeightVerdict.ZERO.rank


_ORDER = tuple(WeightVerdict)
