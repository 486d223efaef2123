"""The GitHub code scanning recipe of docs/guide/run.md, as written there: its steps, read from the page,
run in a small project whose test compiles a braintrace model, and the SARIF log they write is the one
its upload step uploads."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap

import yaml
from helpers import REPO, sarif_validator

PAGE = os.path.join(REPO, "docs", "guide", "run.md")
SECTION = "### GitHub code scanning from your test suite"
UPLOAD = "github/codeql-action/upload-sarif"

# a GRU whose reset gate reaches its hidden state only through another weight's op: ETL005
TEST_MODEL = textwrap.dedent('''\
    import brainstate
    import braintrace
    import jax.numpy as jnp


    class Net(brainstate.nn.Module):
        def __init__(self):
            super().__init__()
            self.cell = braintrace.nn.GRUCell(3, 8)
            self.w_out = brainstate.ParamState(jnp.ones((8, 1)) * 0.1)

        def update(self, x):
            return self.cell(x) @ self.w_out.value  # expect: ETL005


    def test_the_model_compiles():
        net = Net()
        brainstate.nn.init_all_states(net)
        braintrace.compile(net, "D_RTRL", jnp.ones((3,)))
''')


def _recipe_steps() -> list[dict]:
    with open(PAGE, encoding="utf-8") as handle:
        page = handle.read()
    section = page.split(SECTION, 1)[1]
    block = re.search(r"```yaml\n(.*?)```", section, re.DOTALL)
    assert block, f"no yaml block under {SECTION!r}"
    steps = yaml.safe_load(textwrap.dedent(block.group(1)))
    assert isinstance(steps, list) and all(isinstance(step, dict) for step in steps), steps
    return steps


def _needs_github(command: str) -> bool:
    """A step that installs from the network: the test session already has the packages."""
    return command.lstrip().startswith("pip install")


def test_the_recipe_writes_the_sarif_log_its_upload_step_uploads(tmp_path):
    steps = _recipe_steps()
    uploads = [step for step in steps if str(step.get("uses", "")).startswith(UPLOAD)]
    assert len(uploads) == 1, steps
    assert uploads[0].get("if") == "always()", uploads[0]  # the alerts still appear when a test fails
    sarif = uploads[0]["with"]["sarif_file"]
    commands = [step["run"] for step in steps if "run" in step and not _needs_github(step["run"])]
    assert any("--etrace-lint" in command for command in commands), steps

    (tmp_path / "test_model.py").write_text(TEST_MODEL, encoding="utf-8")
    env = {key: value for key, value in os.environ.items() if not key.startswith("PYTEST_")}
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")  # this session's pytest
    for command in commands:
        done = subprocess.run(["bash", "-c", command], cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=600)
        assert done.returncode == 0, (command, done.stdout[-3000:], done.stderr[-3000:])

    path = tmp_path / sarif
    assert path.is_file(), f"the recipe uploads {sarif}, which its steps did not write"
    log = json.loads(path.read_text(encoding="utf-8"))
    errors = sorted(sarif_validator().iter_errors(log), key=str)
    assert not errors, errors[:3]
    line = next(n for n, text in enumerate(TEST_MODEL.splitlines(), 1) if text.endswith("# expect: ETL005"))
    located = {(result["ruleId"], result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
                result["locations"][0]["physicalLocation"]["region"]["startLine"])
               for result in log["runs"][0]["results"]}
    assert ("ETL005", "test_model.py", line) in located, located
