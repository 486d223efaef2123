"""Shrinking: each disagreement of a campaign becomes the smallest model that still shows it, a fixture.

hypothesis searches :func:`~.generator.simpler_specs` of the disagreeing model (its own parts, each kept or
set back to its simplest value, fewer layers) for one that shows the same pair of verdicts on a weight of
the same kind, and shrinks what it finds. The smallest is written to ``out/<name>.py`` and described in
``out/known.json``: the weight, both verdicts, the figures, and the mechanism in the generator's words.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable

from hypothesis import HealthCheck, Phase, find, settings
from hypothesis.errors import NoSuchExample

from .campaign import LINT, ORACLE, Worker, judge_one, mechanism, reassessed
from .generator import ModelSpec, simpler_specs, spec_of, write

KNOWN = "known.json"


def _kind(row: dict[str, Any]) -> tuple[str, str, str]:
    """What a shrunk model must keep: the pair of verdicts and the weight's kind (its op, a norm's scale)."""
    return row["lint"], row["oracle"], row["role"].split(" in ", 1)[0].split(" (", 1)[0]


def shrink_one(spec: ModelSpec, row: dict[str, Any], budget: int, workers: tuple[Worker, Worker],
               folder: str) -> tuple[ModelSpec, dict[str, Any]]:
    """The smallest spec hypothesis finds within ``budget`` models that keeps ``row``'s kind of disagreement."""
    wanted = _kind(row)
    # each model is judged once: hypothesis replays the smallest it found, and a model judged again after the
    # budget is spent must give the same answer (a budget that said "no" then would be a flaky test to it)
    judged: dict[str, dict[str, Any] | None] = {}

    def disagrees(candidate: ModelSpec) -> bool:
        key = candidate.key()
        if key not in judged:
            if len(judged) >= budget:
                return False
            model = judge_one(candidate, folder, f"shrink_{len(judged) + 1}", *workers)
            judged[key] = next((found for found in model.get("rows", [])
                                if not found["agree"] and _kind(found) == wanted), None)
        return judged[key] is not None

    try:
        smallest = find(simpler_specs(spec), disagrees,
                        settings=settings(max_examples=budget, database=None, deadline=None,
                                          phases=[Phase.generate, Phase.shrink],
                                          suppress_health_check=list(HealthCheck)))
    except NoSuchExample:
        return spec, row
    return smallest, judged[smallest.key()] or row


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")[:60]


def _load(out: str) -> dict[str, Any]:
    path = os.path.join(out, KNOWN)
    if not os.path.exists(path):
        return {}
    with open(path, encoding="utf-8") as handle:
        return dict(json.load(handle))


def _save(out: str, known: dict[str, Any]) -> None:
    with open(os.path.join(out, KNOWN), "w", encoding="utf-8") as handle:
        json.dump(known, handle, indent=1, sort_keys=True)
        handle.write("\n")


def shrink_table(table: dict[str, Any], out: str, budget: int, only: str = "", jobs: int = 1,
                 progress: Callable[[str], None] = lambda line: None) -> dict[str, Any]:
    """One fixture per kind of disagreement in the table (its first model, shrunk), ``jobs`` at a time."""
    os.makedirs(out, exist_ok=True)
    known = _load(out)
    table = reassessed(table)
    firsts: dict[str, tuple[ModelSpec, dict[str, Any]]] = {}
    done = {case.get("kind") for case in known.values()}
    for model in table["models"]:
        for row in model.get("rows", []):
            if not row["agree"] and only in mechanism(row) and " / ".join(_kind(row)) not in done:
                firsts.setdefault(" / ".join(_kind(row)), (ModelSpec.from_json(model["spec"]), row))
    lock = threading.Lock()
    line = table["meta"]["versions"]["braintrace"]

    def one(item: tuple[str, tuple[ModelSpec, dict[str, Any]]]) -> None:
        key, (spec, row) = item
        workers = (Worker(ORACLE), Worker(LINT))
        try:
            progress(f"shrinking {key} ({mechanism(row)})")
            small, found = shrink_one(spec, row, budget, workers, tempfile.mkdtemp(prefix="etrace-lint-shrink-"))
        finally:
            for worker in workers:
                worker.close()
        name = "fuzz_" + _slug(f"{found['lint']} {found['oracle']} {found['role']}")
        with lock:
            write(small, out, name)
            known[f"{name}.py"] = {"kind": key, "weight": found["weight"], "lint": found["lint"],
                                   "oracle": found["oracle"], "mechanism": mechanism(found), "rules": found["rules"],
                                   "t1": found["t1"], "tk": found["tk"], "lines": [line]}
            _save(out, known)
        progress(f"    -> {name}.py: {len(small.layers)} layer(s), {found['weight']}: {mechanism(found)}")

    with ThreadPoolExecutor(max(1, jobs)) as pool:
        list(pool.map(one, firsts.items()))
    return known


def recheck(out: str, progress: Callable[[str], None] = lambda line: None) -> dict[str, Any]:
    """Judge every fixture of ``out`` on this line again: ``lines`` in known.json names the braintrace versions
    on which its disagreement shows (the test suite's slice marks it xfail there)."""
    from .campaign import versions

    known = _load(out)
    line = versions()["braintrace"]
    workers = (Worker(ORACLE), Worker(LINT))
    try:
        for name, case in sorted(known.items()):
            model = judge_one(spec_of(os.path.join(out, name)), tempfile.mkdtemp(prefix="etrace-lint-recheck-"),
                              name[:-3], *workers)
            shows = any(not row["agree"] for row in model.get("rows", []))
            lines = set(case.get("lines", [])) - {line} | ({line} if shows else set())
            case["lines"] = sorted(lines)
            progress(f"{name}: {'disagrees' if shows else 'agrees'} on braintrace {line}")
    finally:
        for worker in workers:
            worker.close()
    _save(out, known)
    return known
