"""The background process that serves ``etrace-lint PATHS`` with warm workers, run as a user runs it.

Every other test runs the command line directly (``ETRACE_LINT_NO_DAEMON=1`` for the session, set in
``conftest.py``); these take it away for their own runs, give each test a folder of sockets of its
own (``ETRACE_LINT_DAEMON_DIR``) and stop whatever daemon a test started, so none outlives it.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

import pytest
from helpers import REPO, descendants, ended, fixture, running

from etrace_lint.cli.daemon import place, quick
from etrace_lint.cli.daemon.client import _remove_if_stale, request_status, request_stop
from etrace_lint.cli.daemon.key import digest
from etrace_lint.config.options import OPTIONS

MODELS = os.path.join(REPO, "examples", "models")
pytestmark = pytest.mark.skipif(not place.supported(), reason="needs Unix sockets with peer credentials (Linux)")


PROJECT_CONFIG = "[tool.etrace-lint]\njobs = 1\n"


class Project:
    """A project with a configuration and two models, and the environment its runs go to a daemon under."""

    def __init__(self, root: str, sockets: str) -> None:
        self.root, self.sockets = root, sockets
        self.env = {name: value for name, value in os.environ.items()
                    if name not in ("ETRACE_LINT_NO_DAEMON", "CI")}
        self.env["ETRACE_LINT_DAEMON_DIR"] = sockets

    def run(self, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "etrace_lint", *args], cwd=self.root,
                              env={**self.env, **(env or {})}, capture_output=True, text=True, timeout=600)

    def edit(self, name: str = "models/gru.py") -> None:
        """A change that makes the model's file be linted again (its bytes are part of the cache key)."""
        with open(os.path.join(self.root, name), "a", encoding="utf-8") as handle:
            handle.write(f"# edited {time.time_ns()}\n")

    def socket_files(self) -> list[str]:
        return sorted(name for name in os.listdir(self.sockets) if name.endswith(".sock"))

    def status(self) -> subprocess.CompletedProcess[str]:
        return self.run("daemon", "status")

    def daemon_pid(self) -> int:
        status = self.status()
        assert status.returncode == 0, status.stdout + status.stderr
        return int(status.stdout.split(" pid ", 1)[1].split(",", 1)[0])


def _started_here(sockets: str) -> list[int]:
    """The processes whose command line names this test's folder of sockets: the daemons it started."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as handle:
                    if sockets.encode() in handle.read():
                        found.append(int(entry))
            except OSError:
                continue
    return found


def _gone(pid: int, within: float = 60.0) -> bool:  # returns once it is gone: a bound only for a loaded machine
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat", encoding="utf-8") as handle:
                if handle.read().split(") ", 1)[1].startswith("Z"):
                    return True  # ended, not yet reaped by its parent
        except OSError:
            return True
        time.sleep(0.1)
    return False


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "project"
    (root / "models").mkdir(parents=True)
    for name in ("gru.py", "static_readout.py"):
        shutil.copy(os.path.join(MODELS, name), root / "models" / name)
    # without the learning-signal probe, which the daemon's life and stops do not depend on (9 of the file's 76
    # CPU-s on 3.11); the first test turns it on, to compare a served run's measurements with a direct one's
    (root / "pyproject.toml").write_text(PROJECT_CONFIG + "probe = false\n", encoding="utf-8")
    # short: a socket's path has at most 107 bytes
    sockets = tempfile.mkdtemp(prefix="etl-daemon-")
    yield Project(str(root), sockets)
    for name in os.listdir(sockets):
        if name.endswith(".sock"):
            request_stop(os.path.join(sockets, name), cancel=True)
    for pid in _started_here(sockets):
        if not _gone(pid, within=10.0):
            os.kill(pid, signal.SIGKILL)
            _gone(pid)
    shutil.rmtree(sockets, ignore_errors=True)


TALKS = '''import sys

import braintrace
import jax.numpy as jnp

print("importing the model", file=sys.stderr)


def etrace_target_talks():
    print("building the model", file=sys.stderr)
    return braintrace.nn.GRUCell(4, 8), (jnp.ones((4,)),)
'''


def test_the_second_run_is_served_by_the_daemon_and_answers_as_a_direct_run(project):
    with open(os.path.join(project.root, "pyproject.toml"), "w", encoding="utf-8") as handle:
        handle.write(PROJECT_CONFIG)  # the probe on, as a user runs
    project.run("models")
    pid = project.daemon_pid()
    project.edit()
    with open(os.path.join(project.root, "models", "talks.py"), "w", encoding="utf-8") as handle:
        handle.write(TALKS)  # what a model prints in its worker reaches the caller's stderr, as in a direct run
    served = project.run("models", "-o", "report.txt", "--sarif", "log.sarif", "--show-info")
    served_report = open(os.path.join(project.root, "report.txt"), encoding="utf-8").read()
    direct = project.run("models", "-o", "report.txt", "--sarif", "log.sarif", "--show-info", "--no-daemon",
                         "--no-cache")
    direct_report = open(os.path.join(project.root, "report.txt"), encoding="utf-8").read()
    status = project.status()
    assert project.daemon_pid() == pid and "2 runs served" in status.stdout, status.stdout
    assert (served.returncode, served.stdout, served.stderr) == (direct.returncode, direct.stdout, direct.stderr)
    assert served.returncode == 1 and served_report == direct_report and "ETL" in served_report
    assert "importing the model\nbuilding the model\n" in served.stderr
    assert os.path.join(project.root, "log.sarif") in served.stderr  # written in the caller's folder
    assert project.run("models", "--statistics").stdout == project.run("models", "--statistics",
                                                                       "--no-daemon").stdout


def test_an_edited_configuration_or_environment_gets_a_fresh_daemon(project):
    project.run("models")
    first = project.daemon_pid()
    with open(os.path.join(project.root, "pyproject.toml"), "a", encoding="utf-8") as handle:
        handle.write("# a comment is an edit too\n")
    project.run("models")
    second = project.daemon_pid()
    assert second != first and _gone(first)
    project.run("models", env={"SOME_SETTING": "1"})
    third = int(project.run("daemon", "status", env={"SOME_SETTING": "1"}).stdout.split(" pid ")[1].split(",")[0])
    assert third not in (first, second) and _gone(second)
    assert len(project.socket_files()) == 1


def test_daemon_status_and_stop(project):
    none = project.status()
    assert none.returncode == 1 and "no daemon runs" in none.stdout
    project.run("models")
    status = project.status()
    assert status.returncode == 0 and " pid " in status.stdout and "idle" in status.stdout, status.stdout
    pid = project.daemon_pid()
    stop = project.run("daemon", "stop")
    assert stop.returncode == 0 and f"pid {pid}" in stop.stdout
    assert _gone(pid) and project.socket_files() == []
    assert project.status().returncode == 1


def test_no_daemon_by_flag_by_variable_or_in_ci(project):
    direct = project.run("models", "--no-daemon")
    assert project.run("models", env={"ETRACE_LINT_NO_DAEMON": "1"}).stdout == direct.stdout
    ci = project.run("models", env={"CI": "true"})
    assert (ci.returncode, ci.stdout, ci.stderr) == (direct.returncode, direct.stdout, direct.stderr)
    assert project.socket_files() == [] and _started_here(project.sockets) == []


def test_a_killed_daemon_is_run_around_with_one_line_and_its_socket_removed(project):
    project.run("models")
    pid = project.daemon_pid()
    os.kill(pid, signal.SIGKILL)
    assert _gone(pid)
    after = project.run("models")
    direct = project.run("models", "--no-daemon")
    lines = after.stderr.splitlines()
    assert [line for line in lines if "daemon" in line] == [lines[0]] and "running without the daemon" in lines[0]
    assert after.stdout == direct.stdout and after.returncode == direct.returncode
    assert after.stderr.split("\n", 1)[1] == direct.stderr
    assert project.socket_files() == []  # removed: the next run starts a fresh daemon
    project.run("models")
    assert project.daemon_pid() != pid


def test_a_daemon_that_does_not_answer_is_run_around_with_one_line(project):
    project.run("models")
    pid = project.daemon_pid()
    os.kill(pid, signal.SIGSTOP)
    try:
        started = time.monotonic()
        hung = project.run("models", env={"ETRACE_LINT_DAEMON_TIMEOUT": "2"})
        assert time.monotonic() - started < 120
    finally:
        os.kill(pid, signal.SIGCONT)
    direct = project.run("models", "--no-daemon")
    assert "did not answer within 2 s; running without the daemon" in hung.stderr.splitlines()[0]
    assert hung.stdout == direct.stdout and hung.returncode == direct.returncode
    assert _gone(pid)  # its socket was taken away: it ends by itself


def test_a_folder_open_to_others_is_not_used(project):
    os.chmod(project.sockets, 0o755)
    run = project.run("models")
    assert "running without the daemon" in run.stderr and "mode 755" in run.stderr
    assert project.socket_files() == [] and _started_here(project.sockets) == []


def test_another_users_folder_socket_or_process_is_refused():
    """Unit checks: the tests run as root, where another user's files cannot be made without tricks."""
    me, other = os.getuid(), os.getuid() + 1

    def stat_of(mode: int, uid: int) -> os.stat_result:
        return os.stat_result((mode, 0, 0, 1, uid, 0, 0, 0, 0, 0))

    assert place.folder_refusal(stat_of(0o040700, me), me) is None
    assert "belongs to user" in place.folder_refusal(stat_of(0o040700, other), me)
    assert "mode 750" in place.folder_refusal(stat_of(0o040750, me), me)
    assert "not a folder" in place.folder_refusal(stat_of(0o120777, me), me)  # a symbolic link
    assert place.socket_refusal(stat_of(0o140600, me), me) is None
    assert "belongs to user" in place.socket_refusal(stat_of(0o140600, other), me)
    assert "not a socket" in place.socket_refusal(stat_of(0o100600, me), me)
    assert place.peer_refusal(me, me) is None and "runs as user" in place.peer_refusal(other, me)


def test_a_stale_socket_file_is_removed(project):
    path = os.path.join(project.sockets, "stale.sock")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.close()  # the file stays, no process behind it
    _remove_if_stale(path)
    assert not os.path.exists(path)


def test_the_quick_reading_knows_every_flag_of_the_options_table():
    values, switches = set(), {"-h", "--help", "--version"}
    for option in OPTIONS:
        if option.positional or not option.flags:
            continue
        (switches if option.kind == "flag" else values).update(option.flags)
        if option.negation:
            switches.add(option.negation)
    assert quick.VALUE_FLAGS | (quick.READ_IN_FULL & values) == values
    assert quick.SWITCHES | (quick.READ_IN_FULL & switches) == switches
    assert not quick.VALUE_FLAGS & quick.SWITCHES and not (quick.VALUE_FLAGS | quick.SWITCHES) & quick.READ_IN_FULL
    assert quick.DEFAULT_IDLE_TIMEOUT == next(o.default for o in OPTIONS if o.name == "daemon_idle_timeout")
    assert quick.paths_of(["models", "-o", "x.txt", "--select=ETL2", "-q"]) == ["models"]
    assert quick.paths_of(["--watch", "models"]) is None and quick.paths_of(["--verb"]) is None


def test_help_names_the_daemon():
    proc = subprocess.run([sys.executable, "-m", "etrace_lint", "--help"], capture_output=True, text=True)
    assert "etrace-lint daemon status|stop" in proc.stdout and "--no-daemon" in proc.stdout


def test_what_git_and_the_shell_change_for_each_commit_keeps_the_daemon():
    base = {"HOME": "/home/someone", "PATH": "/usr/bin"}
    each_commit = {**base, "GIT_AUTHOR_DATE": "@1795804289 +0000", "GIT_INDEX_FILE": ".git/next-index-1.lock",
                   "PWD": "/a", "SHLVL": "2"}
    next_commit = {**base, "GIT_AUTHOR_DATE": "@1795804290 +0000", "GIT_INDEX_FILE": ".git/next-index-2.lock",
                   "PWD": "/b", "SHLVL": "3"}
    assert digest(None, each_commit) == digest(None, next_commit) == digest(None, base)
    assert digest(None, {**base, "JAX_ENABLE_X64": "1"}) != digest(None, base)


PRE_COMMIT = os.path.join(os.path.dirname(sys.executable), "pre-commit")
HOOK = """\
repos:
  - repo: local
    hooks:
      - id: etrace-lint
        name: etrace-lint
        entry: etrace-lint --exit-zero
        language: system
        types: [python]
        require_serial: true
"""


@pytest.mark.skipif(not os.path.exists(PRE_COMMIT), reason="pre-commit is not installed")
def test_commits_through_the_pre_commit_hook_share_one_daemon(project):
    env = {"PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""),
           "PRE_COMMIT_HOME": os.path.join(project.sockets, "pre-commit-home"), "GIT_AUTHOR_NAME": "t",
           "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t", "NO_COLOR": "1"}
    with open(os.path.join(project.root, ".pre-commit-config.yaml"), "w", encoding="utf-8") as handle:
        handle.write(HOOK)

    def git(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["git", *args], cwd=project.root, env={**project.env, **env}, capture_output=True,
                              text=True, timeout=600)

    git("init", "-q")
    git("add", ".")
    assert git("commit", "-qm", "models", "--no-verify").returncode == 0
    assert subprocess.run([PRE_COMMIT, "install"], cwd=project.root, env={**project.env, **env},
                          capture_output=True).returncode == 0
    pids = []
    for count in range(2):
        project.edit()
        git("add", ".")
        commit = git("commit", "-qm", f"edit {count}")
        assert commit.returncode == 0 and "Passed" in commit.stdout + commit.stderr, commit.stdout + commit.stderr
        sockets = project.socket_files()
        assert len(sockets) == 1
        pids.append(request_status(os.path.join(project.sockets, sockets[0])))
    assert pids[0]["pid"] == pids[1]["pid"] and pids[1]["runs"] == 2


# --- a run the user stops is stopped in the daemon too ------------------------------------------------

class Hanging:
    """A run of ``stuck/hangs_marked.py`` (a target that starts a process, then hangs) through the
    daemon, under way: its client, and the processes running the target once it has started."""

    def __init__(self, project: Project, timeout: int = 600) -> None:
        folder = os.path.join(project.root, "stuck")
        os.makedirs(folder, exist_ok=True)
        shutil.copy(fixture("hermetic", "stopped", "hangs_marked.py"), folder)
        self.marker = os.path.join(folder, "hangs_marked.pids")
        # by default a --timeout far beyond the test: only stopping the run can end the target
        self.client = subprocess.Popen([sys.executable, "-m", "etrace_lint", "stuck", "--timeout", str(timeout),
                                        "--no-cache"], cwd=project.root, env=project.env,
                                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 300
        while not os.path.exists(self.marker):
            assert self.client.poll() is None, self.client.communicate()
            assert time.monotonic() < deadline, "the target did not start"
            time.sleep(0.05)
        with open(self.marker, encoding="utf-8") as handle:
            self.worker, self.child = (int(pid) for pid in handle.read().split())

    def end(self) -> tuple[int, str]:
        """The client's exit code and what it printed on stderr."""
        return self.output()[::2]

    def output(self) -> tuple[int, str, str]:
        try:
            stdout, stderr = self.client.communicate(timeout=60)
        finally:
            if self.client.poll() is None:
                self.client.kill()
        return self.client.returncode, stdout, stderr


@pytest.mark.parametrize("signal_number", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL],
                         ids=["ctrl-c", "sigterm", "client-killed"])
def test_a_run_whose_client_is_stopped_is_stopped_in_the_daemon_which_serves_the_next(project, signal_number):
    hanging = Hanging(project)
    daemon = project.daemon_pid()
    assert {hanging.worker, hanging.child} <= descendants(daemon), "the target runs in the daemon's worker"
    signalled = time.monotonic()
    hanging.client.send_signal(signal_number)
    code, stderr = hanging.end()
    seconds = ended([hanging.worker, hanging.child], signalled)
    assert seconds is not None, "the target kept running after its client was stopped"
    print(f"{signal.Signals(signal_number).name}: the target's processes ended {seconds:.2f} s after the signal")
    if signal_number == signal.SIGINT:
        assert code == 130 and stderr.endswith("etrace-lint: interrupted\n"), stderr
    else:
        assert code == -signal_number
    served = project.run("models")  # the same daemon, warm, serves the next run in full
    assert served.returncode == 1 and "models/gru.py" in served.stdout, served.stdout + served.stderr
    assert "daemon" not in served.stderr, served.stderr
    assert project.daemon_pid() == daemon and "2 runs served" in project.status().stdout


# a library the fork server preloads that holds it in its start until the test has seen it there: the first
# import writes the fork server's pid beside this file, then waits; later imports (the next run's) do not
SLOW_PRELOAD = '''import os
import time

marker = os.path.join(os.path.dirname(os.path.abspath(__file__)), "importing.pid")
if not os.path.exists(marker):
    with open(marker + ".part", "w", encoding="utf-8") as handle:
        handle.write(str(os.getpid()))
    os.replace(marker + ".part", marker)
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        time.sleep(0.05)
'''


def test_ctrl_c_while_the_daemon_starts_its_workers_stops_them_and_the_next_run_starts_afresh(project):
    """Before the pool's loop runs there is no progress to stop at: the run is interrupted as Ctrl-C
    interrupts a direct run, and the half-started workers are stopped. The fork server is held in its
    start by a preloaded library until the signal is sent, so the run is stopped there on every machine."""
    library = os.path.join(project.root, "lib")
    os.makedirs(library)
    with open(os.path.join(library, "slow_preload.py"), "w", encoding="utf-8") as handle:
        handle.write(SLOW_PRELOAD)
    with open(os.path.join(project.root, "pyproject.toml"), "a", encoding="utf-8") as handle:
        handle.write('preload = ["slow_preload"]\n')
    project.env["PYTHONPATH"] = library  # the library's, as a user's installed one would be on the path
    marker = os.path.join(library, "importing.pid")
    folder = os.path.join(project.root, "stuck")
    os.makedirs(folder)
    shutil.copy(fixture("hermetic", "stopped", "hangs_marked.py"), folder)
    client = subprocess.Popen([sys.executable, "-m", "etrace_lint", "stuck", "--timeout", "600", "--no-cache"],
                              cwd=project.root, env=project.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True)
    try:
        deadline = time.monotonic() + 300
        while not os.path.exists(marker):  # the fork server imports JAX first, which takes seconds
            assert client.poll() is None, client.communicate()
            assert time.monotonic() < deadline, "the fork server did not start"
            time.sleep(0.05)
        with open(marker, encoding="utf-8") as handle:
            starting = int(handle.read())
        daemon = project.daemon_pid()
        assert starting in descendants(daemon), "the fork server starts below the daemon"
        signalled = time.monotonic()
        client.send_signal(signal.SIGINT)
        _, stderr = client.communicate(timeout=60)
    finally:
        if client.poll() is None:
            client.kill()
    assert client.returncode == 130 and stderr.endswith("etrace-lint: interrupted\n"), stderr
    seconds = ended([starting], signalled)
    assert seconds is not None, "the fork server that was starting kept running"
    print(f"the starting fork server ended {seconds:.2f} s after the signal")
    served = project.run("models")
    assert served.returncode == 1 and "models/gru.py" in served.stdout, served.stdout + served.stderr
    assert project.daemon_pid() == daemon and "2 runs served" in project.status().stdout


def test_daemon_stop_during_a_run_leaves_no_process_behind(project):
    hanging = Hanging(project)
    daemon = project.daemon_pid()
    processes = descendants(daemon) | {daemon}
    assert {hanging.worker, hanging.child} <= processes and len(processes) >= 4  # with the fork server
    stop = project.run("daemon", "stop")
    assert stop.returncode == 0 and f"stopped the daemon of {project.root} (pid {daemon})" in stop.stdout
    assert [pid for pid in processes if running(pid)] == [], "processes outlived daemon stop"
    code, stderr = hanging.end()  # its run was cancelled
    assert code == 130 and "etrace-lint: interrupted" in stderr
    assert project.socket_files() == []


def test_a_daemon_replaced_by_a_newer_one_finishes_the_run_it_serves(project):
    """A changed configuration starts a fresh daemon, which asks the old one to end: the old one's run
    is not cancelled (its caller did not stop it), it ends as it would have (here at its --timeout)."""
    hanging = Hanging(project, timeout=5)
    old = project.daemon_pid()
    with open(os.path.join(project.root, "pyproject.toml"), "a", encoding="utf-8") as handle:
        handle.write("# a comment is an edit too\n")
    newer = project.run("models")
    assert newer.returncode == 1 and project.daemon_pid() != old
    code, stdout, stderr = hanging.output()
    assert code == 2 and "took longer than the timeout of 5 s" in stdout, stdout + stderr
    assert _gone(old)
