"""The Python API, for notebooks and tests: ``check(model, *inputs)`` and ``check_target("net.py::factory")``.

Both run the same stages as the command line (engine -> policy) in this
process, without cache or workers, and return a frozen :class:`CheckResult`:
its findings, tool errors, each model's learning graph and, with
``verify=True``, the ``--verify`` rows. ``assert not result.errors`` in a
test prints the errors as text; in Jupyter the result shows the HTML report.
"""

from __future__ import annotations

import dataclasses
import inspect
import os
from dataclasses import dataclass
from typing import Mapping

from .analysis.loaded_target import LoadedTarget
from .config.pyproject import load_settings, search_start
from .config.settings import PolicySettings, Settings
from .core.findings import Finding, Level, Location, ToolError
from .core.json_types import JsonObject
from .core.learning_graph import LearningGraph, graphs_by_target
from .core.places import place, source_path
from .discovery.discover import TargetSpec, discover
from .policy.decide import apply_policy
from .policy.scope import stage_settings
from .writers.html import render_report


def finding_line(finding: Finding, root: str = "") -> str:
    """``path:line:col: ETL201 message [model]``, as the text output prints it (an IPython cell's place
    as IPython names it: ``Cell In[3], line 1: ETL201 ...``)."""
    def shown(path: str) -> str:
        return os.path.relpath(path, root) if root and path.startswith(root) else path

    where = place(finding.path, finding.line, finding.location.column, shown)
    return f"{where}: {finding.rule_id} {finding.message} [{finding.target}]"


class FindingList(list[Finding]):
    """A plain list of findings whose repr is their text lines, so a failing assert reads like the linter.

    One line (pytest shows a repr's newlines as ``\\n``), paths relative to the current folder.
    """

    def __repr__(self) -> str:
        if not self:
            return "[]"
        count = len(self)
        lines = " | ".join(finding_line(f, os.getcwd() + os.sep) for f in self)
        return f"<{count} finding{'s' if count != 1 else ''}: {lines}>"

    __str__ = __repr__


@dataclass(frozen=True)
class CheckResult:
    """What ``check``/``check_target`` found: everything the policy shows, with each model's graph."""

    findings: tuple[Finding, ...]
    tool_errors: tuple[ToolError, ...]
    graphs: tuple[LearningGraph, ...]
    verify_rows: tuple[JsonObject, ...] = ()
    root: str = ""
    advice: tuple[JsonObject, ...] = ()  # the learning-rule advisor's rows, when it ran

    @property
    def errors(self) -> FindingList:
        """Error-level findings not suppressed (``assert not result.errors``)."""
        return self._at(Level.ERROR)

    @property
    def warnings(self) -> FindingList:
        return self._at(Level.WARNING)

    @property
    def notes(self) -> FindingList:
        return self._at(Level.NOTE)

    def _at(self, level: Level) -> FindingList:
        return FindingList(f for f in self.findings if f.level is level and not f.suppressed)

    def about(self, name: str) -> FindingList:
        """The findings about a weight or a hidden state, by the name the findings give it (``cell.Wr.weight``,
        ``h``): read from each finding's subject, as SARIF and JSON list it in ``weight``, ``weights`` and
        ``hiddenStates``, never from its message."""
        return FindingList(f for f in self.findings
                           if any(weight == name for weight, _ in f.subject.named_weights)
                           or name in f.subject.hidden_states)

    def weights(self) -> dict[str, dict[str, str]]:
        """Per model, each weight's state: ``{"net": {"w_rec": "does not learn", "w": "learns partly"}}``, the
        value of a ``etrace_lint.core.weight_verdict.WeightVerdict`` (learns, learns within each window, learns
        approximately, learns a whole multiple, learns partly, learns against BPTT, does not learn, not finite,
        refused, step raises, not measured): the strongest claim of the weight's findings."""
        return {graph.target: {weight: verdict.value for weight, verdict in graph.weights().items()}
                for graph in self.graphs}

    def __repr__(self) -> str:
        lines = [finding_line(f, self.root) for f in self.findings]
        lines += [f"tool error: {e.target}: {e.message}" for e in self.tool_errors]
        head = (f"CheckResult({len(self.graphs)} model{'s' if len(self.graphs) != 1 else ''}, "
                f"{len(self.errors)} errors, {len(self.warnings)} warnings, {len(self.notes)} notes, "
                f"{len(self.tool_errors)} tool errors")
        return head + (":\n  " + "\n  ".join(lines) + "\n)" if lines else ")")

    def _repr_html_(self) -> str:
        return render_report(self.findings, self.tool_errors, list(self.graphs), list(self.verify_rows), self.root,
                             fragment=True, advice=self.advice)


def _settings(start: str, options: Mapping[str, object]) -> Settings:
    """Defaults, then ``[tool.etrace-lint]`` found from ``start``, then the keyword options (as the CLI layers them)."""
    names = {f.name for f in dataclasses.fields(Settings)}
    for key in options:
        if key not in names:
            raise TypeError(f"unknown option {key!r}; options are those of [tool.etrace-lint], e.g. select, verify")
    values = {key: os.path.abspath(value) if key == "root" and isinstance(value, (str, os.PathLike)) else value
              for key, value in options.items()}
    settings = load_settings(start).with_values({"show_info": True}, "check() (the graph needs every note)")
    return settings.with_values(values, "keyword argument")


def _outcome(findings: list[Finding], tool_errors: list[ToolError], settings: PolicySettings, linted: list[str],
             targets: list[str], verify_rows: list[JsonObject], advice_rows: list[JsonObject]) -> CheckResult:
    outcome = apply_policy(findings, tool_errors, settings, linted)
    return CheckResult(tuple(outcome.findings), tuple(outcome.tool_errors),
                       tuple(graphs_by_target(outcome.findings, targets)), tuple(verify_rows), settings.root,
                       tuple(advice_rows))


def check_target(target: str, **options: object) -> CheckResult:
    """Lint the targets of a file, folder or ``file.py::factory`` in this process.

    ``etrace_lint.check_target("models/net.py::etrace_target_lif", verify=True)``
    lints as ``etrace-lint models/net.py::etrace_target_lif --verify --show-info``
    would, without the cache or worker processes.

    Args:
        target: a file, a folder (searched for targets as the command line does) or one factory,
            ``"file.py::factory"``.
        **options: the options of ``[tool.etrace-lint]`` by their field name (``select``, ``ignore``,
            ``verify``, ``environ``, ...), over the settings of the nearest ``pyproject.toml``.

    Returns:
        What the policy shows of every target found, each model's learning graph and, with
            ``verify=True``, the ``--verify`` rows.

    Raises:
        TypeError: an option that is not a field of ``[tool.etrace-lint]``'s settings.
    """
    # the engine imports JAX: only once a target is linted, not when %load_ext etrace_lint imports this module
    from .engine.lint import lint_target

    settings = _settings(search_start([target]), options)
    stages = stage_settings(settings, every_note=True)
    discovery = discover([target], settings.root, settings.excludes)
    findings, tool_errors, rows, advice, names = [], list(discovery.tool_errors), [], [], []
    for spec in discovery.targets:
        result = lint_target(spec, settings.root, stages.engine)
        findings += result.findings
        tool_errors += result.tool_errors
        rows += result.verify_rows
        advice += result.advice_rows
        names.append(next((f.target for f in result.findings), spec.display_name))
    linted = sorted({spec.path for spec in discovery.targets})
    return _outcome(findings, tool_errors, stages.policy, linted, names, rows, advice)


def _caller() -> tuple[str, int]:
    """The user's line that called ``check`` (past ``etrace_lint.check``'s own frame)."""
    package = os.path.dirname(os.path.abspath(__file__)) + os.sep
    frame = inspect.currentframe()
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(package):
        frame = frame.f_back
    if frame is None:
        return os.getcwd(), 1
    return source_path(frame.f_code.co_filename), frame.f_lineno


def check(model: object, *inputs: object, name: str | None = None, batch_size: int | None = None,
          compile_options: Mapping[str, object] | None = None, **options: object) -> CheckResult:
    """Lint a model built in this process, with the example inputs of one step.

    ``etrace_lint.check(braintrace.nn.GRUCell(16, 32), jnp.ones((16,)))`` lints the model as a
    target returning ``(model, (inputs,))`` would be linted; findings with no line of their own
    sit on the line that called ``check``.

    Args:
        model: a ``brainstate.nn.Module`` whose ``update(*inputs)`` runs one step.
        *inputs: the example inputs of one step.
        name: the model's name in the findings (default: its class name).
        batch_size: the batch the model's states are initialised with, as
            ``@etrace_lint.target(batch_size=...)``.
        compile_options: keywords of ``braintrace.compile_etrace_graph``.
        **options: the options of ``[tool.etrace-lint]`` by their field name (``select``, ``ignore``,
            ``verify``, ...), over the settings of the current folder's ``pyproject.toml``.

    Returns:
        The findings (notes included), tool errors, the model's learning graph and, with
            ``verify=True``, the ``--verify`` rows. ``assert not result.errors`` fails with the
            findings as text; in Jupyter the result shows the HTML report.
    """
    from .engine.lint import lint_model, target_state  # imports JAX, as the model handed in already has

    path, line = _caller()
    settings = _settings(os.getcwd(), options)
    stages = stage_settings(settings, every_note=True)
    name = name or type(model).__name__
    where = Location(path, line)
    spec = TargetSpec(path, name, line, name)
    loaded = LoadedTarget(spec, name, model, tuple(inputs), dict(compile_options or {}), batch_size,
                          {}, dict(settings.environ or {}), factory_location=where)
    with target_state():
        report = lint_model(loaded, stages.engine)
    linted = [path] if os.path.isfile(path) else []
    return _outcome(report.findings, [], stages.policy, linted, [name], report.verify_rows, report.advice_rows)


__all__ = ["CheckResult", "FindingList", "check", "check_target", "finding_line"]
