"""What the probe measures: the first online steps of the target's algorithm against BPTT.

Over ``PROBE_STEPS`` steps (and one), for each algorithm the target names
(``verify={"algorithms": [...]}``; D-RTRL otherwise):

- does the online gradient step run (a custom-VJP shape error, say, raises
  only here, after the model compiled);
- is each weight leaf's online gradient finite, and non-zero where BPTT's is;
- at one step, where every online gradient must equal BPTT's, is it a
  multiple of it instead (a path counted twice).

Everything measured is kept as it was measured: a figure that could not be
measured is None, never 0.
"""

from __future__ import annotations

import ast
import inspect
import math
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

from ...analysis import braintrace_adapter as bt
from ...core.naming import StatePath
from ...core.verdict import Verdict
from .. import verdict as judge
from ..expectations import GraphFacts, expectation
from ..harness import (
    DrawRuns,
    GradientRun,
    Harness,
    HarnessError,
    LayoutError,
    LeafKey,
    Learner,
    describe,
    leaf_key,
    on_device,
    same_forward,
    searched,
)
from ..settings import VerifySettings, VerifySettingsError, resolve_settings

if TYPE_CHECKING:  # annotations only
    from ...analysis.context import AnalysisContext
    from ...analysis.loaded_target import LoadedTarget

PROBE_STEPS = 4
DEFAULT_ALGORITHMS = ("d_rtrl",)


@dataclass(frozen=True)
class LeafSignal:
    """One weight leaf's online gradient next to BPTT's."""

    weight: StatePath
    leaf: str
    steps: int  # the sequence length the zero and finiteness checks ran over
    online_norm: float | None  # None: not finite
    bptt_norm: float | None  # None: not finite
    zero_scale: float  # a BPTT norm at or below it is round-off of a zero gradient
    scale: float | None = None  # at one step: online = scale x BPTT although they must be equal
    # the cosine with BPTT's over ``steps`` on each input draw, when the first draw's is below 0 (else empty)
    draws: tuple[float | None, ...] = ()
    # at one step, where they must be equal, neither equal nor a multiple of BPTT's in its direction:
    # (online norm / BPTT norm, cosine)
    first_step: tuple[float, float] | None = None
    # zero on the first draw: its online norm / BPTT norm on each other draw whose BPTT gradient is not zero (a
    # draw that drives the weight's layer); a zero is claimed only where every one of them is zero too
    other_draws: tuple[float, ...] = ()
    # a weight a rule says gets nothing through one of its uses, whose online gradient is BPTT's on the first draw:
    # its distance from BPTT's (relative to BPTT's norm) on each draw that drives it, the first one first; inf on a
    # draw where it is not BPTT's own (judge.bptts_own: within the tolerance, or in BPTT's direction within 1%)
    exact_draws: tuple[float, ...] = ()
    tolerance: float = 0.0  # a relative distance at or below it is BPTT's own gradient, rounded
    # ``scale`` and ``first_step`` were measured at the first step from the states the warm-up steps leave: the
    # first step from rest drives the leaf nothing
    first_step_moved: bool = False
    # the input draw ``scale`` and ``first_step`` were measured on: 0 the first, another where the first drives the
    # leaf nothing at its first step, from rest or from moved states
    first_step_draw: int = 0
    # the input scale they were measured at, where none of those draws drives the leaf's first step at the scale the
    # probe kept (None: that scale)
    first_step_scale: float | None = None
    # at the first step, where BPTT's drives the leaf: its online norm / BPTT's norm, on the first draw, then (for a
    # zero over the sequence) on each other; None: a draw whose first step does not drive it. A same-step gradient
    # that reaches the weight refutes a zero over the sequence (seed 47's model 441, a layer norm's scale whose
    # gradient over 4 steps is 1e-13 of BPTT's on every draw, and BPTT's own at the first step where one drives it)
    first_step_shares: tuple[float | None, ...] = ()
    # at the first step, where the first draw's online gradient points against BPTT's (a cosine below
    # -ORTHOGONAL): the cosine on each draw, the first one first (else empty)
    first_step_draws: tuple[float | None, ...] = ()
    # where ``draws`` is measured and the weight has other leaves: the cosine of the whole weight's online gradient
    # (its leaves side by side) with BPTT's on each of those draws; a leaf against BPTT's inside a weight that, as a
    # whole, is not (a LoRA's ``lora_a`` beside a ``lora_b`` that outweighs it) is a weight that learns approximately
    weight_draws: tuple[float | None, ...] = ()
    # the same where ``first_step_draws`` is measured: the whole weight's cosine at the first step of each draw
    first_step_weight_draws: tuple[float | None, ...] = ()
    # a direction every draw so far shows, over the sequence (``draws``) and at the first step (``first_step_draws``):
    # its cosine on each further draw, from rest and from the states that draw's first steps leave, measured until
    # one is not against BPTT's (None: a draw that does not drive the leaf)
    more_draws: tuple[float | None, ...] = ()
    more_first_step_draws: tuple[float | None, ...] = ()
    # the whole weight's cosine on those further draws, where ``weight_draws`` (``first_step_weight_draws``) is read
    more_weight_draws: tuple[float | None, ...] = ()
    more_first_step_weight_draws: tuple[float | None, ...] = ()

    @property
    def exact_on_every_draw(self) -> bool:
        """BPTT's own gradient on the first draw and on each other that drives the weight, the warmed one included
        (a lone first draw proves nothing of the later steps' states)."""
        return len(self.exact_draws) > 1 and all(math.isfinite(r) for r in self.exact_draws)

    @property
    def against(self) -> bool:
        """Points against BPTT's on every input draw: it learns in the opposite direction."""
        return judge.against_on_every_draw(self.draws) and judge.below_on_further_draws(self.more_draws)

    @property
    def weight_against(self) -> bool:
        """The whole weight points against BPTT's on every input draw that drives it, by more than the band around
        0 within which a direction is as good as orthogonal; a weight of one leaf: its leaf does. Seed 67's model 19
        (a LoRA in a synapse cell): ``lora_a`` at -0.58 to -0.73 on every draw, the weight at -0.07 to -0.13, and
        +0.94 over a sequence from states other inputs moved."""
        return not self.weight_draws or (
            judge.against_on_every_draw(self.weight_draws, below=-judge.ORTHOGONAL)
            and judge.below_on_further_draws(self.more_weight_draws, below=-judge.ORTHOGONAL))

    @property
    def weight_against_at_first_step(self) -> bool:
        """At the first step the whole weight points against BPTT's on every draw that drives it, as
        :attr:`against_at_first_step` says of the leaf; a weight of one leaf: its leaf does."""
        return not self.first_step_weight_draws or (
            judge.against_on_every_draw(self.first_step_weight_draws, below=-judge.ORTHOGONAL)
            and judge.below_on_further_draws(self.more_first_step_weight_draws, below=-judge.ORTHOGONAL))

    @property
    def finite(self) -> bool:
        return self.online_norm is not None

    @property
    def online_without_bptt(self) -> bool:
        """BPTT's gradient is exactly zero (the loss does not depend on the leaf), the online one is not: a zero
        that is exact is the weight's own, not a draw that fails to drive it, so one draw shows it."""
        return self.bptt_norm == 0 and self.online_norm is not None and self.online_norm > self.zero_scale

    @property
    def zero_on_first_draw(self) -> bool:
        """Measured zero online (up to float32 rounding of a zero) while BPTT's is not, on the first draw."""
        return (self.online_norm is not None and self.bptt_norm is not None
                and judge.not_learning(self.online_norm, self.bptt_norm, self.zero_scale))

    @property
    def zero_over_every_sequence(self) -> bool:
        """Zero over the sequence on every draw that drives the weight: the first, and each other whose BPTT
        gradient is not zero."""
        return self.zero_on_first_draw and all(ratio <= judge.ROUNDING for ratio in self.other_draws)

    @property
    def learns_at_first_step(self) -> bool:
        """The first step's online gradient is not a zero where BPTT's drives the leaf: its same-step gradient."""
        return any(share is not None and share > judge.ROUNDING for share in self.first_step_shares)

    @property
    def not_learning(self) -> bool:
        """Zero on every draw that drives the weight, and at the first step too: no online gradient at all."""
        return self.zero_over_every_sequence and not self.learns_at_first_step

    @property
    def same_step_only(self) -> bool:
        """Zero over every sequence, not at the first step: only its same-step gradient reaches it online."""
        return self.zero_over_every_sequence and self.learns_at_first_step

    @property
    def zero_on_some_draws(self) -> bool:
        """Zero on the first draw, not on another that drives the weight: nothing is claimed of its gradient."""
        return self.zero_on_first_draw and not self.zero_over_every_sequence

    @property
    def against_at_first_step(self) -> bool:
        """At the first step, where it must be BPTT's, it points against BPTT's on every draw that drives it."""
        return (judge.against_on_every_draw(self.first_step_draws, below=-judge.ORTHOGONAL)
                and judge.below_on_further_draws(self.more_first_step_draws, -judge.ORTHOGONAL))


@dataclass(frozen=True)
class StepFailure:
    """The online gradient step raised, or (``building``) the learner's construction before it."""

    exception: str  # its class name
    text: str  # its text, on one line
    weight: StatePath | None = None  # the parameter a shape mismatch names, when it names one
    leaf: str = ""
    parameter_shape: tuple[int, ...] | None = None
    gradient_shape: tuple[int, ...] | None = None
    building: bool = False  # braintrace's learner could not be built on the model: training never starts


@dataclass(frozen=True)
class ProbeRun:
    """One algorithm's probe of one model."""

    algorithm: str
    batch: int | None
    signals: tuple[LeafSignal, ...] = ()
    failure: StepFailure | None = None
    seconds: float = 0.0


@dataclass(frozen=True)
class ProbeResult:
    runs: tuple[ProbeRun, ...] = ()
    skipped: str = ""  # why nothing was measured (BPTT did not run, the learner did not build), or ""
    not_run: str = ""  # nothing was measured: the class of the exception that stopped it (``skipped`` says why)


def probe_runs(loaded: LoadedTarget, context: AnalysisContext, compile_options: Mapping[str, object],
               denied: frozenset[StatePath] = frozenset(), refused: bool = False) -> ProbeResult:
    """Probe one compiled model; leaves its states as it found them. Never raises for the model. ``denied``: the
    weights (paths as strings) a rule of the graph says get no online gradient through a use; a zero of theirs
    the graph explains, on every draw, so it is not measured again on other draws. ``refused``: a rule of the
    graph already says braintrace refuses the model, so a learner that cannot be built is no news."""
    try:
        own = resolve_settings(loaded.verify_options)
    except VerifySettingsError as exc:
        return ProbeResult(skipped=str(exc), not_run=type(exc).__name__)
    target_algorithms = (loaded.verify_options or {}).get("algorithms")
    algorithms = own.algorithms if target_algorithms else DEFAULT_ALGORITHMS
    settings = replace(own, steps=PROBE_STEPS, algorithms=algorithms)
    for algorithm in algorithms:
        settings = _with_compile_options(settings, algorithm, compile_options)
    with on_device(None):
        try:
            harness = Harness(context.model, loaded.inputs, loaded.batch_size,
                              bt.step_param_states(context.module_info), settings, settings.loss,
                              interpret=True, rebuilt=loaded.rebuilt)
        except Exception as exc:  # noqa: BLE001 - the model's states: ETL420 says the probe measured nothing
            return ProbeResult(skipped=f"reading the model's states raised {describe(exc)}",
                               not_run=type(exc).__name__)
        try:
            return _probe(harness, context, settings, denied, refused)
        except LayoutError as exc:
            return ProbeResult(skipped=f"BPTT did not run: {exc}", not_run=type(exc).__name__)
        except HarnessError as exc:
            return ProbeResult(skipped=str(exc), not_run=type(exc).__name__)
        except Exception as exc:  # noqa: BLE001 - the model or its loss raised outside the online step
            return ProbeResult(skipped=describe(exc), not_run=type(exc).__name__)
        finally:
            harness.close()


class DifferentForwards(Exception):
    """The online run and BPTT's computed different forward losses from the same states and inputs."""


def _probe(harness: Harness, context: AnalysisContext, settings: VerifySettings,
           denied: frozenset[StatePath], refused: bool) -> ProbeResult:
    lengths = [PROBE_STEPS, 1]
    bptt = harness.settle(lengths, settings.algorithms[0])
    facts = GraphFacts(context)
    runs, skipped, different = [], [], []
    for algorithm in settings.algorithms:
        try:
            learner = harness.learner(algorithm)
        except Exception as exc:  # noqa: BLE001 - braintrace builds no learner: a finding, unless a rule says why
            if refused:
                skipped.append(f"{algorithm}: {exc}")
            else:
                raised = exc.__context__ or exc  # the harness words braintrace's error, which it keeps as context
                runs.append(ProbeRun(algorithm, harness.batch, failure=StepFailure(
                    type(raised).__name__, " ".join(str(exc).split()), building=True)))
            continue
        try:
            runs.append(_probe_one(harness, learner, algorithm, bptt, facts, settings, denied))
        except DifferentForwards as exc:
            different.append(str(exc))
    if different and not runs:
        return ProbeResult(skipped="; ".join(different), not_run=DifferentForwards.__name__)
    return ProbeResult(tuple(runs), "; ".join(skipped + different))


def _with_compile_options(settings: VerifySettings, algorithm: str,
                          compile_options: Mapping[str, object]) -> VerifySettings:
    """The target's compile options the algorithm's constructor takes (``control_flow``, ...) join its own."""
    constructor = bt.algorithm_class(algorithm)  # the class the harness builds the learner from, if any
    if constructor is None or not compile_options:
        return settings
    accepted = set(inspect.signature(constructor.__init__).parameters) - {"self", "model"}
    taken = {key: value for key, value in compile_options.items() if key in accepted}
    if not taken:
        return settings
    options = {name: dict(values) for name, values in settings.algorithm_options.items()}
    options[algorithm] = {**taken, **options.get(algorithm, {})}
    return replace(settings, algorithm_options=options)


def _probe_one(harness: Harness, learner: Learner, algorithm: str, bptt: dict[int, GradientRun], facts: GraphFacts,
               settings: VerifySettings, denied: frozenset[StatePath]) -> ProbeRun:
    start = time.perf_counter()
    try:
        online = harness.online(learner, [1, PROBE_STEPS])
    except Exception as exc:  # noqa: BLE001 - the finding: the first training step raises
        return ProbeRun(algorithm, harness.batch, failure=step_failure(exc, harness),
                        seconds=time.perf_counter() - start)
    for steps in (1, PROBE_STEPS):
        if not same_forward(online[steps], bptt[steps], settings):
            raise DifferentForwards(
                f"{algorithm}'s online run and BPTT's computed different forward losses from the same states and "
                f"inputs over {steps} step{'s' * (steps > 1)} ({online[steps].loss:.6g} and {bptt[steps].loss:.6g}), "
                f"so their gradients are of two different functions")
    longest, first = bptt[PROBE_STEPS], bptt[1]
    largest = judge.largest_norm(longest.grads.values())
    exact_at_one = [key for key in sorted(longest.grads, key=str)
                    if key in first.grads and expectation(facts, key[0], algorithm, 1).exact]
    at_first = _first_steps(first, online[1], exact_at_one, settings, moved=False)
    # a first step from rest that drives a leaf nothing: the first step from the states the warm-up steps leave
    # (seed 47's model 746, whose ReLU readout is shut at T=1 from rest on every scale and draw)
    silent = [key for key in exact_at_one if key not in at_first]
    warmed: DrawRuns | None = None
    if silent:
        try:
            warmed = harness.warmed(learner, [1, PROBE_STEPS])
        except Exception:  # noqa: BLE001 - the first step from rest is all that was measured
            warmed = None
        else:
            if same_forward(warmed[1][1], warmed[0][1], settings):
                at_first.update(_first_steps(warmed[0][1], warmed[1][1], silent, settings, moved=True))
            else:  # from moved states the two ran different steps: nothing of them is compared
                warmed = None
    still = [key for key in silent if key not in at_first]
    if still:
        at_first.update(_first_steps_elsewhere(harness, learner, still, settings))
    signals = []
    for key in sorted(longest.grads, key=str):
        weight, leaf = key
        tolerance = settings.tolerance(longest.dtypes.get(key, "float32"))
        reference = longest.grads[key]
        measured = judge.online_gradient(online[PROBE_STEPS].grads, key, reference)
        step = at_first.get(key, FirstStep())
        m = judge.metrics(measured, reference)
        zero_scale = tolerance * largest
        # against BPTT on this draw, whatever the algorithm promises: the other draws are measured below
        against = judge.decide(m, False, tolerance, settings.cosine_floor, zero_scale) is Verdict.AGAINST
        pointing = (m.cosine,) if against else ()  # a cosine below 0 is a finite number
        several = sum(k[0] == weight for k in longest.grads) > 1  # leaves: the weight's direction is measured too
        whole = ((judge.weight_cosine_on_draw(longest.grads, online[PROBE_STEPS].grads, weight),)
                 if against and several else ())
        # a use the graph says gets nothing, yet the whole gradient is BPTT's: measured on the other draws too
        exact = (m.rel_error,) if (tuple(map(str, weight)) in denied and m.finite and m.bptt_norm > zero_scale
                                   and judge.bptts_own(m, tolerance)) else ()
        # a first step from rest against BPTT's, where it must be BPTT's: measured on the other draws too
        turned = (step.deviation[1],) if (step.deviation is not None and not step.moved and not step.draw
                                          and step.scale is None and step.deviation[1] < -judge.ORTHOGONAL) else ()
        whole_first = (_weight_at_first_step(first.grads, online[1].grads, weight, tolerance),) if turned and several \
            else ()
        signals.append(LeafSignal(tuple(weight), leaf, PROBE_STEPS, _norm(measured), _norm(reference),
                                  zero_scale, step.factor, pointing, step.deviation, exact_draws=exact,
                                  tolerance=tolerance, first_step_moved=step.moved, first_step_draw=step.draw,
                                  first_step_scale=step.scale, first_step_shares=(step.share,),
                                  first_step_draws=turned, weight_draws=whole,
                                  first_step_weight_draws=whole_first))
    unexplained = {s.weight for s in signals if s.zero_on_first_draw and tuple(map(str, s.weight)) not in denied}
    if any(signal.draws or signal.exact_draws or signal.first_step_draws for signal in signals) or unexplained:
        signals = _on_other_draws(harness, learner, signals, unexplained, warmed)
    return ProbeRun(algorithm, harness.batch, tuple(signals), seconds=time.perf_counter() - start)


@dataclass(frozen=True)
class FirstStep:
    """A leaf's first step, where its online gradient must be BPTT's."""

    factor: float | None = None  # the multiple of BPTT's it is instead
    deviation: tuple[float, float] | None = None  # neither BPTT's nor a multiple: (norm ratio, cosine)
    moved: bool = False  # measured from the states the warm-up steps leave, not from rest
    share: float | None = None  # its online norm / BPTT's norm; None: the step does not drive the leaf
    draw: int = 0  # the input draw it was measured on (0: the first)
    scale: float | None = None  # the input scale it was measured at (None: the one the probe kept)


def _first_steps_elsewhere(harness: Harness, learner: Learner, keys: list[LeafKey],
                           settings: VerifySettings) -> dict[LeafKey, FirstStep]:
    """The first step of each leaf of ``keys``, which the first draw of the inputs drives nothing there from rest
    or from moved states: on the other draws the probe measures, each from rest, then from the states its warm-up
    steps leave; then, for a leaf none of them drives, on the first draw scaled up further (x4, x16, x64 where it
    kept x1), from moved states. A spiking layer whose output stays 0 through the first steps leaves the squared
    loss no gradient there; another draw's moved states, or larger inputs, drive it (tests/fixtures/fuzz/: a LoRA
    weight in a leak cell read by a spiking layer, whose first step is 2.4x BPTT's, cosine 0.77, where it is
    driven). The runs span the probe's whole sequence, as its others do, so nothing is traced again."""
    found: dict[LeafKey, FirstStep] = {}
    lengths = [1, PROBE_STEPS]
    for draw in harness.draws_besides(judge.DRAWS):
        left = [key for key in keys if key not in found]
        if not left:
            return found
        try:
            runs = harness.on_draw(learner, lengths, draw)
            steps = _first_steps(runs[0][1], runs[1][1], left, settings, moved=False, draw=draw)
            silent = [key for key in left if key not in steps]
            if silent:
                warmed = harness.warmed_on_draw(learner, lengths, draw)
                steps.update(_first_steps(warmed[0][1], warmed[1][1], silent, settings, moved=True, draw=draw))
        except Exception:  # noqa: BLE001 - the first draw's figures stand; this draw adds nothing
            continue
        found.update(steps)
    for scale in harness.larger_scales():
        left = [key for key in keys if key not in found]
        if not left:
            break
        try:
            warmed = harness.warmed_on_draw(learner, lengths, harness.draw, scale)
        except Exception:  # noqa: BLE001 - larger inputs the model does not take say nothing of its first step
            break
        found.update(_first_steps(warmed[0][1], warmed[1][1], left, settings, moved=True, scale=scale))
    return found


def _first_steps(bptt: GradientRun, online: GradientRun, keys: list[LeafKey], settings: VerifySettings,
                 moved: bool, draw: int = 0, scale: float | None = None) -> dict[LeafKey, FirstStep]:
    """Each leaf of ``keys`` whose BPTT gradient at one step is not round-off of a zero, as its first step
    compares with BPTT's; a leaf the step does not drive is left out."""
    largest = judge.largest_norm(bptt.grads.values())
    steps: dict[LeafKey, FirstStep] = {}
    for key in keys:
        at_one = online.grads.get(key)
        if at_one is None:
            continue
        tolerance = settings.tolerance(bptt.dtypes.get(key, "float32"))
        m = judge.metrics(at_one, bptt.grads[key])
        if not m.finite or m.bptt_norm <= tolerance * largest:
            continue
        factor = judge.scale(m, tolerance)
        share = m.online_norm / m.bptt_norm
        if factor is None:
            steps[key] = FirstStep(deviation=judge.first_step_deviation(m, tolerance, tolerance * largest),
                                   moved=moved, share=share, draw=draw, scale=scale)
        elif factor < 0:  # the opposite direction is a deviation, not another step size
            steps[key] = FirstStep(deviation=(-factor, -1.0), moved=moved, share=share, draw=draw, scale=scale)
        elif judge.near_one(factor):  # float32 round-off through an ill-conditioned op: BPTT's own gradient
            steps[key] = FirstStep(moved=moved, share=share, draw=draw, scale=scale)
        elif judge.whole_multiple(factor) is None:
            # BPTT's direction at another step size that is no whole multiple: no path counted twice, a part of the
            # derivative left out
            steps[key] = FirstStep(deviation=(factor, m.cosine), moved=moved, share=share, draw=draw, scale=scale)
        else:
            steps[key] = FirstStep(factor=factor, moved=moved, share=share, draw=draw, scale=scale)
    return steps


def _at_first_step(runs: DrawRuns, key: LeafKey, tolerance: float) -> judge.Metrics | None:
    """A leaf's online gradient against BPTT's at the first step of one draw's runs; None where BPTT's is round-off
    of a zero there (the draw's first step does not drive the leaf)."""
    reference, online = runs[0][1].grads, runs[1][1].grads
    largest = judge.largest_norm(reference.values())
    m = judge.metrics(judge.online_gradient(online, key, reference[key]), reference[key])
    return m if m.bptt_norm > tolerance * largest else None


def _weight_at_first_step(bptt: Mapping[LeafKey, np.ndarray], online: Mapping[LeafKey, np.ndarray],
                          weight: StatePath, tolerance: float) -> float | None:
    """The whole weight's cosine with BPTT's at the first step of one draw, as :func:`_at_first_step` reads a
    leaf's; None where that step does not drive the weight."""
    return judge.weight_cosine_on_draw(bptt, online, weight, tolerance * judge.largest_norm(bptt.values()))


def _on_one_more_draw(signal: LeafSignal, runs: DrawRuns, unexplained: set[StatePath]) -> LeafSignal:
    """``signal`` with what one more draw's runs (over one step and the sequence) measure of its zero over the
    sequence, where nothing in the graph explains it: the sequence's norm ratio and the first step's share."""
    if signal.weight not in unexplained:
        return signal
    key = _key_of(signal, runs[0][PROBE_STEPS].grads)
    ratio = judge.norm_ratio_on_draw(runs[0][PROBE_STEPS].grads, runs[1][PROBE_STEPS].grads, key, signal.zero_scale)
    first = _at_first_step(runs, key, signal.tolerance)
    share = None if first is None or not first.finite else first.online_norm / first.bptt_norm
    return replace(signal, other_draws=signal.other_draws + (() if ratio is None else (ratio,)),
                   first_step_shares=signal.first_step_shares + (share,))


def _on_other_draws(harness: Harness, learner: Learner, signals: list[LeafSignal], unexplained: set[StatePath],
                    warmed: DrawRuns | None) -> list[LeafSignal]:
    """A leaf whose online gradient points against BPTT's (over the sequence, or at the first step, where it must
    be BPTT's), is zero where nothing in the graph explains it (``unexplained``), or is BPTT's where a rule says a
    use gets nothing, on the first draw, measured on the others (the warmed draw from moved states the last): a
    direction, a zero or an exact gradient holds only where every draw says so (a spiking layer that one draw
    does not drive gives a zero online gradient that the next draw does not). The first step is run only where
    a leaf's first step is read: a direction there, or a zero's same-step gradient."""
    first_steps = bool(unexplained) or any(signal.first_step_draws for signal in signals)
    try:
        others = harness.other_draws(learner, [1, PROBE_STEPS] if first_steps else [PROBE_STEPS], judge.DRAWS,
                                     warmed)
    except Exception:  # noqa: BLE001 - a direction, a zero or an exact gradient measured once is not claimed
        return [replace(signal, draws=(), exact_draws=(), first_step_draws=(), weight_draws=(),
                        first_step_weight_draws=(),
                        other_draws=(math.inf,) if signal.weight in unexplained else ())
                for signal in signals]
    kept = []
    for signal in signals:
        if not (signal.draws or signal.exact_draws or signal.first_step_draws or signal.weight in unexplained):
            kept.append(signal)
            continue
        key = _key_of(signal, others[0][0][PROBE_STEPS].grads)
        if signal.first_step_draws:
            firsts = [_at_first_step(runs, key, signal.tolerance) for runs in others]
            signal = replace(signal, first_step_draws=signal.first_step_draws + tuple(
                None if m is None else m.cosine for m in firsts))
        if signal.first_step_weight_draws:
            signal = replace(signal, first_step_weight_draws=signal.first_step_weight_draws + tuple(
                _weight_at_first_step(runs[0][1].grads, runs[1][1].grads, key[0], signal.tolerance)
                for runs in others))
        if signal.draws:
            signal = replace(signal, draws=signal.draws + tuple(
                judge.cosine_on_draw(reference[PROBE_STEPS].grads, online[PROBE_STEPS].grads, key)
                for reference, online in others))
        if signal.weight_draws:
            signal = replace(signal, weight_draws=signal.weight_draws + tuple(
                judge.weight_cosine_on_draw(reference[PROBE_STEPS].grads, online[PROBE_STEPS].grads, key[0])
                for reference, online in others))
        # a first step measured from moved states is the warmed draw's, the last of the others: counted once
        for runs in others[:-1] if signal.first_step_moved else others:
            signal = _on_one_more_draw(signal, runs, unexplained)
        if signal.exact_draws:
            distances = [judge.distance_on_draw(reference[PROBE_STEPS].grads, online[PROBE_STEPS].grads, key,
                                                signal.zero_scale, signal.tolerance)
                         for reference, online in others]
            # the warmed draw, the last, must drive it: a lone draw from rest proves nothing of moved states
            measured = signal.exact_draws + tuple(d for d in distances if d is not None)
            signal = replace(signal, exact_draws=measured if distances[-1] is not None else ())
        kept.append(signal)
    return _directions_on_more_draws(harness, learner, _zeros_on_more_draws(harness, learner, kept, unexplained))


def _directions_on_more_draws(harness: Harness, learner: Learner, signals: list[LeafSignal]) -> list[LeafSignal]:
    """A direction against BPTT's that every draw so far shows, over the sequence or at the first step, measured on
    the draws after them (up to :data:`SEARCHED_DRAWS`), each from rest and from the states its first steps leave,
    one at a time until a draw on which the leaf does not point against BPTT's refutes it: "learns against BPTT" is
    a claim about every input. Seed 73's model 254 (a factored weight behind a ReLU over 2 units): at the first step
    cosine -0.18 on the probe's 4 draws, and +0.9994 on 3 of 4 draws braintrace's referee makes. Only models with
    such a direction pay for the search."""
    return _on_further_draws(harness, learner, signals, lambda s: s.against or s.against_at_first_step,
                             _direction_on_one_more_draw)


def _direction_on_one_more_draw(signal: LeafSignal, runs: DrawRuns) -> LeafSignal:
    """``signal`` with its direction's cosine on one more draw's runs: over the sequence, at the first step, or
    both, as it points against BPTT's on the draws before."""
    key = _key_of(signal, runs[0][PROBE_STEPS].grads)
    reference, online = runs[0][PROBE_STEPS].grads, runs[1][PROBE_STEPS].grads
    if signal.against:
        signal = replace(signal, more_draws=signal.more_draws + (judge.cosine_on_draw(reference, online, key),),
                         more_weight_draws=signal.more_weight_draws + (
                             (judge.weight_cosine_on_draw(reference, online, key[0]),) if signal.weight_draws else ()))
    if signal.against_at_first_step:
        first = _at_first_step(runs, key, signal.tolerance)
        whole = ((_weight_at_first_step(runs[0][1].grads, runs[1][1].grads, key[0], signal.tolerance),)
                 if signal.first_step_weight_draws else ())
        signal = replace(signal, more_first_step_draws=signal.more_first_step_draws + (
            None if first is None else first.cosine,), more_first_step_weight_draws=(
            signal.more_first_step_weight_draws + whole))
    return signal


def _zeros_on_more_draws(harness: Harness, learner: Learner, signals: list[LeafSignal],
                         unexplained: set[StatePath]) -> list[LeafSignal]:
    """A zero nothing in the graph explains that every draw so far shows, measured on the draws after them (up to
    :data:`SEARCHED_DRAWS`), each from rest and from the states its first steps leave, one at a time until a draw
    that drives the weight refutes it: a claim that a weight does not learn is one of every input. Seed 47's model
    586 (a LayerNorm over ``w * mean(spikes)``, which only its epsilon keeps from removing the mean) has an online
    gradient of 1e-8x BPTT's on five draws from rest and 0.009x on the sixth; model 441 (a layer norm's scale in
    a synapse cell) 1e-13x on every draw from rest and up to 0.2x on a third of the draws from moved states. Only
    models with such a zero pay for the search."""
    return _on_further_draws(
        harness, learner, signals,
        lambda s: s.weight in unexplained and s.zero_over_every_sequence and math.inf not in s.other_draws,
        lambda signal, runs: _on_one_more_draw(signal, runs, unexplained))


def _on_further_draws(harness: Harness, learner: Learner, signals: list[LeafSignal],
                      pending: Callable[[LeafSignal], bool],
                      measured: Callable[[LeafSignal, DrawRuns], LeafSignal]) -> list[LeafSignal]:
    """The claims every draw so far shows (``pending``), each signal ``measured`` on one more draw at a time: the
    draws after the probe's others, up to :data:`SEARCHED_DRAWS`, each from rest and then from the states its first
    steps leave, until no signal is pending. A draw that raises ends the search: what the draws before measured
    stands."""
    def measure(signals: list[LeafSignal], runs: DrawRuns) -> list[LeafSignal]:
        return [measured(signal, runs) if pending(signal) else signal for signal in signals]

    return searched(signals, lambda signals: any(pending(signal) for signal in signals),
                    harness.further_draws(learner, [1, PROBE_STEPS], after=judge.DRAWS - 1), measure)


def _key_of(signal: LeafSignal, grads: Mapping[LeafKey, np.ndarray]) -> LeafKey:
    """The key of ``signal``'s leaf among another run's gradients (a path's parts compared as strings)."""
    return leaf_key(grads, signal.weight, signal.leaf)


def _norm(values: np.ndarray) -> float | None:
    values = np.asarray(values, dtype=np.float64)
    return float(np.linalg.norm(values.ravel())) if np.all(np.isfinite(values)) else None


# jax's custom_vjp check: "... at output[1][('conv', 'weight')]['bias'] the bwd rule produced an output of
# type float32[4] corresponding to an input of type float32[1,1,4] ..."
_VJP_SHAPES = re.compile(r"at output\[\d+\](?P<path>\[\(.*?\)\])(?P<leaf>(?:\[[^\]]*\])*) the bwd rule produced "
                         r"an output of type \w+\[(?P<got>[\d,]*)\] corresponding to an input of type "
                         r"\w+\[(?P<have>[\d,]*)\]")


def step_failure(exc: BaseException, harness: Harness) -> StepFailure:
    """The exception of a failed online step, with the parameter and shapes it names."""
    text = " ".join(str(exc).split())
    match = _VJP_SHAPES.search(text)
    if match is None:
        return StepFailure(type(exc).__name__, text)
    try:
        path = ast.literal_eval(match.group("path")[1:-1])
    except (ValueError, SyntaxError):
        return StepFailure(type(exc).__name__, text)
    return StepFailure(type(exc).__name__, text, tuple(path) if isinstance(path, tuple) else None,
                       match.group("leaf"), _shape(match.group("have")), _shape(match.group("got")))


def _shape(dims: str) -> tuple[int, ...]:
    """``"1,1,4"`` -> ``(1, 1, 4)``, as JAX writes a type's shape in its messages."""
    return tuple(int(n) for n in dims.split(",") if n)

