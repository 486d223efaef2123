"""The pytest plugin while it is on: every compile of the test session linted, each distinct model once.

The capture hooks are installed when the session is configured, so a compile at import time (while
a test module is collected), in a fixture or in a test is linted in the process that makes it, right
after braintrace compiled it, and the program's state is put back (:mod:`etrace_lint.capture.lint`).
Each compile is kept with the test id (or the collected module) that made it:

- ``--etrace-lint-fail-level``: a test that compiled a model with findings at or above the level fails,
  with those findings in its report (a test that failed anyway gets them as a section of its report).
- At the end, the terminal summary lists the findings per test id, and ``--etrace-lint-sarif`` writes
  them as SARIF with the CLI's writer.
- Under pytest-xdist each worker lints what its tests compile and hands its results to the controller
  in ``workeroutput``; the controller alone prints the summary and writes the SARIF log.
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Generator

import pytest

from ..capture import hooks
from ..config.pyproject import load_settings, search_start
from ..config.settings import Settings
from ..core.findings import Level
from ..policy.decide import Outcome
from ..policy.scope import stage_settings
from ..writers import get_writer
from ..writers.text import summary_line, write_text
from .collect import Compiled, CompileLinter, at_or_above, now, policy_outcome, run_info

WORKER_OUTPUT = "etrace_lint"  # the key of a worker's results in xdist's workeroutput
SECTION = "etrace-lint"


def session_settings(config: pytest.Config) -> Settings:
    """``[tool.etrace-lint]`` of the project under test; paths in the outputs are relative to its rootdir."""
    rootdir = str(config.rootpath)
    settings = load_settings(search_start([rootdir]))
    if "root" not in settings.origins:
        settings = settings.with_values({"root": rootdir}, "pytest's rootdir")
    return settings


class LintSession:
    """Lints what the tests compile and reports it per test id."""

    def __init__(self, config: pytest.Config, fail_level: str | None, sarif: str | None):
        self.config = config
        self.fail_level = Level.parse(fail_level) if fail_level else None
        self.sarif = sarif
        self.settings = session_settings(config)
        self.stages = stage_settings(self.settings)
        self.linter = CompileLinter(self.stages.engine, self._owner)
        self.started = now()
        self.current = ""  # the test, or the collector, running now
        self.checked = 0  # compiles up to here have been held against the fail level
        self.sarif_written = ""
        hooks.install(self.linter)

    @property
    def worker(self) -> bool:
        return hasattr(self.config, "workerinput")  # set by xdist in its workers

    def _owner(self) -> str:
        return self.current or "(outside any test)"

    # -- who compiles ---------------------------------------------------------------------------

    @pytest.hookimpl(wrapper=True)
    def pytest_make_collect_report(self, collector: pytest.Collector
                                   ) -> Generator[None, pytest.CollectReport, pytest.CollectReport]:
        previous, self.current = self.current, collector.nodeid or self.current
        try:
            return (yield)
        finally:
            self.current = previous

    def pytest_runtest_logstart(self, nodeid: str) -> None:
        self.current = nodeid
        self.checked = len(self.linter.compiles)

    def pytest_runtest_logfinish(self) -> None:
        self.current = ""

    # -- failing a test -------------------------------------------------------------------------

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]
                                  ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        report = yield
        if self.fail_level is None or (call.when == "setup" and report.passed):
            return report  # what setup compiled is held against the test with what its call compiles
        compiled = self.linter.compiles[self.checked:]
        self.checked = len(self.linter.compiles)
        if report.skipped:
            return report
        text = self._failing_text(compiled)
        if not text:
            return report
        if report.passed:
            report.outcome = "failed"
            report.longrepr = text
        else:
            report.sections.append((SECTION, text))
        return report

    def _failing_text(self, compiled: list[Compiled]) -> str:
        assert self.fail_level is not None
        models = self.linter.models_of(record for record in compiled if record.owner == self.current)
        if not models:
            return ""
        outcome = policy_outcome(models, self.stages.policy, fixes=False)
        failing = at_or_above(outcome, self.fail_level)
        if not failing and not outcome.tool_errors:
            return ""
        shown = Outcome(failing, outcome.tool_errors)
        stream = io.StringIO()
        write_text(shown, run_info(models, self.stages.output, self.started), stream, summary=False)
        count = len(failing)
        head = (f"etrace-lint: this test compiled {'a model' if len(models) == 1 else 'models'} with "
                f"{count} finding{'s' if count != 1 else ''} at or above {self.fail_level.value} "
                f"(--etrace-lint-fail-level)")
        if outcome.tool_errors:
            head += " or that could not be linted"
        return f"{head}:\n{stream.getvalue()}"

    # -- the end of the session -----------------------------------------------------------------

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: object, error: object) -> None:
        """xdist's controller: a worker finished; its lints join the session's."""
        data = getattr(node, "workeroutput", {}).get(WORKER_OUTPUT)  # xdist's WorkerController, once it ran
        if data:
            self.linter.merge(json.loads(data))

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        hooks.uninstall()
        if self.worker:
            self.config.workeroutput[WORKER_OUTPUT] = json.dumps(self.linter.to_json())  # type: ignore[attr-defined]
            return
        if self.sarif:
            models = list(self.linter.models.values())
            outcome = policy_outcome(models, self.stages.policy)
            folder = os.path.dirname(self.sarif)
            if folder:
                os.makedirs(folder, exist_ok=True)
            with open(self.sarif, "w", encoding="utf-8") as handle:
                get_writer("sarif")(outcome, run_info(models, self.stages.output, self.started), handle)
            self.sarif_written = self.sarif

    def pytest_unconfigure(self) -> None:
        hooks.uninstall()

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if self.worker:
            return
        terminalreporter.section(SECTION)
        models = list(self.linter.models.values())
        if not models:
            terminalreporter.write_line("No model was compiled during the tests: nothing called braintrace.compile "
                                        "or an algorithm's compile_graph.")
        else:
            terminalreporter.write(self.summary(terminalreporter.hasmarkup))
        if self.sarif_written:
            terminalreporter.write_line(f"SARIF log written to {self.sarif_written}")

    def summary(self, color: bool = False) -> str:
        """Per test id (or collected module), each model it compiled and the findings the policy shows;
        test ids sorted, so that a session run by several workers reads as one run by one."""
        models = list(self.linter.models.values())
        info = run_info(models, self.stages.output, self.started, color)
        stream = io.StringIO()
        shown_under: dict[str, str] = {}
        for owner in sorted({record.owner for record in self.linter.compiles}):
            stream.write(f"{owner}\n")
            for model in self.linter.models_of(r for r in self.linter.compiles if r.owner == owner):
                name = f"{info.relpath(model.site.path)}:{model.site.line} ({model.site.algorithm})"
                if model.key in shown_under:
                    stream.write(f"  {name}: the same model as under {shown_under[model.key]}\n")
                    continue
                shown_under[model.key] = owner
                outcome = policy_outcome([model], self.stages.policy)
                if not outcome.findings and not outcome.tool_errors:
                    stream.write(f"  {name}: no findings\n")
                    continue
                stream.write(f"  {name}:\n")
                text = io.StringIO()
                write_text(outcome, info, text, summary=False)
                stream.writelines(f"    {line}\n" for line in text.getvalue().splitlines())
        stream.write(summary_line(policy_outcome(models, self.stages.policy), info) + "\n")
        return stream.getvalue()
