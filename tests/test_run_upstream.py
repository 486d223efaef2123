"""Programs nobody here wrote, unchanged, through ``etrace-lint run``: every weight of the model each one
compiles gets a verdict, and the verdicts agree with braintrace's ``CompilationReport``.

The programs are carried under tests/upstream (source, commit and licence: the README.md in each folder):
braintrace's own examples, and published experiment code that compiles its models with ``compile_graph``
inside ``jax.jit`` and ``vmap_new_states``. The referee (tests/report_referee.py) reads braintrace's report of
the same compile through braintrace's public API only.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest
from helpers import REPO

UPSTREAM = os.path.join(REPO, "tests", "upstream")
REFEREE = os.path.join(REPO, "tests", "report_referee.py")
# each program with the arguments a user gives it (the experiment's default method trains with BPTT)
PROGRAMS = [("braintrace_examples/drtrl/01-basics-integrator.py",),
            ("braintrace_examples/pp_prop/01-basics-lif-integrator.py",),
            ("braintrace_snn_experiments/SI-code-example.py",),
            ("braintrace_snn_experiments/task-rsnn-long-term-dependency.py",),
            ("braintrace_snn_experiments/ei_coba_net_decision_making/training.py", "--method", "esd-rtrl")]
# verdicts that say a weight the compiler connects still gets no (or a wrong) online gradient
CONNECTED_BUT_SILENT = {"ETL208", "ETL209", "ETL211", "ETL212", "ETL411", "ETL402"}


@pytest.fixture(scope="module")
def upstream(tmp_path_factory):
    folder = tmp_path_factory.mktemp("upstream")
    shutil.copytree(UPSTREAM, folder, dirs_exist_ok=True)
    return str(folder)


def _env() -> dict[str, str]:
    return dict(os.environ, MPLBACKEND="Agg")


@pytest.mark.parametrize("program", PROGRAMS, ids=[" ".join(argv) for argv in PROGRAMS])
def test_every_weight_of_an_upstream_program_gets_the_verdict_braintrace_reports(upstream, program):
    folder, name = os.path.split(os.path.join(upstream, program[0]))
    argv = [name, *program[1:]]
    referee = subprocess.run([sys.executable, REFEREE, *argv], cwd=folder, env=_env(), capture_output=True,
                             text=True, timeout=600)
    assert referee.returncode == 0, referee.stderr[-3000:]
    truth = json.loads(referee.stdout.strip().splitlines()[-1])
    linted = subprocess.run([sys.executable, "-m", "etrace_lint", "run", "--show-info", "--output-format", "json",
                             "-o", "out.json", *argv], cwd=folder, env=_env(), capture_output=True, text=True,
                            timeout=600)
    assert linted.returncode in (0, 1), linted.stderr[-3000:]
    with open(os.path.join(folder, "out.json"), encoding="utf-8") as handle:
        findings = json.load(handle)["findings"]
    verdicts: dict[tuple[str, ...], set[str]] = {}
    for finding in findings:
        path = finding["properties"].get("weightPath")
        if path:
            verdicts.setdefault(tuple(path), set()).add(finding["rule"])
    params = {tuple(path) for path in truth["params"]}
    assert params and params <= set(verdicts), f"weights without a verdict: {sorted(params - set(verdicts))}"
    for path in map(tuple, truth["etrace"]):  # connected: learns online, unless a measured or known reason says not
        assert "ETL001" in verdicts[path] or verdicts[path] & CONNECTED_BUT_SILENT, (path, verdicts[path])
    for path, kind in truth["excluded"]:  # excluded by the compiler: never "learns online"
        assert "ETL001" not in verdicts[tuple(path)], (path, kind, verdicts[tuple(path)])
    # braintrace's own online gradient, from the program's learner, where it could run outside a trace
    for name, measured in truth["online"].items():
        verdict = verdicts[tuple(name.split("."))]
        if measured["silent"]:  # zero online gradient where BPTT's is not: never "learns online"
            assert verdict & CONNECTED_BUT_SILENT or "ETL001" not in verdict, (name, measured, verdict)
        elif measured["learns"]:
            assert not verdict & CONNECTED_BUT_SILENT, (name, measured, verdict)
    # findings sit in the program's own files, the compile call among their related locations
    assert all(not f["location"]["path"].startswith("/") for f in findings), findings
    assert all(any(r["label"] == "compiled here" for r in f["related"]) for f in findings)
