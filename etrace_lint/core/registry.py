"""Loads every rule in ``etrace_lint.rules`` (the repository's ``rules/``)."""

from __future__ import annotations

import functools
import importlib
import importlib.resources
import os
import pkgutil
from dataclasses import replace
from types import ModuleType
from typing import Any

from .. import rules as rules_pkg
from .details import Violation, install_rule_loader, register_violation
from .rule import (
    AnalysisRule,
    AnyRule,
    ErrorRule,
    GradientFacts,
    MeasuredRule,
    RecordRule,
    Rule,
    SuppressionRule,
)
from .verdict import Verdict

GENERIC_RECORD_RULE = "ETL099"
GENERIC_ERROR_RULE = "ETL199"


@functools.lru_cache(maxsize=1)
def all_rules() -> dict[str, AnyRule]:
    """Every rule, retired ones included, keyed by id and sorted by id."""
    found: dict[str, AnyRule] = {}
    for info in pkgutil.iter_modules(rules_pkg.__path__):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{rules_pkg.__name__}.{info.name}")
        rule = getattr(module, "RULE", None)
        if not isinstance(rule, Rule):
            continue
        if not isinstance(rule, (RecordRule, ErrorRule, AnalysisRule, MeasuredRule, SuppressionRule)):
            raise RuntimeError(f"{info.name}: RULE is a bare Rule; make it one of the kinds in core/rule.py")
        if rule.id in found:
            raise RuntimeError(f"rule id {rule.id} is defined twice ({info.name})")
        found[rule.id] = _with_docs(rule, _docs_beside(module, rules_pkg, info.name))
        if isinstance(rule, AnalysisRule):
            for violation in rule.violations:
                register_violation(violation)
    return dict(sorted(found.items()))


install_rule_loader(all_rules)


def _docs_beside(module: ModuleType, rules_pkg: ModuleType, name: str) -> str:
    """The Markdown file beside the rule's module (in whichever folder of the package it was found)."""
    path = module.__file__
    doc = os.path.splitext(path)[0] + ".md" if path else ""
    if doc and os.path.isfile(doc):
        with open(doc, encoding="utf-8") as handle:
            return handle.read()
    resource = importlib.resources.files(rules_pkg).joinpath(f"{name}.md")
    return resource.read_text(encoding="utf-8") if resource.is_file() else ""


def _with_docs(rule: AnyRule, docs: str) -> AnyRule:
    return replace(rule, docs=docs)


def active_rules() -> dict[str, AnyRule]:
    return {rid: r for rid, r in all_rules().items() if not r.retired}


@functools.lru_cache(maxsize=1)
def rule_for_kind() -> dict[tuple[str, str], RecordRule]:
    """(DiagnosticKind value, braintrace level or "") -> rule; "" stands for any level."""
    table: dict[tuple[str, str], RecordRule] = {}
    for rule in active_rules().values():
        if not isinstance(rule, RecordRule):
            continue
        for kind in rule.kinds:
            for level in rule.record_levels or ("",):
                if (kind, level) in table:
                    raise RuntimeError(f"{rule.id} and {table[(kind, level)].id} both report {kind!r} records"
                                       + (f" at level {level!r}" if level else ""))
                table[(kind, level)] = rule
    return table


def rule_for_record_kind(kind_value: str, level: str = "") -> RecordRule:
    """The rule for a DiagnosticKind value at a braintrace level; an unknown kind gets the generic rule."""
    table = rule_for_kind()
    found = table.get((kind_value, level)) or table.get((kind_value, "")) or all_rules()[GENERIC_RECORD_RULE]
    assert isinstance(found, RecordRule)  # the generic rule reports records (rules/etl099_*.py)
    return found


def error_rules() -> list[ErrorRule]:
    """Exception rules in the order they are tried: most specific first, generic last."""
    rules = [r for r in active_rules().values() if isinstance(r, ErrorRule)]
    return sorted(rules, key=lambda r: (r.id == GENERIC_ERROR_RULE, r.error.specificity, r.id))


def analysis_rules() -> list[AnalysisRule[Violation]]:
    return [r for r in active_rules().values() if isinstance(r, AnalysisRule)]


@functools.lru_cache(maxsize=1)
def _rule_of_verdict() -> dict[str, MeasuredRule[GradientFacts]]:
    # a rule that names verdicts is a --verify rule, and --verify words its findings from GradientFacts
    return {verdict: rule for rule in active_rules().values() if isinstance(rule, MeasuredRule)
            for verdict in rule.verdicts}


def measured_rule(rule_id: str) -> MeasuredRule[Any]:  # its facts' type is decided by the id: the caller knows it
    """The rule of --verify, the probe or the advisor with this id."""
    rule = all_rules()[rule_id]
    if not isinstance(rule, MeasuredRule):
        raise TypeError(f"{rule_id} does not report a measurement")
    return rule


def rule_for_verdict(verdict: Verdict) -> MeasuredRule[GradientFacts] | None:
    """The --verify rule that reports a verdict of the gradient comparison; None for one nothing reports."""
    return _rule_of_verdict().get(verdict.value)
