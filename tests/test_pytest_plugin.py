"""The pytest plugin in real pytest sessions: a small project's tests, and braintrace's own example
smoke tests (tests/upstream) under pytest-xdist."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap

import pytest
from helpers import REPO, sarif_validator

# A project whose tests compile three models: a GRU whose reset gate does not learn online (ETL005), a
# clean vanilla RNN, and a plastic weight braintrace refuses (ETL102). test_gru also trains a few steps and
# keeps its losses, drawing its input from brainstate's random key after the compile.
TESTS = '''\
import json

import brainstate
import braintrace
import jax
import jax.numpy as jnp


class GatedNet(brainstate.nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = braintrace.nn.GRUCell(3, 8)  # created

    def update(self, x):
        return self.rnn(x)  # expect: ETL005


class HebbianInStep(brainstate.nn.Module):
    def __init__(self, n=4):
        super().__init__()
        self.w = brainstate.ParamState(jnp.ones((n, n)) * 0.1)
        self.h = brainstate.HiddenState(jnp.zeros((n,)))

    def update(self, x):
        self.h.value = 0.9 * self.h.value + braintrace.matmul(x, self.w.value)
        self.w.value = self.w.value + 1e-3 * jnp.outer(x, self.h.value)  # expect: ETL102
        return self.h.value


def test_gru():
    brainstate.random.seed(0)
    model = GatedNet()
    brainstate.nn.init_all_states(model)
    learner = braintrace.compile(model, "D_RTRL", jnp.ones((3,)))  # compiled: gru
    weights = model.states(brainstate.ParamState)
    x = brainstate.random.rand(3)

    def loss():
        return jnp.sum(learner(x) ** 2)

    losses = []
    for _ in range(3):
        grads, value = brainstate.transform.grad(loss, weights, return_value=True)()
        for key, grad in grads.items():
            weights[key].value = jax.tree.map(lambda w, g: w - 0.5 * g, weights[key].value, grad)
        losses.append(float(value))
    with open("losses.json", "w") as handle:
        json.dump(losses, handle)


def test_rnn():
    model = braintrace.nn.ValinaRNNCell(3, 8)
    brainstate.nn.init_all_states(model)
    braintrace.compile(model, "D_RTRL", jnp.ones((3,)))  # compiled: rnn


def test_hebbian():
    model = HebbianInStep()
    brainstate.nn.init_all_states(model)
    braintrace.compile(model, "D_RTRL", jnp.ones((4,)))  # compiled: hebbian
'''

# what the session had imported when it started, and whether braintrace.compile was patched in a test
CONFTEST = '''\
import json
import sys


def pytest_sessionstart(session):
    with open("started.json", "w") as handle:
        json.dump(sorted(name for name in sys.modules if name.split(".")[0] in ("jax", "etrace_lint")), handle)


def pytest_runtest_call(item):
    import braintrace

    with open("patched.json", "w") as handle:
        json.dump(hasattr(braintrace.compile, "__wrapped__"), handle)
'''


def _marked(text: str, tag: str) -> int:
    """The line of ``text`` that ends with ``tag`` (the first, where several do)."""
    return next(n for n, source in enumerate(text.splitlines(), start=1) if source.rstrip().endswith(tag))


def _pytest(cwd, *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    """``python -m pytest`` in ``cwd`` as a user runs it (the plugin from its installed entry point)."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("PYTEST_")}
    env["COLUMNS"] = "200"  # the short test summary's lines whole
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rA", "--color=no", *args],
                          cwd=str(cwd), env=env, capture_output=True, text=True, timeout=timeout)


def _project(folder):
    folder.mkdir()
    (folder / "test_models.py").write_text(TESTS, encoding="utf-8")
    (folder / "conftest.py").write_text(CONFTEST, encoding="utf-8")
    return folder


def _section(output: str, title: str) -> str:
    """A section of pytest's terminal output: from its ``=== title ===`` rule to the next rule."""
    match = re.search(rf"^=+ {re.escape(title)} =+$\n(.*?)(?=^=+ )", output, re.S | re.M)
    assert match, output
    return match.group(1)


def _uris(log: dict) -> set[str]:
    """Every file a SARIF log's results point at: locations, related locations and code flows."""
    found = set()

    def walk(node):
        if isinstance(node, dict):
            if "artifactLocation" in node:
                found.add(node["artifactLocation"]["uri"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(log["runs"][0]["results"])
    return found


@pytest.fixture(scope="module")
def inactive(tmp_path_factory):
    folder = _project(tmp_path_factory.mktemp("plugin") / "off")
    return folder, _pytest(folder)


@pytest.fixture(scope="module")
def active(tmp_path_factory):
    folder = _project(tmp_path_factory.mktemp("plugin") / "on")
    return folder, _pytest(folder, "--etrace-lint", "--etrace-lint-sarif", "out/etrace.sarif",
                           "--etrace-lint-fail-level", "warning")


def test_off_unless_asked_it_imports_nothing_and_changes_nothing(inactive):
    folder, proc = inactive
    assert not re.search(r"^=+ etrace-lint =+$", proc.stdout, re.M), proc.stdout
    assert "1 failed, 2 passed" in proc.stdout, proc.stdout  # only braintrace's own refusal fails a test
    started = json.loads((folder / "started.json").read_text())
    # the plugin was loaded, and nothing but the package's light root came with it
    assert "etrace_lint.pytest_plugin" in started
    assert set(started) <= {"etrace_lint", "etrace_lint.core", "etrace_lint.core.marker", "etrace_lint.pytest_plugin",
                            "etrace_lint.rules"}, started
    assert json.loads((folder / "patched.json").read_text()) is False
    assert not (folder / "out").exists()


def test_fail_level_fails_the_test_that_compiled_the_model_with_its_findings(active):
    folder, proc = active
    out = proc.stdout
    assert proc.returncode == 1, out + proc.stderr
    assert "FAILED test_models.py::test_gru - etrace-lint: this test compiled a model with 1 finding at or above " \
           "warning" in out
    assert "PASSED test_models.py::test_rnn" in out
    failures = _section(out, "FAILURES")
    gru = failures.split("_ test_gru _")[1].split("_ test_hebbian _")[0]
    assert f"test_models.py:{_marked(TESTS, '# expect: ETL005')}:16: ETL005 rnn.Wr.weight" in gru
    assert f"= rnn.Wr.weight is created here: test_models.py:{_marked(TESTS, '# created')}:20" in gru
    assert f"= compiled here: test_models.py:{_marked(TESTS, '# compiled: gru')}:15" in gru
    # a test that failed anyway (braintrace refused the model) gets the findings as a section of its report
    hebbian = failures.split("_ test_hebbian _")[1]
    assert "NotSupportedError" in hebbian
    section = hebbian.split("- etrace-lint -")[1]
    assert f"test_models.py:{_marked(TESTS, '# expect: ETL102')}:" in section and "ETL102" in section


def test_the_summary_lists_the_findings_per_test_id(active):
    folder, proc = active
    summary = _section(proc.stdout, "etrace-lint")
    gru, rnn, hebbian = (_marked(TESTS, f"# compiled: {name}") for name in ("gru", "rnn", "hebbian"))
    lines = summary.splitlines()
    assert lines[0] == "test_models.py::test_gru"
    assert lines[1] == f"  test_models.py:{gru} (D_RTRL):"
    assert lines[2].startswith(f"    test_models.py:{_marked(TESTS, '# expect: ETL005')}:16: ETL005 ")
    assert f"test_models.py::test_hebbian\n  test_models.py:{hebbian} (D_RTRL):\n    test_models.py:" \
           f"{_marked(TESTS, '# expect: ETL102')}:" in summary
    assert f"test_models.py::test_rnn\n  test_models.py:{rnn} (D_RTRL): no findings\n" in summary
    assert re.search(r"^Found 2 findings \(1 error, 1 warning\) in 3 models\.", summary, re.M), summary
    assert f"SARIF log written to {folder / 'out' / 'etrace.sarif'}" in summary


def test_sarif_is_valid_and_every_finding_is_on_the_projects_lines(active):
    folder, _ = active
    log = json.loads((folder / "out" / "etrace.sarif").read_text(encoding="utf-8"))
    sarif_validator().validate(log)
    results = log["runs"][0]["results"]
    assert sorted((r["ruleId"], r["locations"][0]["physicalLocation"]["region"]["startLine"]) for r in results) == [
        ("ETL005", _marked(TESTS, "# expect: ETL005")), ("ETL102", _marked(TESTS, "# expect: ETL102"))]
    assert _uris(log) == {"test_models.py"}
    # what each finding is about, without parsing its message: the gate that does not learn, the weight that
    # blocks it, and the plastic weight the step writes
    about = {r["ruleId"]: {key: r["properties"].get(key) for key in ("weight", "weights", "weightPath")}
             for r in results}
    assert about == {"ETL005": {"weight": "rnn.Wr.weight", "weights": ["rnn.Wr.weight", "rnn.Wh.weight"],
                                "weightPath": ["rnn", "Wr", "weight"]},
                     "ETL102": {"weight": "w", "weights": None, "weightPath": ["w"]}}


def test_linting_changes_nothing_the_tests_compute(inactive, active):
    """The program's states and random key are put back after each lint: the same losses as without it."""
    losses = [json.loads((folder / "losses.json").read_text()) for folder, _ in (inactive, active)]
    assert losses[0] == losses[1] and len(set(losses[0])) == 3, losses
    on, _ = active
    # on, the plugin imports JAX no sooner than the tests do, and braintrace is patched while they run
    assert not any(name.split(".")[0] == "jax" for name in json.loads((on / "started.json").read_text()))
    assert json.loads((on / "patched.json").read_text()) is True


UPSTREAM = os.path.join(REPO, "tests", "upstream", "braintrace_examples")

# records which xdist worker ran each test, beside the upstream tests (which stay as they are)
WORKERS = '''\
import json
import os


def pytest_runtest_call(item):
    with open(f"worker-{os.environ['PYTEST_XDIST_WORKER']}.json", "w") as handle:
        json.dump(item.nodeid, handle)
'''


def test_braintraces_own_smoke_tests_under_xdist(tmp_path):
    """Two workers: one summary and one SARIF log with what each worker's tests compiled; on by the ini option."""
    pytest.importorskip("xdist", reason="the plugin's xdist test needs pytest-xdist (the test extra)")
    folder = tmp_path / "examples"
    shutil.copytree(UPSTREAM, folder)
    (folder / "conftest.py").write_text(WORKERS, encoding="utf-8")
    (folder / "pytest.ini").write_text(textwrap.dedent("""\
        [pytest]
        etrace_lint = true
        etrace_lint_sarif = etrace.sarif
        """), encoding="utf-8")
    proc = _pytest(folder, "-n", "2", "--dist", "loadfile", "-k", "01-basics", "--etrace-lint-fail-level", "error",
                   "drtrl/tests/test_smoke.py", "pp_prop/tests/smoke_test.py")
    out = proc.stdout
    assert proc.returncode == 0, out + proc.stderr
    assert re.search(r"\b2 passed\b", out), out
    assert {json.loads(path.read_text()) for path in folder.glob("worker-gw*.json")} == {
        "drtrl/tests/test_smoke.py::test_example_runs[01-basics-integrator.py]",
        "pp_prop/tests/smoke_test.py::test_example_runs[01-basics-lif-integrator.py]"}
    assert len(list(folder.glob("worker-gw*.json"))) == 2  # each worker ran one
    assert len(re.findall(r"^=+ etrace-lint =+$", out, re.M)) == 1
    summary = _section(out, "etrace-lint")
    drtrl = _marked((folder / "drtrl" / "01-basics-integrator.py").read_text(), "x0[0], batch_size=num_batch)")
    assert f"drtrl/tests/test_smoke.py::test_example_runs[01-basics-integrator.py]\n  drtrl/01-basics-integrator.py:" \
           f"{drtrl} (D_RTRL)" in summary
    # pp_prop's example compiles in a helper of its _shared.py, called inside jax.jit
    shared = _marked((folder / "pp_prop" / "_shared.py").read_text(), "vmap_model = braintrace.compile(")
    assert f"pp_prop/tests/smoke_test.py::test_example_runs[01-basics-lif-integrator.py]\n  pp_prop/_shared.py:" \
           f"{shared} (pp_prop)" in summary
    found = re.search(r"^Found (\d+) findings?.* in 2 models\.", summary, re.M)
    assert found, summary
    log = json.loads((folder / "etrace.sarif").read_text(encoding="utf-8"))
    sarif_validator().validate(log)
    results = log["runs"][0]["results"]
    assert len(results) == int(found.group(1))
    assert {r["properties"]["model"] for r in results} <= {f"01-basics-integrator.py:{drtrl} (D_RTRL)",
                                                           f"_shared.py:{shared} (pp_prop)"}
    assert _uris(log) <= {"drtrl/01-basics-integrator.py", "drtrl/_shared.py", "pp_prop/01-basics-lif-integrator.py",
                          "pp_prop/_shared.py"}


def test_a_session_that_compiles_nothing_says_so_and_a_bad_ini_level_is_a_usage_error(tmp_path):
    (tmp_path / "test_plain.py").write_text("def test_plain():\n    assert True\n", encoding="utf-8")
    proc = _pytest(tmp_path, "--etrace-lint")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert _section(proc.stdout, "etrace-lint").splitlines()[0] == (
        "No model was compiled during the tests: nothing called braintrace.compile or an algorithm's compile_graph.")
    bad = _pytest(tmp_path, "-o", "etrace_lint=true", "-o", "etrace_lint_fail_level=sometimes")
    assert bad.returncode == 4  # pytest's usage error
    assert "etrace_lint_fail_level: 'sometimes' is not one of error, warning, never" in bad.stderr
