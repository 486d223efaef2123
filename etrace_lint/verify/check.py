"""``--verify``: for each algorithm, the online gradient against BPTT, per weight leaf."""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from ..analysis import braintrace_adapter as bt
from ..core.naming import display_name, path_key
from ..core.registry import rule_for_verdict
from . import compare
from .expectations import GraphFacts, expectation
from .findings import FindingMaker
from .harness import Harness, HarnessError, LayoutError, describe, device_label, on_device, select_device
from .layout import advice
from .settings import VerifySettingsError, resolve_settings


def _tell(text: str, progress: Callable[[str], None] | None) -> None:
    if progress is not None:
        progress(text)


def verify_model(loaded: Any, context: Any, run: Any, *, findings: list,
                 progress: Callable[[str], None] | None = None) -> tuple[list, list[dict]]:
    """Findings and per-leaf rows of the gradient check of one compiled model.

    ``run``: the run's settings (``verify_steps``, ``verify_batch``, ... and
    ``device`` fields, as :class:`~etrace_lint.config.settings.EngineSettings` has
    them). ``findings`` are the model's other findings, used to say why a
    weight does not learn.
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
                              _step_weights(context), settings, settings.loss)
        except Exception as exc:  # the model's inputs or states: reported, never raised
            return [maker.not_run(f"--verify did not run: reading the model's states raised {describe(exc)}")], []
        try:
            return _verify(harness, GraphFacts(context), settings, maker, loaded.name, progress)
        finally:
            harness.close()


def _step_weights(context: Any) -> Any:
    return bt.step_param_states(context.module_info)


def _verify(harness: Any, facts: GraphFacts, settings: Any, maker: FindingMaker, name: str,
            progress: Callable | None) -> tuple[list, list[dict]]:
    findings, rows = [], []
    lengths = sorted({1, settings.steps}, reverse=True)
    _tell(f"{name}: bptt T={lengths[0]}", progress)
    try:
        bptt = harness.settle(lengths, settings.algorithms[0] if settings.algorithms else None)
    except LayoutError as exc:
        return [maker.not_run(_layout_message(exc))], []
    except Exception as exc:  # the model or the user's loss raised outside any one layout
        return [maker.not_run(f"--verify did not run: {describe(exc)}")], []
    longest = bptt[lengths[0]]
    if not any(np.any(g != 0) for g in longest.grads.values()):
        drawn = ("on the target's own verify inputs" if settings.inputs is not None else
                 "on random inputs scaled up to 64 times")
        findings.append(maker.not_run(
            f"--verify could not compare anything: the BPTT gradient of every weight is zero over {lengths[0]} "
            f"steps {drawn} (no float output, or inputs that never drive the model); give the target verify "
            f"inputs and a loss"))
    for algorithm in settings.algorithms:
        try:
            learner = harness.learner(algorithm)
        except HarnessError as exc:
            findings.append(maker.not_run(f"--verify did not run {algorithm}: {exc}", algorithm))
            continue
        _tell(f"{name}: {algorithm} T={lengths[0]}", progress)
        try:
            runs = harness.online(learner, lengths)
        except Exception as exc:  # the learner failed to run on this model
            findings.append(maker.not_run(f"--verify did not run {algorithm} over {lengths[0]} steps: "
                                          f"{describe(exc)}", algorithm))
            continue
        compared: dict[int, list[dict]] = {}
        for steps in lengths:
            online, reference = runs[steps], bptt[steps]
            if not _same_loss(online.loss, reference.loss, reference.dtypes, settings):
                findings.append(maker.harness_mismatch(algorithm, steps, online.loss, reference.loss))
                continue
            compared[steps] = _rows(online, reference, facts, settings, algorithm, steps, name, maker.device,
                                    harness.batch, harness.input_scale)
        if any(row["verdict"] == compare.AGAINST for run_rows in compared.values() for row in run_rows):
            _tell(f"{name}: {algorithm} on {compare.DRAWS - 1} more input draws", progress)
            try:
                _confirm_direction(compared, bptt, runs, harness.other_draws(learner, lengths, compare.DRAWS))
            except Exception as exc:  # noqa: BLE001 - the model ran on the first draw; a direction stays unclaimed
                _confirm_direction(compared, bptt, runs, [], f"the other input draws raised {describe(exc)}")
        for steps, run_rows in compared.items():
            rows.extend(run_rows)
            findings.extend(_findings(run_rows, maker, algorithm, steps))
    return _once_per_weight(findings), rows


def _confirm_direction(compared: dict[int, list[dict]], bptt: dict, runs: dict, others: list[tuple[dict, dict]],
                       failed: str = "") -> None:
    """Each row that points against BPTT on the first draw, measured on the other draws too: its cosines
    are kept (``draws``), and it stays against BPTT only when every draw says so."""
    for steps, run_rows in compared.items():
        keys = {(tuple(map(str, weight)), leaf): (weight, leaf) for weight, leaf in bptt[steps].grads}
        for row in run_rows:
            if row["verdict"] != compare.AGAINST:
                continue
            key = keys[(tuple(row["weightPath"]), row["leaf"])]
            cosines = [row["cosine"] if row["cosine"] is not None else math.nan]
            for reference, online in others:
                grad = online[steps].grads.get(key)
                grad = np.zeros_like(reference[steps].grads[key]) if grad is None else grad
                cosines.append(compare.metrics(grad, reference[steps].grads[key]).cosine)
            if failed:
                cosines.append(math.nan)
            row["draws"] = [compare.json_number(c) for c in cosines]
            row["verdict"] = compare.confirmed(row["verdict"], cosines, row["expected"] == "exact")


def _layout_message(error: Any) -> str:
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


def _same_loss(online: float, bptt: float, dtypes: dict, settings: Any) -> bool:
    dtype = "float64" if dtypes and all(d == "float64" for d in dtypes.values()) else "float32"
    rtol = math.sqrt(settings.tolerance(dtype))
    return math.isclose(online, bptt, rel_tol=rtol, abs_tol=1e-30) or (math.isnan(online) and math.isnan(bptt))


def _rows(online: Any, reference: Any, facts: GraphFacts, settings: Any, algorithm: str, steps: int,
          name: str, device: str, batch: int | None, input_scale: float = 1.0) -> list[dict]:
    scale = max((float(np.linalg.norm(g)) for g in reference.grads.values() if np.all(np.isfinite(g))),
                default=0.0)
    rows = []
    for key in sorted(reference.grads, key=lambda k: (display_name(k[0]), k[1])):
        weight, leaf = key
        bptt_grad = reference.grads[key]
        online_grad = online.grads.get(key)
        if online_grad is None:  # the learner does not differentiate it at all
            online_grad = np.zeros_like(bptt_grad)
        expected = expectation(facts, weight, algorithm, steps)
        tolerance = settings.tolerance(reference.dtypes.get(key, "float32"))
        m = compare.metrics(online_grad, bptt_grad)
        verdict = compare.verdict(m, expected.exact, tolerance, settings.cosine_floor, tolerance * scale)
        factor = compare.scale(m, tolerance) if verdict != compare.EXACT else None
        rows.append({
            "model": name, "algorithm": algorithm, "steps": steps, "weight": display_name(weight),
            "weightPath": list(path_key(weight)), "leaf": leaf, "expected": expected.label,
            "reason": expected.reason, "verdict": verdict, "relError": compare.json_number(m.rel_error),
            "cosine": compare.json_number(m.cosine), "scale": factor, "onlineNorm": compare.json_number(m.online_norm),
            "bpttNorm": compare.json_number(m.bptt_norm), "tolerance": tolerance,
            "cosineFloor": settings.cosine_floor, "device": device, "batch": batch, "inputScale": input_scale,
            "seconds": round(online.seconds, 4), "bpttSeconds": round(reference.seconds, 4),
        })
    return rows


def _badness(row: dict) -> tuple:
    cosine = row["cosine"] if row["cosine"] is not None else -2.0
    rel = row["relError"] if row["relError"] is not None else math.inf
    return (cosine, -rel)


def _findings(rows: list[dict], maker: FindingMaker, algorithm: str, steps: int) -> list:
    grouped: dict[tuple, list[dict]] = {}
    for row in rows:
        rule = rule_for_verdict(row["verdict"])  # the rule says which verdicts it reports
        if rule is not None:
            grouped.setdefault((rule.id, tuple(row["weightPath"])), []).append(row)
    found = []
    for (rule_id, _), group in grouped.items():
        group.sort(key=_badness)
        weight = _weight_key(group[0], maker)
        found.append(maker.for_weight(rule_id, algorithm, steps, weight, group))
    return found


def _weight_key(row: dict, maker: FindingMaker) -> tuple:
    """The weight's path with its original element types (ints stay ints) for the locator."""
    for path in maker.locator.states:
        if list(map(str, path)) == row["weightPath"]:
            return tuple(path)
    return tuple(row["weightPath"])


def _once_per_weight(findings: list) -> list:
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
