"""`etrace-lint server` driven as an editor drives it: a real server process over stdio, pygls's client.

One server for the module (its workers stay warm, as in an editor); each test
works on its own files of a copy of tests/fixtures/server/workspace.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import uuid

import pytest

pytest.importorskip("pygls")
from helpers import REPO, fixture  # noqa: E402
from lsprotocol import types  # noqa: E402

sys.path.insert(0, fixture("server"))
from lsp_session import LspSession, uri  # noqa: E402

RNN_BAD_LINE = 16  # `drive = x @ self.w_in.value` in rnn.py
ETP_DRIVE = "        drive = braintrace.matmul(x, self.w_in.value)\n"


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    root = tmp_path_factory.mktemp("ws")
    shutil.copytree(fixture("server", "workspace"), root, dirs_exist_ok=True)
    return root


@pytest.fixture(scope="module")
def second(tmp_path_factory):
    """A second workspace folder: its own settings (no 6 s timeout), the same server and workers."""
    root = tmp_path_factory.mktemp("second")
    shutil.copytree(fixture("server", "second"), root, dirs_exist_ok=True)
    return root


@pytest.fixture(scope="module")
def unconfigured(tmp_path_factory):
    """A third folder whose pyproject.toml has no [tool.etrace-lint]: trusted only by the editor's option."""
    root = tmp_path_factory.mktemp("unconfigured")
    (root / "pyproject.toml").write_text('[project]\nname = "models"\nversion = "0"\n')
    shutil.copy(fixture("server", "workspace", "rnn.py"), root / "rnn.py")
    return root


@pytest.fixture(scope="module")
def session(workspace, second, unconfigured):
    lsp = LspSession(workspace, folders=[workspace, second, unconfigured],
                     init_options={"trusted": True, "environ": {"dt": "0.1 ms"}},
                     server_args=os.environ.get("ETRACE_LINT_TEST_SERVER_ARGS", "").split())
    yield lsp
    lsp.close()


def _copy(workspace, name: str, source: str = "rnn.py") -> str:
    path = workspace / name
    shutil.copy(workspace / source, path)
    return str(path)


def _lines(path: str) -> list[str]:
    with open(path, encoding="utf-8") as handle:
        return handle.read().splitlines(keepends=True)


def _published(session, path, codes):
    """Wait until ``path`` holds exactly ``codes`` ((line, code) pairs)."""
    return session.wait_for(lambda s: uri(path) in s.diagnostics and s.codes(path) == sorted(codes),
                            what=f"{os.path.basename(path)} to hold {codes}")


def test_open_publishes_a_located_documented_diagnostic(session, workspace):
    (workspace / ".venv").mkdir()
    excluded = _copy(workspace, ".venv/vendored.py")  # a default exclude, as for the command line
    path = _copy(workspace, "opened.py")
    session.open(excluded)
    session.open(path)
    _published(session, path, [(RNN_BAD_LINE, "ETL201")])
    assert uri(excluded) not in session.diagnostics
    [diagnostic] = session.diagnostics[uri(path)]
    line = _lines(path)[RNN_BAD_LINE - 1]
    assert diagnostic.range.start.character == line.index("x @ self.w_in.value")
    assert diagnostic.range.end == types.Position(RNN_BAD_LINE - 1, len(line.rstrip()))
    assert diagnostic.severity == types.DiagnosticSeverity.Warning
    assert diagnostic.source == "etrace-lint"
    assert diagnostic.code_description.href == "https://etrace-lint.github.io/etrace-lint/rules/etl201/"
    assert "w_in" in diagnostic.message and diagnostic.message.endswith("[etrace_target_rnn]")
    related = {(r.location.uri, r.location.range.start.line + 1, r.message) for r in diagnostic.related_information}
    assert (uri(path), 11, "weight created here") in related
    assert (uri(path), 17, "h gets its new value here") in related, "the finding's path, step by step"
    assert "braintrace.matmul" in json.dumps(diagnostic.data["fix"]), "the rule's fix rides along for code actions"


def test_a_folder_without_configuration_is_linted_when_the_editor_trusts_it(session, unconfigured):
    path = str(unconfigured / "rnn.py")
    session.open(path)
    _published(session, path, [(RNN_BAD_LINE, "ETL201")])


def test_environ_of_the_initialization_options_reaches_the_model(session, workspace):
    path = str(workspace / "needs_dt.py")
    session.open(path)
    # without dt the model cannot be built (ETL112 on line 17); with it, its finding shows
    _published(session, path, [(18, "ETL201")])


def test_hover_shows_the_rules_documentation(session, workspace):
    path = _copy(workspace, "hovered.py")
    session.open(path)
    _published(session, path, [(RNN_BAD_LINE, "ETL201")])
    hover = session.hover(path, RNN_BAD_LINE, 4)
    cli = subprocess.run([sys.executable, "-m", "etrace_lint", "rule", "ETL201"], capture_output=True, text=True,
                         cwd=REPO, check=True).stdout
    assert hover.contents.value.strip() == cli.strip()
    assert session.hover(path, RNN_BAD_LINE - 1, 4) is None  # an unflagged line


def test_fix_clears_the_diagnostic_and_new_code_is_linted(session, workspace):
    path = _copy(workspace, "fixed.py")
    session.open(path)
    _published(session, path, [(RNN_BAD_LINE, "ETL201")])
    lines = _lines(path)
    lines[RNN_BAD_LINE - 1] = ETP_DRIVE
    session.save(path, "".join(lines))
    _published(session, path, [])
    # the worker imports the edited module afresh: breaking the recurrent weight is seen too
    lines[RNN_BAD_LINE] = lines[RNN_BAD_LINE].replace("braintrace.matmul(self.h.value, self.w_rec.value)",
                                                      "self.h.value @ self.w_rec.value")
    session.save(path, "".join(lines))
    _published(session, path, [(RNN_BAD_LINE + 1, "ETL201")])


def test_ignore_on_this_line_merges_with_the_comment_there(session, workspace):
    path = _copy(workspace, "suppress.py")
    lines = _lines(path)
    lines[RNN_BAD_LINE - 1] = lines[RNN_BAD_LINE - 1].rstrip() + "  # etrace-lint: ignore[ETL005]\n"
    session.open(path, "".join(lines))
    # ETL201 is not covered; the ETL005 code matches nothing there (ETL301)
    _published(session, path, [(RNN_BAD_LINE, "ETL201"), (RNN_BAD_LINE, "ETL301")])
    actions = {a.title: a for a in session.code_actions(path, RNN_BAD_LINE)}
    assert set(actions) >= {"Ignore ETL201 on this line", "Ignore ETL201 in this file"}
    [edit] = actions["Ignore ETL201 on this line"].edit.changes[uri(path)]
    assert edit.range.start == types.Position(RNN_BAD_LINE - 1, 0)
    assert edit.new_text == "        drive = x @ self.w_in.value  # etrace-lint: ignore[ETL005, ETL201]"
    [file_edit] = actions["Ignore ETL201 in this file"].edit.changes[uri(path)]
    assert file_edit.range.start == types.Position(0, 0)
    assert file_edit.new_text == "# etrace-lint: file-ignore[ETL201]\n"
    lines[RNN_BAD_LINE - 1] = edit.new_text + "\n"
    session.save(path, "".join(lines))
    _published(session, path, [(RNN_BAD_LINE, "ETL301")])


def test_cross_file_findings_follow_a_changed_helper(session, workspace):
    train, layers = str(workspace / "train.py"), str(workspace / "layers.py")
    session.open(train)
    # the target lives in train.py, the weight that does not learn in layers.py
    _published(session, layers, [(16, "ETL201")])
    assert session.codes(train) == []
    session.open(layers)
    text = "".join(_lines(layers)).replace("brainstate.ParamState(jnp.full((n,), 0.9))", "jnp.full((n,), 0.9)")
    text = text.replace("self.leak.value * self.h.value", "self.leak * self.h.value")  # a constant leak
    session.save(layers, text)  # no target in layers.py: train.py's target is linted again
    _published(session, layers, [])


def test_a_crashing_a_hanging_and_a_raising_target_are_shown_on_their_factories(session, workspace):
    path = str(workspace / "misbehaving.py")
    session.open(path)
    session.wait_for(lambda s: len(s.codes(path)) == 3, timeout=120, what="three tool errors")
    by_line = {d.range.start.line + 1: d for d in session.diagnostics[uri(path)]}
    assert set(by_line) == {7, 11, 16}  # the three `def` lines
    assert all(d.code == "tool-error" and d.severity == types.DiagnosticSeverity.Error for d in by_line.values())
    assert "exit code 3" in by_line[7].message
    assert "timeout of 6 s" in by_line[11].message
    assert "KeyError" in by_line[16].message
    assert by_line[16].related_information[0].location.range.start.line + 1 == 17  # where it raised
    # the server is still up and lints the next save
    other = _copy(workspace, "after_crash.py")
    session.open(other)
    _published(session, other, [(RNN_BAD_LINE, "ETL201")])


def test_a_syntax_error_is_one_diagnostic_and_loses_nothing_else(session, workspace):
    path = _copy(workspace, "broken.py")
    keep = _copy(workspace, "kept.py")
    session.open(keep)
    _published(session, keep, [(RNN_BAD_LINE, "ETL201")])
    session.open(path)
    _published(session, path, [(RNN_BAD_LINE, "ETL201")])
    good = "".join(_lines(path))
    session.save(path, good.replace("def etrace_target_rnn():", "def etrace_target_rnn(:"))
    session.wait_for(lambda s: s.codes(path) == [(21, "tool-error")], what="the syntax error")
    assert "cannot be parsed" in session.diagnostics[uri(path)][0].message
    assert session.codes(keep) == [(RNN_BAD_LINE, "ETL201")]
    session.save(path, good)
    _published(session, path, [(RNN_BAD_LINE, "ETL201")])


def test_rapid_saves_publish_only_the_last(session, workspace):
    path = _copy(workspace, "rapid.py")
    session.open(path)
    _published(session, path, [(RNN_BAD_LINE, "ETL201")])
    lines = _lines(path)
    lines[-1] += f"# {uuid.uuid4()}\n"  # contents no earlier run has cached: the first save's import runs
    importing, released = workspace / "rapid.importing", workspace / "rapid.released"
    importing.unlink(missing_ok=True)
    released.unlink(missing_ok=True)
    # first save: flags the recurrent weight as well; its import says when it runs, then waits until the
    # later saves are written, so they land while it imports however slow the machine is
    first = list(lines)
    first[4] = ("import jax.numpy as jnp\nimport pathlib\nimport time\n"
                "pathlib.Path(__file__).with_suffix('.importing').write_text('')\n"
                "for _ in range(600):\n"
                "    if pathlib.Path(__file__).with_suffix('.released').exists():\n"
                "        break\n"
                "    time.sleep(0.05)\n")
    first[RNN_BAD_LINE] = first[RNN_BAD_LINE].replace("braintrace.matmul(self.h.value, self.w_rec.value)",
                                                      "self.h.value @ self.w_rec.value")
    middle = list(lines)
    middle[RNN_BAD_LINE - 1] = "        drive = 2.0 * (x @ self.w_in.value)\n"
    last = list(lines)
    last[RNN_BAD_LINE - 1] = ETP_DRIVE
    since = time.monotonic()
    begun = len(session.progress)

    def values():
        return [p.value if isinstance(p.value, dict) else vars(p.value) for p in session.progress[begun:]]

    def titles():
        return [v["title"] for v in values() if v.get("kind") == "begin" and "rapid.py" in v["title"]]

    session.save(path, "".join(first))
    # the first save's lint is importing it: a worker is running that text, not another one
    session.wait_for(lambda s: importing.exists(), what="the first save's import to start")
    for version in (middle, last):  # while the first is importing
        session.save(path, "".join(version))
    released.write_text("")
    _published(session, path, [])
    # the first save's lint stops after its static pass (the saves during it make its probe pass moot); one
    # lint of the last text follows, in two passes: the static verdicts, then the probe's
    session.wait_for(lambda s: len(titles()) >= 3 and [v.get("kind") for v in values()].count("end")
                     >= [v.get("kind") for v in values()].count("begin"), what="the last text's probe pass to end")
    seen = session.published_after(path, since)
    assert all(not diagnostics for diagnostics in seen), [[d.code for d in ds] for ds in seen]
    assert len(titles()) == 3, titles()
    # the progress of the last pass says the probe is running: the editor shows why a second publication follows
    # the last text's static pass is followed by its probe pass, whose progress says the probe is running
    probing, linting = "etrace-lint: probing the learning signal of rapid.py", "etrace-lint: linting rapid.py"
    session.wait_for(lambda s: probing in titles()[len(titles()) - titles()[::-1].index(linting):],
                     what="the probe pass's progress")


def test_verify_command_publishes_gradient_findings(session, second):
    path = str(second / "verified.py")
    session.open(path)
    _published(session, path, [(RNN_BAD_LINE, "ETL201")])
    answer = session.execute("etrace-lint.verify", uri(path))
    assert answer["verified"] is True and answer["targets"] == 1
    # the input weight's online gradient is zero: ETL402 on the line creating it
    session.wait_for(lambda s: (11, "ETL402") in s.codes(path), what="ETL402")


def test_cancel_request_stops_a_verify_and_the_server_goes_on(session, workspace, second):
    import asyncio

    # in the second folder, whose timeout is 300 s: a verify of the hanging target ends only when cancelled
    path = str(second / "cancelled.py")
    text = "".join(_lines(str(workspace / "misbehaving.py"))).replace("def etrace_target_exits", "def exits").replace(
        "def etrace_target_raises", "def raises")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)  # only the target that hangs is left
    begun = len(session.progress)

    def verifying() -> bool:
        values = [p.value if isinstance(p.value, dict) else vars(p.value) for p in session.progress[begun:]]
        return any(v.get("kind") == "begin" and "verifying cancelled.py" in v["title"] for v in values)

    async def verify_then_cancel():
        request = session.client.protocol.send_request_async(
            types.WORKSPACE_EXECUTE_COMMAND,
            types.ExecuteCommandParams(command="etrace-lint.verify", arguments=[uri(path)]), msg_id="verify-1")
        while not verifying():  # cancelled once the server is running it, however long it took to start
            await asyncio.sleep(0.01)
        session.client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id="verify-1"))
        return await asyncio.wait_for(request, 240)

    with pytest.raises(Exception, match="cancel"):  # an answer, not a result: the timeout never ended it
        session._call(verify_then_cancel(), timeout=250)
    other = _copy(workspace, "after_cancel.py")
    session.open(other)
    _published(session, other, [(RNN_BAD_LINE, "ETL201")])
