"""``--verify``: online gradients against BPTT, telling a bug from an approximation.

Imported only when a run asks for it: it imports JAX, brainstate and braintrace. The
learning-signal probe (:mod:`.probe`) reuses its harness. May import: ``core`` and the
engine's adapters (``engine.braintrace_adapter``, ``engine.jaxpr_view``).
"""

from .check import verify_model

__all__ = ["verify_model"]
