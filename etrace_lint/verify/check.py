"""``--verify``: for each algorithm, the online gradient against BPTT, per weight leaf."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import TYPE_CHECKING, Callable, Mapping, TypeAlias

import numpy as np

from ..analysis import braintrace_adapter as bt
from ..core.findings import Finding
from ..core.naming import StatePath, display_name, path_key
from ..core.registry import rule_for_verdict
from ..core.verdict import Verdict
from . import verdict as judge
from .expectations import GraphFacts, expectation
from .findings import FindingMaker
from .harness import (
    WARMUP_STEPS,
    DrawRuns,
    GradientRun,
    Harness,
    HarnessError,
    LayoutError,
    LeafKey,
    Learner,
    describe,
    device_label,
    leaf_key,
    on_device,
    same_forward,
    searched,
    select_device,
)
from .layout import advice
from .rows import VerifyRow
from .settings import VerifySettings, VerifySettingsError, resolve_settings

if TYPE_CHECKING:  # annotations only
    from ..analysis.context import AnalysisContext
    from ..analysis.loaded_target import LoadedTarget
    from ..config.settings import EngineSettings


def _tell(text: str, progress: Callable[[str], None] | None) -> None:
    if progress is not None:
        progress(text)


def verify_model(loaded: LoadedTarget, context: AnalysisContext, run: EngineSettings | None, *,
                 findings: list[Finding], denied: frozenset[StatePath] = frozenset(),
                 progress: Callable[[str], None] | None = None) -> tuple[list[Finding], list[VerifyRow]]:
    """Findings and per-leaf rows of the gradient check of one compiled model.

    ``run``: the run's settings (``verify_steps``, ``verify_batch``, ... and
    ``device`` fields, as :class:`~etrace_lint.config.settings.EngineSettings` has
    them). ``findings`` are the model's other findings, used to say why a
    weight does not learn; ``denied``: the weights (paths as strings) one of
    them says get no online gradient through a use, whose zero the graph
    claims (a zero nothing claims is measured over shorter sequences and
    on further draws too).
    """
    maker = FindingMaker(context, loaded.name, findings)
    try:
        settings = resolve_settings(loaded.verify_options, run)
        device = select_device(settings.device)
    except (VerifySettingsError, HarnessError) as exc:
        return [maker.not_run(f"--verify did not run: {exc}")], []
    maker.device = device_label(device)
    with on_device(device):
        try:
            harness = Harness(context.model, loaded.inputs, loaded.batch_size,
                              bt.step_param_states(context.module_info), settings, settings.loss,
                              rebuilt=loaded.rebuilt)
        except Exception as exc:  # the model's inputs or states: reported, never raised
            return [maker.not_run(f"--verify did not run: reading the model's states raised {describe(exc)}")], []
        try:
            return _verify(harness, GraphFacts(context), settings, maker, loaded.name, denied, progress)
        finally:
            harness.close()


def _verify(harness: Harness, facts: GraphFacts, settings: VerifySettings, maker: FindingMaker, name: str,
            denied: frozenset[StatePath],
            progress: Callable[[str], None] | None) -> tuple[list[Finding], list[VerifyRow]]:
    findings: list[Finding] = []
    rows: list[VerifyRow] = []
    lengths = sorted({1, settings.steps}, reverse=True)
    _tell(f"{name}: bptt T={lengths[0]}", progress)
    try:
        bptt = harness.settle(lengths, settings.algorithms[0] if settings.algorithms else None)
    except LayoutError as exc:
        return [maker.not_run(_layout_message(exc))], []
    except Exception as exc:  # the model or the user's loss raised outside any one layout
        return [maker.not_run(f"--verify did not run: {describe(exc)}")], []
    longest = bptt[lengths[0]]
    diverging = [display_name(weight) + leaf for (weight, leaf), g in longest.grads.items()
                 if not np.all(np.isfinite(g))]
    if diverging:
        shown = ", ".join(diverging[:4]) + (f" and {len(diverging) - 4} more" if len(diverging) > 4 else "")
        findings.append(maker.not_run(
            f"--verify compared nothing for {shown}: BPTT's own gradient of {'them' if len(diverging) > 1 else 'it'} "
            f"is NaN or infinite over {lengths[0]} steps on these inputs, so the model itself is not finite there (a "
            f"division by a state that starts at zero, a log or a square root of zero), whatever algorithm learns it"))
    all_zero = not any(np.any(g != 0) for g in longest.grads.values())
    for algorithm in settings.algorithms:
        try:
            learner = harness.learner(algorithm)
        except HarnessError as exc:
            findings.append(maker.not_run(f"--verify did not run {algorithm}: {exc}", algorithm, learner_failed=True))
            continue
        _tell(f"{name}: {algorithm} T={lengths[0]}", progress)
        try:
            runs = harness.online(learner, lengths)
        except Exception as exc:  # the learner failed to run on this model
            findings.append(maker.not_run(f"--verify did not run {algorithm} over {lengths[0]} steps: "
                                          f"{describe(exc)}", algorithm, learner_failed=True))
            continue
        compared: dict[int, list[VerifyRow]] = {}
        for steps in lengths:
            online, reference = runs[steps], bptt[steps]
            if not same_forward(online, reference, settings):
                findings.append(maker.harness_mismatch(algorithm, steps, online.loss, reference.loss))
                continue
            compared[steps] = _rows(online, reference, facts, settings, algorithm, steps, name, maker.device,
                                    harness.batch, harness.input_scale)
        warmed: DrawRuns | None = None
        silent = _silent_first_steps(compared, lengths) if 1 in compared else set()
        if silent:
            _tell(f"{name}: {algorithm} T=1 from moved states", progress)
            compared, warmed = _first_steps_from_moved_states(harness, learner, lengths, compared, silent, facts,
                                                              settings, algorithm, name, maker.device)
        if any(row.verdict in _CONFIRMED_ON_EVERY_DRAW for run_rows in compared.values() for row in run_rows):
            _tell(f"{name}: {algorithm} on {judge.DRAWS - 1} more input draws and one from moved states", progress)
            try:
                others = harness.other_draws(learner, lengths, judge.DRAWS, warmed)
                # the weight as a whole is read before the further draws (a leaf it outvotes is searched no
                # further) and after them (a sibling they refute leaves a leaf against BPTT beside one that is not)
                compared = _as_whole_weights(_confirm_on_other_draws(compared, bptt, others), bptt, runs, others)
                compared, further = _directions_on_further_draws(harness, learner, lengths, compared)
                compared = _as_whole_weights(compared, bptt, runs, others, further)
                compared = _zeros_elsewhere(harness, learner, lengths, compared, denied)
            except Exception as exc:  # noqa: BLE001 - the model ran on the first draw; a direction stays unclaimed
                compared = _confirm_on_other_draws(compared, bptt, [], f"the other input draws raised {describe(exc)}")
        for steps, run_rows in compared.items():
            rows.extend(run_rows)
            findings.extend(_findings(run_rows, maker, algorithm, steps))
    if all_zero and not any(row.online_norm for row in rows):
        # an online gradient where BPTT's is zero everywhere is compared, and reported (ETL401): not nothing
        drawn = ("on the target's own verify inputs" if settings.inputs is not None else
                 "on random inputs scaled up to 64 times")
        findings.append(maker.not_run(
            f"--verify could not compare anything: the BPTT gradient of every weight is zero over {lengths[0]} "
            f"steps {drawn} (no float output, an output that does not depend on the weights (a constant, such as "
            f"a softmax over one unit), or inputs that never drive the model); give the target verify "
            f"inputs and a loss"))
    return _once_per_weight(findings), rows


# verdicts the first input draw alone does not decide
_CONFIRMED_ON_EVERY_DRAW = (Verdict.AGAINST, Verdict.NOT_LEARNING)


def _confirm_on_other_draws(compared: dict[int, list[VerifyRow]], bptt: dict[int, GradientRun],
                       others: list[tuple[dict[int, GradientRun], dict[int, GradientRun]]],
                       failed: str = "") -> dict[int, list[VerifyRow]]:
    """Each row that points against BPTT, or is zero, on the first draw, measured on the other draws too: a
    direction's cosines are kept (``draws``), and it stays against BPTT only when every draw says so; a zero
    stays one only when the online gradient is zero on every other draw that drives the weight (whose BPTT
    gradient is not zero), else nothing is claimed of it (n/a)."""
    confirmed: dict[int, list[VerifyRow]] = {}
    for steps, run_rows in compared.items():
        keys = {(tuple(map(str, weight)), leaf): (weight, leaf) for weight, leaf in bptt[steps].grads}
        # each other draw's largest BPTT gradient, against which a leaf's is a zero: once per draw, not per row
        largest = [judge.largest_norm(reference[steps].grads.values()) for reference, _ in others]
        confirmed[steps] = []
        for row in run_rows:
            if row.verdict not in _CONFIRMED_ON_EVERY_DRAW:
                confirmed[steps].append(row)
                continue
            key = keys[(tuple(map(str, row.weight_path)), row.leaf)]
            if row.verdict is Verdict.NOT_LEARNING:
                for (reference, online), draw_largest in zip(others, largest):
                    row = _zero_on_another_run(row, reference[steps].grads, online[steps].grads, draw_largest)
                confirmed[steps].append(replace(row, verdict=Verdict.VACUOUS) if failed else row)
                continue
            cosines: list[float | None] = [row.cosine if row.cosine is not None else math.nan]
            cosines.extend(judge.cosine_on_draw(reference[steps].grads, online[steps].grads, key)
                           for reference, online in others)
            if failed:
                cosines.append(math.nan)
            confirmed[steps].append(replace(row, draws=tuple(judge.json_number(c) for c in cosines),
                                            verdict=judge.confirmed(row.verdict, cosines, row.exact_expected)))
    return confirmed


# the rows of each length, and the further draws' runs they were measured on
_Searched: TypeAlias = tuple[dict[int, list[VerifyRow]], list[DrawRuns]]


def _directions_on_further_draws(harness: Harness, learner: Learner, lengths: list[int],
                                 compared: dict[int, list[VerifyRow]]) -> _Searched:
    """Each row against BPTT's on every draw so far, measured on the draws after them, each from rest and from the
    states its first steps leave, until one on which it does not point against BPTT's refutes it ("learns against
    BPTT" is a claim about every input), as the probe searches them; with the runs measured. A draw that raises ends
    the search: what the draws before measured stands."""
    def against(claims: _Searched) -> bool:
        return any(row.verdict is Verdict.AGAINST for run_rows in claims[0].values() for row in run_rows)

    def measure(claims: _Searched, runs: DrawRuns) -> _Searched:
        rows = {steps: [_direction_on_one_more_draw(row, runs, steps) for row in run_rows]
                for steps, run_rows in claims[0].items()}
        return rows, [*claims[1], runs]

    start: _Searched = (compared, [])
    return searched(start, against, harness.further_draws(learner, lengths, after=judge.DRAWS - 1), measure)


def _direction_on_one_more_draw(row: VerifyRow, runs: DrawRuns, steps: int) -> VerifyRow:
    """``row`` with its cosine on one more draw's runs over ``steps``, while it points against BPTT's."""
    if row.verdict is not Verdict.AGAINST:
        return row
    reference, online = runs[0][steps].grads, runs[1][steps].grads
    # NaN, a zero online gradient, is not against it
    cosine = judge.cosine_on_draw(reference, online, leaf_key(reference, row.weight_path, row.leaf))
    more = replace(row, more_draws=row.more_draws + (judge.json_number(cosine),))
    if judge.below_on_further_draws([cosine]):
        return more
    return replace(more, verdict=Verdict.WRONG if row.exact_expected else Verdict.MISALIGNED)


def _zeros_elsewhere(harness: Harness, learner: Learner, lengths: list[int], compared: dict[int, list[VerifyRow]],
                     denied: frozenset[StatePath]) -> dict[int, list[VerifyRow]]:
    """A zero every draw so far shows, of a weight no graph rule says gets nothing (``denied``), measured where
    another input may drive it: over the shorter prefixes of the first draw's sequence (half of it, a quarter, ...
    down to 2 steps), then on the draws after the others, each from rest and from the states its first steps leave,
    until one that drives the leaf with an online gradient refutes it; the row then claims nothing (n/a), as on the
    other draws. "Does not learn" is a claim about every input. Seed 89's model 225, a DyT norm's bias after a LoRA
    in a leak cell under d_rtrl: over 16 steps of inputs x4 its BPTT gradient grows to 3e4 while the online one stays
    near 6e-5, a zero beside it on every draw, and over 4 steps the online gradient is 0.1x BPTT's. Only models
    with such a zero pay for it."""
    def unclaimed(row: VerifyRow) -> bool:
        return row.verdict is Verdict.NOT_LEARNING and tuple(map(str, row.weight_path)) not in denied

    def pending(claims: dict[int, list[VerifyRow]]) -> bool:
        return any(unclaimed(row) for run_rows in claims.values() for row in run_rows)

    def measure_on(claims: dict[int, list[VerifyRow]], runs: DrawRuns, steps: int, length: int) -> list[VerifyRow]:
        """The rows of ``steps`` as the runs over ``length`` steps leave them."""
        reference, online = runs[0][length].grads, runs[1][length].grads
        largest = judge.largest_norm(reference.values())
        return [_zero_on_another_run(row, reference, online, largest) if unclaimed(row) else row
                for row in claims[steps]]

    longest = lengths[0]
    prefixes = sorted({longest >> shift for shift in range(1, longest.bit_length())} - {0, 1})
    if prefixes and any(unclaimed(row) for row in compared.get(longest, [])):
        try:
            shorter = harness.bptt(prefixes), harness.online(learner, prefixes)
        except Exception:  # noqa: BLE001 - the model ran over the whole sequence: what it measured stands
            prefixes = []
        for length in prefixes:
            compared = {**compared, longest: measure_on(compared, shorter, longest, length)}

    def measure(claims: dict[int, list[VerifyRow]], runs: DrawRuns) -> dict[int, list[VerifyRow]]:
        return {steps: measure_on(claims, runs, steps, steps) for steps in claims}

    return searched(compared, pending, harness.further_draws(learner, lengths, after=judge.DRAWS - 1), measure)


def _zero_on_another_run(row: VerifyRow, reference: Mapping[LeafKey, np.ndarray],
                         online: Mapping[LeafKey, np.ndarray], largest: float) -> VerifyRow:
    """``row``, a zero so far, as another run (one more draw, or a shorter sequence) leaves it: n/a where that run
    drives the leaf (BPTT's gradient is not a zero there) and its online gradient is not a zero either."""
    ratio = judge.norm_ratio_on_draw(reference, online, leaf_key(reference, row.weight_path, row.leaf),
                                     row.tolerance * largest)
    return row if ratio is None or ratio <= judge.ROUNDING else replace(row, verdict=Verdict.VACUOUS)


def _silent_first_steps(compared: dict[int, list[VerifyRow]], lengths: list[int]) -> set[tuple[str, str]]:
    """The leaves (weight, leaf) whose first step must be BPTT's and is not driven from rest (both gradients a zero
    there), while the longest run drives them: the first step from rest says nothing of them."""
    driven = {(row.weight, row.leaf) for row in compared.get(lengths[0], []) if row.verdict is not Verdict.VACUOUS}
    return {(row.weight, row.leaf) for row in compared[1]
            if row.verdict is Verdict.VACUOUS and row.exact_expected and row.bptt_norm is not None
            and (row.weight, row.leaf) in driven}


def _first_steps_from_moved_states(harness: Harness, learner: Learner, lengths: list[int],
                                   compared: dict[int, list[VerifyRow]], silent: set[tuple[str, str]],
                                   facts: GraphFacts, settings: VerifySettings, algorithm: str, name: str, device: str
                                   ) -> tuple[dict[int, list[VerifyRow]], DrawRuns | None]:
    """The first step of each ``silent`` leaf, which it does not drive from rest (:func:`_silent_first_steps`), from the
    states the harness's warm-up steps leave, with the learner's traces from zero, as the probe measures it: a
    spiking layer that stays silent through the first step from rest leaves that step no gradient to compare, and
    from moved states the step must still be BPTT's (seed 89's models 36 and 37: a sparse op before an RMS norm,
    0.49x BPTT's there, cosine 0.82). With the warmed runs, which the other draws reuse as their last."""
    try:
        warmed = harness.warmed(learner, lengths)
    except Exception:  # noqa: BLE001 - the first step from rest is all that was measured
        return compared, None
    online, reference = warmed[1][1], warmed[0][1]
    if not same_forward(online, reference, settings):
        return compared, warmed
    moved = {(row.weight, row.leaf): row
             for row in _rows(online, reference, facts, settings, algorithm, 1, name, device, harness.batch,
                              harness.input_scale)}
    first = []
    for row in compared[1]:
        found = moved.get((row.weight, row.leaf))
        if (row.weight, row.leaf) in silent and found is not None and found.verdict is not Verdict.VACUOUS:
            row = replace(found, warmup=WARMUP_STEPS)
        first.append(row)
    return {**compared, 1: first}, warmed


def _as_whole_weights(compared: dict[int, list[VerifyRow]], bptt: dict[int, GradientRun],
                      online: dict[int, GradientRun], others: list[DrawRuns],
                      further: list[DrawRuns] | None = None) -> dict[int, list[VerifyRow]]:
    """A leaf against BPTT's on every draw, beside leaves of its weight that are not, stays against BPTT only where
    the whole weight (its leaves side by side) points against BPTT's by more than the band around 0 within which a
    direction is as good as orthogonal, on every draw (``further``: those a direction was searched on past the
    others): a training step moves the whole weight, and a small leaf against it beside a large one with it is a
    weight that learns approximately (the probe's ETL423)."""
    kept: dict[int, list[VerifyRow]] = {}
    for steps, run_rows in compared.items():
        by_weight: dict[tuple[str | int, ...], list[VerifyRow]] = {}
        for row in run_rows:
            by_weight.setdefault(row.weight_path, []).append(row)
        keys = {tuple(map(str, weight)): weight for weight, _ in bptt[steps].grads}
        kept[steps] = []
        for row in run_rows:
            siblings = by_weight[row.weight_path]
            if (row.verdict is not Verdict.AGAINST or len(siblings) < 2
                    or all(other.verdict is Verdict.AGAINST for other in siblings)):
                kept[steps].append(row)
                continue
            weight = keys[tuple(map(str, row.weight_path))]
            whole = [judge.weight_cosine_on_draw(bptt[steps].grads, online[steps].grads, weight)]
            whole += [judge.weight_cosine_on_draw(reference[steps].grads, moved[steps].grads, weight)
                      for reference, moved in others]
            past = [judge.weight_cosine_on_draw(reference[steps].grads, moved[steps].grads, weight)
                    for reference, moved in further or ()]
            if (judge.against_on_every_draw(whole, below=-judge.ORTHOGONAL)
                    and judge.below_on_further_draws(past, below=-judge.ORTHOGONAL)):
                kept[steps].append(row)
            else:
                kept[steps].append(replace(row, verdict=Verdict.WRONG if row.exact_expected else Verdict.MISALIGNED))
    return kept


def _layout_message(error: LayoutError) -> str:
    """Why BPTT ran under no layout, in the order tried, and what the user can set."""
    whys = list(dict.fromkeys(why for _, why, _ in error.failures))
    about_layout = len(whys) > 1 or any(blamed for _, _, blamed in error.failures)
    if len(error.failures) == 1:
        text = f"--verify did not run: {whys[0]}"
    elif len(whys) == 1:
        tried = " and ".join(layout.describe() for layout, _, _ in error.failures)
        text = f"--verify did not run: {whys[0]} (tried {tried})"
    else:
        tried = "; ".join(f"{layout.describe()}: {why}" for layout, why, _ in error.failures)
        text = f"--verify could not run the model: {tried}"
    return f"{text}. To fix, {advice(error.leading)}" if about_layout else text


def _rows(online: GradientRun, reference: GradientRun, facts: GraphFacts, settings: VerifySettings, algorithm: str,
          steps: int, name: str, device: str, batch: int | None, input_scale: float = 1.0) -> list[VerifyRow]:
    largest = judge.largest_norm(reference.grads.values())
    rows = []
    for key in sorted(reference.grads, key=lambda k: (display_name(k[0]), k[1])):
        weight, leaf = key
        bptt_grad = reference.grads[key]
        expected = expectation(facts, weight, algorithm, steps)
        tolerance = settings.tolerance(reference.dtypes.get(key, "float32"))
        m = judge.metrics(judge.online_gradient(online.grads, key, bptt_grad), bptt_grad)
        verdict = judge.decide(m, expected.exact, tolerance, settings.cosine_floor, tolerance * largest)
        rel_error: float | None = m.rel_error
        cosine: float | None = m.cosine
        if tuple(map(str, weight)) in facts.zero_by_construction:
            # a rule proves both gradients zero: a LayerNorm's 1/sigma can lift the round-off of a shift it removes
            # well above the run's zero scale (measured: 0.002 against a largest gradient of 60), and it says nothing
            verdict, rel_error, cosine = Verdict.VACUOUS, None, None
        # a multiple of a gradient that is not compared (BPTT's round-off of a zero) says nothing: `n/a` alone
        factor = judge.scale(m, tolerance) if verdict not in (Verdict.EXACT, Verdict.VACUOUS) else None
        rows.append(VerifyRow(
            name, algorithm, steps, display_name(weight), path_key(weight), leaf, expected.label, expected.reason,
            verdict, judge.json_number(rel_error), judge.json_number(cosine), factor,
            judge.json_number(m.online_norm), judge.json_number(m.bptt_norm), tolerance, settings.cosine_floor,
            device, batch, input_scale, round(online.seconds, 4), round(reference.seconds, 4)))
    return rows


def _badness(row: VerifyRow) -> tuple[float, float]:
    cosine = row.cosine if row.cosine is not None else -2.0
    rel = row.rel_error if row.rel_error is not None else math.inf
    return (cosine, -rel)


def _findings(rows: list[VerifyRow], maker: FindingMaker, algorithm: str, steps: int) -> list[Finding]:
    grouped: dict[tuple[str, tuple[str | int, ...]], list[VerifyRow]] = {}
    for row in rows:
        rule = rule_for_verdict(row.verdict)  # the rule says which verdicts it reports
        if rule is not None:
            grouped.setdefault((rule.id, row.weight_path), []).append(row)
    found = []
    for (rule_id, _), group in grouped.items():
        group.sort(key=_badness)
        weight = _weight_key(group[0], maker)
        found.append(maker.for_weight(rule_id, algorithm, steps, weight, group))
    return found


def _weight_key(row: VerifyRow, maker: FindingMaker) -> tuple[object, ...]:
    """The weight's path with its original element types (ints stay ints) for the locator."""
    for path in maker.locator.states:
        if tuple(map(str, path)) == row.weight_path:
            return tuple(path)
    return row.weight_path


def _once_per_weight(findings: list[Finding]) -> list[Finding]:
    """One finding per rule, algorithm and weight: the longest run's (T=1 only when it alone shows it)."""
    kept, seen = [], set()
    for finding in findings:
        subject = finding.subject
        key = (finding.rule_id, subject.algorithm, subject.weight, "" if subject.weight else finding.message)
        if key in seen:
            continue
        seen.add(key)
        kept.append(finding)
    return kept
