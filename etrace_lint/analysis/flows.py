"""Code flows: the route a finding describes, as steps in the user's code.

A rule whose message is about a route from a weight to a hidden state (or to
the step's output) says ``flow="weight"``; the engine
calls :func:`flow_for` with the record or hit it turned into a finding. The
steps, in data-flow order: where the weight is created, the op that uses it,
each ETP op of another weight and each control-flow boundary its value
crosses, and where the hidden state gets its new value. Only lines of the
user's code are kept (library frames are skipped by the locator), and
consecutive steps on one line are merged. The walk over the traced step is
:mod:`.routes`.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Iterable

from ..core.details import Violation
from ..core.findings import Finding, Location
from ..core.rule import Hit, Rule, rule_flow
from .routes import enclosing_control_flow, weight_route

if TYPE_CHECKING:  # the engine's Locator and the record views' package import braintrace; annotations only
    from .braintrace_adapter import RecordView
    from .locate import Locator

MAX_STEPS = 64  # a route longer than this is cut in the middle: its ends say the most


def merge_steps(steps: Iterable[Location | None]) -> tuple[Location, ...]:
    """Steps without the unknown ones, consecutive steps on one line merged (labels joined)."""
    merged: list[Location] = []
    for step in steps:
        if step is None:
            continue
        last = merged[-1] if merged else None
        if last is not None and (last.path, last.line) == (step.path, step.line):
            if step.label and step.label not in last.label:
                label = f"{last.label}; {step.label}" if last.label else step.label
                merged[-1] = dataclasses.replace(last, label=label)
            continue
        merged.append(step)
    if len(merged) > MAX_STEPS:
        half = MAX_STEPS // 2
        merged = merged[:half] + merged[-half:]
    return tuple(merged)


def weight_flow(locator: Locator, subject: RecordView | Hit[Violation]) -> tuple[Location, ...]:
    """The route of a weight (a compiler record's ``weight_path``, a hit's ``weight_path``) to the
    hidden states a record names (else any hidden state), through its use (a hit's equation; else
    the weight's first use), past the blocking weights a record names."""
    return merge_steps(weight_route(locator, subject))


def _with_control_flow(finding: Finding, locator: Locator) -> Finding:
    try:
        boundaries = enclosing_control_flow(locator, finding)
    except Exception:  # a step this JAX lays out otherwise: the finding stays as it is
        return finding
    if not boundaries:
        return finding
    return dataclasses.replace(finding, control_flow=boundaries)


def flow_for(rule: Rule, finding: Finding, locator: Locator, subject: RecordView | Hit[Violation]) -> Finding:
    """``finding`` with the route its rule's ``flow`` finds for ``subject`` (a record or a hit), and the
    control flow around its op (``control_flow``)."""
    finding = _with_control_flow(finding, locator)
    if rule_flow(rule) != "weight" or finding.flow:
        return finding
    try:
        steps = weight_flow(locator, subject)
    except Exception:  # a route that cannot be worked out leaves the finding as it is
        return finding
    return dataclasses.replace(finding, flow=tuple(steps)) if len(steps) > 1 else finding
