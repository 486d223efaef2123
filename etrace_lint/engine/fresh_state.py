"""Every target starts from the same global settings and random state, and what it changed is undone.

A factory or a model can change ``brainstate.environ``, the default random key (and NumPy's) and
JAX's configuration flags. Each target starts from the same seed (or the random state its file's
import left after that seed, when the worker imported the file ahead of its targets) and from the
settings its file's import left; :func:`target_state` puts back what it changed. The modules a file
imported are the worker's to drop (:mod:`etrace_lint.running.isolation`).
"""

from __future__ import annotations

import contextlib
from collections import defaultdict
from collections.abc import Iterator
from typing import Any, TypeAlias

import brainstate
import brainstate.environ as environ
import jax
import numpy as np
import numpy.typing as npt

SEED = 0  # every target starts from this seed, whichever process runs it and whenever


class GlobalState:
    """Snapshot of the settings a target may change; :meth:`restore` puts them back."""

    def __init__(self) -> None:
        self._environ_state = environ._ENV_STATE
        self._environ = {name: _copy(value) for name, value in vars(environ._ENV_STATE).items()
                         if name in ("settings", "contexts", "functions")}
        self._jax_flags = dict(jax.config.values)

    def restore(self) -> None:
        state = self._environ_state
        for name, saved in self._environ.items():
            current = getattr(state, name)
            current.clear()
            current.update(_copy(saved))
        local = getattr(state, "_local", None)
        if local is not None:  # brainstate >= 0.6 keeps open contexts per thread
            for name in list(vars(local)):
                value = getattr(local, name)
                if hasattr(value, "clear"):  # a context stack; not a plain setting
                    value.clear()
        for name, value in self._jax_flags.items():
            if jax.config.values.get(name, value) != value:
                try:
                    jax.config.update(name, value)  # type: ignore[no-untyped-call]  # jax's Config.update has no annotations
                except Exception:  # noqa: BLE001 - a flag that can only be set at start-up
                    pass


def _copy(value: object) -> object:
    if isinstance(value, dict):
        copied = type(value)(value.default_factory) if isinstance(value, defaultdict) else {}
        copied.update({k: list(v) if isinstance(v, list) else v for k, v in value.items()})
        return copied
    return value


# NumPy's global random state, as ``np.random.get_state()`` gives it and ``np.random.set_state`` takes it
NumpyRandomState: TypeAlias = "dict[str, Any] | tuple[str, npt.NDArray[np.uint32], int, int, float]"

# what the import of the current file left, see remember_file_random_state: brainstate's key, and NumPy's state
_file_random_state: tuple[object, NumpyRandomState] | None = None


def reseed() -> None:
    """The same random state for every target, whichever worker runs it: the state its file's import
    left when the worker imported the file ahead of its targets, else a fresh seed (and the file's
    import draws from it, as when the target runs alone)."""
    if _file_random_state is None:
        brainstate.random.seed(SEED)
        return
    key, numpy_state = _file_random_state
    brainstate.random.set_key(key)
    np.random.set_state(numpy_state)


def remember_file_random_state() -> None:
    """The random state right after a file's import: each of its targets starts from it, as each
    would after importing the file alone from a fresh seed."""
    global _file_random_state
    _file_random_state = (brainstate.random.get_key(), np.random.get_state())


def forget_file_random_state() -> None:
    global _file_random_state
    _file_random_state = None


@contextlib.contextmanager
def target_state() -> Iterator[None]:
    """Run one target from the worker's clean settings and undo what it changed."""
    saved = GlobalState()
    reseed()
    try:
        yield
    finally:
        saved.restore()
