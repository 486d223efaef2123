"""The advice for one model: every algorithm measured, then one recommended."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import brainstate
import braintrace
import jax
import jax.numpy as jnp
import numpy as np
import saiunit

from ...analysis import braintrace_adapter as bt
from ...core import advice as R
from ...core.json_types import shown_as_json
from ...core.verdict import Verdict
from .. import verdict as judge
from ..harness import HarnessError, Inputs, Weights, describe, mean_squared_output, on_device
from ..leaves import Leaf, is_quantity, mantissa
from ..settings import InputsCallable, Loss, VerifySettings
from .algorithms import Algorithm, AlgorithmSpec, select
from .cost import StepCost, flops_ratio, forward_cost, online_cost
from .fidelity import AdviceHarness, confirm_directions, directions_on_further_draws, weight_rows
from .memory import InputsAt, TraceMemory, kept_states, trace_memory
from .recommend import default_budget, mark


@dataclass(frozen=True)
class AdviceSettings:
    algorithms: AlgorithmSpec = None  # "all" / None, or comma-separated labels
    steps: int = 8
    batch_size: int | None = None  # the training batch the trace bytes are given at; None: the target's
    memory_budget: int | None = None  # bytes; None: the device's memory
    seed: int = 0
    cosine_floor: float = 0.5
    # ``inputs(steps, batch, seed)``, as ``verify={"inputs": ...}``; None: drawn
    inputs: InputsCallable | None = None


def _without_batch(inputs: Inputs, batch_size: int | None) -> Inputs:
    if batch_size is None:
        return inputs
    one: Inputs = jax.tree.map(lambda a: a[0] if np.ndim(mantissa(a)) else a, inputs, is_leaf=is_quantity)
    return one


def inputs_at_batch(inputs: Inputs, target_batch: int | None) -> InputsAt:
    """``batch -> example inputs with that batch axis`` (None: as one unbatched step)."""
    base = _without_batch(inputs, target_batch)

    def at(batch: int | None) -> Inputs:
        if batch is None:
            return base

        def widen(leaf: Leaf) -> Leaf:
            value = mantissa(leaf)
            if not np.ndim(value):
                return leaf
            wide = jnp.broadcast_to(value, (batch, *np.shape(value)))
            return type(leaf)(wide, unit=leaf.unit) if isinstance(leaf, saiunit.Quantity) else wide
        wide: Inputs = jax.tree.map(widen, base, is_leaf=is_quantity)
        return wide
    return at


def _weights(model: brainstate.nn.Module, inputs: Inputs) -> Weights:
    with bt.quiet([]):
        weights: Weights = bt.step_param_states(braintrace.extract_module_info(model, *inputs))
        return weights


def advise_model(model: brainstate.nn.Module, inputs: Inputs, *, target: str, batch_size: int | None = None,
                 settings: AdviceSettings = AdviceSettings(), weights: Weights | None = None,
                 loss: Loss | None = None, progress: Callable[[str], None] | None = None,
                 rebuilt: Callable[[int], brainstate.nn.Module] | None = None) -> list[R.AdviceRow]:
    """One row per algorithm; the model's states are as they were afterwards.

    ``batch_size``: the batch the target's example inputs and states carry (None: unbatched). ``rebuilt``: the
    model's factory on another seed, whose random initial weights the search for a draw against a direction reads
    too (:meth:`~etrace_lint.verify.harness.Harness.further_draws`).
    """
    algorithms = select(settings.algorithms)
    budget = settings.memory_budget if settings.memory_budget is not None else default_budget()[0]
    with on_device(None), kept_states(model):
        bt.ensure_states(model, batch_size)
        inputs_at = inputs_at_batch(inputs, batch_size)
        memories: dict[str, TraceMemory] = {}
        for algorithm in algorithms:
            _tell(progress, f"{target}: trace memory of {algorithm.label}")
            memories[algorithm.label] = trace_memory(algorithm, model, inputs_at, batched=True,
                                                     unbatched=batch_size is None)
        train_batch = settings.batch_size or batch_size
        verify = VerifySettings(steps=settings.steps, seed=settings.seed, algorithms=tuple(a.label for a in algorithms),
                                cosine_floor=settings.cosine_floor, inputs=settings.inputs)
        rows = _measured(model, inputs, batch_size, weights, loss, verify, algorithms, memories, train_batch,
                         target, progress, rebuilt)
    return mark(rows, budget)


def _tell(progress: Callable[[str], None] | None, text: str) -> None:
    if progress is not None:
        progress(text)


def _measured(model: brainstate.nn.Module, inputs: Inputs, batch_size: int | None, weights: Weights | None,
              loss: Loss | None, verify: VerifySettings, algorithms: list[Algorithm],
              memories: dict[str, TraceMemory], train_batch: int | None, target: str,
              progress: Callable[[str], None] | None,
              rebuilt: Callable[[int], brainstate.nn.Module] | None) -> list[R.AdviceRow]:
    loss = loss or mean_squared_output
    weights = weights if weights is not None else _weights(model, inputs)
    harness = AdviceHarness(model, inputs, batch_size, weights, verify, loss,
                            algorithms={a.label: a for a in algorithms}, rebuilt=rebuilt)
    rows: list[R.AdviceRow] = []
    try:
        try:
            _tell(progress, f"{target}: BPTT over {verify.steps} steps")
            reference = harness.settle([verify.steps], None)[verify.steps]
        except Exception as exc:  # noqa: BLE001 - no reference: every row says why
            return _unmeasured(harness, target, algorithms, memories, train_batch, verify.steps,
                               (inputs, batch_size), f"the BPTT reference did not run: {describe(exc)}")
        try:
            forward = forward_cost(model, harness.first_step(), loss)
        except Exception:  # noqa: BLE001 - the ratio is then n/a
            forward = None
        for algorithm in algorithms:
            _tell(progress, f"{target}: {algorithm.label} over {verify.steps} steps")
            memory = memories[algorithm.label]
            refusal = harness.compile_refusal(algorithm.label)
            if refusal is not None:  # what a user who calls braintrace.compile gets: nothing to measure
                rows.append(_row(target, algorithm, memory, train_batch, harness.batch, compiles=False, runs=False,
                                 error=refusal, steps=verify.steps))
                continue
            try:
                learner = harness.learner(algorithm.label)
            except HarnessError as exc:
                rows.append(_row(target, algorithm, memory, train_batch, harness.batch, compiles=True, runs=False,
                                 error=str(exc), steps=verify.steps))
                continue
            try:
                runs = harness.online(learner, [verify.steps])
            except Exception as exc:  # noqa: BLE001 - compiles, raises on its first online step
                rows.append(_row(target, algorithm, memory, train_batch, harness.batch, compiles=True, runs=False,
                                 error=describe(exc), steps=verify.steps))
                continue
            try:
                cost = online_cost(learner, model, harness.prefix(1), loss, harness.jitted_steps.get(id(learner)))
            except Exception:  # noqa: BLE001
                cost = None
            fidelity, zeros = weight_rows(runs[verify.steps], reference, verify.tolerance, verify.cosine_floor)
            if any(w.verdict is Verdict.AGAINST for w in fidelity):
                _tell(progress, f"{target}: {algorithm.label} on {judge.DRAWS - 1} more input draws and one from "
                                f"moved states")
                try:
                    others = [(b[verify.steps], o[verify.steps])
                              for b, o in harness.other_draws(learner, [verify.steps], judge.DRAWS)]
                except Exception:  # noqa: BLE001 - a direction measured on one draw only is not claimed
                    others = []
                fidelity = directions_on_further_draws(confirm_directions(fidelity, reference, others),
                                                       harness.further_draws(learner, [verify.steps],
                                                                             after=judge.DRAWS - 1), verify.steps)
            rows.append(_row(target, algorithm, memory, train_batch, harness.batch, compiles=True, runs=True,
                             error=None, steps=verify.steps, cost=cost, forward=forward, fidelity=fidelity,
                             zeros=zeros))
    finally:
        harness.close()
    return rows


def _unmeasured(harness: AdviceHarness, target: str, algorithms: list[Algorithm], memories: dict[str, TraceMemory],
                train_batch: int | None, steps: int, given: tuple[Inputs, int | None],
                why: str) -> list[R.AdviceRow]:
    """Rows without a BPTT reference: each with braintrace.compile's verdict on the target's own inputs and
    batch (``given``, as a user would call it), and why nothing was measured; no step was compiled."""
    rows = []
    for algorithm in algorithms:
        refusal = harness.compile_refusal(algorithm.label, given)
        rows.append(_row(target, algorithm, memories[algorithm.label], train_batch, None,
                         compiles=refusal is None, runs=False, error=refusal or why, steps=steps))
    return rows


def _row(target: str, algorithm: Algorithm, memory: TraceMemory, train_batch: int | None, measured_batch: int | None,
         *, compiles: bool, runs: bool, error: str | None, steps: int, cost: StepCost | None = None,
         forward: StepCost | None = None, fidelity: tuple[R.WeightFidelity, ...] = (),
         zeros: tuple[str, ...] = ()) -> R.AdviceRow:
    ratio = flops_ratio(cost, forward) if cost is not None and forward is not None else None
    return R.AdviceRow(
        target=target, algorithm=algorithm.name,
        options={name: shown_as_json(value) for name, value in algorithm.options.items()}, compiles=compiles, runs=runs,
        error=error, trace_bytes=memory.at(train_batch), trace_bytes_law=memory.law,
        xla_temp_bytes=cost.temp_bytes if cost is not None else None, flops_ratio=ratio,
        zero_gradient_weights=tuple(zeros), weights=tuple(fidelity), batch=train_batch,
        measured_batch=measured_batch, steps=steps, hidden_groups=memory.hidden_groups,
        note="; ".join(part for part in (algorithm.note, f"no law in the batch size: {memory.law_error}"
                                         if memory.law_error and compiles else "") if part))
