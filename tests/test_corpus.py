"""A few real models of bench/corpus.py, linted as a user would: the way of running never changes a result.

Two folders each hold a helper module ``_shared.py`` of different content, and
the targets read ``dt`` from ``[tool.etrace-lint.environ]`` or their own
decorator. Linting them with one worker, with two, in another order or one
file alone gives every target the same findings; the stock models without
real problems pass a default run.
"""

from __future__ import annotations

import json
import os
import sys

import pytest
from helpers import REPO, run_cli

pytest.importorskip("brainpy.state", reason="the corpus's spiking models need brainpy.state")

sys.path.insert(0, os.path.join(REPO, "bench"))
from corpus import problem_free, target_files, write_corpus  # noqa: E402

# one file from each folder with a ``_shared.py``; the second target of each reads another environ
FILES = ["snn/lif_delta.py", "brainpy_nets/delta_coupled.py"]
TARGETS = {"lif-delta", "lif-delta-slow", "delta-lif", "delta-lif-ref"}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    root = str(tmp_path_factory.mktemp("corpus"))
    written = write_corpus(root, FILES)
    if len(target_files(written)) != len(FILES):
        pytest.skip("the installed libraries lack a class these corpus models use")
    return root, written


def _per_target(stdout: str) -> dict[str, list[str]]:
    document = json.loads(stdout)
    results: dict[str, list[str]] = {}
    for kind in ("findings", "toolErrors"):
        for item in document[kind]:
            results.setdefault(item["model"], []).append(json.dumps({kind: item}, sort_keys=True))
    return {model: sorted(items) for model, items in results.items()}


def _lint(root: str, *args: str) -> dict[str, list[str]]:
    done = run_cli("--output-format", "json", "--show-info", "-q", *args, cwd=root)
    assert done.returncode in (0, 1), done.stderr[-2000:]
    return _per_target(done.stdout)


@pytest.fixture(scope="module")
def one_worker(corpus):
    """The reference run; its cache also serves the default run below."""
    return _lint(corpus[0], "-j", "1", "--cache-dir", "cache-j1", *FILES)


def test_results_do_not_depend_on_workers_order_or_neighbours(corpus, one_worker):
    root, _ = corpus
    assert set(one_worker) == TARGETS
    errors = [item for items in one_worker.values() for item in items if '"toolErrors"' in item]
    assert not errors, errors
    # every spiking target connects its weights: notes only, and at least one ETL001 each
    for model, items in one_worker.items():
        assert any('"rule": "ETL001"' in item for item in items), model

    assert _lint(root, "-j", "2", "--cache-dir", "cache-j2", *reversed(FILES)) == one_worker
    alone = _lint(root, "--cache-dir", "cache-alone", "brainpy_nets/delta_coupled.py")
    assert alone == {model: one_worker[model] for model in ("delta-lif", "delta-lif-ref")}


def test_stock_models_without_problems_pass_a_default_run(corpus, one_worker):
    root, written = corpus
    clean = [os.path.relpath(path, root) for path in problem_free(written, root)]
    assert sorted(clean) == sorted(FILES)
    done = run_cli("--cache-dir", "cache-j1", *clean, cwd=root)
    assert done.returncode == 0, done.stdout + done.stderr[-2000:]
    assert "4 models" in done.stdout
