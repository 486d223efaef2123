import os
import signal
import sys

# tests import their shared helpers as a plain module
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

# every command line a test starts runs directly: only tests/test_daemon.py, which starts and stops its own,
# lets a run go to a daemon
os.environ["ETRACE_LINT_NO_DAEMON"] = "1"

# a suite started in the background of a script (`cmd &`, as CI runners and .ci/run start it) inherits SIGINT
# ignored, and so would every process it starts, which Ctrl-C would then not reach: the tests that press Ctrl-C
# press it as a terminal does, on processes that take it
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# the cache signs its entries with a key kept in the user's state folder: the tests keep theirs apart
if "XDG_STATE_HOME" not in os.environ:
    import tempfile

    os.environ["XDG_STATE_HOME"] = tempfile.mkdtemp(prefix="etrace-lint-test-state-")


# --- fixtures for the whole session -------------------------------------------------------------

import pytest  # noqa: E402

SHARED_PROGRAMS = "JAX_COMPILATION_CACHE_DIR"


@pytest.fixture(scope="session", autouse=True)
def shared_compiled_programs(tmp_path_factory):
    """One folder of compiled XLA programs for every worker the session starts (command-line runs, the
    language server, pools in this process): a model linted again loads its small programs instead of
    compiling them. Workers honour a JAX_COMPILATION_CACHE_DIR they find, as they do a user's."""
    if SHARED_PROGRAMS in os.environ:  # the caller's own folder
        yield os.environ[SHARED_PROGRAMS]
        return
    with pytest.MonkeyPatch.context() as patch:
        folder = str(tmp_path_factory.mktemp("xla-programs"))
        patch.setenv(SHARED_PROGRAMS, folder)
        yield folder


@pytest.fixture(scope="module")
def own_compiled_programs():
    """For a module that checks where the workers keep their compiled programs: without the shared folder."""
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv(SHARED_PROGRAMS, raising=False)
        yield


# --- one small tree of fixture models, linted once for the session ------------------------------

# a model of each kind a run reports: relations, an error, an own rule, a clean model, factories that
# cannot be built, suppressions
SMALL_TREE = (("compiler", "relations.py"), ("compiler", "errors_units.py"), ("own", "plain_op.py"),
              ("clean", "lstm.py"), ("bad", "broken_factories.py"), ("daily", "suppressed.py"))


@pytest.fixture(scope="session")
def small_tree(tmp_path_factory):
    """``SMALL_TREE`` copied into ``models/`` of a folder of its own, and the run that lints it cold with
    two workers and fills its cache, as CI runs it: ``cold.sarif`` and ``cold.json`` beside ``models``.
    The determinism tests compare other runs with it; the shard tests split it and merge the shards."""
    import shutil

    from helpers import FIXTURES, run_cli

    root = tmp_path_factory.mktemp("small-tree")
    (root / "models").mkdir()
    for folder, name in SMALL_TREE:
        shutil.copy(os.path.join(FIXTURES, folder, name), root / "models" / f"{folder}_{name}")
    cold = run_cli("models", "--sarif", "cold.sarif", "-o", "cold.json", "--output-format", "json", "-q", "-j", "2",
                   cwd=str(root))
    assert cold.returncode == 2, cold.stderr  # broken_factories.py holds targets that cannot be linted
    return root


# other projects' programs and tests, carried as upstream has them: run by test_run_upstream.py and
# test_pytest_plugin.py in sessions of their own
collect_ignore = ["upstream"]


# --- where the session's time went, per test file -----------------------------------------------

_SECONDS_PER_FILE: dict[str, float] = {}


def pytest_runtest_logreport(report):
    path = report.nodeid.split("::", 1)[0]
    _SECONDS_PER_FILE[path] = _SECONDS_PER_FILE.get(path, 0.0) + report.duration


def pytest_terminal_summary(terminalreporter):
    """The files that took longest (set-up, test and tear-down; a session fixture counts where it is first
    used), after pytest's slowest tests: what bench/suite_cpu.py measures in CPU, read off every run."""
    if not _SECONDS_PER_FILE:
        return
    total = sum(_SECONDS_PER_FILE.values())
    terminalreporter.write_sep("=", f"seconds per test file ({total:.0f} s in all)")
    for path, seconds in sorted(_SECONDS_PER_FILE.items(), key=lambda item: -item[1])[:30]:
        terminalreporter.write_line(f"{seconds:8.1f} s {100 * seconds / total:5.1f}%  {path}")
