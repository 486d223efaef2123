"""Suppression comments on the reported line and for a whole file, and ETL301 for stale ones.

The model is linted once; each test writes a copy of its file with other
comments (on the same lines) and applies the policy to the same findings.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from helpers import fixture, lint_shared

from etrace_lint.config.settings import Settings
from etrace_lint.config.suppressions import parse_suppressions
from etrace_lint.core.findings import Level, Location
from etrace_lint.policy.decide import apply_policy
from etrace_lint.writers import RunInfo

SOURCE = fixture("daily", "suppressed.py")
DRIVE, LEAK = 17, 18  # the two lines with an ETL201


@pytest.fixture(scope="module")
def findings():
    found, errors = lint_shared(SOURCE)
    assert not errors
    assert sorted(f.line for f in found if f.rule_id == "ETL201") == [DRIVE, LEAK]
    return found


def _variant(tmp_path, findings, comments: dict[int, str]):
    """A copy of the model file with ``comments`` put on the given lines; the findings moved into it."""
    lines = open(SOURCE, encoding="utf-8").read().splitlines()
    for number, comment in comments.items():
        lines[number - 1] = lines[number - 1].split("  # expect")[0] + "  " + comment
    path = tmp_path / "suppressed.py"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    moved = [replace(f, location=Location(str(path), f.line, f.location.column)) for f in findings]
    return str(path), moved


def _outcome(tmp_path, findings, comments, **options):
    path, moved = _variant(tmp_path, findings, comments)
    settings = Settings(root=str(tmp_path), **options).for_policy()
    return apply_policy(moved, [], settings, [path]), settings


def _shown(outcome):
    return [(f.line, f.rule_id, f.suppressed) for f in outcome.findings]


def test_without_comments_both_findings_show(tmp_path, findings):
    outcome, settings = _outcome(tmp_path, findings, {})
    assert _shown(outcome) == [(DRIVE, "ETL201", ""), (LEAK, "ETL201", "")]
    assert outcome.exit_code(settings) == 1


@pytest.mark.parametrize("comment, form", [
    ("# noqa: ETL201", "noqa"),
    ("# noqa:ETL201,E501", "noqa"),
    ("# NOQA: etl2", "noqa"),
    ("# noqa", "noqa"),
    ("# etrace-lint: ignore[ETL201]", "ignore"),
    ("# etrace-lint: ignore[ETL201, ETL2]", "ignore"),
    ("# type: ignore  # etrace-lint: ignore[weight]", None),
])
def test_line_suppressions(tmp_path, findings, comment, form):
    outcome, settings = _outcome(tmp_path, findings, {DRIVE: comment})
    if form is None:  # a rule name is not an id prefix: nothing is silenced
        assert (DRIVE, "ETL201", "") in _shown(outcome)
        return
    assert _shown(outcome) == [(LEAK, "ETL201", "")]
    with_suppressed, _ = _outcome(tmp_path, findings, {DRIVE: comment}, include_suppressed=True)
    assert _shown(with_suppressed) == [(DRIVE, "ETL201", form), (LEAK, "ETL201", "")]


def test_other_tools_codes_do_not_silence(tmp_path, findings):
    outcome, _ = _outcome(tmp_path, findings, {DRIVE: "# noqa: F401"})
    assert _shown(outcome) == [(DRIVE, "ETL201", ""), (LEAK, "ETL201", "")]


def test_suppressed_findings_do_not_fail_the_run(tmp_path, findings):
    both = {DRIVE: "# noqa: ETL201", LEAK: "# etrace-lint: ignore[ETL201]"}
    outcome, settings = _outcome(tmp_path, findings, both, include_suppressed=True)
    assert [f.suppressed for f in outcome.findings] == ["noqa", "ignore"]
    assert outcome.exit_code(settings) == 0


def test_file_level_suppression(tmp_path, findings):
    outcome, settings = _outcome(tmp_path, findings, {1: "# etrace-lint: file-ignore[ETL201]"})
    assert _shown(outcome) == [] and outcome.exit_code(settings) == 0
    other, _ = _outcome(tmp_path, findings, {1: "# etrace-lint: file-ignore[ETL005]"})
    assert [(line, rule) for line, rule, _ in _shown(other)] == [(1, "ETL301"), (DRIVE, "ETL201"), (LEAK, "ETL201")]


def test_unused_suppressions_are_reported(tmp_path, findings):
    outcome, settings = _outcome(tmp_path, findings, {DRIVE: "# noqa: ETL201, ETL005",
                                                      LEAK: "# etrace-lint: ignore[ETL999]"})
    unused = [f for f in outcome.findings if f.rule_id == "ETL301"]
    assert [(f.line, f.level) for f in unused] == [(DRIVE, Level.WARNING), (LEAK, Level.WARNING)]
    assert "ETL005" in unused[0].message and "ETL201" not in unused[0].message
    assert "ETL999 is not a rule" in unused[1].message
    assert outcome.exit_code(settings) == 1


@pytest.mark.parametrize("comments, options", [
    ({DRIVE: "# noqa"}, {}),  # a bare noqa is never reported
    ({DRIVE: "# noqa: ETL005"}, {"ignore": ["ETL301"]}),
    ({DRIVE: "# noqa: ETL005"}, {"ignore": ["ETL005"]}),  # the rule did not run
    ({DRIVE: "# noqa: ETL205"}, {}),  # opt-in, not asked for
    ({DRIVE: "# noqa: F401"}, {}),
])
def test_suppressions_not_reported_as_unused(tmp_path, findings, comments, options):
    outcome, _ = _outcome(tmp_path, findings, comments, **options)
    assert not [f for f in outcome.findings if f.rule_id == "ETL301"]


def test_opt_in_rule_code_is_checked_when_the_rule_ran(tmp_path, findings):
    outcome, _ = _outcome(tmp_path, findings, {DRIVE: "# noqa: ETL205"},
                          check_online_grad=True)
    assert [f.line for f in outcome.findings if f.rule_id == "ETL301"] == [DRIVE]


def test_files_that_were_not_linted_are_not_checked(tmp_path, findings):
    path, moved = _variant(tmp_path, findings, {DRIVE: "# noqa: ETL005"})
    outcome = apply_policy(moved, [], Settings(root=str(tmp_path)).for_policy(), [])
    assert not [f for f in outcome.findings if f.rule_id == "ETL301"]


def test_sarif_carries_suppressions_only_when_asked(tmp_path, findings):
    from etrace_lint.writers.sarif import build_log

    info = RunInfo(root=str(tmp_path))
    default, _ = _outcome(tmp_path, findings, {DRIVE: "# noqa: ETL201"})
    results = build_log(default, info)["runs"][0]["results"]
    assert [r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in results] == [LEAK]
    included, _ = _outcome(tmp_path, findings, {DRIVE: "# noqa: ETL201"}, include_suppressed=True)
    results = build_log(included, info)["runs"][0]["results"]
    suppressions = {r["locations"][0]["physicalLocation"]["region"]["startLine"]: r.get("suppressions")
                    for r in results}
    assert suppressions[LEAK] is None
    assert [s["kind"] for s in suppressions[DRIVE]] == ["inSource"]


def test_comment_syntax():
    text = ('x = "# noqa: ETL005"  # etrace-lint: ignore[ETL003,ETL004]\n'
            '# etrace-lint: file-ignore[etl2]\n'
            'y = 1  # noqa: F401 ETL005\n'
            'z = 2  # noqa\n')
    found = [(s.line, s.codes, s.form) for s in parse_suppressions(text)]
    assert found == [(1, ("ETL003", "ETL004"), "ignore"), (2, ("ETL2",), "file-ignore"),
                     (3, ("ETL005",), "noqa"), (4, (), "noqa")]


def test_a_suppression_of_a_note_left_out_is_not_called_unused(tmp_path, findings):
    # notes are hidden by default and then not built: nothing can match a noqa naming one
    path, moved = _variant(tmp_path, findings, {DRIVE: "# noqa: ETL001"})
    settings = Settings(root=str(tmp_path)).for_policy()
    assert "ETL301" in {f.rule_id for f in apply_policy(moved, [], settings, [path]).findings}
    outcome = apply_policy(moved, [], settings, [path], notes_left_out={"ETL001": 2})
    assert "ETL301" not in {f.rule_id for f in outcome.findings}
    assert outcome.hidden_notes == 2 + sum(f.level is Level.NOTE for f in moved)
