"""One target in, located findings out: load -> compile -> rules.

The engine reports everything it sees; the policy layer decides what is shown.
"""

from __future__ import annotations

import contextlib
import gc
import sys
from typing import Any, Iterator

from .discover import TargetSpec
from .environ import environ_context
from .findings import Finding, Level, Location, TargetResult
from .rule import Hit, Rule
from .isolation import project_files, target_state
from .naming import format_path
from .targets import TargetLoadError, load_target


def lint_target(spec: TargetSpec, root: str, run_options: dict | None = None) -> TargetResult:
    """Lint one target in this process. Never raises for a problem of the target.

    The target starts from the same random seed and this process's own global
    settings, and whatever it changes in them is undone (:mod:`.isolation`).
    """
    with target_state():
        return _lint_target(spec, root, dict(run_options or {}))


def _lint_target(spec: TargetSpec, root: str, run_options: dict) -> TargetResult:
    before = set(sys.modules)
    result = TargetResult(target=spec.key)
    try:
        loaded = load_target(spec, root, environ=run_options.get("environ"))
    except TargetLoadError as exc:
        result.tool_errors.append(exc.tool_error)
        result.dependencies = _dependencies(spec, before, root)
        return result
    compile_options = {**run_options.get("compile_options", {}), **loaded.compile_options}
    with environ_context(loaded.environ):  # the step reads dt as it did when the factory built the model
        result.findings = findings_for_model(loaded.model, loaded.inputs, compile_options,
                                             loaded.name, loaded.factory_location, run_options,
                                             batch_size=loaded.batch_size, loaded=loaded,
                                             verify_rows=result.verify_rows, notes_left_out=result.notes_left_out)
    result.hidden_note_levels = _hidden_note_levels(run_options)
    result.dependencies = _dependencies(spec, before, root)
    return result


def _dependencies(spec: TargetSpec, before: set[str], root: str) -> list[str]:
    files = set(project_files(root, since=before))
    files.add(spec.path)
    return sorted(files)


def _hidden_note_levels(run_options: dict) -> dict | None:
    """How the run hides notes (``policy.hidden_note_levels``); None when every note is
    built: notes are shown, or ``--verify`` may point at one to say why a weight does not learn."""
    if run_options.get("verify"):
        return None
    return run_options.get("hidden_note_levels")


def findings_for_model(model: Any, inputs: tuple, compile_options: dict, name: str,
                       factory_location: Location, run_options: dict | None = None,
                       batch_size: int | None = None, loaded: Any = None,
                       verify_rows: list | None = None, notes_left_out: dict | None = None) -> list[Finding]:
    """Compile one model and turn records, errors and our own checks into findings.

    Notes the run hides are not built, only counted per rule in ``notes_left_out``.
    """
    from . import braintrace_adapter as bt
    from .analysis import AnalysisContext
    from .locate import Locator
    from .rules_compiler import findings_from_error, findings_from_records, is_hidden_note

    run_options = dict(run_options or {})
    hidden_levels = _hidden_note_levels(run_options)
    try:
        bt.ensure_states(model, batch_size)
    except Exception as exc:
        compilation = bt.Compilation(error=exc)
    else:
        compilation = bt.compile_model(model, inputs, compile_options,
                                       needs_subject=lambda record: not is_hidden_note(record, hidden_levels))
    with collector_paused():
        locator = Locator(model, compilation.module_info, factory_location, compilation.traced_jaxpr)
        findings = findings_from_records(compilation, locator, name, hidden_levels,
                                         notes_left_out if notes_left_out is not None else {})
        if compilation.error is not None:
            findings = findings_from_error(compilation, locator, name, findings)
        if compilation.graph is not None:
            context = AnalysisContext(model, inputs, compile_options, compilation, locator, run_options)
            findings.extend(findings_from_checks(context, name))
        verifying = compilation.graph is not None and run_options.get("verify") and loaded is not None
        if not verifying:
            return sorted(set_unique(findings), key=Finding.sort_key)
    # --verify runs jitted code for a while: the collector stays on
    from .verify import verify_model
    verify_findings, rows = verify_model(loaded, context, run_options, findings=findings)
    findings.extend(verify_findings)
    if verify_rows is not None:
        verify_rows.extend(rows)
    return sorted(set_unique(findings), key=Finding.sort_key)


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cycle collector off while our passes run.

    They allocate many small acyclic objects right after the compiler built
    a large jaxpr; the collector would choose that moment for a full
    collection that walks the whole heap for nothing (a third of a second
    and more on a 10,000-equation step, more than all of our passes).
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def set_unique(findings: list[Finding]) -> list[Finding]:
    seen = set()
    unique = []
    for finding in findings:
        key = (finding.rule_id, finding.location, finding.message)
        if key not in seen:
            seen.add(key)
            unique.append(finding)
    return unique


def rule_enabled_for_run(rule: Rule, run_options: dict) -> bool:
    if rule.opt_in_flag:
        return bool(run_options.get(rule.opt_in_flag.lstrip("-").replace("-", "_")))
    return True


def findings_from_checks(context: Any, name: str) -> list[Finding]:
    from .registry import analysis_rules

    findings = []
    for rule in analysis_rules():
        if not rule_enabled_for_run(rule, context.options):
            continue
        for hit in rule.check(context):
            findings.append(finding_from_hit(rule, hit, context.locator, name))
    return findings


def _locate_thing(locator: Any, thing: Any, label: str = "") -> Location | None:
    from . import jaxpr_view as jv

    if isinstance(thing, jv.EqnSite):
        return locator.of_site(thing, label)
    if isinstance(thing, tuple):
        return locator.of_state(thing, label)
    if isinstance(thing, Location):
        return thing
    return None


def finding_from_hit(rule: Rule, hit: Hit, locator: Any, name: str) -> Finding:
    primary = locator.first(
        _locate_thing(locator, hit.eqn),
        locator.of_weight(hit.weight_path) if hit.weight_path else None,
        locator.of_state(hit.state_path) if hit.state_path else None,
    )
    related = [loc for label, thing in hit.related
               if (loc := _locate_thing(locator, thing, label)) is not None and loc != primary]
    properties = dict(hit.properties)
    if hit.weight_path:
        properties.setdefault("weight", format_path(hit.weight_path))
    return Finding(rule.id, rule.level, hit.message, name, primary,
                   tuple(related) + (locator.factory_related,), properties)


__all__ = ["lint_target", "findings_for_model", "Level"]
