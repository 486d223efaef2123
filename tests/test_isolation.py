"""A target's result never depends on which targets ran before it, in which process, or the cache.

Real repositories hold helper modules of the same name in several folders
(``drtrl/_shared.py`` and ``pp_prop/_shared.py``), and factories that change
global settings (``brainstate.environ``, the random seed, JAX flags).
"""

from __future__ import annotations

import itertools
import json
import os
import textwrap

import pytest
from helpers import run_cli

from etrace_lint.config.settings import EngineSettings
from etrace_lint.discovery.discover import discover
from etrace_lint.running.workers import WorkerPool

TIMEOUT = 120.0

SHARED_A = """
import braintrace
import jax.numpy as jnp


def make():
    return braintrace.nn.GRUCell(4, 8), (jnp.ones((4,)),)
"""

SHARED_B = """
import braintrace
import jax.numpy as jnp


def build():
    return braintrace.nn.LSTMCell(4, 8), (jnp.ones((4,)),)
"""

# Globals a factory may change, and a second target of the same file that
# would see them: each raises with what it saw, so the tool error shows it.
SETTINGS = """
import brainstate
import braintrace
import jax
import jax.numpy as jnp


def etrace_target_changes_everything():
    brainstate.environ.set(dt=0.5, custom_flag="leaked")
    jax.config.update("jax_enable_x64", True)
    brainstate.random.seed(1234)
    return braintrace.nn.GRUCell(4, 8), (jnp.ones((4,)),)


def etrace_target_reports_what_it_sees():
    seen = (brainstate.environ.get("custom_flag", "unset"), bool(jax.config.jax_enable_x64),
            int(brainstate.random.randint(0, 10 ** 6)))
    raise ValueError(f"saw {seen}")
"""


def _write(root, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    root = tmp_path_factory.mktemp("isolation")
    _write(root, {
        "a/_shared.py": SHARED_A,
        "a/model_a.py": "import _shared\n\n\ndef etrace_target_a():\n    return _shared.make()\n",
        "b/_shared.py": SHARED_B,
        "b/model_b.py": "import _shared\n\n\ndef etrace_target_b():\n    return _shared.build()\n",
        "c/settings.py": SETTINGS,
    })
    return root


@pytest.fixture(scope="module")
def pool():
    with WorkerPool() as pool:
        yield pool


def _summary(result) -> tuple:
    return (tuple(sorted((f.rule_id, f.location.path, f.location.line, f.message) for f in result.findings)),
            tuple(sorted(e.message for e in result.tool_errors)))


def _lint(pool, tree, paths, jobs=1) -> dict[str, tuple]:
    specs = discover([str(tree / p) for p in paths], str(tree)).targets
    results = pool.run(specs, str(tree), EngineSettings(), jobs, TIMEOUT)
    return {spec.factory: _summary(result) for spec, result in zip(specs, results)}


@pytest.fixture(scope="module")
def alone(pool, tree):
    found = {}
    for path in ("a/model_a.py", "b/model_b.py"):
        found.update(_lint(pool, tree, [path]))
    for factory in ("etrace_target_changes_everything", "etrace_target_reports_what_it_sees"):
        found.update(_lint(pool, tree, [f"c/settings.py::{factory}"]))
    return found


def test_same_named_helper_modules_in_two_folders(alone):
    assert not alone["etrace_target_a"][1] and not alone["etrace_target_b"][1], alone
    assert alone["etrace_target_a"][0], "the GRU's reset-gate weight is reported"


@pytest.mark.parametrize("order", list(itertools.permutations(["a/model_a.py", "b/model_b.py", "c/settings.py"])))
def test_any_order_on_one_worker_gives_the_results_of_each_file_alone(pool, tree, alone, order):
    assert _lint(pool, tree, list(order), jobs=1) == alone


def test_two_workers_give_the_same_results(pool, tree, alone):
    assert _lint(pool, tree, ["."], jobs=2) == alone


def test_settings_a_factory_changes_do_not_reach_the_next_target(alone):
    errors = alone["etrace_target_reports_what_it_sees"][1]
    assert len(errors) == 1 and "saw ('unset', False," in errors[0], errors


def test_the_cache_never_replays_a_result_that_depended_on_another_file(tree):
    whole = run_cli(".", "--output-format", "json", "-j", "1", cwd=str(tree))
    only_b = run_cli("b", "--output-format", "json", cwd=str(tree))
    only_b_cold = run_cli("b", "--output-format", "json", "--no-cache", cwd=str(tree))
    assert whole.returncode == 2, whole.stdout + whole.stderr  # settings.py raises on purpose
    # b's braintrace LSTMCell: the probe measures its doubled gates (ETL412), a note
    assert only_b.returncode == only_b_cold.returncode == 0, only_b.stdout + only_b.stderr
    assert json.loads(only_b.stdout) == json.loads(only_b_cold.stdout)
    models = {f["model"] for f in json.loads(whole.stdout)["findings"]}
    assert "etrace_target_a" in models
    errors = [e["message"] for e in json.loads(whole.stdout)["toolErrors"]]
    assert not any("_shared" in message for message in errors), errors


def test_a_file_edited_between_runs_of_one_pool_is_imported_afresh(pool, tmp_path):
    _write(tmp_path, {"helper.py": "SIZE = 8\n", "model.py": """
        import braintrace
        import jax.numpy as jnp
        import helper


        def etrace_target_sized():
            raise ValueError(f"size {helper.SIZE}")
        """})
    assert "size 8" in _lint(pool, tmp_path, ["model.py"])["etrace_target_sized"][1][0]
    (tmp_path / "helper.py").write_text("SIZE = 16\n", encoding="utf-8")
    assert "size 16" in _lint(pool, tmp_path, ["model.py"])["etrace_target_sized"][1][0]


def test_dependencies_are_the_files_the_target_imported(pool, tree):
    specs = discover([str(tree)], str(tree)).targets
    results = pool.run(specs, str(tree), EngineSettings(), 1, TIMEOUT)
    by_factory = {spec.factory: sorted(result.dependencies) for spec, result in zip(specs, results)}
    assert by_factory["etrace_target_a"] == [str(tree / "a/_shared.py"), str(tree / "a/model_a.py")]
    assert by_factory["etrace_target_b"] == [str(tree / "b/_shared.py"), str(tree / "b/model_b.py")]


EXTERNAL_LIBRARY = """
import jax


class Box:
    def __init__(self, value):
        self.value = value


# a second import of this module would register the class again and fail
jax.tree_util.register_pytree_node(Box, lambda b: ((b.value,), None), lambda _, c: Box(*c))
"""

USES_LIBRARY = """
import braintrace
import jax.numpy as jnp
import extlib


def etrace_target_{name}():
    return braintrace.nn.ValinaRNNCell(4, 8), (jnp.ones((4,)),)
"""


def test_a_library_on_pythonpath_is_kept_like_an_installed_one(tmp_path):
    libs, project = tmp_path / "libs", tmp_path / "project"
    _write(libs, {"extlib.py": EXTERNAL_LIBRARY})
    _write(project, {"one/first.py": USES_LIBRARY.format(name="first"),
                     "two/second.py": USES_LIBRARY.format(name="second")})
    env = {"PYTHONPATH": os.pathsep.join(filter(None, [str(libs), os.environ.get("PYTHONPATH", "")]))}
    proc = run_cli(".", "-j", "1", "--no-cache", "--output-format", "json", cwd=str(project), env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert json.loads(proc.stdout)["toolErrors"] == []
