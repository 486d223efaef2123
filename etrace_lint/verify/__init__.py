"""``--verify``: online gradients against BPTT, telling a bug from an approximation.

Imported only when a run asks for it: it imports JAX, brainstate and braintrace.
"""

from .check import verify_model

__all__ = ["verify_model"]
