"""The pytest plugin: ``pytest --etrace-lint`` lints every model the tests compile.

Registered through the ``pytest11`` entry point and off until asked: ``--etrace-lint`` on the command
line, or ``etrace_lint = true`` in the ini file (``[tool.pytest.ini_options]``). Off, it only declares
its options: it imports nothing else and patches nothing. On, :mod:`etrace_lint.integrations.pytest_session`
does the work.
"""

from __future__ import annotations

import pytest

FAIL_LEVELS = ("error", "warning", "never")
PLUGIN_NAME = "etrace_lint_session"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("etrace-lint", "lint the braintrace models the tests compile")
    group.addoption("--etrace-lint", action="store_true", default=None, dest="etrace_lint",
                    help="lint every model compiled with braintrace.compile or an algorithm's compile_graph "
                         "during the tests, each distinct model once, and list the findings per test")
    group.addoption("--etrace-lint-sarif", metavar="PATH", default=None, dest="etrace_lint_sarif",
                    help="write the findings as a SARIF 2.1.0 log to PATH")
    group.addoption("--etrace-lint-fail-level", choices=FAIL_LEVELS, default=None, dest="etrace_lint_fail_level",
                    help="fail each test that compiled a model with findings at or above this level "
                         "(default: never)")
    parser.addini("etrace_lint", "lint the models the tests compile, as --etrace-lint does", type="bool",
                  default=False)
    parser.addini("etrace_lint_sarif", "write the findings as a SARIF log to this path (--etrace-lint-sarif)",
                  default="")
    parser.addini("etrace_lint_fail_level", "fail each test that compiled a model with findings at or above "
                  "this level: error, warning or never (--etrace-lint-fail-level)", default="never")


def _active(config: pytest.Config) -> bool:
    flag = config.getoption("etrace_lint")
    return bool(flag) if flag is not None else bool(config.getini("etrace_lint"))


def pytest_configure(config: pytest.Config) -> None:
    if not _active(config):
        return
    fail_level = config.getoption("etrace_lint_fail_level") or str(config.getini("etrace_lint_fail_level")).strip()
    if fail_level not in FAIL_LEVELS:
        raise pytest.UsageError(f"etrace_lint_fail_level: {fail_level!r} is not one of {', '.join(FAIL_LEVELS)}")
    sarif = config.getoption("etrace_lint_sarif")
    if sarif:
        sarif = str(config.invocation_params.dir / sarif)
    elif str(config.getini("etrace_lint_sarif")).strip():  # a path in the ini file is the ini file's folder's
        sarif = str(config.rootpath / str(config.getini("etrace_lint_sarif")).strip())
    from .integrations.pytest_session import LintSession  # the capture hooks, the policy and the writers

    config.pluginmanager.register(LintSession(config, None if fail_level == "never" else fail_level, sarif),
                                  PLUGIN_NAME)
