"""The same input gives the same SARIF, byte for byte apart from times, however it is run."""

from __future__ import annotations

import getpass
import json
import os
import re
import shutil

import pytest
from helpers import FIXTURES, run_cli

SOURCES = [("compiler", "relations.py"), ("compiler", "errors_units.py"), ("own", "plain_op.py"),
           ("clean", "lstm.py"), ("bad", "broken_factories.py")]
_TIMES = re.compile(r'"(startTimeUtc|endTimeUtc)": "[^"]*"')


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    root = tmp_path_factory.mktemp("determinism")
    models = root / "models"
    models.mkdir()
    for folder, name in SOURCES:
        shutil.copy(os.path.join(FIXTURES, folder, name), models / f"{folder}_{name}")
    return root


def _sarif(tree, name, *args):
    out = tree / name
    proc = run_cli("models", "--sarif", str(out), "-q", *args, cwd=str(tree))
    assert proc.returncode == 2, proc.stdout + proc.stderr  # broken_factories has tool errors
    return _TIMES.sub(r'"\1": ""', out.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def logs(tree):
    """Three runs that each lint every target afresh ("cold" starts from an empty cache folder, so it
    computes all it then writes) and one that replays the cache."""
    return {
        "j1": _sarif(tree, "j1.sarif", "-j", "1", "--no-cache"),
        "j2": _sarif(tree, "j2.sarif", "-j", "2", "--no-cache"),
        "cold": _sarif(tree, "cold.sarif", "-j", "2"),
        "warm": _sarif(tree, "warm.sarif", "-j", "2"),
    }


def test_same_log_whatever_the_number_of_workers(logs):
    assert logs["j1"] == logs["j2"]


def test_same_log_from_the_cache(logs):
    assert logs["cold"] == logs["warm"] == logs["j1"]


def test_repeated_runs_agree(logs):
    # "j2" and "cold" run with the same options, each computing every target anew
    assert logs["cold"] == logs["j2"] == logs["j1"]


def test_results_are_sorted_stably(logs):
    results = json.loads(logs["j1"])["runs"][0]["results"]
    keys = [(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
             r["locations"][0]["physicalLocation"]["region"]["startLine"], r["ruleId"]) for r in results]
    assert keys == sorted(keys)
    assert results, "the tree has findings"


def test_no_absolute_path_or_user_name(tree, logs):
    text = logs["j1"]
    assert str(tree) not in text
    assert os.path.expanduser("~") + "/" not in text
    user = getpass.getuser()
    assert f"/{user}/" not in text and f"-of-{user}" not in text
