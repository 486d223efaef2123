"""One verdict per weight: the strongest evidence about a weight decides what is said about it.

A weight's evidence comes from the compiler's relations (ETL001 "learns
online", ETL003 "learns from same-step gradients"), from our own graph
analysis and from measured online gradients (the probe, ``--verify``). A
measured finding whose rule ``overrides`` others replaces their findings
about the same weight (when it is about all of the weight's leaves), keeping what they said in its ``staticEvidence``
property, so the output never shows "learns online" beside a measured zero.

Pure data in, data out: the engine calls :func:`one_verdict_per_weight` on a
model's findings before they are sorted.
"""

from __future__ import annotations

from dataclasses import replace

from .findings import Finding
from .registry import all_rules


def _weight(finding: Finding) -> tuple | None:
    path = finding.properties.get("weightPath")
    return tuple(map(str, path)) if path else None


def one_verdict_per_weight(findings: list[Finding]) -> list[Finding]:
    """``findings`` less those that a measured finding about the same weight overrides."""
    rules = all_rules()
    beaten: dict[tuple, set[str]] = {}  # weight -> rule ids overridden for it
    for finding in findings:
        rule = rules.get(finding.rule_id)
        weight = _weight(finding)
        partial = finding.properties.get("probe", {}).get("wholeWeight") is False
        if rule is not None and rule.overrides and weight is not None and not partial:
            beaten.setdefault(weight, set()).update(rule.overrides)
    if not beaten:
        return findings
    dropped: dict[tuple, list[Finding]] = {}
    kept = []
    for finding in findings:
        weight = _weight(finding)
        if weight is not None and finding.rule_id in beaten.get(weight, ()):
            dropped.setdefault(weight, []).append(finding)
        else:
            kept.append(finding)
    return [_with_evidence(f, dropped.get(_weight(f), []), rules) for f in kept]


def _with_evidence(finding: Finding, dropped: list[Finding], rules: dict) -> Finding:
    rule = rules.get(finding.rule_id)
    mine = [f for f in dropped if rule is not None and f.rule_id in rule.overrides]
    if not mine:
        return finding
    evidence = [{"rule": f.rule_id, "message": f.message, "line": f.line} for f in mine]
    return replace(finding, properties={**finding.properties, "staticEvidence": evidence})


__all__ = ["one_verdict_per_weight"]
