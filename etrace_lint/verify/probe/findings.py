"""The probe's measurements -> findings on the user's lines, worded by the probe rules."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from ...core.details import ProbeFailure, ProbeLeaf, ProbeSignal
from ...core.findings import NO_SUBJECT, Finding, Location, Subject
from ...core.naming import StatePath, display_name, path_key
from ...core.registry import measured_rule
from ...core.rule import ProbeFacts
from ...core.wording import plain_text
from ..findings import FindingMaker
from ..harness import WARMUP_STEPS
from ..verdict import ROUNDING, describe_further_draws, describe_scale, times_word, whole_multiple
from .measure import LeafSignal, ProbeResult, ProbeRun, StepFailure

if TYPE_CHECKING:  # annotations only
    from ...analysis.context import AnalysisContext

STEP_RAISES, NO_GRADIENT, MULTIPLE, NOT_FINITE, AGAINST = "ETL410", "ETL411", "ETL412", "ETL413", "ETL415"
DEVIATES, NOT_MEASURED, PARTLY, NOT_BUILT, NOTHING = "ETL416", "ETL417", "ETL418", "ETL419", "ETL420"
EXACT_DESPITE, WITHOUT_BPTT, LEAF_AGAINST, NOT_DRIVEN = "ETL421", "ETL422", "ETL423", "ETL424"
# what a probe whose BPTT gradients are all zero (or not finite) could compare: nothing
_ALL_ZERO = ("BPTT's gradient of every weight is zero over {steps} steps on each of its input draws (the model has "
             "no float output, its weights reach it only through integer or boolean values, its output does not "
             "depend on the weights (a constant, such as a softmax over one unit), or the inputs never drive it)")
_NONE_FINITE = ("BPTT's gradient of every weight is zero or not finite over {steps} steps on each of its input draws "
                "(the model computes a NaN or an infinity, from a weight or a state that starts so, say)")


def _shape(shape: tuple[int, ...] | None) -> str:
    return "n/a" if shape is None else str(tuple(shape))


def _size(shape: tuple[int, ...] | None) -> int | None:
    return None if shape is None else math.prod(shape)


def _number(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3g}"


def why_scaled(factor: float) -> str:
    """What a whole multiple of the exact gradient means (the probe names no other multiple: another step size in
    BPTT's direction, or the opposite direction, is a deviation, ETL416)."""
    whole = whole_multiple(factor) or round(factor)
    return (f"the online rule counts one path from the weight to the loss {times_word(whole)}, "
            f"as braintrace does when a "
            f"hidden state is computed in the same step from another hidden state's new value (a synapse's "
            f"g feeding a membrane's V, an LSTM's c feeding h); the weight learns in BPTT's direction at "
            f"{whole} times the step size")


_CONNECTED = "the compiler connects it to a hidden state (it would read as learning online)"


class ProbeFindings:
    """Places the probe's verdicts where the weight is created, with its op as related."""

    def __init__(self, context: AnalysisContext, target: str):

        self._places = FindingMaker(context, target, [])
        self.locator = context.locator
        self.target = target
        self._states = list(self.locator.states)
        self._connected = {tuple(map(str, w)) for w in context.learning_weights}

    def _finding(self, rule_id: str, facts: ProbeFacts, primary: Location, related: list[Location],
                 details: ProbeFailure | ProbeSignal | None, subject: Subject = NO_SUBJECT) -> Finding:
        rule = measured_rule(rule_id)
        assert rule.explain is not None  # every probe rule words its facts (rules/etl41*.py)
        return Finding(rule_id, rule.level, rule.explain(facts), self.target, primary,
                       tuple(related) + (self.locator.factory_related,), subject=subject, details=details)

    @staticmethod
    def _subject(run: ProbeRun, weight: StatePath) -> Subject:
        return Subject(weight=display_name(weight), weight_path=path_key(weight), algorithm=run.algorithm)

    def _weight_path(self, weight: StatePath) -> StatePath:
        """The weight's path with its original element types (ints stay ints) for the locator."""
        for path in self._states:
            if list(map(str, path)) == list(map(str, weight)):
                return tuple(path)
        return tuple(weight)

    def _is_connected(self, weight: StatePath) -> bool:
        return tuple(map(str, weight)) in self._connected

    def for_failure(self, run: ProbeRun, failure: StepFailure) -> Finding:
        details = ProbeFailure(run.algorithm, failure.exception, run.batch)
        if failure.weight is not None:
            weight = self._weight_path(failure.weight)
            primary, related = self._places.weight_locations(weight)
            details = replace(details, parameter_shape=tuple(failure.parameter_shape or ()),
                              gradient_shape=tuple(failure.gradient_shape or ()))
            facts = ProbeFacts(run.algorithm, weight=display_name(weight) + failure.leaf,
                               exception=failure.exception, text=failure.text,
                               parameter_shape=_shape(failure.parameter_shape),
                               gradient_shape=_shape(failure.gradient_shape),
                               same_size=_size(failure.parameter_shape) == _size(failure.gradient_shape))
            return self._finding(STEP_RAISES, facts, primary, related, details, self._subject(run, weight))
        text = plain_text(failure.text, self._states)
        facts = ProbeFacts(run.algorithm, exception=failure.exception, text=_sentence(text))
        return self._finding(NOT_BUILT if failure.building else STEP_RAISES, facts, self.locator.factory, [],
                             details, Subject(algorithm=run.algorithm))

    def for_nothing(self, why: str, exception: str = "") -> Finding:
        """The model as a whole: the probe measured nothing, and ``why`` (``exception``: what stopped it)."""
        facts = ProbeFacts("", exception=exception, text=_sentence(plain_text(why, self._states)))
        return self._finding(NOTHING, facts, self.locator.factory, [], None)

    def for_signal(self, rule_id: str, run: ProbeRun, signals: list[LeafSignal], whole: bool) -> Finding:
        """One finding for the leaves of one weight that share a verdict; ``whole``: they are all its leaves."""
        signal = signals[0]
        weight = self._weight_path(signal.weight)
        primary, related = self._places.weight_locations(weight)
        shown = display_name(weight) + ("" if whole else " and ".join(s.leaf for s in signals))
        measured = tuple(ProbeLeaf(s.leaf, s.online_norm, s.bptt_norm, s.scale) for s in signals)
        rule = measured_rule(rule_id)
        at_first = rule.at_first_step or (rule.direction and not signal.against)
        steps = 1 if at_first else signal.steps
        details = ProbeSignal(run.algorithm, steps, run.batch, whole, measured)
        norms = [s.bptt_norm for s in signals if s.bptt_norm is not None]
        onlines = [s.online_norm for s in signals if s.online_norm is not None]
        largest = max(onlines, default=0.0)
        zero = "exactly zero" if largest == 0 else f"zero up to float32 rounding (norm {largest:.2g})"
        facts = ProbeFacts(run.algorithm, weight=shown, steps=steps,
                           bptt_norm=_number(max(norms) if norms else None), zero=zero,
                           scale=describe_scale(signal.scale) if signal.scale is not None else "",
                           why_scaled=why_scaled(signal.scale) if signal.scale is not None else "",
                           static=_CONNECTED if rule_id == NO_GRADIENT and self._is_connected(weight) else "",
                           draws=_against(signals) if rule.direction else
                           _exact_draws(signals) if rule_id == EXACT_DESPITE else "",
                           weight_draws=_weight_draws(signal) if rule_id == LEAF_AGAINST else "",
                           deviation=_deviation(signal.first_step), other_draws=_other_draws(signals),
                           first_step=_first_step(signal),
                           same_step=_same_step(signals) if rule_id == PARTLY else "",
                           share=_share(signals) if rule_id == PARTLY else
                           _distance(signals) if rule_id == EXACT_DESPITE else
                           _number(max(s.online_norm or 0.0 for s in signals)) if rule_id == WITHOUT_BPTT else
                           _round_off(signals) if rule_id == NOT_DRIVEN else "")
        return self._finding(rule_id, facts, primary, related, details, self._subject(run, weight))


def _compares(signal: LeafSignal) -> bool:
    """BPTT's gradient of the leaf is finite and not zero: the online one can be measured against it."""
    return signal.bptt_norm is not None and signal.bptt_norm > 0  # None: not finite


def _undriven(signal: LeafSignal) -> bool:
    """BPTT's gradient of the leaf, and the online one, are round-off beside the model's largest (or zero), over the
    sequence and at the first step: the probe's inputs do not drive it, so nothing is measured of it."""
    return (signal.bptt_norm is not None and signal.bptt_norm <= signal.zero_scale
            and signal.online_norm is not None and signal.online_norm <= signal.zero_scale
            and all(share is None for share in signal.first_step_shares) and signal.first_step is None)


def _sentence(text: str, limit: int = 400) -> str:
    """The text up to the end of a sentence within ``limit`` characters, never cut inside a word."""
    if len(text) <= limit:
        return text
    cut = max(text.rfind(". ", 0, limit), text.rfind("; ", 0, limit))
    if cut > limit // 3:
        return text[: cut + 1]
    return text[: text.rfind(" ", 0, limit)] + " ..."


def _against(signals: list[LeafSignal]) -> str:
    """The cosines on each draw of the leaf least against BPTT's, over the sequence where every draw's points
    against it, else at the first step."""
    def cosines(signal: LeafSignal) -> tuple[float | None, ...]:
        return signal.draws if signal.against else signal.first_step_draws

    def more(signal: LeafSignal) -> tuple[float | None, ...]:
        return signal.more_draws if signal.against else signal.more_first_step_draws

    measured = [cosines(s) for s in signals]
    shown = max(range(len(measured)), key=lambda index: _least_against(measured[index]))
    return describe_further_draws(list(measured[shown]), more(signals[shown]))


def _weight_draws(signal: LeafSignal) -> str:
    """The whole weight's cosines on the draws the leaf's direction was read on: over the sequence where the leaf
    points against BPTT's there, else at the first step."""
    if signal.against:
        return describe_further_draws(list(signal.weight_draws), signal.more_weight_draws)
    return describe_further_draws(list(signal.first_step_weight_draws), signal.more_first_step_weight_draws)


def _least_against(cosines: Sequence[float | None]) -> float:
    """The largest cosine a leaf measured on the draws that drive it: the leaf a direction's message shows."""
    return max((c for c in cosines if c is not None), default=-math.inf)


def _same_step(signals: list[LeafSignal]) -> str:
    """"1x BPTT's norm on 2 of 4 input draws": a weight's online gradient at the first step, where over the sequence
    it is zero, on the draws whose first step drives it; "" for a weight whose first step is zero too."""
    shares = max((s.first_step_shares for s in signals if s.same_step_only), key=len, default=())
    driving = [share for share in shares if share is not None and share > ROUNDING]
    if not driving:
        return ""
    counted = "" if len(shares) == 1 else f" on {len(driving)} of {len(shares)} input draws"
    return f"{max(driving):.2g}x BPTT's norm{counted}"


def _deviation(first_step: tuple[float, float] | None) -> str:
    """"0.12x BPTT's norm, cosine 0.22"."""
    if first_step is None:
        return ""
    ratio, cosine = first_step
    # near BPTT's own norm and direction the figures keep the digits that tell them from 1
    shown_ratio = f"{ratio:.4g}" if abs(ratio - 1.0) < 0.05 else f"{ratio:.2g}"
    shown_cosine = f"{cosine:.4f}" if cosine > 0.995 else f"{cosine:.2f}"
    return f"{shown_ratio}x BPTT's norm, cosine {shown_cosine}"


def _first_step(signal: LeafSignal) -> str:
    """Where the first step's figures come from: from rest, or from where the warm-up steps leave the states, on
    the first draw of the inputs or on another."""
    if signal.first_step_scale is not None:
        return (f"the first step (measured on the inputs scaled up {signal.first_step_scale:g} times, from the states "
                f"{WARMUP_STEPS} of their steps leave: at the probe's own scale the first step drives it nothing on "
                f"any of its draws)")
    if signal.first_step_draw:
        moved = f", from the states {WARMUP_STEPS} of its steps leave" if signal.first_step_moved else ""
        return (f"the first step (measured on another draw of the inputs{moved}: the first draw drives it nothing "
                f"there, from rest or from moved states)")
    if not signal.first_step_moved:
        return "the first step"
    return (f"the first step (measured from the states {WARMUP_STEPS} steps of the inputs leave: from rest it "
            f"drives nothing)")


def _other_draws(signals: list[LeafSignal]) -> str:
    """"0.31x and 0.45x BPTT's norm on 2 of 3 other input draws": what a zero on the first draw was not on the
    others that drive the weight (the draws where it was zero too are counted, not listed)."""
    measured = max((s.other_draws for s in signals), key=len, default=())
    ratios = [r for r in measured if r > ROUNDING]
    if not ratios:
        return ""
    shown = [f"{r:.2g}x" if math.isfinite(r) else "not finite" for r in ratios]
    listed = shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + f" and {shown[-1]}"
    plural = "s" if len(measured) != 1 else ""
    share = f"{len(ratios)} of {len(measured)}" if len(ratios) < len(measured) else f"{len(measured)}"
    return f"{listed} BPTT's norm on {share} other input draw{plural}"


def _share(signals: list[LeafSignal]) -> str:
    """"0.45x BPTT's norm": how much of BPTT's gradient the online one has where a use of the weight gets none."""
    ratios = [s.online_norm / s.bptt_norm for s in signals
              if s.online_norm is not None and s.bptt_norm and s.bptt_norm > 0]
    return f"{max(ratios):.2g}x BPTT's norm" if ratios else "n/a"


def _exact_draws(signals: list[LeafSignal]) -> str:
    """"4 input draws (the last from states moved from rest)": where a denied weight's gradient was BPTT's."""
    count = min(len(s.exact_draws) for s in signals)
    return f"{count} input draws (the last from states moved from rest)"


def _round_off(signals: list[LeafSignal]) -> str:
    """"round-off (norm 5.2e-06, 2.4e-07x the model's largest)": BPTT's gradient of a weight no input drives."""
    norm = max(s.bptt_norm or 0.0 for s in signals)
    if norm == 0:
        return "exactly zero"
    largest = max(s.zero_scale / s.tolerance for s in signals)
    return f"round-off (norm {norm:.2g}, {norm / largest:.2g}x the model's largest)"


def _distance(signals: list[LeafSignal]) -> str:
    """"1e-07": the largest distance from BPTT's, relative to its norm, over the draws."""
    return f"{max(max(s.exact_draws) for s in signals):.1g}"


def _verdict(signal: LeafSignal, denied: bool, every_leaf: tuple[bool, bool]) -> str | None:
    """The leaf's probe rule, the strongest claim first; ``denied``: a rule of the graph says its weight gets no
    online gradient through one of its uses; ``every_leaf``: each leaf of its weight points against BPTT's on every
    draw (so the weight does too), over the sequence and at the first step."""
    if not signal.finite and signal.bptt_norm is not None:
        return NOT_FINITE
    if signal.online_without_bptt:
        return WITHOUT_BPTT
    if signal.not_learning:
        return NO_GRADIENT
    if signal.same_step_only:
        # nothing over the sequence, its same-step gradient at the first step: what that step measured says more
        return DEVIATES if signal.first_step is not None else PARTLY
    if signal.zero_on_some_draws:
        return NOT_MEASURED
    over, first = every_leaf
    if ((signal.against and (over or signal.weight_against))
            or (signal.against_at_first_step and (first or signal.weight_against_at_first_step))):
        return AGAINST
    if signal.against or signal.against_at_first_step:
        return LEAF_AGAINST  # this leaf: the weight as a whole is as good as orthogonal to BPTT's, or with it
    if denied and signal.exact_on_every_draw:
        # the use the graph's rule names gets nothing, yet nothing is missing: what it would carry reaches the
        # loss in no later step (its output feeds no state the next step reads), and the same-step gradient is whole
        return EXACT_DESPITE
    if denied and signal.online_norm and signal.bptt_norm and signal.online_norm > ROUNDING * signal.bptt_norm:
        # what it misses at the first step too: the rule that denies the use says why. A denied use leaves an
        # online gradient of exactly zero, so one that is not, however small beside the model's largest, is a
        # gradient through another path (braintrace's same-step gradient), not the round-off of a zero
        return PARTLY
    if signal.first_step is not None:
        return DEVIATES
    if signal.scale is not None:
        return MULTIPLE
    return None


def findings_from_probe(result: ProbeResult, context: AnalysisContext, target: str,
                        denied: frozenset[StatePath] = frozenset()) -> list[Finding]:
    """One finding per failed run, and per rule, algorithm and weight (naming the leaves when not all
    of the weight's leaves share the verdict). ``denied``: the weights (paths as strings) a rule of the graph
    says get no online gradient through a use; one measured learning says it learns partly."""
    maker = ProbeFindings(context, target)
    if not result.runs:
        return [maker.for_nothing(result.skipped, result.not_run)] if result.not_run else []
    signals = [signal for run in result.runs for signal in run.signals]
    if (signals and not any(r.failure for r in result.runs) and not any(_compares(s) for s in signals)
            and not any(s.online_without_bptt for s in signals)):
        zero = all(signal.bptt_norm == 0 for signal in signals)
        if zero:
            return [maker.for_nothing(_ALL_ZERO.format(steps=signals[0].steps))]
        return [maker.for_nothing(_NONE_FINITE.format(steps=signals[0].steps), "FloatingPointError")]
    found = []
    for run in result.runs:
        if run.failure is not None:
            found.append(maker.for_failure(run, run.failure))
            continue
        leaves: dict[StatePath, int] = {}
        for signal in run.signals:
            leaves[signal.weight] = leaves.get(signal.weight, 0) + 1
        every_leaf = {weight: (all(s.against for s in run.signals if s.weight == weight),
                               all(s.against_at_first_step for s in run.signals if s.weight == weight))
                      for weight in leaves}
        # a weight no leaf of which the inputs drive, where they drive others (else ETL420 speaks for the model)
        undriven = {weight for weight in leaves if all(_undriven(s) for s in run.signals if s.weight == weight)}
        if len(undriven) == len(leaves):
            undriven = set()
        grouped: dict[tuple[str, StatePath], list[LeafSignal]] = {}
        for signal in run.signals:
            rule_id = NOT_DRIVEN if signal.weight in undriven else _verdict(
                signal, tuple(map(str, signal.weight)) in denied, every_leaf[signal.weight])
            if rule_id is not None:
                grouped.setdefault((rule_id, signal.weight), []).append(signal)
        for (rule_id, weight), signals in grouped.items():
            found.append(maker.for_signal(rule_id, run, signals, len(signals) == leaves[weight]))
    return found
