"""Everything of the program a lint can touch, saved before it and put back after it.

A captured model is linted in the program's own process, on the program's own objects: the
compiler initialises the model's states, the probe and ``--verify`` run steps of it, and every
lint starts from the same random seed. :class:`ProgramState` saves what that can change:

- each module of the model: its attributes (an ``init_state`` puts new state objects in place) and
  the value of each of its states;
- the random state: brainstate's default key, NumPy's and Python's global generators;
- JAX's configuration flags and ``brainstate.environ``: its settings, contexts and functions, and the
  contexts the program's thread has open (brainstate >= 0.6 keeps them per thread).

:meth:`ProgramState.restore` puts all of it back as it was, so the program goes on computing exactly
what it would have computed without etrace-lint (a forked child cannot lint instead: XLA's thread
pools do not survive ``fork``, and the first program the child runs waits forever).

Imports JAX, brainstate and NumPy: only :mod:`.lint` imports it, once the program has compiled a model.
"""

from __future__ import annotations

import random
from collections import defaultdict
from typing import TypeVar

import brainstate
import brainstate.environ as environ
import jax
import numpy as np

K = TypeVar("K")


def _copy_dict(value: dict[K, object]) -> dict[K, object]:
    copied = type(value)(value.default_factory) if isinstance(value, defaultdict) else type(value)()
    copied.update({key: list(item) if isinstance(item, list) else item for key, item in value.items()})
    return copied


def _copy_mapping(value: object) -> object:
    if isinstance(value, dict):
        return _copy_dict(value)
    if isinstance(value, list):
        return list(value)
    return value


def _put_back(current: object, saved: object) -> object:
    """``saved`` into the container ``current`` in place (its holders keep their reference)."""
    if isinstance(current, dict) and isinstance(saved, dict):
        current.clear()
        current.update(_copy_dict(saved))
        return current
    if isinstance(current, list) and isinstance(saved, list):
        current[:] = saved
        return current
    return saved


class ProgramState:
    """A snapshot of what a lint of ``model`` may change in the program."""

    def __init__(self, model: brainstate.nn.Module):
        self._modules = [(node, dict(vars(node))) for node in _nodes(model)]
        self._states = [(state, state.value) for state in _states(model)]
        self._key = brainstate.random.get_key()
        self._numpy = np.random.get_state()
        self._python = random.getstate()
        self._jax_flags = dict(jax.config.values)
        holder = environ._ENV_STATE
        self._environ_holder = holder
        self._environ = {name: _copy_mapping(value) for name, value in vars(holder).items()
                         if name in ("settings", "contexts", "functions")}
        local = getattr(holder, "_local", None)  # brainstate >= 0.6 keeps open contexts per thread
        self._local = local
        self._local_values = {name: _copy_mapping(value) for name, value in vars(local).items()} \
            if local is not None else {}

    def restore(self) -> None:
        for node, attributes in self._modules:
            current = vars(node)
            for name in [name for name in current if name not in attributes]:
                del current[name]
            current.update(attributes)
        for state, value in self._states:
            state.restore_value(value)
        brainstate.random.set_key(self._key)
        np.random.set_state(self._numpy)
        random.setstate(self._python)
        for name, value in self._jax_flags.items():
            if jax.config.values.get(name, value) is not value and jax.config.values.get(name, value) != value:
                try:
                    jax.config.update(name, value)  # type: ignore[no-untyped-call]
                except Exception:  # noqa: BLE001 - a flag that can only be set at start-up never changed
                    pass
        holder = self._environ_holder
        for name, saved in self._environ.items():
            setattr(holder, name, _put_back(getattr(holder, name), saved))
        if self._local is not None:
            for name in [name for name in vars(self._local) if name not in self._local_values]:
                delattr(self._local, name)
            for name, saved in self._local_values.items():
                setattr(self._local, name, _put_back(getattr(self._local, name, None), saved))


def _nodes(model: brainstate.nn.Module) -> list[object]:
    """The model and every module inside it, each once."""
    found: dict[int, object] = {id(model): model}
    try:
        nodes = model.nodes()
        for node in (nodes.values() if isinstance(nodes, dict) else nodes):
            found.setdefault(id(node), node)
    except Exception:  # noqa: BLE001 - a model brainstate cannot walk keeps only its own attributes
        pass
    return [node for node in found.values() if hasattr(node, "__dict__")]  # a graph node of any library


def _states(model: brainstate.nn.Module) -> list[brainstate.State[object]]:
    found: dict[int, brainstate.State[object]] = {}
    try:
        states = model.states()
        if isinstance(states, dict):  # without filters, one dict
            for state in states.values():
                found.setdefault(id(state), state)
    except Exception:  # noqa: BLE001 - as for the nodes
        pass
    for node in _nodes(model):
        for value in vars(node).values():
            if isinstance(value, brainstate.State):
                found.setdefault(id(value), value)
    return list(found.values())


__all__ = ["ProgramState"]
