"""Trace memory: the bytes of the state an algorithm allocates beyond the model's own, and their law
in the batch size, found from shapes alone.

The learner is built and its graph compiled inside ``eval_shape`` at batch
sizes 1, 2 and 3: every state it creates (eligibility traces, filters, UORO
factors, step counters) comes back as a shape, nothing is allocated, and the
three totals fit ``c0 + c1 B + c2 B^2`` exactly (three points, three
unknowns; the fit is checked to be whole numbers). An algorithm whose
initialisation needs concrete values (UORO reads a norm with ``float``) is
built for real, on a copy of the model, at those three small batches instead.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from fractions import Fraction
from typing import Protocol, runtime_checkable

import brainstate
import braintrace
import jax
import jax.numpy as jnp
import numpy as np

from ...analysis import braintrace_adapter as bt
from ...core.advice import Law
from ...core.naming import StatePath
from ..harness import describe
from ..leaves import is_quantity, mantissa
from .algorithms import Algorithm

InputsAt = Callable[[int | None], tuple[object, ...]]  # batch -> example inputs with that batch axis

FIT_BATCHES = (1, 2, 3)


@dataclass(frozen=True)
class TraceMemory:
    law: Law | None  # None: the model does not initialise batched
    unbatched: int | None  # bytes when the model runs without a batch axis, when it does
    hidden_groups: int | None  # the compiler's hidden groups for this algorithm
    error: str = ""  # why nothing was measured
    law_error: str = ""  # why there is no law in the batch size

    def at(self, batch: int | None) -> int | None:
        if batch is None:
            return self.unbatched if self.unbatched is not None else (self.law.at(1) if self.law else None)
        return self.law.at(batch) if self.law is not None else None


class LawError(ValueError):
    pass


def fit(points: dict[int, int]) -> Law:
    """The quadratic through three (batch, bytes) points, with whole coefficients."""
    (b1, y1), (b2, y2), (b3, y3) = sorted(points.items())
    d1 = Fraction(y2 - y1, b2 - b1)
    d2 = Fraction(y3 - y2, b3 - b2)
    c2 = (d2 - d1) / (b3 - b1)
    c1 = d1 - c2 * (b1 + b2)
    c0 = y1 - c1 * b1 - c2 * b1 * b1
    if any(c.denominator != 1 for c in (c0, c1, c2)):
        raise LawError(f"the trace bytes {points} follow no law c0 + c1 B + c2 B^2 with whole coefficients")
    return Law(int(c0), int(c1), int(c2))


@runtime_checkable
class Shaped(Protocol):
    """An array or an array's shape (``jax.ShapeDtypeStruct``): what has a shape and a dtype."""

    @property
    def shape(self) -> tuple[int, ...]: ...

    @property
    def dtype(self) -> np.dtype[np.generic]: ...


def leaf_bytes(leaf: Shaped | jax.typing.ArrayLike) -> int:
    """Bytes of one array or shape; a PRNG key counts its key data, a Python number as JAX stores it."""
    shaped: Shaped
    if isinstance(leaf, Shaped):
        shaped = leaf
    else:
        shaped = jax.ShapeDtypeStruct(  # type: ignore[no-untyped-call]  # jax's ShapeDtypeStruct.__init__ has no annotations
            np.shape(leaf), jnp.asarray(leaf).dtype)
    if jnp.issubdtype(shaped.dtype, jax.dtypes.prng_key):
        shaped = jax.eval_shape(jax.random.key_data, shaped)
    return int(np.prod(shaped.shape, dtype=np.int64)) * int(np.dtype(shaped.dtype).itemsize)


def tree_bytes(tree: object) -> int:
    return sum(leaf_bytes(leaf) for leaf in jax.tree.leaves(tree, is_leaf=is_quantity))


def learner_state(model: brainstate.nn.Module,
                  learner: braintrace.ETraceAlgorithm | brainstate.nn.Vmap) -> dict[StatePath, object]:
    """``{path: value}`` of the states the learner holds that are not the model's."""
    own = {id(st) for st in brainstate.graph.states(model).values()}
    return {tuple(path): _mantissa(st.value) for path, st in brainstate.graph.states(learner).items()
            if id(st) not in own}


def _mantissa(value: object) -> object:
    """``value`` with each Quantity replaced by its mantissa."""
    return jax.tree.map(mantissa, value, is_leaf=is_quantity)


@contextlib.contextmanager
def kept_states(model: brainstate.graph.Node) -> Iterator[None]:
    """Every state of the model as it was, afterwards: building a learner initialises them again."""
    saved = [(st, st.value) for st in brainstate.graph.states(model).values()]
    try:
        yield
    finally:
        for st, value in saved:
            st.value = value


def _built(algorithm: Algorithm, model: brainstate.nn.Module, batch: int | None,
           inputs_at: InputsAt) -> tuple[dict[StatePath, object], int]:
    """The learner's own state and hidden groups, built by ``braintrace.compile``: a learner it refuses
    allocates nothing."""
    learner = algorithm.compile(model, inputs_at(batch), batch)
    if batch is not None:
        _check_batched(model, batch)
    if not isinstance(learner, braintrace.ETraceAlgorithm):  # a vmapped learner (``vmap=True``) keeps it inside
        raise TypeError(f"braintrace.compile returned a {type(learner).__name__}, which has no graph")
    return learner_state(model, learner), len(learner.graph.hidden_groups)


def _check_batched(model: brainstate.nn.Module, batch: int) -> None:
    """A model whose ``init_state`` ignores the batch size has no law in it: its states stay as they were."""
    for path, st in brainstate.graph.states(model).items():
        if not isinstance(st, brainstate.HiddenState):
            continue
        for leaf in jax.tree.leaves(st.value, is_leaf=is_quantity):
            shape = np.shape(mantissa(leaf))
            if not shape or shape[0] != batch:
                raise LawError(f"the model's hidden states do not take a batch axis (initialised with batch_size="
                               f"{batch}, {'.'.join(map(str, path))} has shape {shape})")


def state_bytes(algorithm: Algorithm, model: brainstate.nn.Module, batch: int | None,
                inputs_at: InputsAt) -> tuple[int, int]:
    """(bytes, hidden groups) of the learner's own state at ``batch``; shapes only where braintrace allows."""
    groups: list[int] = []

    # on a copy made inside the trace: brainstate refuses tracers written into outer states
    def shapes() -> dict[StatePath, object]:
        state, count = _built(algorithm, brainstate.graph.clone(model), batch, inputs_at)
        groups.append(count)
        return state

    with kept_states(model), bt.quiet([]):
        try:
            state = brainstate.transform.eval_shape(shapes)
        except Exception:  # noqa: BLE001 - an init that needs concrete values: build it for real, small,
            # on a copy: ``init_state`` may put new state objects on the model
            groups.clear()
            state, count = _built(algorithm, brainstate.graph.clone(model), batch, inputs_at)
            groups.append(count)
    return tree_bytes(state), groups[-1]


def trace_memory(algorithm: Algorithm, model: brainstate.nn.Module, inputs_at: InputsAt,
                 batched: bool, unbatched: bool) -> TraceMemory:
    """The law over batch sizes 1, 2, 3 (when the model initialises batched) and the unbatched bytes."""
    law = single = groups = None
    errors = []
    law_error = ""
    if batched:
        try:
            points = {}
            for batch in FIT_BATCHES:
                points[batch], groups = state_bytes(algorithm, model, batch, inputs_at)
            law = fit(points)
        except LawError as exc:
            law_error = str(exc)
        except Exception as exc:  # noqa: BLE001 - the learner's problem, said in the row
            errors.append(describe(exc))
            law_error = describe(exc)
    if unbatched:
        try:
            single, groups = state_bytes(algorithm, model, None, inputs_at)
        except Exception as exc:  # noqa: BLE001
            errors.append(describe(exc))
    error = "" if law is not None or single is not None else "; ".join(errors) or "the model has no layout"
    return TraceMemory(law, single, groups, error, law_error)
