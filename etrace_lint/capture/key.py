"""What makes two compiles the same lint, as text that every process computes alike.

Imports JAX: its callers import it only once the program has compiled a model.
"""

from __future__ import annotations

import hashlib

import jax

from .handover import Capture


def _shapes(value: object) -> list[tuple[tuple[int, ...], str]]:
    # a leaf is an array or a plain Python number
    return [(tuple(getattr(leaf, "shape", ())), str(getattr(leaf, "dtype", type(leaf).__name__)))
            for leaf in jax.tree.leaves(value)]


def capture_key(capture: Capture) -> str:
    """The model's class and its states' shapes, the inputs' shapes, the batch and the algorithm with its
    options: the same model compiled again, at another line or in a loop that builds it anew, is linted
    once, at its first compile. A digest, the same in an xdist worker and in the controller."""
    model = capture.model
    states: list[tuple[tuple[int, ...], str]] | int
    try:
        found = model.states()
        assert not isinstance(found, tuple)  # one dict without filters
        states = _shapes([state.value for state in found.values()])
    except Exception:  # noqa: BLE001 - a model brainstate cannot walk is told apart by its object
        states = id(model)
    algorithm = capture.algorithm_class
    parts = (type(model).__module__, type(model).__qualname__, states, _shapes(capture.inputs), capture.batch_size,
             capture.vmap, f"{algorithm.__module__}.{algorithm.__qualname__}" if algorithm is not None else None,
             sorted((str(k), repr(v)) for k, v in capture.algorithm_options.items()),
             sorted((str(k), repr(v)) for k, v in capture.graph_options.items()))
    return hashlib.sha1(repr(parts).encode("utf-8")).hexdigest()
