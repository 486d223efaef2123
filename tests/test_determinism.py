"""The same input gives the same SARIF, byte for byte apart from times, however it is run."""

from __future__ import annotations

import getpass
import json
import os
import re

import pytest
from helpers import run_cli

_TIMES = re.compile(r'"(startTimeUtc|endTimeUtc)": "[^"]*"')


@pytest.fixture(scope="module")
def tree(small_tree):
    """The session's small tree of fixture models (conftest.py), its cold run already made."""
    return small_tree


def _read(path) -> str:
    return _TIMES.sub(r'"\1": ""', path.read_text(encoding="utf-8"))


def _sarif(tree, name, *args):
    out = tree / name
    proc = run_cli("models", "--sarif", str(out), "-q", *args, cwd=str(tree))
    assert proc.returncode == 2, proc.stdout + proc.stderr  # broken_factories has tool errors
    return _read(out)


@pytest.fixture(scope="module")
def logs(tree):
    """Three runs that each lint every target afresh ("cold", the session's, started from an empty cache
    folder, so it computed all it then wrote) and one that replays the cache."""
    return {
        "j1": _sarif(tree, "j1.sarif", "-j", "1", "--no-cache"),
        "j2": _sarif(tree, "j2.sarif", "-j", "2", "--no-cache"),
        "cold": _read(tree / "cold.sarif"),
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
