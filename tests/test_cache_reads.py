"""The cache replays a result only while everything the target read is unchanged, and only its own entries.

``fixtures/hermetic/reads``: a factory that reads a JSON file of the
project, a helper module on ``PYTHONPATH`` and an installed distribution
(``fakedist`` in a ``site-packages`` folder); each says whether the model is
broken, so the output shows whether the target was linted again.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import shutil

import pytest
from helpers import fixture, run_cli


@pytest.fixture
def tree(tmp_path):
    shutil.copytree(fixture("hermetic", "reads"), tmp_path / "reads")
    return tmp_path / "reads"


def _env(tree) -> dict:
    paths = [str(tree / "libs"), str(tree / "site" / "site-packages"), os.environ.get("PYTHONPATH", "")]
    return {"PYTHONPATH": os.pathsep.join(filter(None, paths))}


# what a run reads is what the factory reads: the learning-signal probe, which only runs the model
# the factory built, is left out (a fifth of each run's CPU here, and another cache key)
RUN = (".", "-j", "1", "--no-probe", "--output-format", "json")


def _errors(tree) -> list[str]:
    proc = run_cli(*RUN, cwd=str(tree / "project"), env=_env(tree))
    assert proc.returncode in (0, 2), proc.stderr
    return [error["message"].rpartition(": ")[2] for error in json.loads(proc.stdout)["toolErrors"]]


def _set(path, old: str, new: str) -> None:
    path.write_text(path.read_text(encoding="utf-8").replace(old, new), encoding="utf-8")


def test_a_change_to_a_data_file_a_helper_outside_the_project_or_a_distribution_is_a_miss(tree):
    assert _errors(tree) == []
    _set(tree / "project" / "settings.json", "false", "true")
    assert _errors(tree) == ["broken by settings.json"]
    _set(tree / "project" / "settings.json", "true", "false")
    assert _errors(tree) == []

    _set(tree / "libs" / "extsettings.py", "False", "True")
    assert _errors(tree) == ["broken by extsettings"]
    _set(tree / "libs" / "extsettings.py", "True", "False")
    assert _errors(tree) == []

    # a new release of an installed distribution: its version is what the cache keys on
    site = tree / "site" / "site-packages"
    _set(site / "fakedist" / "__init__.py", "False", "True")
    (site / "fakedist-1.0.dist-info").rename(site / "fakedist-2.0.dist-info")
    _set(site / "fakedist-2.0.dist-info" / "METADATA", "Version: 1.0", "Version: 2.0")
    assert _errors(tree) == ["broken by fakedist"]


def _entries(tree) -> list[str]:
    folder = tree / "project" / ".etrace-lint-cache" / "targets"
    return [os.path.join(d, f) for d, _, files in os.walk(folder) for f in files if f.endswith(".json")]


def _findings(tree) -> list[str]:
    proc = run_cli(*RUN, "--show-info", cwd=str(tree / "project"), env=_env(tree))
    assert proc.returncode == 0, proc.stderr
    return sorted(f["rule"] for f in json.loads(proc.stdout)["findings"])


def test_an_edited_or_foreign_cache_entry_is_linted_again_not_replayed(tree):
    found = _findings(tree)
    assert found, "the LSTM's weights are reported as notes"
    (path,) = _entries(tree)
    with open(path, encoding="utf-8") as handle:
        signed = json.load(handle)
    entry = json.loads(signed["entry"])
    entry["result"]["findings"] = []
    forged = json.dumps(entry)
    # the edited entry keeps its old signature; then one signed with somebody else's key
    for signature in (signed["hmac"], hmac.new(b"another user's key" * 4, forged.encode(), hashlib.sha256).hexdigest()):
        with open(path, "w", encoding="utf-8") as handle:
            json.dump({"hmac": signature, "entry": forged}, handle)
        assert _findings(tree) == found
