"""A rule for a compiler record is one file under rules/ and its documentation beside it.

The test adds such a rule the way a maintainer would (a module defining ``RULE``
and its Markdown, in the rules folder) and checks that the engine, the
documentation command and the registry's own checks pick it up with nothing
else changed.
"""

from __future__ import annotations

import os
import shutil
import sys

import pytest
from helpers import FIXTURES, lint_file

import etrace_lint.rules as rules_package
from etrace_lint.cli import main as cli
from etrace_lint.core import registry
from etrace_lint.writers.properties import finding_properties

RELATIONS = os.path.join(FIXTURES, "compiler", "relations.py")

RULE_SOURCE = '''
from etrace_lint.core.findings import Level
from etrace_lint.core.rule import RecordRule


def explain(facts):
    return f"{facts.weight_or_op} is connected to {', '.join(facts.hidden)} (a rule added in a test)"


RULE = RecordRule(
    id="ETL098",
    name="connected-weight",
    level=Level.WARNING,
    summary="A weight the compiler connected to a hidden state",
    tags=("compiler",),
    kinds=("relation_included",),
    explain=explain,
)
'''

RULE_DOCS = """# ETL098 connected-weight

## What it does
Reports each weight the compiler connected to a hidden state.

## Why it matters
A test shows that a rule is one file and its documentation.

## Example
Any `braintrace.nn.Linear` feeding a hidden state.

## How to fix
Nothing to fix.
"""


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
    sys.modules.pop(f"{rules_package.__name__}.etl098_connected_weight", None)
    registry.all_rules.cache_clear()
    registry.rule_for_kind.cache_clear()


def _add_rule(folder) -> None:
    (folder / "etl098_connected_weight.py").write_text(RULE_SOURCE, encoding="utf-8")
    (folder / "etl098_connected_weight.md").write_text(RULE_DOCS, encoding="utf-8")


def test_a_new_record_rule_is_one_file_and_its_docs(rules_folder, capsys):
    before, _ = lint_file(RELATIONS)
    connected = sorted((f.line, finding_properties(f).get("weight")) for f in before if f.rule_id == "ETL001")
    assert connected, "the fixture has weights the compiler connects"

    # the new rule takes over the records ETL001 reported: remove ETL001's file, add one
    for path in rules_folder.glob("etl001_*"):
        path.unlink()
    _add_rule(rules_folder)
    registry.all_rules.cache_clear()
    registry.rule_for_kind.cache_clear()

    after, _ = lint_file(RELATIONS)
    added = [f for f in after if f.rule_id == "ETL098"]
    assert sorted((f.line, finding_properties(f).get("weight")) for f in added) == connected
    assert not [f for f in after if f.rule_id == "ETL001"]
    assert all(f.level.value == "warning" and f.message.endswith("(a rule added in a test)") for f in added)
    assert all(finding_properties(f)["braintraceKind"] == "relation_included" for f in added)

    assert cli.main(["rule", "ETL098"]) == 0
    shown = capsys.readouterr().out
    assert shown.startswith("ETL098 connected-weight (warning)") and "## How to fix" in shown


def test_two_rules_claiming_one_record_kind_are_refused(rules_folder):
    _add_rule(rules_folder)  # ETL001 still reports relation_included records
    registry.all_rules.cache_clear()
    registry.rule_for_kind.cache_clear()
    with pytest.raises(RuntimeError, match="ETL098 and ETL001 both report 'relation_included'"):
        registry.rule_for_record_kind("relation_included")
