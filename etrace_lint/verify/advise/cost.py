"""What XLA says of one jitted online step: its temporary memory and its flops next to one forward step.

Both functions are lowered and compiled, never run (``jit(f).lower(x).compile()``):
``memory_analysis().temp_size_in_bytes`` and ``cost_analysis()["flops"]``.
A backend that does not report a figure leaves it None.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import brainstate
import jax

from ...analysis import braintrace_adapter as bt
from ..harness import Inputs, JittedStep, Learner
from ..settings import Loss
from .memory import kept_states


@dataclass(frozen=True)
class StepCost:
    temp_bytes: int | None
    flops: float | None


def _analysed(function: Callable[..., object], *args: object) -> StepCost:
    return _costs(brainstate.transform.jit(function).lower(*args).compile())


def _costs(compiled: jax.stages.Compiled) -> StepCost:
    temp = flops = None
    try:
        memory = compiled.memory_analysis()
        temp = int(memory.temp_size_in_bytes) if memory is not None else None
    except Exception:  # noqa: BLE001 - not every backend reports memory
        temp = None
    try:
        costs = compiled.cost_analysis()
        costs = costs[0] if isinstance(costs, (list, tuple)) else costs  # older jax: one dict per device
        flops = float(costs["flops"]) if costs and "flops" in costs else None
    except Exception:  # noqa: BLE001
        flops = None
    return StepCost(temp, flops)


def forward_cost(model: brainstate.nn.Module, inputs: Inputs, loss: Loss) -> StepCost:
    """One step of the model and its loss, without any gradient."""
    with kept_states(model), bt.quiet([]):
        return _analysed(lambda *xs: loss(model(*xs)), *inputs)


def online_cost(learner: Learner, model: brainstate.nn.Module, window: Inputs, loss: Loss,
                jitted: JittedStep | None = None) -> StepCost:
    """One online gradient step of the learner over ``window`` (a one-step slice of the sequence).

    ``jitted``: the step the gradient check already compiled and ran (``brainstate.transform.jit``):
    lowered again with the same inputs, XLA's cache returns its executable instead of compiling anew."""
    def step(xs: Inputs) -> object:
        return learner.etrace_grad(*xs, step_fn=lambda *x: loss(learner(*x)), reduction="sum",
                                   loss_output="scalar", return_value=True)

    with kept_states(learner), kept_states(model), bt.quiet([]):
        if jitted is not None:
            return _costs(jitted.lower(window).compile())
        return _analysed(step, window)


def flops_ratio(online: StepCost, forward: StepCost) -> float | None:
    if online.flops is None or not forward.flops:
        return None
    return online.flops / forward.flops
