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
from typing import Any, Callable

from hypothesis import HealthCheck, Phase, find, settings
from hypothesis.errors import NoSuchExample

from .campaign import Worker, judge_one, mechanism
from .generator import ModelSpec, simpler_specs, write

KNOWN = "known.json"


def _kind(row: dict[str, Any]) -> tuple[str, str, str]:
    """What a shrunk model must keep: the pair of verdicts and the weight's kind (its op, a norm's scale)."""
    return row["lint"], row["oracle"], row["role"].split(" in ", 1)[0].split(" (", 1)[0]


def shrink_one(spec: ModelSpec, row: dict[str, Any], budget: int, workers: tuple[Worker, Worker],
               folder: str) -> tuple[ModelSpec, dict[str, Any]]:
    """The smallest spec hypothesis finds within ``budget`` models that keeps ``row``'s kind of disagreement."""
    wanted, tried = _kind(row), [0]
    best: dict[str, tuple[ModelSpec, dict[str, Any]]] = {}

    def disagrees(candidate: ModelSpec) -> bool:
        if tried[0] >= budget:
            return False
        tried[0] += 1
        model = judge_one(candidate, folder, f"shrink_{tried[0]}", *workers)
        for found in model.get("rows", []):
            if not found["agree"] and _kind(found) == wanted:
                best[candidate.key()] = (candidate, found)
                return True
        return False

    try:
        smallest = find(simpler_specs(spec), disagrees,
                        settings=settings(max_examples=budget, database=None, deadline=None,
                                          phases=[Phase.generate, Phase.shrink],
                                          suppress_health_check=list(HealthCheck)))
    except NoSuchExample:
        return spec, row
    return best.get(smallest.key(), (spec, row))


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")[:60]


def shrink_table(table: dict[str, Any], out: str, budget: int, only: str = "",
                 progress: Callable[[str], None] = lambda line: None) -> dict[str, Any]:
    """One fixture per mechanism of the table's disagreements (its first model, shrunk)."""
    os.makedirs(out, exist_ok=True)
    known_path = os.path.join(out, KNOWN)
    known: dict[str, Any] = {}
    if os.path.exists(known_path):
        with open(known_path, encoding="utf-8") as handle:
            known = json.load(handle)
    firsts: dict[str, tuple[ModelSpec, dict[str, Any]]] = {}
    for model in table["models"]:
        for row in model.get("rows", []):
            if not row["agree"] and only in mechanism(row):
                firsts.setdefault(" / ".join(_kind(row)), (ModelSpec.from_json(model["spec"]), row))
    workers = (Worker("oracle"), Worker("lint"))
    folder = tempfile.mkdtemp(prefix="etrace-lint-shrink-")
    try:
        for key, (spec, row) in firsts.items():
            progress(f"shrinking {key} ({mechanism(row)})")
            small, found = shrink_one(spec, row, budget, workers, folder)
            name = "fuzz_" + _slug(f"{found['lint']} {found['oracle']} {found['role']}")
            write(small, out, name)
            known[f"{name}.py"] = {"weight": found["weight"], "lint": found["lint"], "oracle": found["oracle"],
                                   "mechanism": mechanism(found), "rules": found["rules"], "t1": found["t1"],
                                   "tk": found["tk"], "versions": table["meta"]["versions"]}
            progress(f"    -> {name}.py: {len(small.layers)} layer(s), {found['weight']}: {mechanism(found)}")
            with open(known_path, "w", encoding="utf-8") as handle:
                json.dump(known, handle, indent=1, sort_keys=True)
    finally:
        for worker in workers:
            worker.close()
    return known
