"""One target in, located findings out: load -> compile -> rules.

The engine reports everything it sees; the policy layer decides what is shown.

It imports JAX, brainstate and braintrace (the analysis, the probe, ``--verify`` and the advisor):
it runs in a worker, and the fork server imports it once for all of them; a run's own process, the
API and the language server import it only once they lint a model, so a cached run never loads JAX.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Iterator, TypeVar

from ..analysis import braintrace_adapter as bt
from ..analysis import jaxpr_view as jv
from ..analysis.context import AnalysisContext
from ..analysis.flows import flow_for
from ..analysis.loaded_target import LoadedTarget
from ..analysis.locate import Locator
from ..config.environ import environ_context
from ..config.settings import EngineSettings
from ..core.details import Violation
from ..core.findings import Finding, Location, Subject, TargetResult
from ..core.naming import StatePath, display_name, path_key, preferred_paths
from ..core.registry import analysis_rules
from ..core.rule import AnalysisRule, Hit, Rule
from ..discovery.discover import TargetSpec
from ..verify import verify_model
from ..verify.advise.engine import advise_target
from ..verify.probe import probe_model
from ..verify.settings import declared_algorithms
from .evidence import (
    beside_verify,
    compared_nothing,
    denied_weights,
    learner_failed,
    one_verdict_per_weight,
    refuses_the_model,
)
from .fresh_state import target_state
from .model_paths import shorter_paths
from .rules_compiler import (
    drop_contradicted_records,
    findings_from_error,
    findings_from_records,
    is_hidden_note,
    keep_hidden_records,
    mark_connected_weights,
    notes_left_out,
)
from .targets import TargetLoadError, load_target

if TYPE_CHECKING:
    import brainstate

V = TypeVar("V", bound=Violation)


@dataclass(frozen=True)
class ModelReport:
    """What the engine found in one model."""

    findings: list[Finding] = field(default_factory=list)  # sorted, each once
    notes_left_out: dict[str, int] = field(default_factory=dict)  # notes the run hides: counted per rule, not built
    verify_rows: list[dict[str, Any]] = field(default_factory=list)  # per-weight --verify results, JSON-able
    advice_rows: list[dict[str, Any]] = field(default_factory=list)  # per-algorithm --advise rows, JSON-able


def lint_target(spec: TargetSpec, root: str, settings: EngineSettings | None = None) -> TargetResult:
    """Load one target and lint it in this process. Never raises for a problem of the target.

    The target starts from the same random seed and this process's own global
    settings, and whatever it changes in them is undone (:mod:`.isolation`).
    The files it read are the worker's to record (:mod:`etrace_lint.running.reads`), not the engine's.
    """
    settings = settings or EngineSettings()
    with target_state():
        try:
            loaded = load_target(spec, root, environ=settings.environ)
        except TargetLoadError as exc:
            return TargetResult(target=spec.key, tool_errors=[exc.tool_error])
        report = lint_model(loaded, settings)
        return TargetResult(target=spec.key, findings=report.findings, notes_left_out=report.notes_left_out,
                            verify_rows=report.verify_rows, advice_rows=report.advice_rows,
                            counted_only=settings.scope.count_only)


def _compiled(loaded: LoadedTarget, compile_options: Mapping[str, object],
              count_only: frozenset[str]) -> bt.Compilation:
    """braintrace's compile of the loaded model, its states laid out first; an error is kept, never raised."""
    try:
        bt.ensure_states(loaded.model, loaded.batch_size)
    except Exception as exc:
        return bt.Compilation(error=exc)
    return bt.compile_model(loaded.model, loaded.inputs, compile_options,
                            needs_subject=lambda record: not is_hidden_note(record, count_only))


def _locator(loaded: LoadedTarget, compilation: bt.Compilation) -> Locator:
    return Locator(loaded.model, compilation.module_info, loaded.factory_location, compilation.traced_jaxpr,
                   compilation.raw_jaxpr)


def _context(loaded: LoadedTarget, compilation: bt.Compilation, locator: Locator,
             settings: EngineSettings) -> AnalysisContext:
    return AnalysisContext(loaded.model, loaded.inputs, compilation, locator, settings, loaded.single_step_vjp,
                           declared_algorithms(loaded.verify_options))


def analysis_context(loaded: LoadedTarget, settings: EngineSettings | None = None) -> AnalysisContext | None:
    """The context the checks read of the loaded model, built as a lint builds it; None where braintrace's compile
    gives no graph. For a tool that shows a model's facts (``python -m tests.facts``); call it inside
    ``environ_context(loaded.environ)``, as the model's step reads those keys."""
    settings = settings or EngineSettings()
    compilation = _compiled(loaded, {**settings.compile_options, **loaded.compile_options}, settings.scope.count_only)
    if compilation.graph is None:
        return None
    return _context(loaded, compilation, _locator(loaded, compilation), settings)


def lint_model(loaded: LoadedTarget, settings: EngineSettings) -> ModelReport:
    """Compile one loaded model and turn records, errors and our own checks into its report.

    ``settings``: what the engine reads of the run's settings (compile options, verify
    settings, and the scope the policy gave it: the findings of ``scope.count_only`` rules
    are not built, only counted per rule, and only the opt-in rules it names run).
    """
    verify_rows: list[dict[str, Any]] = []
    advice_rows: list[dict[str, Any]] = []
    count_only = settings.scope.count_only
    compile_options = {**settings.compile_options, **loaded.compile_options}
    with environ_context(loaded.environ):  # the step reads dt as it did when the factory built the model
        compilation = _compiled(loaded, compile_options, count_only)
        names = _shorter_paths(loaded.model, compilation)  # messages name states as the model's code does
        with collector_paused(), preferred_paths(names):
            locator = _locator(loaded, compilation)
            context = _context(loaded, compilation, locator, settings) if compilation.graph is not None else None
            findings, counted = findings_from_records(compilation, locator, loaded.name, count_only, context)
            contradicted: frozenset[tuple[str, tuple[str, ...]]] = frozenset()
            if compilation.error is not None:
                findings = findings_from_error(compilation, locator, loaded.name, findings)
            if context is not None:
                findings.extend(findings_from_checks(context, loaded.name))
                findings, contradicted = drop_contradicted_records(findings, context.fully_connected_weights)
        verify_findings: list[Finding] = []
        denied = denied_weights(findings)
        if context is not None and settings.verify:
            # --verify runs jitted code for a while: the collector stays on
            with preferred_paths(names):
                verify_findings, measured = verify_model(loaded, context, settings, findings=findings, denied=denied)
            verify_rows = [row.to_json() for row in measured]
        failed = learner_failed(verify_findings)
        # --verify measures all the probe does and more, save what it folds into the graph's finding that a use of a
        # weight gets nothing, and what a learner that fails means for the weights (beside_verify); where it
        # compared nothing, the probe's measurements stand in its place
        instead = settings.verify and compared_nothing(verify_findings, len(verify_rows))
        if context is not None and settings.probe and (not settings.verify or denied or failed or instead):
            # the probe runs jitted code: collector on
            with preferred_paths(names):
                probe_findings, _ = probe_model(loaded, context, compile_options, denied, refuses_the_model(findings))
            kept = beside_verify(probe_findings, denied, failed) if settings.verify and not instead else probe_findings
            findings.extend(kept)
        findings.extend(verify_findings)
        if context is not None and settings.advise:
            with preferred_paths(names):
                advice_findings, advice_rows = advise_target(loaded, context, settings)
            findings.extend(advice_findings)
    findings = mark_connected_weights(keep_hidden_records(one_verdict_per_weight(findings), compilation, count_only),
                                      compilation)
    return ModelReport(sorted(set_unique(findings), key=Finding.sort_key),
                       notes_left_out(compilation, counted, contradicted, findings), verify_rows, advice_rows)


def _shorter_paths(model: brainstate.nn.Module, compilation: bt.Compilation) -> dict[StatePath, StatePath]:
    if compilation.module_info is None:
        return {}
    try:
        return shorter_paths(model, bt.compiled_states(compilation.module_info))
    except Exception:  # noqa: BLE001 - a name is a courtesy: an odd model keeps the compiler's names
        return {}


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


def rule_enabled_for_run(rule: Rule, settings: EngineSettings) -> bool:
    return not rule.opt_in_flag or rule.id in settings.scope.opt_in_rules


def findings_from_checks(context: AnalysisContext, name: str) -> list[Finding]:
    findings = []
    for rule in analysis_rules():
        if not rule_enabled_for_run(rule, context.settings):
            continue
        for hit in rule.check(context):
            findings.append(finding_from_hit(rule, hit, context.locator, name))
    return findings


def _locate_thing(locator: Locator, thing: object, label: str = "") -> Location | None:
    if isinstance(thing, jv.EqnSite):
        return locator.of_site(thing, label)
    if isinstance(thing, tuple):
        return locator.of_state(thing, label)
    if isinstance(thing, Location):
        return thing
    return None


def _named_states(subject: Subject, weights: tuple[str, ...], hidden: tuple[str, ...], locator: Locator) -> Subject:
    """The subject with the other weights and the hidden states a violation names, each with its path."""
    others = tuple(name for name in dict.fromkeys(weights) if name != subject.weight)
    return replace(subject, weights=others, weight_paths=tuple(map(path_key, locator.paths_named(others))),
                   hidden_states=hidden, hidden_state_paths=tuple(map(path_key, locator.paths_named(hidden))))


def finding_from_hit(rule: AnalysisRule[V], hit: Hit[V], locator: Locator, name: str) -> Finding:
    primary = locator.first(
        _locate_thing(locator, hit.eqn),
        locator.of_state(hit.weight_path) if hit.weight_path and hit.at_creation else None,
        locator.of_weight(hit.weight_path) if hit.weight_path else None,
        locator.of_state(hit.state_path) if hit.state_path else None,
    )
    related = [loc for label, thing in hit.related
               if (loc := _locate_thing(locator, thing, label)) is not None and loc != primary]
    violation = hit.violation
    subject = replace(hit.subject, primitive=violation.about_primitive or hit.subject.primitive)
    if hit.weight_path:
        subject = replace(subject, weight=display_name(hit.weight_path), weight_path=path_key(hit.weight_path))
    subject = _named_states(subject, violation.about_weights or hit.subject.weights,
                            violation.about_hidden_states or hit.subject.hidden_states, locator)

    finding = Finding(rule.id, rule.level, hit.message, name, primary,
                      tuple(related) + (locator.factory_related,), subject=subject, details=violation)
    return flow_for(rule, finding, locator, hit)


__all__ = ["ModelReport", "lint_model", "lint_target", "target_state"]  # the API lints a model in target_state
