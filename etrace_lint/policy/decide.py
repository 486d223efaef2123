"""Decide, once, which findings are shown and at what level (flake8's style guide).

Rules report everything they see; this is the only place that filters.
"""

from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass, field, replace
from typing import Iterable, Sequence

from ..config.baseline import new_findings
from ..config.options import option_for_flag
from ..config.settings import PolicySettings
from ..config.suppressions import SuppressionIndex
from ..core.exit_codes import exit_code
from ..core.findings import Finding, Level, Location, Subject, TargetResult, ToolError
from ..core.registry import all_rules
from ..core.rule import SuppressionRule, UnusedSuppression


def selector_matches(selector: str, rule_id: str) -> bool:
    """A selector is a rule id, an id prefix (``ETL0``, ``ALL``) or a rule name."""
    selector = selector.strip()
    if selector.upper() == "ALL":
        return True
    if rule_id.startswith(selector.upper()):
        return True
    rule = all_rules().get(rule_id)
    return rule is not None and rule.name == selector


def rule_selected(rule_id: str, settings: PolicySettings, path: str = "") -> bool:
    rule = all_rules().get(rule_id)
    if settings.select:
        selected = any(selector_matches(s, rule_id) for s in settings.select)
    else:
        selected = rule is None or rule.enabled
    if any(selector_matches(s, rule_id) for s in settings.extend_select):
        selected = True
    if any(selector_matches(s, rule_id) for s in settings.ignore):
        selected = False
    if selected and path and settings.per_file_ignores:
        rel = os.path.relpath(path, settings.root).replace(os.sep, "/")
        for glob, selectors in settings.per_file_ignores.items():
            if fnmatch.fnmatch(rel, glob) or fnmatch.fnmatch(os.path.basename(path), glob):
                if any(selector_matches(s, rule_id) for s in selectors):
                    return False
    return selected


def configured_level(rule_id: str, settings: PolicySettings) -> Level | None:
    """The level of the most specific selector in ``levels`` that matches ``rule_id``."""
    matching = [s for s in settings.levels if selector_matches(s, rule_id)]
    if not matching:
        return None
    return settings.levels[max(matching, key=lambda s: (s.upper() != "ALL", len(s)))]


def level_for(finding: Finding, settings: PolicySettings) -> Level:
    """The configured level of the most specific matching selector, else the rule's own."""
    return configured_level(finding.rule_id, settings) or finding.level


def opt_in_rules(settings: PolicySettings) -> frozenset[str]:
    """The opt-in rules whose option this run turned on."""
    return frozenset(rule_id for rule_id, rule in all_rules().items() if rule.opt_in_flag and not rule.retired
                     and option_for_flag(rule.opt_in_flag).name in settings.flags_on)


def _rule_runs(rule_id: str, settings: PolicySettings, opt_in: frozenset[str]) -> bool:
    """Whether the engine looked for ``rule_id`` this run (``opt_in``: the opt-in rules turned on)."""
    rule = all_rules().get(rule_id)
    if rule is None or rule.retired:
        return False
    if rule.opt_in_flag and rule_id not in opt_in:
        return False
    return rule_selected(rule_id, settings)


@dataclass(frozen=True)
class Outcome:
    """What writers get: the findings to show, tool errors, and the exit code."""

    findings: list[Finding] = field(default_factory=list)
    tool_errors: list[ToolError] = field(default_factory=list)
    hidden_notes: int = 0
    baselined: int = 0  # findings left out because the baseline records them

    def exit_code(self, settings: PolicySettings) -> int:
        failing = any(not f.suppressed and f.level.rank >= settings.fail_level.rank for f in self.findings)
        return exit_code(bool(self.tool_errors), failing, settings.exit_zero)


def _suppress(findings: list[Finding], linted_files: list[str], settings: PolicySettings,
              unlocated: frozenset[str] = frozenset()) -> list[Finding]:
    """Mark suppressed findings, and add ETL301 for suppressions that matched nothing.

    ``unlocated``: rules some of whose notes were left out unlocated; a
    suppression naming one may be what a hidden note needs.
    """
    index = SuppressionIndex()
    marked = []
    for finding in findings:
        suppression = index.match(finding.path, finding.line, finding.rule_id)
        marked.append(replace(finding, suppressed=suppression.form) if suppression else finding)
    rule = all_rules()["ETL301"]
    assert isinstance(rule, SuppressionRule)  # ETL301 words its facts (rules/etl301_unused_suppression.py)
    opt_in = opt_in_rules(settings)
    running = [rid for rid in all_rules() if _rule_runs(rid, settings, opt_in)]
    for path, suppression, codes in index.unused(linted_files):
        # a code for a rule that did not run this time (deselected, opt-in) may still be needed
        unknown = tuple(c for c in codes if not any(rid.startswith(c) for rid in all_rules()))
        idle = tuple(c for c in codes if any(rid.startswith(c) for rid in running)
                     and not any(rid.startswith(c) for rid in unlocated))
        if not unknown and not idle:
            continue
        codes = idle + unknown
        marked.append(Finding(rule.id, rule.level, rule.explain(UnusedSuppression(idle, unknown, suppression.form)),
                              "", Location(path, suppression.line, suppression.column),
                              subject=Subject(suppression_form=suppression.form, suppression_codes=tuple(codes))))
    return marked


def counted_notes(results: Iterable[TargetResult]) -> dict[str, int]:
    """Per rule, the findings the engine counted instead of building (``EngineScope.count_only``),
    over all ``results``: what :func:`apply_policy` reports as hidden notes."""
    total: dict[str, int] = {}
    for result in results:
        for rule_id, count in result.notes_left_out.items():
            total[rule_id] = total.get(rule_id, 0) + count
    return total


def apply_policy(findings: list[Finding], tool_errors: list[ToolError], settings: PolicySettings,
                 linted_files: Sequence[str] = (), use_baseline: bool = True,
                 notes_left_out: dict[str, int] | None = None) -> Outcome:
    """``notes_left_out``: per rule, notes the engine did not build because they are
    hidden (counted as hidden when their rule is selected)."""
    left_out = {rule_id: n for rule_id, n in (notes_left_out or {}).items() if n}
    findings = _suppress(findings, list(linted_files), settings, frozenset(left_out))
    hidden_notes = sum(n for rule_id, n in left_out.items() if rule_selected(rule_id, settings))
    shown = []
    for finding in findings:
        if finding.suppressed and not settings.include_suppressed:
            continue
        if not rule_selected(finding.rule_id, settings, finding.path):
            continue
        level = level_for(finding, settings)
        if level != finding.level:
            finding = replace(finding, level=level)
        if finding.level is Level.NOTE and not settings.show_info:
            hidden_notes += 1
            continue
        shown.append(finding)
    shown.sort(key=Finding.sort_key)
    baselined = 0
    if use_baseline and settings.baseline is not None:
        active = [f for f in shown if not f.suppressed]
        fresh = set(map(id, new_findings(active, settings.baseline, settings.root)))
        baselined = len(active) - len(fresh)
        shown = [f for f in shown if f.suppressed or id(f) in fresh]
    return Outcome(shown, sorted(tool_errors, key=ToolError.sort_key), hidden_notes, baselined)
