"""``%load_ext etrace_lint``: each compile a later cell makes is linted and its result shown below it.

The result is a :class:`~etrace_lint.api.CheckResult`, as ``etrace_lint.check`` returns: in Jupyter
the HTML report with the model's learning graph, in a terminal its text. ``%etrace_lint off`` stops
linting, ``%etrace_lint on`` starts again; ``%unload_ext etrace_lint`` puts braintrace back as it was.
Places in cells read as IPython's tracebacks name them, ``Cell In[3], line 1``
(:mod:`etrace_lint.core.places`).

IPython runs a file of inputs (``ipython train.ipy``, ``%run train.ipy``) as one cell: there the lines
after ``%load_ext etrace_lint`` are the later inputs, and their compiles are linted.

A model compiled again in the same cell (a loop over epochs) is shown once; run the cell again and
it is linted again, as the class it builds may have changed.
"""

from __future__ import annotations

import os
import sys
from types import FrameType
from typing import TYPE_CHECKING

from ..api import CheckResult
from ..capture import hooks
from ..capture.handover import Capture
from ..config.pyproject import load_settings, search_start
from ..config.settings import Settings
from ..core.learning_graph import graphs_by_target
from ..policy.scope import stage_settings
from .collect import CompileLinter, LintedModel, policy_outcome

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

MAGIC = "etrace_lint"


class NotebookLinter:
    """Lints the compiles of the cells run after it was loaded, and displays each result."""

    def __init__(self, ipython: InteractiveShell):
        self.ipython = ipython
        self.on = True
        self.armed = _running_a_file(ipython)  # a later input has started: a later cell, or a file's later line
        self.settings = _settings()
        self.stages = stage_settings(self.settings, every_note=True)
        self.linter = CompileLinter(self.stages.engine,
                                    lambda: str(self.ipython.execution_count))

    def pre_run_cell(self, *args: object) -> None:
        self.armed = True
        self.linter.models.clear()  # a cell run again lints again: its class may have changed
        self.linter.compiles.clear()

    def __call__(self, capture: Capture) -> None:
        if not (self.on and self.armed):
            return
        seen = len(self.linter.models)
        model = self.linter.lint(capture)
        if len(self.linter.models) > seen:
            # IPython's display machinery: only once a cell compiles a model (the module loads outside IPython too)
            from IPython.display import display

            display(self.result(model))  # type: ignore[no-untyped-call]

    def result(self, model: LintedModel) -> CheckResult:
        outcome = policy_outcome([model], self.stages.policy)
        result = model.result
        return CheckResult(tuple(outcome.findings), tuple(outcome.tool_errors),
                           tuple(graphs_by_target(outcome.findings, [model.site.display_name])),
                           tuple(result.verify_rows), self.settings.root, tuple(result.advice_rows))

    def magic(self, line: str) -> None:
        """``%etrace_lint on`` / ``%etrace_lint off``: lint the compiles of later cells, or not."""
        word = line.strip().lower()
        if word in ("on", "off"):
            self.on = word == "on"
        elif word:
            print(f"%{MAGIC}: say on or off, not {line.strip()!r}")
            return
        print(f"etrace-lint: {'linting' if self.on else 'not linting'} the models later cells compile")


def _settings() -> Settings:
    """``[tool.etrace-lint]`` found from the notebook's folder, every note kept: the graph needs them."""
    settings = load_settings(search_start([os.getcwd()]))
    return settings.with_values({"show_info": True}, "the notebook's view (the graph needs every note)")


def _running_a_file(ipython: InteractiveShell) -> bool:
    """Whether IPython is running a file of inputs (``ipython train.ipy``, ``%run train.ipy``): it runs the
    whole file as one cell, silently, so no later cell starts and ``pre_run_cell`` is never triggered."""
    run_file = getattr(type(ipython).safe_execfile_ipy, "__code__", None)
    frame: FrameType | None = sys._getframe(1)
    while frame is not None and frame.f_code is not run_file:
        frame = frame.f_back
    return frame is not None


_loaded: dict[str, NotebookLinter] = {}


def load(ipython: InteractiveShell) -> None:
    if MAGIC in _loaded:
        return
    session = NotebookLinter(ipython)
    _loaded[MAGIC] = session
    ipython.events.register("pre_run_cell", session.pre_run_cell)
    # what register_magic_function does (whose functools.wraps hides its own signature from a type checker)
    ipython.magics_manager.register_function(session.magic, "line", MAGIC)
    hooks.install(session)


def unload(ipython: InteractiveShell) -> None:
    session = _loaded.pop(MAGIC, None)
    if session is None:
        return
    hooks.uninstall()
    ipython.events.unregister("pre_run_cell", session.pre_run_cell)
    ipython.magics_manager.magics["line"].pop(MAGIC, None)
