"""What braintrace.nn offers for a layer of another library: its ETP twin, and whether it re-exports the class."""

from __future__ import annotations

import braintrace


def etp_layer_for(layer: object) -> str:
    """``braintrace.nn.Linear`` for a ``brainstate.nn.Linear``: the layer of braintrace.nn with the same
    name as a plain layer of another library, which does the same through an ETP op.

    braintrace.nn re-exports many of brainstate's layers (``braintrace.nn.LayerNorm`` *is*
    ``brainstate.nn.LayerNorm``): a name found there is a twin only when it is another class, one
    braintrace defines itself."""
    cls = type(layer)
    if layer is None or cls.__module__.startswith("braintrace"):
        return ""
    twin = getattr(braintrace.nn, cls.__name__, None)
    if not isinstance(twin, type) or twin is cls or issubclass(cls, twin):
        return ""
    return f"braintrace.nn.{cls.__name__}" if twin.__module__.startswith("braintrace") else ""


def in_braintrace_nn(cls: type) -> bool:
    """Whether braintrace.nn re-exports this very class under its name."""
    return getattr(braintrace.nn, cls.__name__, None) is cls
