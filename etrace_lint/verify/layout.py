"""Batched or unbatched: how the gradient check lays out a model's states and inputs.

The layout the target gave comes first. A target says it is batched with
``@etrace_lint.target(batch_size=N)``; otherwise its states tell: hidden
states that the model's own ``init_state`` makes as ``(N, *unbatched)`` were
initialised with a batch of N, and example inputs with the same leading axis
carry that batch. Such a model is checked at that batch, its inputs used as
they are (never batched a second time).

A model that initialises both ways and was given unbatched is checked at the
verify batch (``verify={"batch": N}``, default 4): a batch of random
sequences tests more of the gradient than one. A model that initialises only
one way (only batched, or only unbatched, as many spiking networks are) keeps
the layout it was given. The other layout is a fallback, tried only when the
first one fails.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import brainstate
import jax
import numpy as np

from ..core.naming import StatePath
from .leaves import Leaf, mantissa

DEFAULT_BATCH = 4

Shape = tuple[int, ...]
IsLeaf = Callable[[object], bool]  # which pytree nodes are leaves (a Quantity is one)


@dataclass(frozen=True)
class Layout:
    batch: int | None  # the batch braintrace.compile is told; None: unbatched
    reinit: bool  # initialise the states at ``batch``; False: keep the target's own states
    inputs_batched: bool  # the example inputs carry a batch axis (replaced by ``batch`` when drawing)
    given: bool  # the layout the target gave

    def describe(self) -> str:
        shape = f"batched (batch {self.batch})" if self.batch is not None else "unbatched"
        return f"{shape}, as the target gave it" if self.given else shape


def _shape(leaf: Leaf) -> Shape:
    """The shape of an array, or of a Quantity's mantissa."""
    return np.shape(mantissa(leaf))


def hidden_shapes(model: brainstate.nn.Module, is_leaf: IsLeaf) -> dict[StatePath, list[Shape]]:
    return {tuple(path): [_shape(leaf)
                          for leaf in jax.tree.leaves(st.value, is_leaf=is_leaf)]
            for path, st in brainstate.graph.states(model).items() if isinstance(st, brainstate.HiddenState)}


def _with_batch(shapes: dict[StatePath, list[Shape]], batch: int) -> dict[StatePath, list[Shape]]:
    return {path: [(batch, *shape) for shape in leaves] for path, leaves in shapes.items()}


def _leading(shapes: list[Shape]) -> int | None:
    """The leading axis every shape shares, None when one is a scalar or they differ."""
    firsts = {shape[0] if shape else None for shape in shapes}
    return firsts.pop() if len(firsts) == 1 else None


def _input_shapes(example_inputs: tuple[object, ...], is_leaf: IsLeaf) -> list[Shape]:
    """The shapes of the example inputs that can carry a batch: a scalar (a step index) never does."""
    shapes = [_shape(leaf) for leaf in jax.tree.leaves(example_inputs, is_leaf=is_leaf)]
    return [shape for shape in shapes if shape]


def is_mapped(model: brainstate.nn.Module) -> bool:
    """Whether the model is (or holds) a ``brainstate.nn.Map``: its states were made under ``vmap``
    with the map's size as their leading axis, and initialising them again would undo that."""
    nodes = [model] + [node for _, node in brainstate.graph.iter_node(model)]
    return any(isinstance(node, brainstate.nn.Map) for node in nodes)


def leading_axes(model: brainstate.nn.Module, example_inputs: tuple[object, ...],
                 is_leaf: IsLeaf) -> tuple[int | None, int | None]:
    """The leading axis all hidden states share, and the one all example inputs share (None: none shared)."""
    states = [shape for leaves in hidden_shapes(model, is_leaf).values() for shape in leaves]
    return _leading(states), _leading(_input_shapes(example_inputs, is_leaf))


def _initialised(model: brainstate.nn.Module, batch: int | None, seed: int,
                 is_leaf: IsLeaf) -> dict[StatePath, list[Shape]] | None:
    """The hidden-state shapes the model's own ``init_state`` makes, None when it raises."""
    try:
        with brainstate.random.seed_context(seed):
            if batch is None:
                brainstate.nn.init_all_states(model)
            else:
                brainstate.nn.init_all_states(model, batch_size=batch)
    except Exception:  # a model that initialises only one way
        return None
    return hidden_shapes(model, is_leaf)


def plan_layouts(model: brainstate.nn.Module, example_inputs: tuple[object, ...], target_batch: int | None,
                 verify_batch: int | None, seed: int, is_leaf: IsLeaf, restore: Callable[[], None]) -> list[Layout]:
    """The layouts to try, in order; leaves the model's states as ``restore`` puts them."""
    given = hidden_shapes(model, is_leaf)
    want = verify_batch or DEFAULT_BATCH
    input_shapes = _input_shapes(example_inputs, is_leaf)
    if is_mapped(model):  # the map's size is the batch, and its states stay as the factory made them
        lead = _leading([shape for leaves in given.values() for shape in leaves])
        return [Layout(target_batch or lead, False, _leading(input_shapes) == (target_batch or lead), True)]
    try:
        single = _initialised(model, None, seed, is_leaf)
        batched = _initialised(model, want, seed, is_leaf)
    finally:
        restore()
    input_lead = _leading(input_shapes)
    state_shapes = [shape for leaves in given.values() for shape in leaves]
    lead = _leading(state_shapes)
    both_ways = single is not None and batched is not None and single != batched \
        and batched == _with_batch(single, want)

    if target_batch is not None:
        own = target_batch
    elif lead is None or not given:
        own = None
    elif single is None:  # it cannot be initialised unbatched: the factory batched it
        own = lead
    elif single != given:
        own = lead if given == _with_batch(single, lead) else None
    elif both_ways:
        own = None
    else:  # ``init_state`` leaves the factory's states alone: only the shapes can tell
        own = lead if (lead == input_lead and all(len(s) >= 2 for s in state_shapes + input_shapes)) else None

    layouts = []
    if own is not None:
        inputs_batched = input_lead == own
        if verify_batch is not None and verify_batch != own and both_ways and inputs_batched:
            layouts.append(Layout(verify_batch, True, True, False))
        layouts.append(Layout(own, False, inputs_batched, True))
        if single is not None and single != given:
            layouts.append(Layout(None, True, inputs_batched, False))
        elif single is not None:  # states made at construction: tell the compiler they are not batched
            layouts.append(Layout(None, False, False, False))
    else:
        if both_ways:
            layouts.append(Layout(want, True, False, False))
        layouts.append(Layout(None, False, False, True))
        if not both_ways and batched is not None and batched == _with_batch(given, want):
            layouts.append(Layout(want, True, False, False))
        elif not both_ways and lead is not None and lead == input_lead:
            layouts.append(Layout(lead, False, True, False))
    return list(dict.fromkeys(layouts))


def advice(leading: tuple[int | None, int | None]) -> str:
    """What the user can set when no layout runs, with the batch the model seems to carry."""
    state_batch, input_batch = leading
    seen = []
    if state_batch is not None:
        seen.append(f"its hidden states have a leading axis of {state_batch}")
    if input_batch is not None:
        seen.append(f"its example inputs of {input_batch}")
    n = state_batch if state_batch is not None else "N"
    return (f"tell etrace-lint how the model is batched{' (' + ', '.join(seen) + ')' if seen else ''}: "
            f"`@etrace_lint.target(batch_size={n})` when the example inputs and the states carry a batch "
            f"axis of that size, or `@etrace_lint.target(verify={{\"batch\": N}})` for the batch the check "
            f"draws its inputs with; or give the inputs yourself with "
            f"`verify={{\"inputs\": lambda steps, batch, seed: ...}}`")
