"""One verdict per weight: the strongest evidence about a weight decides what is said about it.

A weight's evidence comes from the compiler's relations (ETL001 "learns
online", ETL003 "learns from same-step gradients"), from our own graph
analysis and from measured online gradients (the probe, ``--verify``). A
measured finding whose rule ``overrides`` others replaces their findings
about the same weight (when it is about all of the weight's leaves), keeping
what they said in its ``static_evidence``, so the output never shows "learns
online" beside a measured zero. A measured finding that only confirms a static
warning about the weight (ETL411 beside ETL005's "excluded") is folded into
that warning's ``measured``: the weight keeps one finding, with the static
rule's advice.

Pure data in, data out: the engine calls :func:`one_verdict_per_weight` on a
model's findings before they are sorted.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Mapping

from ..core.details import (
    CompilerRecord,
    Measured,
    Measurement,
    ProbeSignal,
    StaticEvidence,
    VerifyHarness,
    VerifyNotRun,
)
from ..core.findings import Finding, Level
from ..core.learning_graph import measured_exact
from ..core.naming import StatePath
from ..core.registry import all_rules
from ..core.rule import MeasuredRule, Rule
from ..core.weight_verdict import WeightVerdict
from ..core.wording import unmeasured_zero


def _weight(finding: Finding) -> StatePath | None:
    path = finding.subject.weight_path
    return tuple(map(str, path)) if path else None


def one_verdict_per_weight(findings: list[Finding]) -> list[Finding]:
    """``findings`` less those that a stronger finding about the same weight supersedes."""
    rules = all_rules()
    beaten: dict[StatePath, set[str]] = {}  # weight -> rule ids overridden for it
    # rule ids overridden for every weight: a measurement about the whole model (its online step raises)
    everywhere: set[str] = set()
    for finding in findings:
        rule = rules.get(finding.rule_id)
        weight = _weight(finding)
        if rule is None or not rule.supersedes:
            continue
        if weight is not None and is_whole_weight(finding):
            beaten.setdefault(weight, set()).update(rule.supersedes)
        elif weight is None and isinstance(rule, MeasuredRule):
            everywhere.update(rule.supersedes)
    findings = _said_unmeasured(_folded(findings, rules), rules)
    if not beaten and not everywhere:
        return findings
    dropped: dict[StatePath | None, list[Finding]] = {}
    kept = []
    for finding in findings:
        weight = _weight(finding)
        if weight is not None and finding.rule_id in beaten.get(weight, ()):
            dropped.setdefault(weight, []).append(finding)
        elif weight is not None and finding.rule_id in everywhere:
            dropped.setdefault(None, []).append(finding)  # kept as the model-wide finding's evidence
        else:
            kept.append(finding)
    return [_with_evidence(f, dropped.get(_weight(f), []), rules) for f in kept]


def is_whole_weight(finding: Finding) -> bool:
    """False for a probe finding about only some of a weight's leaves: it supersedes nothing."""
    return not isinstance(finding.details, ProbeSignal) or finding.details.whole_weight


def _folds(rule: Rule) -> bool:
    """A measured rule whose finding folds into the static one about the same weight."""
    return isinstance(rule, MeasuredRule) and rule.folds_into_static


def _static_verdicts(findings: list[Finding], rules: Mapping[str, Rule]) -> dict[StatePath, list[int]]:
    """Weight -> indexes of the static warnings and errors that say why it does not learn."""
    found: dict[StatePath, list[int]] = {}
    for index, finding in enumerate(findings):
        rule = rules.get(finding.rule_id)
        weight = _weight(finding)
        if (weight is not None and rule is not None and rule.explains_weight and not _folds(rule)
                and not rule.measured and finding.level.rank >= Level.WARNING.rank):
            found.setdefault(weight, []).append(index)
    return found


def denied_weights(findings: list[Finding]) -> frozenset[StatePath]:
    """The weights (paths as strings) that a static warning or error says get no online gradient through one of
    their uses (its rule ``says`` so): where the probe measures one learning, it says the weight learns partly."""
    rules = all_rules()
    denied = set()
    for weight, indexes in _static_verdicts(findings, rules).items():
        says = [rules[findings[i].rule_id].says for i in indexes]
        if any(verdict is not None and verdict.blocks for verdict in says):
            denied.add(weight)
    return frozenset(denied)


def learner_failed(findings: list[Finding]) -> bool:
    """A ``--verify`` finding says braintrace's learner could not be built, or its online step raised, where BPTT
    ran: the probe says what that means for the model's weights (none learns online)."""
    return any(isinstance(f.details, VerifyNotRun) and f.details.learner_failed for f in findings)


def compared_nothing(findings: list[Finding], compared: int) -> bool:
    """``--verify`` compared no gradient (``compared`` rows), because its online and BPTT runs computed different
    forward losses at every length it ran (ETL499): the probe, which runs its own shorter sequence and checks its
    runs' losses the same way, says what it measured in its place (seed 103's model 40, a batch norm over a batch
    of 2 compiled without XLA's optimisations: its 16 steps and its one differ, the probe's 4 and one do not)."""
    return compared == 0 and any(isinstance(f.details, VerifyHarness) for f in findings)


def beside_verify(findings: list[Finding], denied: frozenset[StatePath], failed: bool) -> list[Finding]:
    """The probe's findings a ``--verify`` run keeps, since --verify measures the rest and more: what folds into a
    static finding saying a use of a ``denied`` weight gets no online gradient (it learns partly, or exactly all
    the same), and, where --verify's learner ``failed``, that the model's online step cannot be had (ETL410,
    ETL419: every weight's verdict)."""
    rules = all_rules()
    cannot = (WeightVerdict.STEP_RAISES, WeightVerdict.REFUSED)
    return [f for f in findings if (rule := rules.get(f.rule_id)) is not None
            and ((_folds(rule) and _weight(f) in denied) or (failed and rule.says in cannot))]


def refuses_the_model(findings: list[Finding]) -> bool:
    """A finding says braintrace refuses to compile the model: a learner that cannot be built is no news."""
    rules = all_rules()
    return any((rule := rules.get(f.rule_id)) is not None and rule.says is WeightVerdict.REFUSED for f in findings)


# what a static finding's message says of a weight whose use gets nothing; measured learning, it is said of the use
_GETS_NONE = "gets no online gradient"
_GETS_NONE_HERE = "gets no online gradient through this use"


def _said_partly(finding: Finding, measured: list[Measured], rules: Mapping[str, Rule]) -> Finding:
    """A static finding into which a measurement that the weight learns partly is folded says so."""
    partly = [m for m in measured if isinstance(rule := rules.get(m.rule), MeasuredRule) and rule.learns_partly]
    if not partly:
        return finding
    message = finding.message.replace(_GETS_NONE, _GETS_NONE_HERE, 1)
    return replace(finding, message=f"{message}; {partly[0].message}")


def _said_exact(finding: Finding) -> Finding:
    """A static finding into which measurements that the weight's whole gradient is BPTT's are folded says so, as
    a note: the use it names is left out, and nothing is lost by it."""
    if not measured_exact(finding):
        return finding
    # what the use is, without the denial and advice after its first colon, which the measurement contradicts
    said = finding.message.split(": ", 1)[0].replace(_GETS_NONE, _GETS_NONE_HERE, 1)
    return replace(finding, level=Level.NOTE, message=f"{said}; {finding.measured[0].message}")


def _confirms(measured: Rule, static: Rule) -> bool:
    """A measurement folds into a static finding about the same weight only where it measures that finding's
    kind of claim: a step that raises into a prediction that it raises (ETL210), anything else into a claim of
    what the weight's gradient is. A raise folded into a denial of one use (ETL207) would hide that no weight
    trains at all; a measured zero folded into a predicted raise would hide the zero."""
    raises = WeightVerdict.STEP_RAISES
    return (measured.says is raises) == (static.says is raises)


def _folded(findings: list[Finding], rules: Mapping[str, Rule]) -> list[Finding]:
    """Measured findings that confirm a static warning about the same weight, folded into it."""
    static = _static_verdicts(findings, rules)
    if not static:
        return findings
    measured: dict[int, list[Measured]] = {}
    dropped = set()
    for index, finding in enumerate(findings):
        rule = rules.get(finding.rule_id)
        weight = _weight(finding)
        if rule is None or not _folds(rule) or weight not in static:
            continue
        targets = [i for i in static[weight] if _confirms(rule, rules[findings[i].rule_id])]
        if not targets:  # what it measured is another claim than the static findings': it stands on its own
            continue
        dropped.add(index)
        details = finding.details
        record = Measured(finding.rule_id, finding.message, details if isinstance(details, Measurement) else None)
        for target in targets:
            measured.setdefault(target, []).append(record)
    return [_said_exact(_said_partly(replace(f, measured=tuple(measured[i])), measured[i], rules))
            if i in measured else f for i, f in enumerate(findings) if i not in dropped]


def _said_unmeasured(findings: list[Finding], rules: Mapping[str, Rule]) -> list[Finding]:
    """A zero online gradient that only the graph shows says, in its message, that no measurement backs it:
    neither a measured zero folded into it nor a measured finding about the same weight."""
    measured = {_weight(f) for f in findings if (rule := rules.get(f.rule_id)) is not None and rule.measured}
    said = []
    for finding in findings:
        rule = rules.get(finding.rule_id)
        weight = _weight(finding)
        if (rule is not None and rule.claims_zero_gradient and weight is not None and not finding.measured
                and weight not in measured):
            finding = replace(finding, message=finding.message + unmeasured_zero(finding.subject.weight))
        said.append(finding)
    return said


def _with_evidence(finding: Finding, dropped: list[Finding], rules: Mapping[str, Rule]) -> Finding:
    rule = rules.get(finding.rule_id)
    mine = [f for f in dropped if rule is not None and f.rule_id in rule.supersedes]
    if not mine:
        return finding
    evidence = tuple(StaticEvidence(f.rule_id, f.message, f.line, _record_kind(f), f.subject.weight) for f in mine)
    return replace(finding, static_evidence=evidence)


def _record_kind(finding: Finding) -> str:
    """The kind of the compiler record a finding reports ("" for our own rules' findings): a verdict that
    replaces it keeps what the compiler called it (``relation_excluded_non_temporal``, ...)."""
    return finding.details.kind if isinstance(finding.details, CompilerRecord) else ""


__all__ = ["is_whole_weight", "one_verdict_per_weight"]
