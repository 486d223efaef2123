"""Compiler records and compiler exceptions -> findings, through the rule registry.

A record maps to its rule by ``DiagnosticKind`` value (an unknown value gets
the generic rule, so a newer braintrace still shows everything). An exception
maps to the first rule whose :class:`ErrorMatch` recognises it. When the
compiler emitted an ERROR record to explain the exception it then raised, the
two are one problem and are reported once.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, TypeAlias

from ..analysis import braintrace_adapter as bt
from ..analysis import jaxpr_view as jv
from ..analysis.flows import flow_for
from ..analysis.record_kinds import (
    NON_TEMPORAL,
    OUTPUT_BYPASS,
    WEIGHT_TO_WEIGHT,
    kind_in_context,
    narrowed_output_bypass,
    weights_reaching_no_state,
)
from ..core.details import CompilerError, CompilerRecord, StaticEvidence
from ..core.findings import Finding, Level, Location
from ..core.naming import StatePath, display_name, path_key
from ..core.registry import all_rules, error_rules, rule_for_record_kind
from ..core.rule import ErrorFacts, ErrorRule, Place, RecordFacts, RecordRule, Rule
from ..core.wording import error_sentence, one_line, op_phrase, plain_text
from .evidence import is_whole_weight
from .subjects import NO_PARAMSTATE_KINDS, error_subject, misplaced_weights, paths_in, record_paths, record_subject

if TYPE_CHECKING:  # the engine's Locator imports braintrace; annotations only
    from ..analysis.context import AnalysisContext
    from ..analysis.locate import Locator


def _class_names(exc: BaseException) -> list[str]:
    return [cls.__name__ for cls in type(exc).__mro__]


def locate_record(record: bt.RecordView, locator: Locator, ordinal: int = 0, subject: jv.JaxprEqn | None = None,
                  rule: RecordRule | None = None) -> tuple[Location, list[Location]]:
    """Primary location of a record, and related ones (blocking weights, the factory).

    ``subject`` is the equation the compiler was working on when it emitted
    the record; it is the most precise answer when there is one. Else the
    record's rule may say which control-flow equation its records are about
    (``Rule.control_flow``); ``ordinal`` counts its records so far.
    """
    context = record.context
    weight_path = record.weight_path
    # most records are placed by their subject equation: the other candidates are not even listed
    primary = locator.of_eqn(subject) if subject is not None else None
    if primary is None:
        rule = rule_for_record_kind(record.kind, record.level) if rule is None else rule
        found = _candidate_locations(record, rule.control_flow, locator, ordinal)
        primary = next((loc for loc in found if loc is not None), locator.factory)

    related = []
    for blocking in context.get("blocking_weight_paths", ()) or ():
        if blocking:
            loc = locator.of_weight(tuple(blocking), label=f"blocking weight {display_name(blocking)}")
            if loc is not None:
                related.append(loc)
    if weight_path:
        created = locator.of_state(tuple(weight_path), f"{display_name(weight_path)} is created here")
        if created is not None and created != primary:
            related.append(created)
    related.append(locator.factory_related)
    return primary, related


# "equation 'slice' on the hidden path ...", "the mixing equation 'conv' registered no ...":
# the primitive a record is about when its fields only name hidden states
_NAMED_PRIMITIVE = re.compile(r"equation '(\w+)'|rule of '(\w+)'")


def _candidate_locations(record: bt.RecordView, family: str, locator: Locator, ordinal: int
                         ) -> Iterator[Location | None]:
    """Where a record without a subject equation may be placed, most precise first; each
    is only worked out when the ones before found nothing. ``family``: the control-flow
    primitive the record's rule says it is about."""
    context, weight_path = record.context, record.weight_path
    op_name = str(context.get("op_name", ""))
    if family:
        yield locator.of_nth_control_flow(op_name or family, ordinal)
    if op_name:
        yield locator.of_primitive(op_name)
    primitive = record.primitive
    for key in ("invar", "weight_var"):
        if context.get(key) is not None:
            yield locator.of_var(context[key], op_name)
    if weight_path:
        yield locator.of_weight(weight_path, primitive)
    if context.get("state") is not None:
        if bt.is_global_random_state(context["state"]):  # created by no model: where the step draws from it
            yield locator.of_state_use(context["state"])
        else:
            yield locator.of_state_object(context["state"])
    hidden_paths = [tuple(p) for p in (*record.hidden_paths, context.get("hidden_path"))
                    if isinstance(p, (tuple, list))]
    named = _NAMED_PRIMITIVE.search(record.message)
    if named and hidden_paths:
        # the compiler names the op it could not analyse and gives only the states: the op is
        # on the way from those states to their new values
        yield locator.of_primitive_on_hidden_path(named.group(1) or named.group(2), hidden_paths)
    for path in (context.get("state_path"), *hidden_paths):
        if isinstance(path, (tuple, list)):
            yield locator.of_state(tuple(path))
    for key in ("params", "weight_paths"):
        for path in context.get(key, ()) or ():
            if isinstance(path, tuple):
                yield locator.of_weight(path)
    if primitive:
        yield locator.of_primitive(primitive)


def record_details(record: bt.RecordView, record_level: str, iterations: tuple[int, ...] = ()) -> CompilerRecord:
    """What braintrace said in the record, in its own words (its kind and level as it named them); the states
    it names are the finding's subject (:func:`record_subject`)."""
    return CompilerRecord(record.kind, record_level, one_line(record.message), iterations)


def _line_of(location: Location | None, primary: Location) -> str:
    if location is None:
        return ""
    if location.path == primary.path:
        return f"line {location.line}"
    return f"{location.path}:{location.line}"


def record_facts(record: bt.RecordView, kind: str, locator: Locator, primary: Location,
                 iterations: tuple[int, ...] = (), iteration_count: int = 0,
                 subject: jv.JaxprEqn | None = None) -> RecordFacts:
    """What a rule words its message from: the record's paths by name, lines of the ops it names."""
    context = record.context
    weight_path: StatePath | None = record.weight_path
    if not weight_path and context.get("invar") is not None:
        weight_path = locator.weight_path_of_var(context["invar"])
    blocking = []
    for path in context.get("blocking_weight_paths", ()) or ():
        if path:
            line = _line_of(locator.of_weight(tuple(path)), primary)
            blocking.append(f"{display_name(path)}'s op ({line})" if line else f"{display_name(path)}'s op")
    weights = []
    for key in ("weight_paths", "params", "sources"):
        weights.extend(paths_in(context.get(key)))
    paths = record_paths(record)
    primitive = record.primitive
    return RecordFacts(
        kind=kind, level=record.level,
        text=plain_text(record.message, paths, locator.states if _has_tuple(record) else ()),
        weight=display_name(weight_path) if weight_path else "",
        hidden=tuple(display_name(h) for h in record.hidden_paths),
        weights=tuple(dict.fromkeys(display_name(w) for w in weights)),
        blocking=tuple(blocking), primitive=primitive, op=op_phrase(primitive),
        context=context, iterations=iterations, iteration_count=iteration_count,
        misplaced=tuple(display_name(path) for path in misplaced_weights(subject, locator))
        if kind in NO_PARAMSTATE_KINDS else (),
        braintrace_version=bt.braintrace_version(), same_step_gradients=bt.adds_same_step_gradients(),
        global_random_state=bt.is_global_random_state(context.get("state")))


def _has_tuple(record: bt.RecordView) -> bool:
    message = record.message
    return "('" in message or '("' in message


def record_message(rule: RecordRule, facts: RecordFacts) -> str:
    """The rule words the record; without an ``explain`` the compiler's text is shown, paths by name."""
    if rule.explain is not None:
        return rule.explain(facts)
    return facts.text


def _finding(record: bt.RecordView, kind: str, rule: RecordRule, level: Level, locator: Locator, target: str,
             ordinal: int, subject: jv.JaxprEqn | None, record_level: str, unrolled: bool = False) -> Finding:
    primary, related = locate_record(record, locator, ordinal, subject, rule)
    iterations: tuple[int, ...] = ()
    count = 0
    if unrolled and subject is not None and bt.is_etp_primitive(subject):
        index, count = locator.unrolled_iteration(subject)
        iterations = (index,) if count > 1 else ()
    facts = record_facts(record, kind, locator, primary, iterations, count, subject)
    about = subject
    if about is None and rule.control_flow:  # the loop or branch the finding is placed on
        placed = locator.nth_control_flow(str(record.context.get("op_name", "")) or rule.control_flow, ordinal)
        about = placed.eqn if placed is not None else None
    finding = Finding(rule.id, level, record_message(rule, facts), target, primary, tuple(related),
                      subject=record_subject(record, kind, locator, about),
                      details=record_details(record, record_level, iterations))
    return flow_for(rule, finding, locator, record)


def _grade(kind: str, record_level: str, count_only: frozenset[str]) -> tuple[RecordRule, Level, bool]:
    """A record's rule, its level, and whether the run only counts its finding (its rule is in
    ``count_only``, ``EngineSettings.scope``); the same for every record of one kind and level.

    The level is the rule's: it says what happens to learning, on every braintrace line.
    Where the compiler grades one kind two ways that mean different things (an ETP op in
    a loop excluded, or refused by the policy), each way has its rule.
    """
    rule = rule_for_record_kind(kind, record_level)
    level = rule.level
    return rule, level, rule.id in count_only


def is_hidden_note(record: bt.RecordView, count_only: frozenset[str]) -> bool:
    """Whether the run only counts this record's finding (see :func:`_grade`)."""
    if not count_only:
        return False
    return _grade(record.kind, record.level, count_only)[2]


# what a finding of one scan iteration was built from: (record, kind, rule, locator, iteration count)
_MergeInput = tuple[bt.RecordView, str, RecordRule, "Locator", int]


def _merge_iterations(findings: list[Finding], records: dict[int, _MergeInput]) -> list[Finding]:
    """One finding per weight, rule and line across the iterations of an unrolled scan."""
    groups: dict[tuple[str, Location, Any], list[int]] = {}
    for index, finding in enumerate(findings):
        if _iterations(finding):
            key = (finding.rule_id, finding.location, finding.subject.weight or None)
            groups.setdefault(key, []).append(index)
    drop = set()
    for indices in groups.values():
        if len(indices) < 2:
            continue
        first = findings[indices[0]]
        iterations = tuple(sorted({i for n in indices for i in _iterations(findings[n])}))
        record, kind, rule, locator, count = records[indices[0]]
        facts = record_facts(record, kind, locator, first.location, iterations, count)
        # the first iteration's finding keeps its path and fix; only its wording and iterations change
        assert isinstance(first.details, CompilerRecord)  # _iterations: only a record's finding has them
        findings[indices[0]] = dataclasses.replace(first, message=record_message(rule, facts),
                                                   details=dataclasses.replace(first.details, iterations=iterations))
        drop.update(indices[1:])
    return [f for i, f in enumerate(findings) if i not in drop]


def _iterations(finding: Finding) -> tuple[int, ...]:
    """The iterations of an unrolled scan a record's finding is about (none: not one of an unrolled scan)."""
    return finding.details.iterations if isinstance(finding.details, CompilerRecord) else ()


def findings_from_records(compilation: bt.Compilation, locator: Locator, target: str,
                          count_only: frozenset[str] = frozenset(),
                          context: AnalysisContext | None = None) -> tuple[list[Finding], dict[str, int]]:
    """A finding per record, and per rule the number of findings of ``count_only`` rules, counted
    instead of built (see :func:`_grade`). With the model's ``context``, a record of the weights whose
    same-step gradient the compiler adds is about those of them whose gradient reaches the loss
    (:func:`~etrace_lint.analysis.record_kinds.narrowed_output_bypass`); one about none of them is no finding."""
    subjects = list(compilation.record_subjects)
    subjects += [None] * (len(compilation.records) - len(subjects))
    left_out: dict[str, int] = {}
    unrolled = any(r.kind == "scan_unrolled" for r in compilation.records)
    findings: list[Finding] = []
    seen: dict[str, int] = {}
    merge_inputs: dict[int, _MergeInput] = {}
    graded: dict[tuple[str, str], tuple[RecordRule, Level, bool]] = {}  # a model's records share a few kinds
    readouts = weights_reaching_no_state(compilation)
    for record, subject in zip(compilation.records, subjects):
        if record.kind == OUTPUT_BYPASS and context is not None:
            narrowed = narrowed_output_bypass(record, context.reaching_the_output_around_hidden)
            if narrowed is None:
                continue
            record = narrowed
        kind = kind_in_context(record, readouts)
        record_level = record.level
        grade = graded.get((kind, record_level))
        if grade is None:
            grade = graded[(kind, record_level)] = _grade(kind, record_level, count_only)
        rule, level, hidden = grade
        key = rule.ordinal_group or kind
        ordinal = seen.get(key, 0)
        seen[key] = ordinal + 1
        if hidden:
            left_out[rule.id] = left_out.get(rule.id, 0) + 1
            continue
        finding = _finding(record, kind, rule, level, locator, target, ordinal, subject, record_level, unrolled)
        if _iterations(finding):
            merge_inputs[len(findings)] = (record, kind, rule, locator, locator.unrolled_iteration(subject)[1])
        findings.append(finding)
    return (_merge_iterations(findings, merge_inputs) if merge_inputs else findings), left_out


def classify_error(exc: BaseException, tracing: bool | None = None) -> ErrorRule:
    """The rule of a compiler or tracing exception; ``tracing``: raised before the step's jaxpr
    existed (None: unknown, an exception through the user's code counts as raised while tracing)."""
    names = _class_names(exc)
    message = str(exc)
    modules = jv.exception_modules(exc)
    raised_in = modules[0] if modules else ""
    through_user_code = jv.user_frame_of_exception(exc) is not None
    for rule in error_rules():
        if rule.error.matches(names, message, raised_in, through_user_code, tracing):
            return rule
    raise LookupError("no generic error rule is registered")


def findings_from_error(compilation: bt.Compilation, locator: Locator, target: str,
                        record_findings: list[Finding]) -> list[Finding]:
    """Add the compiler/tracing exception to the record findings, merged when explained."""
    exc = compilation.error
    if exc is None:  # nothing raised: the records say it all
        return record_findings
    rule = classify_error(exc, tracing=not compilation.step_traced)
    error_name = type(exc).__name__
    explained = [i for i, f in enumerate(record_findings)
                 if isinstance(f.details, CompilerRecord) and f.details.level == "error"
                 and f.details.kind in rule.error.kinds]
    if explained:
        index = explained[-1]
        merged = record_findings[index]
        assert isinstance(merged.details, CompilerRecord)
        record_findings = list(record_findings)
        record_findings[index] = Finding(merged.rule_id, merged.level, merged.message, target,
                                         merged.location, merged.related, subject=merged.subject,
                                         details=dataclasses.replace(merged.details, error=error_name),
                                         control_flow=merged.control_flow)
        return record_findings
    frame: Place | None = jv.user_frame_of_exception(exc)
    message = plain_text(error_sentence(exc), (), locator.states)
    if rule.describe is not None:
        message, described_at = rule.describe(exc, compilation)
        message = plain_text(message, (), locator.states)
        frame = described_at or frame
    write = None
    if rule.error.at_write == "param" and compilation.param_writes:
        write = compilation.param_writes[0]
    elif rule.error.at_write == "last":
        write = compilation.last_write
    subject = bt.exception_subject(exc)
    # "... computed within a while function": the loop is the place to show
    named_op = re.search(r"within a (\w+) (?:function|region)", str(exc))
    primary = locator.first(
        Location(write.path, write.line, write.column) if write else None,
        Location(frame.path, frame.line, frame.column) if frame else None,
        *(locator.of_eqn(eqn) for eqn in subject.eqns),
        *(locator.of_producer(var) for var in subject.vars),
        *(locator.of_state_object(state) for state in subject.states),
        locator.of_primitive(named_op.group(1)) if named_op else None,
    )
    details = CompilerError(error_name, "compile" if compilation.step_traced else "trace", one_line(exc, 2000))
    handled = ""
    if rule.explain_error is not None and subject.eqns:
        handled = jv.primitive_name(subject.eqns[0])
        message = rule.explain_error(ErrorFacts(exc, message, handled, primary != locator.factory))
    # a canonicalisation that did not settle names every equation it was still rewriting
    others = [loc for eqn in subject.eqns[1:] if (loc := locator.of_eqn(eqn, "also involved")) is not None]
    related = tuple(loc for loc in others if (loc.path, loc.line) != (primary.path, primary.line))
    related += (locator.factory_related,)
    finding = Finding(rule.id, rule.level, message, target, primary, related,
                      subject=error_subject(compilation, rule, subject, handled, locator), details=details)
    return list(record_findings) + [finding]


# the compiler's record that it connected a weight's op to a hidden state (ETL001)
_CONNECTS = "relation_included"
# records about a weight that a relation of the final graph contradicts
_CONTRADICTED_BY_A_RELATION = (NON_TEMPORAL, WEIGHT_TO_WEIGHT)


# (rule id, weight) of the records a relation of the final graph contradicts
Contradicted: TypeAlias = frozenset[tuple[str, tuple[str, ...]]]


def drop_contradicted_records(findings: list[Finding],
                              fully_connected: frozenset[StatePath]) -> tuple[list[Finding], Contradicted]:
    """Drop the records about a weight every op of which the final graph connects
    (``fully_connected``) that say otherwise; and the (rule, weight) of what it dropped, so that
    :func:`notes_left_out` does not count the hidden notes among them either.

    braintrace's final graph connects these weights: a record of an earlier pass over the same step
    (brainstate.nn.Map traces it once per probe) that calls one excluded, or not reaching a hidden
    state, is contradicted by the compiler's own report."""
    contradicted = {rule_for_record_kind(kind).id for kind in _CONTRADICTED_BY_A_RELATION}
    replaced = frozenset((rule_id, _weight_key(path_key(w))) for w in fully_connected for rule_id in contradicted)
    if not replaced:
        return findings, replaced
    return [f for f in findings if (f.rule_id, _weight_key(f.subject.weight_path)) not in replaced], replaced


def notes_left_out(compilation: bt.Compilation, counted: Mapping[str, int], contradicted: Contradicted,
                   findings: list[Finding]) -> dict[str, int]:
    """Per rule, the hidden notes the model has and the engine did not build: those
    :func:`findings_from_records` ``counted``, less the ones a relation of the final graph
    ``contradicted``, less the ones a finding about the same weight supersedes (``Rule.supersedes``,
    static or measured): neither shown nor counted."""
    left_out = dict(counted)
    if contradicted:
        left_out = _uncounted(compilation, set(contradicted), left_out)
    superseded = _superseded(findings)
    return _uncounted(compilation, superseded, left_out) if superseded else left_out


def _superseded(findings: list[Finding]) -> set[tuple[str, tuple[str, ...]]]:
    """(rule id, weight) of each compiler note a finding about that whole weight supersedes."""
    rules = all_rules()
    return {(old, _weight_key(f.subject.weight_path))
            for f in findings if f.subject.weight_path and is_whole_weight(f)
            for old in _supersedes(rules.get(f.rule_id))}


def _supersedes(rule: Rule | None) -> tuple[str, ...]:
    return rule.supersedes if rule is not None else ()


def keep_hidden_records(findings: list[Finding], compilation: bt.Compilation,
                        count_only: frozenset[str]) -> list[Finding]:
    """Each finding that supersedes a compiler note the run only counts, with that record in its static
    evidence: its rule, braintrace's own message and the kind braintrace gave it. The note is not built
    (the policy hides it), but what the compiler called the weight is not lost with it."""
    if not count_only:
        return findings
    rules = all_rules()
    readouts = weights_reaching_no_state(compilation)
    hidden: dict[tuple[str, tuple[str, ...]], list[tuple[str, str]]] = {}  # (rule, weight) -> (kind, message)
    for record in compilation.records:
        path = record.weight_path
        if not path:
            continue
        kind = kind_in_context(record, readouts)  # graded as findings_from_records grades it
        rule, _, counted_only = _grade(kind, record.level, count_only)
        if counted_only:
            hidden.setdefault((rule.id, _weight_key(path_key(path))), []).append((kind, one_line(record.message)))
    if not hidden:
        return findings
    kept = []
    for finding in findings:
        superseding = rules.get(finding.rule_id)
        weight = _weight_key(finding.subject.weight_path)
        if superseding is None or not superseding.supersedes or not weight or not is_whole_weight(finding):
            kept.append(finding)
            continue
        have = {evidence.rule for evidence in finding.static_evidence}
        extra = tuple(StaticEvidence(old, message, None, kind) for old in superseding.supersedes if old not in have
                      for kind, message in hidden.get((old, weight), ()))
        kept.append(dataclasses.replace(finding, static_evidence=finding.static_evidence + extra) if extra
                    else finding)
    return kept


def mark_connected_weights(findings: list[Finding], compilation: bt.Compilation) -> list[Finding]:
    """Each finding about a weight the compiler connects to a hidden state through one of its ops (its
    ETL001 relation) marked ``weight_connected``, unless a finding about the weight supersedes that relation
    (a measured zero, a while loop that cuts its learning signal). Set whether the run builds that note, only
    counts it, or builds it for the cache and a later run hides it: a finding that denies another use of
    the weight then says, to the learning graph, a weight that learns partly."""
    connected = {_weight_key(path_key(record.weight_path)) for record in compilation.records
                 if record.kind == _CONNECTS and record.weight_path}
    if not connected:
        return findings
    connects = rule_for_record_kind(_CONNECTS).id
    connected -= {weight for old, weight in _superseded(findings) if old == connects}
    return [dataclasses.replace(f, weight_connected=True)
            if f.rule_id != connects and _weight_key(f.subject.weight_path) in connected else f for f in findings]


def _weight_key(path: Iterable[object]) -> tuple[str, ...]:
    return tuple(map(str, path))


def _uncounted(compilation: bt.Compilation, replaced: set[tuple[str, tuple[str, ...]]],
               left_out: dict[str, int]) -> dict[str, int]:
    """``left_out`` less one for each hidden record whose (rule, weight) is in ``replaced``."""
    if not left_out:
        return left_out
    left_out = dict(left_out)
    for record in compilation.records:
        path = record.weight_path
        if not path:
            continue
        rule = rule_for_record_kind(record.kind, record.level)
        if (rule.id, _weight_key(path_key(path))) in replaced and left_out.get(rule.id):
            left_out[rule.id] -= 1
    return {rule_id: n for rule_id, n in left_out.items() if n}
