"""docs/development/adding-a-rule.md, executed straight from the page.

The guide shows every file a maintainer writes to add a rule, each in a code block titled with its path:
a rule for a compiler record, and an analysis rule with its violation, its Markdown, its fixture and its
test. These tests read those blocks from the Markdown and add the rules the way a maintainer would (a
module defining ``RULE`` and its Markdown, in a copy of the rules folder), type-check them with the
project's strict mypy, lint the guide's fixture with them and run the guide's test, so the page cannot
drift from the code. They also check that a rule given a field of another kind of rule fails mypy.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest
from helpers import FIXTURES, REPO, assert_fixture, lint_file, run_cli

import etrace_lint.rules as rules_package
from etrace_lint.cli import main as cli
from etrace_lint.core import registry
from etrace_lint.core.findings import Finding, Level
from etrace_lint.core.rule import AnalysisRule
from etrace_lint.writers.properties import finding_properties

GUIDE = os.path.join(REPO, "docs", "development", "adding-a-rule.md")
RELATIONS = os.path.join(FIXTURES, "compiler", "relations.py")
# a fence of three or more backticks, its language and its title: ```python title="rules/etl231_plain_leak.py"
# (indented under a list item: its body is indented as much)
FENCE = re.compile(r'^( *)(`{3,})(\w+)(?: title="([^"]+)")?\s*$')


def guide_blocks() -> list[tuple[str, str, str]]:
    """(language, title, text) of each code block of the guide, in order."""
    with open(GUIDE, encoding="utf-8") as handle:
        lines = handle.read().splitlines(keepends=True)
    blocks, index = [], 0
    while index < len(lines):
        match = FENCE.match(lines[index])
        index += 1
        if not match:
            continue
        indent, fence, language, title = match.groups()
        body = []
        while index < len(lines) and lines[index].rstrip("\n") != indent + fence:
            body.append(lines[index].removeprefix(indent))
            index += 1
        index += 1
        blocks.append((language, title or "", "".join(body)))
    return blocks


def guide_file(path: str) -> str:
    """The text of the guide's block titled ``path``."""
    (text,) = [text for _, title, text in guide_blocks() if title == path]
    return text


def guide_commands() -> list[list[str]]:
    """The guide's shell commands, one argument list each (``&&`` splits a line, a ``\\`` continues it)."""
    commands = []
    for language, _, text in guide_blocks():
        if language == "console":
            for line in text.replace("\\\n", " ").splitlines():
                commands += [part.split() for part in line.split("&&") if part.strip()]
    return commands


RULE_DOCS = """# ETL031 my-record

## What it does
Reports each weight the compiler connected to a hidden state.

## Why it matters
A test shows that a rule is one file and its documentation.

## Example
Any `braintrace.nn.Linear` feeding a hidden state.

## How to fix
Nothing to fix.
"""
RECORD_RULE = "rules/etl031_my_record.py"
ANALYSIS_RULE = "rules/etl231_plain_leak.py"
FIXTURE = "tests/fixtures/own/plain_leak.py"


def _use_rules_in(folder, monkeypatch) -> None:
    monkeypatch.setattr(rules_package, "__path__", [str(folder)])
    registry.all_rules.cache_clear()
    registry.rule_for_kind.cache_clear()


@pytest.fixture
def rules_folder(tmp_path, monkeypatch):
    """A copy of the rules folder that the registry reads instead of the real one."""
    folder = tmp_path / "rules"
    shutil.copytree(os.path.dirname(rules_package.__file__), folder, ignore=shutil.ignore_patterns("__pycache__"))
    _use_rules_in(folder, monkeypatch)
    yield folder
    monkeypatch.undo()
    for path in (RECORD_RULE, ANALYSIS_RULE):
        sys.modules.pop(f"{rules_package.__name__}.{os.path.splitext(os.path.basename(path))[0]}", None)
    registry.all_rules.cache_clear()
    registry.rule_for_kind.cache_clear()


def _add(folder, path: str, text: str) -> str:
    """The guide's file ``path`` written into the copy of the rules folder; returns where."""
    written = folder / os.path.basename(path)
    written.write_text(text, encoding="utf-8")
    registry.all_rules.cache_clear()
    registry.rule_for_kind.cache_clear()
    return str(written)


def _add_record_rule(folder) -> None:
    _add(folder, RECORD_RULE, guide_file(RECORD_RULE))
    _add(folder, RECORD_RULE.replace(".py", ".md"), RULE_DOCS)


def test_the_guides_record_rule_is_one_file_and_its_docs(rules_folder, capsys):
    before, _ = lint_file(RELATIONS)
    connected = sorted((f.line, finding_properties(f).get("weight")) for f in before if f.rule_id == "ETL001")
    assert connected, "the fixture has weights the compiler connects"

    # the guide's rule takes over the records ETL001 reported: remove ETL001's file, add the guide's
    for path in rules_folder.glob("etl001_*"):
        path.unlink()
    _add_record_rule(rules_folder)

    after, _ = lint_file(RELATIONS)
    added = [f for f in after if f.rule_id == "ETL031"]
    assert sorted((f.line, finding_properties(f).get("weight")) for f in added) == connected
    assert not [f for f in after if f.rule_id == "ETL001"]
    assert all(f.level is Level.NOTE and f.message.endswith(": nothing to do") for f in added)
    assert all(finding_properties(f)["braintraceKind"] == "relation_included" for f in added)

    assert cli.main(["rule", "ETL031"]) == 0
    shown = capsys.readouterr().out
    assert shown.startswith("ETL031 my-record (note)") and "## How to fix" in shown


def test_two_rules_claiming_one_record_kind_are_refused(rules_folder):
    _add_record_rule(rules_folder)  # ETL001 still reports relation_included records
    with pytest.raises(RuntimeError, match="ETL031 and ETL001 both report 'relation_included'"):
        registry.rule_for_record_kind("relation_included")


def _mypy(path) -> tuple[int, str]:
    """mypy with the project's configuration (strict), on one rule file outside the rules folder; run from the
    repository's root, whose cache of the package's modules it shares with a run of ``mypy``."""
    from mypy import api  # only these tests type-check a file

    cwd = os.getcwd()
    os.chdir(REPO)
    try:
        out, err, status = api.run([str(path), "--no-error-summary"])
    finally:
        os.chdir(cwd)
    return status, out + err


def test_the_guides_analysis_rule_fixture_and_test_run_as_written(rules_folder, tmp_path, capsys):
    fixture = tmp_path / FIXTURE
    fixture.parent.mkdir(parents=True)
    fixture.write_text(guide_file(FIXTURE), encoding="utf-8")
    # step 1, before the rule exists: what already fires on the fixture
    (first, *_) = [command for command in guide_commands() if command[0] == "etrace-lint"]
    shown = run_cli(*[str(fixture) if arg == FIXTURE else arg for arg in first[1:]])
    assert shown.returncode == 1 and "ETL201" in shown.stdout and "ETL231" not in shown.stdout, shown.stdout

    module = _add(rules_folder, ANALYSIS_RULE, guide_file(ANALYSIS_RULE))
    _add(rules_folder, ANALYSIS_RULE.replace(".py", ".md"), guide_file(ANALYSIS_RULE.replace(".py", ".md")))
    status, said = _mypy(module)
    assert status == 0, said

    # the fixture's markers are exactly what the rules report (tests/test_own_rules.py does this for every
    # fixture of tests/fixtures/own/), and the guide's test passes, run as written against the fixture
    findings = assert_fixture(str(fixture))
    namespace = {"os": os, "FIXTURES": str(tmp_path / "tests" / "fixtures"), "lint_shared": lint_file}
    exec(compile(guide_file("tests/test_own_rules.py"), GUIDE, "exec"), namespace)
    tests = [test for name, test in namespace.items() if name.startswith("test_")]
    assert tests
    for test in tests:
        test()

    added = [f for f in findings if f.rule_id == "ETL231"]
    # the weight and the hidden states it names are added, with their paths, under the keys every rule shares
    assert added and all(list(finding_properties(f)) == ["weight", "weightPath", "hiddenStates", "hiddenStatePaths"]
                         for f in added)
    # the cache reads the violation back as it was
    assert all(Finding.from_json(json.loads(json.dumps(f.to_json()))).details == f.details for f in added)
    assert cli.main(["rule", "ETL231"]) == 0
    assert "## How to fix" in capsys.readouterr().out


def test_the_guides_commands_exist():
    commands = guide_commands()
    golden = [command for command in commands if command[:3] == ["python", "-m", "tests.golden"]]
    assert golden, "the guide gives the command that rewrites the golden files"
    usage = subprocess.run([sys.executable, "-m", "tests.golden", "--help"], cwd=REPO, capture_output=True,
                           text=True, check=True).stdout
    assert all(option in usage for command in golden for option in command[3:] if option.startswith("--"))
    checks = {command[0] for command in commands}
    assert {"etrace-lint", "ruff", "mypy", "lint-imports"} <= checks
    # the test files and the corpus folders it names (not the guide's own fixture, which the newcomer writes)
    assert all(os.path.exists(os.path.join(REPO, arg.partition("::")[0])) for command in commands for arg in command
               if arg.startswith("tests/test_") or "::" in arg or (arg.startswith(("tests/fixtures/", "examples/"))
                                                    and not arg.endswith(".py"))), commands


# fields of another kind of rule: a record rule given a check, an error rule given record kinds
WRONG_RULES = {
    "check": '''
from typing import Any, Iterator

from etrace_lint.core.findings import Level
from etrace_lint.core.rule import Hit, RecordRule


def check(context: Any) -> Iterator[Hit[Any]]:
    yield from ()


RULE = RecordRule(id="ETL097", name="wrong", level=Level.WARNING, summary="s", kinds=("relation_included",),
                  check=check)
''',
    "kinds": '''
from etrace_lint.core.findings import Level
from etrace_lint.core.rule import ErrorMatch, ErrorRule

RULE = ErrorRule(id="ETL097", name="wrong", level=Level.ERROR, summary="s", error=ErrorMatch(types=("KeyError",)),
                 kinds=("relation_included",))
''',
    "explain": '''
from etrace_lint.core.findings import Level
from etrace_lint.core.rule import GradientFacts, RecordRule


def explain(facts: GradientFacts) -> str:
    return facts.weight


RULE = RecordRule(id="ETL097", name="wrong", level=Level.WARNING, summary="s", kinds=("relation_included",),
                  explain=explain)
''',
}


@pytest.mark.parametrize("field", sorted(WRONG_RULES))
def test_a_rule_with_a_field_of_another_kind_fails_mypy(tmp_path, field):
    path = tmp_path / "etl097_wrong.py"
    path.write_text(WRONG_RULES[field], encoding="utf-8")
    status, said = _mypy(path)
    assert status == 1 and "etl097_wrong.py:" in said, said
    assert f'"{field}"' in said or "explain" in said, said


def test_an_analysis_rule_without_its_violations_is_not_built():
    with pytest.raises(TypeError, match="violations"):
        AnalysisRule(id="ETL097", name="wrong", level=Level.WARNING, summary="s",  # type: ignore[call-arg]
                     check=lambda context: ())


def test_the_entries_tool_shows_which_entries_of_a_weight_learn_online():
    # step 1 sends a newcomer here where a construct touches some entries of a weight: braintrace.matmul's
    # ReLU weight_fn shuts the 8 entries that start below zero; the online gradient of the others is BPTT's
    [command] = [c for c in guide_commands() if c[:3] == ["python", "-m", "tests.entries"]]
    shown = subprocess.run([sys.executable, *command[1:]], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.count("  w (4, 4): 8 exact, 8 still\n") == 2, shown.stdout  # at T=1 and T=4
    plain = subprocess.run([sys.executable, "-m", "tests.entries", command[3].replace("relu_weight_fn", "relu_plain"),
                            "w", "--steps", "4", "--show", "1"], cwd=REPO, capture_output=True, text=True,
                           timeout=300)
    # the same ReLU in plain code before the op: braintrace's online step gives the live entries nothing
    assert "  w (4, 4): 8 still, 8 silent online\n    silent online (2, 0): online +0  BPTT " in plain.stdout, \
        plain.stdout + plain.stderr
    assert "w_rec" not in plain.stdout  # only the leaves named


def test_the_entries_tool_measures_at_the_inputs_as_drawn_when_asked():
    # a forget-gate bias of 20: float32 rounds sigmoid(20) to 1, so at the inputs as drawn no entry moves; scaled up
    # until BPTT moves every weight, the inputs pull the gate out of saturation and hide the construct
    target = os.path.join("tests", "fixtures", "own", "saturated_gate.py") + "::etrace_target_sigmoid_gate_bias_20"
    runs = {flag: subprocess.run([sys.executable, "-m", "tests.entries", target, "b_f", "--steps", "4", *flag],
                                 cwd=REPO, capture_output=True, text=True, timeout=300)
            for flag in ((), ("--no-scale",))}
    assert "  b_f (4,): 4 still\n" in runs[("--no-scale",)].stdout, runs[("--no-scale",)].stderr
    assert "  b_f (4,): 4 still\n" not in runs[()].stdout, runs[()].stdout


def test_the_entries_tool_sorts_entries_by_what_the_online_gradient_does_to_them():
    from entries import LeafEntries

    leaf = LeafEntries("w", (6,), np.array([1.0, 0.0, 0.0, 2.0, 3.0, 1.0005]),
                       np.array([1.0, 0.0, 1.0, 0.0, 1.5, 1.0]))
    assert list(leaf.kinds()) == ["exact", "still", "silent online", "online only", "off", "exact"]
    assert leaf.lines(1)[0] == "  w (6,): 2 exact, 1 still, 1 silent online, 1 online only, 1 off"
    assert "off           (4,): online +3  BPTT +1.5  (2x)" in "\n".join(leaf.lines(1))
    # a NaN or an infinity is its own kind, and the other entries are judged against the finite ones
    broken = LeafEntries("tau", (4,), np.array([np.nan, 1.0, 0.0, 2.0]), np.array([np.inf, 1.0, 0.0, 0.0]))
    assert list(broken.kinds()) == ["not finite", "exact", "still", "online only"]
    assert broken.lines(1)[:2] == ["  tau (4,): 1 not finite, 1 exact, 1 still, 1 online only",
                                   "    not finite    (0,): online +nan  BPTT +inf"]


def test_the_facts_tool_prints_what_a_check_reads_of_a_fixture_model():
    # step 3 and context.md send a newcomer here to see a model's facts while writing a check
    target = os.path.join("tests", "fixtures", "own", "integer_param.py") + "::etrace_target_integer_gain"
    shown = subprocess.run([sys.executable, "-m", "tests.facts", target, "weight_dtypes", "jaxpr"], cwd=REPO,
                           capture_output=True, text=True, timeout=300)
    assert shown.returncode == 0, shown.stderr
    assert "weight_dtypes: [WeightDtype(weight=('w',)" in shown.stdout and "dtypes=('int32',)" in shown.stdout
    assert "jaxpr: { lambda" in shown.stdout and "etp_mv" in shown.stdout
    unknown = subprocess.run([sys.executable, "-m", "tests.facts", target, "no_such_fact"], cwd=REPO,
                             capture_output=True, text=True, timeout=300)
    assert unknown.returncode == 2 and "weight_dtypes" in unknown.stderr  # it lists the facts there are
