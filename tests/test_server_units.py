"""The server's pieces that need no server process: suppression edits, ranges, staleness, folders."""

from __future__ import annotations

import ast

import pytest

pytest.importorskip("pygls")
from lsprotocol import types  # noqa: E402

from etrace_lint.config.suppressions import file_ignore_edit, line_with_ignore, parse_suppressions  # noqa: E402
from etrace_lint.core.findings import TargetResult  # noqa: E402
from etrace_lint.discovery.discover import TargetSpec  # noqa: E402
from etrace_lint.server.actions import suppression_actions  # noqa: E402
from etrace_lint.server.diagnostics import line_range  # noqa: E402
from etrace_lint.server.folders import OptionsError, ServerOptions, load_folder  # noqa: E402
from etrace_lint.server.linting import LintPlan  # noqa: E402
from etrace_lint.server.scheduler import Run, Scheduler  # noqa: E402

SOURCE = '''#!/usr/bin/env python
# -*- coding: utf-8 -*-
"""A docstring."""
drive = x @ w  # noqa: F401
leak = a * h  # etrace-lint: ignore[ETL005]
text = """one
two"""
total = a + \\
    b
'''


@pytest.mark.parametrize("line, expected", [
    (4, "drive = x @ w  # noqa: F401  # etrace-lint: ignore[ETL201]"),  # another tool's comment stays
    (5, "leak = a * h  # etrace-lint: ignore[ETL005, ETL201]"),  # merged
    (6, None),  # inside a string that goes on
    (7, 'two"""  # etrace-lint: ignore[ETL201]'),  # where that string ends
    (8, None),  # a backslash continuation
    (9, "    b  # etrace-lint: ignore[ETL201]"),
])
def test_line_suppression_is_added_or_merged_where_a_comment_can_go(line, expected):
    assert line_with_ignore(SOURCE, line, "ETL201") == expected
    if expected is not None:
        lines = SOURCE.splitlines()
        lines[line - 1] = expected
        edited = "\n".join(lines)
        ast.parse(edited)
        assert any(s.line == line and s.covers("ETL201") for s in parse_suppressions(edited))


def test_an_id_already_suppressed_is_not_added_twice():
    assert line_with_ignore(SOURCE, 5, "ETL005") == "leak = a * h  # etrace-lint: ignore[ETL005]"


def test_file_suppression_goes_below_the_shebang_and_coding_lines_or_joins_the_existing_one():
    assert file_ignore_edit(SOURCE, "ETL201") == (3, False, "# etrace-lint: file-ignore[ETL201]")
    merged = "x = 1\n# etrace-lint: file-ignore[ETL005]\n"
    assert file_ignore_edit(merged, "ETL201") == (2, True, "# etrace-lint: file-ignore[ETL005, ETL201]")


def _diagnostic(line: int, code: str = "ETL201") -> types.Diagnostic:
    return types.Diagnostic(range=types.Range(types.Position(line - 1, 8), types.Position(line - 1, 13)),
                            message="m", code=code, source="etrace-lint")


def test_no_line_action_where_the_edit_would_not_parse():
    actions = suppression_actions("file:///m.py", SOURCE, [_diagnostic(6)],
                                  types.Range(types.Position(5, 0), types.Position(5, 0)))
    assert [a.title for a in actions] == ["Ignore ETL201 in this file"]


def test_no_action_for_other_tools_or_other_lines():
    other = types.Diagnostic(range=types.Range(types.Position(3, 0), types.Position(3, 1)), message="m",
                             code="F401", source="pyflakes")
    actions = suppression_actions("file:///m.py", SOURCE, [other, _diagnostic(9)],
                                  types.Range(types.Position(3, 0), types.Position(3, 5)))
    assert actions == []


def test_ranges_count_utf16_units_and_stop_at_the_end_of_the_code():
    lines = ["    y = 'é😀' + w   "]
    found = line_range(lines, 1, 5)
    assert found.start == types.Position(0, 4)
    assert found.end == types.Position(0, len("    y = 'é") + 2 + len("' + w"))  # the emoji is two units
    assert line_range(lines, 1, 40).start == types.Position(0, 4)  # past the code: the whole line


def test_options_are_checked():
    assert ServerOptions.parse({"trusted": True, "ignore": "ETL005, ETL201"}).ignore == ["ETL005", "ETL201"]
    with pytest.raises(OptionsError, match="'selct'"):
        ServerOptions.parse({"selct": ["ETL2"]})
    assert ServerOptions.parse({"environ": {"dt": "0.1 ms", "precision": "32"}}).environ == {
        "dt": "0.1 ms", "precision": 32}
    with pytest.raises(OptionsError, match="environ"):
        ServerOptions.parse({"environ": {"dt": "fast"}})


def test_a_folder_reads_its_own_pyproject_and_the_options_on_top(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.etrace-lint]\nignore = ["ETL005"]\nextend-exclude = ["old"]\n'
                                             '[tool.etrace-lint.environ]\ndt = "1 ms"\nprecision = 64\n')
    (tmp_path / "old").mkdir()
    (tmp_path / "models").mkdir()
    folder = load_folder(str(tmp_path), ServerOptions(ignore=["ETL201"], paths=["models"], environ={"dt": "0.1 ms"}))
    assert folder.trusted and folder.error is None
    assert folder.settings.ignore == ["ETL005", "ETL201"]
    assert folder.settings.environ == {"dt": "0.1 ms", "precision": 64}
    assert folder.lints(str(tmp_path / "models" / "net.py"))
    assert not folder.lints(str(tmp_path / "train.py"))  # outside `paths`
    assert not load_folder(str(tmp_path), ServerOptions()).lints(str(tmp_path / "old" / "net.py"))
    (tmp_path / "pyproject.toml").write_text('[tool.etrace-lint]\nselect = ["ETL9999x"]\n')
    assert "unknown rule" in load_folder(str(tmp_path), ServerOptions()).error


def test_a_result_that_read_a_file_saved_since_is_dropped_and_its_file_linted_again(tmp_path):
    import asyncio

    applied = []

    async def scenario():
        folder = load_folder(str(tmp_path), ServerOptions(trusted=True))
        model, helper, other = (str(tmp_path / n) for n in ("model.py", "helper.py", "other.py"))
        specs = [TargetSpec(model, "etrace_target_a"), TargetSpec(other, "etrace_target_b")]
        plan = LintPlan(folder, specs=specs, rediscovered=[model, other])

        async def plan_lint(folder, files):
            return plan

        async def execute(plan, run: Run):
            scheduler.request(folder, helper)  # saved while the lint runs
            return [TargetResult(specs[0].key, dependencies=[model, helper]),
                    TargetResult(specs[1].key, dependencies=[other])]

        scheduler = Scheduler(plan_lint, execute, lambda plan, pairs, current: applied.append((pairs, current)))
        snapshot = {}
        results = await execute(plan, Run())
        scheduler.finish(plan, results, snapshot)
        return scheduler, model, helper, other

    scheduler, model, helper, other = asyncio.run(scenario())
    [(pairs, current)] = applied
    assert [spec.path for spec, _ in pairs] == [other]  # model.py's result read the saved helper
    assert current == [model, other]
    assert sorted(scheduler._dirty[str(tmp_path)][1]) == sorted([helper, model])


def test_a_lint_stopped_by_shutdown_is_not_started_again(tmp_path, caplog):
    """A shutdown stops the lint in flight; the scheduler then plans nothing more, where it used to queue
    the stopped lint again and log an error once the lint thread refused it."""
    import asyncio
    import logging

    planned = []

    async def scenario():
        folder = load_folder(str(tmp_path), ServerOptions(trusted=True))
        model = str(tmp_path / "model.py")
        plan = LintPlan(folder, specs=[TargetSpec(model, "etrace_target_a")], rediscovered=[model])

        async def plan_lint(folder, files):
            planned.append(files)
            if len(planned) > 1:
                raise RuntimeError("cannot schedule new futures after shutdown")
            return plan

        async def execute(plan, run: Run):
            scheduler.stop_all()  # the client's shutdown arrives while the lint runs
            run.check()
            return []

        scheduler = Scheduler(plan_lint, execute, lambda plan, pairs, current: None)
        scheduler.request(folder, model)
        scheduler.request(folder, model)  # a save that comes after the shutdown is not linted either
        while scheduler._task is not None and not scheduler._task.done():
            await asyncio.sleep(0.01)
        scheduler.request(folder, model)
        await asyncio.sleep(0.1)
        return scheduler

    with caplog.at_level(logging.INFO, logger="etrace_lint.server.scheduler"):
        scheduler = asyncio.run(scenario())
    assert len(planned) == 1
    assert not scheduler._dirty
    assert "stopped: cancelled" in caplog.text and "failed" not in caplog.text


def test_a_rules_fix_becomes_a_preferred_code_action_with_utf16_positions(tmp_path):
    from etrace_lint.core import findings
    from etrace_lint.server.actions import fix_actions
    from etrace_lint.server.diagnostics import Lines, finding_diagnostic

    if not hasattr(findings, "Fix"):
        pytest.skip("findings carry no fixes in this version")
    path = tmp_path / "m.py"
    path.write_text("s = 'é😀'; drive = x @ w\n")
    column = len("s = 'é😀'; drive = ") + 1  # code points, 1-based
    fix = findings.Fix("use braintrace.matmul", (findings.Edit(str(path), 1, column, 1, column + len("x @ w"),
                                                               "braintrace.matmul(x, w)"),))
    finding = findings.Finding("ETL201", findings.Level.WARNING, "m", "model", findings.Location(str(path), 1, column),
                               fix=fix)
    diagnostic = finding_diagnostic(finding, Lines(), types.PositionEncodingKind.Utf16)
    [action] = fix_actions([diagnostic], types.Range(types.Position(0, 0), types.Position(0, 0)),
                           lambda p: path.read_text(), lambda p: "file://" + p)
    assert action.title == "Fix ETL201: use braintrace.matmul" and action.is_preferred
    [edit] = action.edit.changes["file://" + str(path)]
    start = len("s = 'é") + 2 + len("'; drive = ")  # the emoji counts two UTF-16 units
    assert (edit.range.start.character, edit.range.end.character) == (start, start + len("x @ w"))
    assert edit.new_text == "braintrace.matmul(x, w)"


def test_a_result_whose_file_was_rewritten_before_its_save_arrived_is_not_published(tmp_path):
    """An editor writes the file, then sends the save: a lint running then may read the new text
    while the save is on its way. Its result is not trusted: the file is linted again."""
    import asyncio

    from etrace_lint.server.scheduler import digests

    applied = []
    model = tmp_path / "model.py"
    model.write_text("def etrace_target_a():\n    return None\n")

    async def scenario():
        folder = load_folder(str(tmp_path), ServerOptions(trusted=True))
        spec = TargetSpec(str(model), "etrace_target_a")
        plan = LintPlan(folder, specs=[spec], rediscovered=[str(model)])
        scheduler = Scheduler(None, None, lambda plan, pairs, current: applied.append((pairs, current)))
        contents = digests([str(model)])  # when the lint began
        model.write_text("def etrace_target_a(:\n")  # the editor's next write; its save is not here yet
        scheduler.finish(plan, [TargetResult(spec.key, dependencies=[str(model)])], {}, contents)
        scheduler.finish(plan, [TargetResult(spec.key, dependencies=[str(model)])], {}, digests([str(model)]))
        return scheduler

    scheduler = asyncio.run(scenario())
    (stale_pairs, stale_current), (pairs, current) = applied
    assert stale_pairs == [] and stale_current == []
    assert sorted(scheduler._dirty[str(tmp_path)][1]) == [str(model)]
    assert [spec.path for spec, _ in pairs] == [str(model)] and current == [str(model)]


def test_a_diagnostics_code_links_to_its_rules_page_at_the_folders_docs_url(tmp_path):
    from etrace_lint.core import findings
    from etrace_lint.server.diagnostics import Lines, finding_diagnostic

    path = tmp_path / "m.py"
    path.write_text("drive = x @ w\n")
    finding = findings.Finding("ETL201", findings.Level.WARNING, "m", "model", findings.Location(str(path), 1, 9))
    published = finding_diagnostic(finding, Lines(), types.PositionEncodingKind.Utf16)
    assert published.code_description.href == "https://etrace-lint.github.io/etrace-lint/rules/etl201/"
    mirrored = finding_diagnostic(finding, Lines(), types.PositionEncodingKind.Utf16, "http://localhost:8000/")
    assert mirrored.code_description.href == "http://localhost:8000/rules/etl201/"



def test_a_saves_static_pass_is_published_while_the_previous_saves_probe_measures(tmp_path):
    """The two lanes: a save that comes while the probe's pass of the previous save runs is answered by its
    static pass at once; the older probe's pass, stale, publishes nothing, and the newer one's follows."""
    import asyncio

    published = []  # (which pass, the save it linted) in the order the editor sees them

    async def scenario():
        folder = load_folder(str(tmp_path), ServerOptions(trusted=True))
        model = str(tmp_path / "model.py")
        spec = TargetSpec(model, "etrace_target_a")
        first_probe_runs, first_probe_may_end = asyncio.Event(), asyncio.Event()
        saves = []

        async def plan_lint(folder, files):
            return LintPlan(folder, specs=[spec], rediscovered=[model])

        async def execute(plan, run: Run):
            save = len(saves)
            if not plan.static_only and save == 1:
                first_probe_runs.set()
                await first_probe_may_end.wait()  # the probe measures the first save for a while
            return [TargetResult(spec.key, dependencies=[model], distributions={"save": str(save)})]

        def apply(plan, pairs, current):
            published.extend(("static" if plan.static_only else "probe", result.distributions["save"])
                             for _, result in pairs)

        scheduler = Scheduler(plan_lint, execute, apply)
        assert LintPlan(folder, specs=[spec]).probes()
        saves.append(1)
        scheduler.request(folder, model)
        await asyncio.wait_for(first_probe_runs.wait(), 5)
        saves.append(2)
        scheduler.request(folder, model)
        while ("static", "2") not in published:  # answered while the first probe's pass still runs
            await asyncio.sleep(0.01)
        assert not first_probe_may_end.is_set()
        first_probe_may_end.set()
        while ("probe", "2") not in published:
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.1)

    asyncio.run(asyncio.wait_for(scenario(), 20))
    assert published == [("static", "1"), ("static", "2"), ("probe", "2")]
