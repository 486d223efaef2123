"""Compiler records and compiler exceptions -> findings, through the rule registry.

A record maps to its rule by ``DiagnosticKind`` value (an unknown value gets
the generic rule, so a newer braintrace still shows everything). An exception
maps to the first rule whose :class:`ErrorMatch` recognises it. When the
compiler emitted an ERROR record to explain the exception it then raised, the
two are one problem and are reported once.
"""

from __future__ import annotations

import re
from typing import Any, Iterator, Mapping

from . import braintrace_adapter as bt
from . import jaxpr_view as jv
from .engine import format_path
from .findings import Finding, Level, Location
from .registry import error_rules, rule_for_record_kind


def _class_names(exc: BaseException) -> list[str]:
    return [cls.__name__ for cls in type(exc).__mro__]


# Records about a control-flow equation that carry no reference to it and are
# emitted away from it (buffered until canonicalisation settles, or from a
# later pass): the equation is found by its primitive, in the order the
# compiler reported them. Kinds sharing a buffer share the count.
_KIND_PRIMITIVE = {
    "cond_if_converted": "cond", "cond_conversion_skipped": "cond",
    "scan_unrolled": "scan", "scan_unroll_skipped": "scan", "relation_excluded_sliced_weight": "scan",
    "scan_descent_applied": "scan", "scan_descent_skipped": "scan", "scan_descent_no_relations": "scan",
    "control_flow_opaque_fwd": "while", "output_bypass_dropped": "while",
}
_ORDINAL_GROUP = {"scan_unroll_skipped": "scan-skips", "relation_excluded_sliced_weight": "scan-skips"}


def locate_record(record: Any, locator: Any, ordinal: int = 0, subject: Any = None,
                  kind: str | None = None) -> tuple[Location, list[Location]]:
    """Primary location of a record, and related ones (blocking weights, the factory).

    ``subject`` is the equation the compiler was working on when it emitted
    the record; it is the most precise answer when there is one.
    """
    context = bt.record_context(record)
    weight_path = getattr(record, "weight_path", None)
    # most records are placed by their subject equation: the other candidates are not even listed
    primary = locator.of_eqn(subject) if subject is not None else None
    if primary is None:
        kind = bt.record_kind(record) if kind is None else kind
        found = _candidate_locations(record, kind, context, weight_path, locator, ordinal)
        primary = next((loc for loc in found if loc is not None), locator.factory)

    related = []
    for blocking in context.get("blocking_weight_paths", ()) or ():
        if blocking:
            loc = locator.of_weight(tuple(blocking), label=f"blocking weight {format_path(blocking)}")
            if loc is not None:
                related.append(loc)
    if weight_path:
        created = locator.of_state(tuple(weight_path), f"{format_path(weight_path)} is created here")
        if created is not None and created != primary:
            related.append(created)
    related.append(locator.factory_related)
    return primary, related


def _candidate_locations(record: Any, kind: str, context: Mapping, weight_path: Any, locator: Any,
                         ordinal: int) -> Iterator[Location | None]:
    """Where a record without a subject equation may be placed, most precise first; each
    is only worked out when the ones before found nothing."""
    op_name = str(context.get("op_name", ""))
    family = _KIND_PRIMITIVE.get(kind)
    if family:
        yield locator.of_nth_control_flow(op_name or family, ordinal)
    if op_name:
        yield locator.of_primitive(op_name)
    primitive = bt.record_primitive_name(record)
    for key in ("invar", "weight_var"):
        if context.get(key) is not None:
            yield locator.of_var(context[key], op_name)
    if weight_path:
        yield locator.of_weight(tuple(weight_path), primitive)
    if context.get("state") is not None:
        yield locator.of_state_object(context["state"])
    for path in (context.get("state_path"), *(getattr(record, "hidden_paths", ()) or ()), context.get("hidden_path")):
        if isinstance(path, (tuple, list)):
            yield locator.of_state(tuple(path))
    for key in ("params", "weight_paths"):
        for path in context.get(key, ()) or ():
            if isinstance(path, tuple):
                yield locator.of_weight(path)
    if primitive:
        yield locator.of_primitive(primitive)


def record_properties(record: Any, kind: str | None = None, level: str | None = None) -> dict:
    kind = bt.record_kind(record) if kind is None else kind
    properties = {"braintraceKind": kind, "braintraceLevel": bt.record_level(record) if level is None else level}
    weight_path = getattr(record, "weight_path", None)
    if weight_path:
        properties["weight"] = format_path(weight_path)
    hidden = getattr(record, "hidden_paths", ()) or ()
    if hidden:
        properties["hiddenStates"] = [format_path(h) for h in hidden]
    primitive = bt.record_primitive_name(record)
    if primitive:
        properties["primitive"] = primitive
    return properties


def record_message(record: Any, kind: str | None = None) -> str:
    message = " ".join(str(record.message).split())
    kind = bt.record_kind(record) if kind is None else kind
    if kind == "relation_included" and getattr(record, "weight_path", None):
        # the compiler's text ("etp_mv(('w',)) -> [0]") is for its own logs
        hidden = ", ".join(format_path(h) for h in getattr(record, "hidden_paths", ()) or ())
        op = bt.record_primitive_name(record) or "its ETP op"
        return (f"{format_path(record.weight_path)} learns online: {op} connects it to "
                f"{hidden or 'a hidden state'}")
    return message


def finding_from_record(record: Any, locator: Any, target: str, ordinal: int = 0, subject: Any = None) -> Finding:
    kind = bt.record_kind(record)
    record_level = bt.record_level(record)
    rule, level, _ = _grade(kind, record_level, None)
    return _finding(record, kind, rule, level, locator, target, ordinal, subject, record_level)


def _finding(record: Any, kind: str, rule: Any, level: Level, locator: Any, target: str, ordinal: int,
             subject: Any, record_level: str) -> Finding:
    primary, related = locate_record(record, locator, ordinal, subject, kind)
    return Finding(rule.id, level, record_message(record, kind), target, primary, tuple(related),
                   record_properties(record, kind, record_level))


_RECORD_LEVELS = {"info": Level.NOTE, "warning": Level.WARNING, "error": Level.ERROR}


def _shown_level(level: Level, rule: Any, hidden_note_levels: dict[str, str]) -> Level:
    configured = hidden_note_levels.get(rule.id)
    return Level(configured) if configured else level


def _grade(kind: str, record_level: str, hidden_note_levels: dict[str, str] | None) -> tuple[Any, Level, bool]:
    """A record's rule, its level, and whether a run hiding notes (``policy.hidden_note_levels``)
    would hide its finding; the same for every record of one kind and level."""
    rule = rule_for_record_kind(kind)
    # the compiler grades some kinds by situation (a scan unroll skipped for length is
    # informational, for a blocker it is a warning): its level wins over the rule's default
    level = _RECORD_LEVELS.get(record_level, rule.level)
    hidden = hidden_note_levels is not None and _shown_level(level, rule, hidden_note_levels) is Level.NOTE
    return rule, level, hidden


def is_hidden_note(record: Any, hidden_note_levels: dict[str, str] | None) -> bool:
    """Whether a run hiding notes (``policy.hidden_note_levels``) would hide this record's finding."""
    if hidden_note_levels is None:
        return False
    return _grade(bt.record_kind(record), bt.record_level(record), hidden_note_levels)[2]


def findings_from_records(compilation: bt.Compilation, locator: Any, target: str,
                          hidden_note_levels: dict[str, str] | None = None,
                          left_out: dict[str, int] | None = None) -> list[Finding]:
    """A finding per record; notes the run hides are counted in ``left_out`` instead
    (``hidden_note_levels``: see :func:`is_hidden_note`)."""
    locator.use_jaxprs(compilation.traced_jaxpr, compilation.raw_jaxpr)
    subjects = list(compilation.record_subjects)
    subjects += [None] * (len(compilation.records) - len(subjects))
    left_out = {} if left_out is None else left_out
    findings, seen = [], {}
    graded: dict[tuple[str, str], tuple[Any, Level, bool]] = {}  # a model's records share a few kinds
    for record, subject in zip(compilation.records, subjects):
        kind = bt.record_kind(record)
        key = _ORDINAL_GROUP.get(kind, kind)
        ordinal = seen.get(key, 0)
        seen[key] = ordinal + 1
        record_level = bt.record_level(record)
        grade = graded.get((kind, record_level))
        if grade is None:
            grade = graded[(kind, record_level)] = _grade(kind, record_level, hidden_note_levels)
        rule, level, hidden = grade
        if hidden:
            left_out[rule.id] = left_out.get(rule.id, 0) + 1
            continue
        findings.append(_finding(record, kind, rule, level, locator, target, ordinal, subject, record_level))
    return findings


def classify_error(exc: BaseException):
    names = _class_names(exc)
    message = str(exc)
    modules = jv.exception_modules(exc)
    raised_in = modules[0] if modules else ""
    through_user_code = jv.user_frame_of_exception(exc) is not None
    for rule in error_rules():
        if rule.error.matches(names, message, raised_in, through_user_code):
            return rule
    raise LookupError("no generic error rule is registered")


def _error_message(rule: Any, exc: BaseException, limit: int = 300) -> str:
    """The exception's first sentence (its first line, or two when the first is short)."""
    lines = [line.strip() for line in str(exc).strip().splitlines() if line.strip()]
    text = lines[0] if lines else type(exc).__name__
    if len(lines) > 1 and len(text) < 60:
        text = f"{text} {lines[1]}"
    sentence = re.match(r"(.{40,}?[.!?])(\s|$)", text)
    if sentence:
        text = sentence.group(1)
    if len(text) > limit:
        text = text[: limit - 3].rstrip() + "..."
    return f"{type(exc).__name__}: {text}"


def findings_from_error(compilation: bt.Compilation, locator: Any, target: str,
                        record_findings: list[Finding]) -> list[Finding]:
    """Add the compiler/tracing exception to the record findings, merged when explained."""
    exc = compilation.error
    rule = classify_error(exc)
    error_name = type(exc).__name__
    explained = [i for i, f in enumerate(record_findings)
                 if f.properties.get("braintraceLevel") == "error" and f.properties.get("braintraceKind") in rule.error.kinds]
    if explained:
        index = explained[-1]
        merged = record_findings[index]
        properties = dict(merged.properties, braintraceError=error_name)
        record_findings = list(record_findings)
        record_findings[index] = Finding(merged.rule_id, merged.level, merged.message, target,
                                         merged.location, merged.related, properties)
        return record_findings
    frame = jv.user_frame_of_exception(exc)
    message = _error_message(rule, exc)
    if rule.describe is not None:
        message, described_at = rule.describe(exc, compilation)
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
    properties = {"braintraceError": error_name, "phase": "compile" if compilation.traced else "trace"}
    # a canonicalisation that did not settle names every equation it was still rewriting
    others = [loc for eqn in subject.eqns[1:] if (loc := locator.of_eqn(eqn, "also involved")) is not None]
    related = tuple(loc for loc in others if (loc.path, loc.line) != (primary.path, primary.line))
    related += (locator.factory_related,)
    finding = Finding(rule.id, rule.level, message, target, primary, related, properties)
    return list(record_findings) + [finding]
