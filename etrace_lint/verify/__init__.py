"""``--verify``: online gradients against BPTT, telling a bug from an approximation.

Imported only when a run asks for it: it imports JAX, brainstate and braintrace. The
learning-signal probe (:mod:`.probe`) and the learning-rule advisor (:mod:`.advise`, every
braintrace algorithm's memory, cost and fidelity) reuse its harness and its one decision of a
weight's verdict from its (online, BPTT) gradients (:mod:`.verdict`). May import: ``core``,
``config`` and ``analysis`` (braintrace's graph, the jaxpr, the rules' view), never the engine.
"""

from .check import verify_model

__all__ = ["verify_model"]
