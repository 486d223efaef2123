"""Per weight, the online gradient of each algorithm against exact BPTT over T steps.

The ``--verify`` harness does the work: one snapshot of the model, inputs
drawn once, the BPTT reference computed ONCE per target and shared by every
algorithm, each learner driven one jitted step per call as online training
does. Only how a learner is built differs: from the advisor's table.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace

import brainstate
import braintrace
import jax
import jax.numpy as jnp
import numpy as np

from ...analysis import braintrace_adapter as bt
from ...core import advice as R
from ...core.naming import display_name
from ...core.verdict import Verdict
from .. import verdict as judge
from ..harness import DrawRuns, GradientRun, Harness, HarnessError, Inputs, Learner, Weights, describe, searched
from ..settings import Loss, VerifySettings
from .algorithms import Algorithm


class AdviceHarness(Harness):
    """The verify harness, building learners from :mod:`.algorithms` entries keyed by their label."""

    def __init__(self, model: brainstate.nn.Module, example_inputs: Inputs, batch_size: int | None,
                 weights: Weights, settings: VerifySettings, loss: Loss | None = None, interpret: bool = False, *,
                 algorithms: dict[str, Algorithm], rebuilt: Callable[[int], brainstate.nn.Module] | None = None):
        super().__init__(model, example_inputs, batch_size, weights, settings, loss, interpret, rebuilt)
        self.algorithms = algorithms

    def compile_refusal(self, label: str, given: tuple[Inputs, int | None] | None = None) -> str | None:
        """What ``braintrace.compile`` raises for the algorithm, None when it returns a learner: the public
        entry point itself, with its own checks, on a copy of the model at the batch the steps are measured at,
        given their first step (``given``: these inputs and batch instead). Its learner is not the one measured:
        ``braintrace.compile`` initialises the states again, and the layout keeps the target's own where it
        has to."""
        inputs, batch = given if given is not None else (self.first_step(), self.batch)
        try:
            with bt.quiet([]):
                self.algorithms[label].compile(brainstate.graph.clone(self.model), inputs, batch,
                                               seed=self.settings.seed)
        except Exception as exc:  # noqa: BLE001 - any refusal is the row's answer
            return f"braintrace.compile raised {describe(exc)}"
        return None

    def _compile(self, label: str) -> braintrace.ETraceAlgorithm:
        """The learner built from its class on the model as the layout left it, as a training script does."""
        algorithm = self.algorithms[label]
        try:
            with bt.quiet([]):
                learner = algorithm.build(self.model)
                learner.compile_graph(*self.first_step())
                return learner
        except Exception as exc:  # noqa: BLE001 - reported in the row as not running
            layout = self.layout.describe() if self.layout is not None else "as given"
            raise HarnessError(f"built from its class on the model as measured ({layout}), it raised "
                               f"{describe(exc)}") from None

    def online(self, learner: Learner, lengths: list[int]) -> dict[int, GradientRun]:
        """The verify harness's online run, its states first given the types one step gives them: hidden
        states start weakly typed and leave the first step strongly typed, and a step counter starts as a
        Python int, so the jitted step would be compiled twice, once for each. The values are the same."""
        _as_after_a_step(learner)
        return super().online(learner, lengths)


def _as_after_a_step(learner: Learner) -> None:
    def typed(value: object) -> object:
        if isinstance(value, jax.Array):
            # a PRNG key array is a jax.Array without ``weak_type``
            return jnp.array(value, dtype=value.dtype) if getattr(value, "weak_type", False) else value
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return jax.device_put(value)  # as the step returns it: a weakly typed scalar
        return value

    for st in brainstate.graph.states(learner).values():
        if not isinstance(st, brainstate.ParamState):
            st.value = jax.tree.map(typed, st.value)


def weight_rows(online: GradientRun, reference: GradientRun, tolerance_of: Callable[[str], float],
                cosine_floor: float) -> tuple[tuple[R.WeightFidelity, ...], tuple[str, ...]]:
    """(per-leaf WeightFidelity, weights whose online gradient is exactly zero while BPTT's is not)."""
    largest = judge.largest_norm(reference.grads.values())
    fidelity, zeros = [], []
    for key in sorted(reference.grads, key=lambda k: (display_name(k[0]), k[1])):
        weight, leaf = key
        name = display_name(weight) + (leaf or "")
        bptt = reference.grads[key]
        grad = judge.online_gradient(online.grads, key, bptt)
        tolerance = tolerance_of(reference.dtypes.get(key, "float32"))
        m = judge.metrics(grad, bptt)
        zero_scale = tolerance * largest
        # no expectation: the advice does not know which gradients must be exact, and calls exact what is
        verdict = judge.decide(m, None, tolerance, cosine_floor, zero_scale)
        if m.finite and m.bptt_norm > zero_scale and not np.any(grad):
            zeros.append(name)
        fidelity.append(R.WeightFidelity(name, judge.json_number(m.cosine), judge.json_number(m.rel_error), verdict))
    return tuple(fidelity), tuple(zeros)


def directions_on_further_draws(fidelity: tuple[R.WeightFidelity, ...], runs: Iterator[DrawRuns],
                                steps: int) -> tuple[R.WeightFidelity, ...]:
    """The weights still against BPTT on every draw :func:`confirm_directions` read, measured on further draws
    (``runs``: :meth:`~etrace_lint.verify.harness.Harness.further_draws`), each from rest and from the states its first
    steps leave, until one on which a weight does not point against BPTT's makes it misaligned, as the probe and
    --verify search them; each keeps its cosine on every draw."""
    def against(rows: tuple[R.WeightFidelity, ...]) -> bool:
        return any(row.verdict is Verdict.AGAINST for row in rows)

    def measure(rows: tuple[R.WeightFidelity, ...], drawn: DrawRuns) -> tuple[R.WeightFidelity, ...]:
        keys = {display_name(weight) + (leaf or ""): (weight, leaf) for weight, leaf in drawn[0][steps].grads}
        measured = []
        for row in rows:
            if row.verdict is not Verdict.AGAINST:
                measured.append(row)
                continue
            cosine = judge.cosine_on_draw(drawn[0][steps].grads, drawn[1][steps].grads, keys[row.weight])
            verdict = row.verdict if judge.below_on_further_draws([cosine]) else Verdict.MISALIGNED
            measured.append(replace(row, verdict=verdict, draws=(*row.draws, judge.json_number(cosine))))
        return tuple(measured)

    return searched(fidelity, against, runs, measure)


def confirm_directions(fidelity: tuple[R.WeightFidelity, ...], reference: GradientRun,
                       others: list[tuple[GradientRun, GradientRun]]) -> tuple[R.WeightFidelity, ...]:
    """The weights against BPTT on the first draw, measured on the other draws (``others``: BPTT and online
    runs): against BPTT when every draw says so, else misaligned; each keeps its cosine on every draw."""
    keys = {display_name(weight) + (leaf or ""): (weight, leaf) for weight, leaf in reference.grads}
    confirmed = []
    for row in fidelity:
        if row.verdict is not Verdict.AGAINST:
            confirmed.append(row)
            continue
        key = keys[row.weight]
        cosines = [row.cosine]
        cosines.extend(judge.cosine_on_draw(bptt.grads, online.grads, key) for bptt, online in others)
        confirmed.append(R.WeightFidelity(row.weight, row.cosine, row.relative_error,
                                          judge.confirmed(row.verdict, cosines, None),
                                          tuple(judge.json_number(c) for c in cosines)))
    return tuple(confirmed)
