"""The slice of the differential campaign the suite runs (tests/test_fuzz_slice.py, tests/test_fuzz_slice_m_z.py):
its cases and the check each one gets."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator

import pytest
from fuzz import campaign
from fuzz.generator import ModelSpec, spec_of
from helpers import REPO

FIXTURES = os.path.join(REPO, "tests", "fixtures", "fuzz")
SEED, SLICE = 7, 2


def known() -> dict[str, dict]:
    with open(os.path.join(FIXTURES, "known.json"), encoding="utf-8") as handle:
        return dict(json.load(handle))


def slice_cases(names: tuple[str, str]) -> list:
    """The fixtures whose names sort from ``names[0]`` up to ``names[1]`` ("" for no bound); the models drawn
    from :data:`SEED` with the first half."""
    first, stop = names
    open_ones = known()
    cases = []
    for name in sorted(os.listdir(FIXTURES)):
        if name.endswith(".py") and name >= first and (not stop or name < stop):
            case = open_ones.get(name, {})
            marks = []
            if campaign.versions()["braintrace"] in case.get("lines", ()):
                marks = [pytest.mark.xfail(strict=True, reason=case["mechanism"])]
            cases.append(pytest.param(os.path.join(FIXTURES, name), None, id=name[:-3], marks=marks))
    if not first:
        for number, spec in enumerate(campaign.draw_specs(SLICE, SEED)):
            cases.append(pytest.param(None, spec, id=f"seed{SEED}-{number}"))
    return cases


def worker_pair() -> Iterator[tuple[campaign.Worker, campaign.Worker]]:
    """An oracle and a lint worker process for a module's cases, closed after them."""
    pair = (campaign.Worker(campaign.ORACLE), campaign.Worker(campaign.LINT))
    yield pair
    for worker in pair:
        worker.close()


def assert_agrees(workers: tuple[campaign.Worker, campaign.Worker], folder: str, fixture: str | None,
                  spec: ModelSpec | None) -> None:
    """The lint and the oracle agree on every weight of the fixture (or the drawn model)."""
    spec = spec or spec_of(fixture or "")
    model = campaign.judge_one(spec, folder, "slice_model", *workers)
    assert "rejected" not in model or fixture is None, f"a fixture no longer runs: {model.get('rejected')}"
    if "rejected" in model:
        pytest.skip(f"the generated model does not run ({model['rejected']}): never judged")
    assert "crash" not in model["lint"], model["lint"]["crash"]
    wrong = [f"{row['weight']}: {campaign.mechanism(row)} (T=1 {row['t1']}, T=k {row['tk']}, rules {row['rules']})"
             for row in model["rows"] if not row["agree"]]
    assert not wrong, "\n".join(wrong)
