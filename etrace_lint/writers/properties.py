"""A finding's properties, as SARIF and JSON print them, built from its typed fields.

The one place that lays them out: each maker of findings has its keys in its own order (what a
user reads first), then what later stages added, in the order they add it. Nothing reads them back.
"""

from __future__ import annotations

from ..core.details import (
    Advice,
    Boundary,
    CompilerError,
    CompilerRecord,
    Measured,
    Measurement,
    PathKey,
    ProbeFailure,
    ProbeLeaf,
    ProbeSignal,
    StaticEvidence,
    VerifyHarness,
    VerifyLeaf,
    VerifyNotRun,
    VerifyWeight,
    Violation,
)
from ..core.findings import Finding, Subject
from ..core.json_types import JsonObject, JsonValue


def _listed(paths: tuple[PathKey, ...]) -> JsonValue:
    """Paths as the lists of lists JSON prints."""
    return [[part for part in path] for path in paths]


def _weight(subject: Subject) -> JsonObject:
    """The weight a finding is about when it names one (``weight``); every weight it names when it names
    several (``weights``, its own first, beside its ``weight``)."""
    named = subject.named_weights
    if not named:
        return {}
    if len(named) == 1 or subject.weight:
        name, path = named[0]
        printed: JsonObject = {"weight": name, "weightPath": list(path)} if path or subject.weight else {"weight": name}
    else:
        printed = {}
    if len(named) > 1:
        printed["weights"] = [name for name, _ in named]
        if all(path for _, path in named):
            printed["weightPaths"] = [list(path) for _, path in named]
    return printed


def _hidden(subject: Subject) -> JsonObject:
    """The hidden states a finding reaches or names, by name and, where known, by path."""
    if not subject.hidden_states:
        return {}
    paths = subject.hidden_state_paths
    known: JsonObject = {"hiddenStatePaths": _listed(paths)} if len(paths) == len(subject.hidden_states) else {}
    return {"hiddenStates": list(subject.hidden_states), **known}


def _state(subject: Subject) -> JsonObject:
    """A state of the model a finding is about that is neither a weight nor a hidden state."""
    return {"state": subject.state, "statePath": list(subject.state_path)} if subject.state else {}


def _subjects(subject: Subject) -> JsonObject:
    """Every weight and hidden state a finding is about, under the keys every rule prints them with."""
    return {**_weight(subject), **_hidden(subject), **_state(subject)}


def _record(record: CompilerRecord, subject: Subject) -> JsonObject:
    properties: JsonObject = {"braintraceKind": record.kind, "braintraceLevel": record.level,
                              "braintraceMessage": record.message, **_subjects(subject)}
    if subject.primitive:
        properties["primitive"] = subject.primitive
    if record.iterations:
        properties["iterations"] = list(record.iterations)
    return properties


def _error(error: CompilerError, subject: Subject) -> JsonObject:
    properties: JsonObject = {"braintraceError": error.error, "phase": error.phase,
                              "braintraceMessage": error.message, **_subjects(subject)}
    if subject.primitive:
        properties["primitive"] = subject.primitive
    return properties


def _probe(probe: ProbeFailure | ProbeSignal) -> JsonObject:
    if isinstance(probe, ProbeFailure):
        shapes: JsonObject = {} if probe.parameter_shape is None else {
            "parameterShape": [size for size in probe.parameter_shape],
            "gradientShape": [size for size in probe.gradient_shape or ()]}
        return {"algorithm": probe.algorithm, "exception": probe.exception, "batch": probe.batch, **shapes}
    return {"algorithm": probe.algorithm, "steps": probe.steps, "batch": probe.batch,
            "wholeWeight": probe.whole_weight, "leaves": [_probe_leaf(leaf) for leaf in probe.leaves]}


def _probe_leaf(leaf: ProbeLeaf) -> JsonObject:
    return {"leaf": leaf.leaf, "onlineNorm": leaf.online_norm, "bpttNorm": leaf.bptt_norm, "scale": leaf.scale}


def _verify_leaf(row: VerifyLeaf) -> JsonObject:
    return {"algorithm": row.algorithm, "steps": row.steps, "weight": row.weight, "leaf": row.leaf,
            "verdict": row.verdict, "expected": row.expected, "relError": row.rel_error, "cosine": row.cosine,
            "scale": row.scale, "device": row.device}


def _verify(verify: VerifyWeight | VerifyNotRun | VerifyHarness) -> JsonObject:
    if isinstance(verify, VerifyWeight):
        leaves: JsonObject = {"leaves": [_verify_leaf(row) for row in verify.leaves]} if verify.leaves else {}
        return {**_verify_leaf(verify.worst), **leaves}
    if isinstance(verify, VerifyNotRun):
        return {"algorithm": verify.algorithm, "device": verify.device}
    return {"algorithm": verify.algorithm, "steps": verify.steps, "onlineLoss": verify.online_loss,
            "bpttLoss": verify.bptt_loss, "device": verify.device}


def _measurement(measurement: Measurement | None) -> JsonObject:
    """A measured finding's own figures, under the key its measurer prints them."""
    if measurement is None:
        return {}
    if isinstance(measurement, (ProbeFailure, ProbeSignal)):
        return {"probe": _probe(measurement)}
    return {"verify": _verify(measurement)}


def _details(finding: Finding) -> JsonObject:
    details, subject = finding.details, finding.subject
    if isinstance(details, CompilerRecord):
        return _record(details, subject)
    if isinstance(details, CompilerError):
        return _error(details, subject)
    if isinstance(details, Violation):
        # a key the violation prints keeps its place; the subject's weights and states are the same facts
        return {**details.properties(), **_subjects(subject)}
    if isinstance(details, ProbeFailure):
        return {"probe": _probe(details), **_subjects(subject)}
    if isinstance(details, ProbeSignal):
        return {**_subjects(subject), "probe": _probe(details)}
    if isinstance(details, VerifyWeight):
        explained = {"explainedBy": details.explained_by} if details.explained_by else {}
        return {**_subjects(subject), "verify": _verify(details), **explained}
    if isinstance(details, (VerifyNotRun, VerifyHarness)):
        return {"verify": _verify(details)}
    if isinstance(details, Advice):
        weight = {"weight": subject.weight} if subject.weight else {}
        return {"advice": {"algorithm": details.algorithm, "alternative": details.alternative.to_json()}, **weight}
    if subject.suppression_form:  # an unused suppression
        return {"codes": list(subject.suppression_codes), "form": subject.suppression_form}
    return _subjects(subject)


def _boundary(boundary: Boundary) -> JsonObject:
    printed: JsonObject = {"kind": boundary.kind, "line": boundary.line, "column": boundary.column}
    if boundary.name:
        printed["name"] = boundary.name
    if boundary.file:
        printed["file"] = boundary.file
    return printed


def _measured(measured: Measured) -> JsonObject:
    return {"rule": measured.rule, "message": measured.message, **_measurement(measured.measurement)}


def _evidence(evidence: StaticEvidence) -> JsonObject:
    kind = {"braintraceKind": evidence.kind} if evidence.kind else {}
    line = {"line": evidence.line} if evidence.line is not None else {}
    weight = {"weight": evidence.weight} if evidence.weight else {}
    return {"rule": evidence.rule, **kind, **weight, "message": evidence.message, **line}


def finding_properties(finding: Finding) -> JsonObject:
    """What SARIF and JSON print as the finding's properties (SARIF adds the model first)."""
    properties = _details(finding)
    if finding.control_flow:
        properties["controlFlow"] = [_boundary(b) for b in finding.control_flow]
    if isinstance(finding.details, CompilerRecord) and finding.details.error:
        properties["braintraceError"] = finding.details.error
    if finding.measured:
        properties["measured"] = [_measured(m) for m in finding.measured]
    if finding.static_evidence:
        properties["staticEvidence"] = [_evidence(e) for e in finding.static_evidence]
    return properties
