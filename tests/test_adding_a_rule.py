"""A rule is one file under rules/ and its documentation beside it.

The tests add rules the way a maintainer would (a module defining ``RULE`` and its
Markdown, in the rules folder): a rule for a compiler record, and an analysis rule
with its violation, copied from docs/development/adding-a-rule.md and type-checked
by mypy. They check that the engine, the documentation command and the registry's
own checks pick it up with nothing else changed, and that a rule given a field of
another kind of rule fails mypy.
"""

from __future__ import annotations

import json
import os
import shutil
import sys

import pytest
from helpers import FIXTURES, REPO, lint_file

import etrace_lint.rules as rules_package
from etrace_lint.cli import main as cli
from etrace_lint.core import registry
from etrace_lint.core.findings import Finding, Level
from etrace_lint.core.rule import AnalysisRule
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
    for added in ("etl098_connected_weight", "etl231_my_check"):
        sys.modules.pop(f"{rules_package.__name__}.{added}", None)
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


PLAIN_OP = os.path.join(FIXTURES, "own", "plain_op.py")

# the analysis rule of docs/development/adding-a-rule.md, as a maintainer would copy it
ANALYSIS_RULE_SOURCE = '''
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterator

from etrace_lint.core.details import NamesHiddenStates
from etrace_lint.core.findings import Level
from etrace_lint.core.rule import AnalysisRule, Hit

if TYPE_CHECKING:  # the analysis imports JAX and braintrace: annotations only
    from etrace_lint.analysis.context import AnalysisContext


@dataclass(frozen=True)
class MyPlainOp(NamesHiddenStates):
    """A weight that reaches a hidden state through a plain op."""

    weight: str
    primitive: str
    hidden_states: tuple[str, ...]

    def message(self) -> str:
        return f"{self.weight} reaches a hidden state through a plain `{self.primitive}` (a rule added in a test)"

    def properties(self) -> dict[str, Any]:
        return {"primitive": self.primitive}


def check(context: AnalysisContext) -> Iterator[Hit[MyPlainOp]]:
    from etrace_lint.analysis.jaxpr_view import primitive_name  # imports JAX: only when the check runs
    from etrace_lint.core.naming import display_name

    for use in context.plain_uses:
        violation = MyPlainOp(display_name(use.weight), primitive_name(use.site.eqn),
                              tuple(display_name(h) for h in use.hidden))
        yield Hit(violation, weight_path=use.weight, eqn=use.site)


RULE = AnalysisRule(
    id="ETL231",
    name="my-check",
    level=Level.WARNING,
    summary="A weight that reaches a hidden state through a plain op",
    tags=("analysis",),
    violations=(MyPlainOp,),
    check=check,
)
'''


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


def test_a_new_analysis_rule_is_one_file_its_violation_and_its_docs(rules_folder, tmp_path):
    path = rules_folder / "etl231_my_check.py"
    path.write_text(ANALYSIS_RULE_SOURCE, encoding="utf-8")
    (rules_folder / "etl231_my_check.md").write_text(RULE_DOCS.replace("ETL098 connected-weight", "ETL231 my-check"),
                                                     encoding="utf-8")
    registry.all_rules.cache_clear()

    status, said = _mypy(path)
    assert status == 0, said

    findings, _ = lint_file(PLAIN_OP)
    plain = sorted((f.line, finding_properties(f)["weight"]) for f in findings if f.rule_id == "ETL201")
    added = [f for f in findings if f.rule_id == "ETL231"]
    assert plain and set(plain) <= {(f.line, finding_properties(f)["weight"]) for f in added}
    assert all(f.message.endswith("(a rule added in a test)") for f in added)
    # the weight and the hidden states it names are added, with their paths, under the keys every rule shares
    assert all(list(finding_properties(f)) == ["primitive", "weight", "weightPath", "hiddenStates", "hiddenStatePaths"]
               for f in added)
    # the cache reads the violation back as it was
    assert all(Finding.from_json(json.loads(json.dumps(f.to_json()))).details == f.details for f in added)


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
