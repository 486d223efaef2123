"""``--verify``: online gradients against BPTT, telling a bug from an approximation.

Imported only when a run asks for it: it imports JAX, brainstate and braintrace. The
learning-signal probe (:mod:`.probe`) and the learning-rule advisor (:mod:`.advise`, every
braintrace algorithm's memory, cost and fidelity) reuse its harness. May import: ``core`` and the
engine's adapters (``engine.braintrace_adapter``, ``engine.jaxpr_view``).
"""

from .check import verify_model

__all__ = ["verify_model"]
