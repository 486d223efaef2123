"""Findings about the algorithm the user configured, each with the alternative's figures.

The configured algorithm is the one the target's ``verify={"algorithms": [...]}``
or ``[tool.etrace-lint.verify] algorithms`` names first. Three things are
reported, each only when another measured algorithm does better:

- ETL302: it does not compile, or its first online step raises;
- ETL303: its trace at the training batch does not fit the memory budget;
- ETL304: it leaves a weight with an exactly zero online gradient that BPTT moves.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...core.advice import AdviceRow
from ...core.algorithms import ALIASES
from ...core.details import Advice
from ...core.findings import Finding, Subject
from ...core.registry import all_rules, measured_rule
from ...core.sizes import format_size
from .recommend import fits

if TYPE_CHECKING:  # annotations only
    from ...analysis.context import AnalysisContext

DOES_NOT_RUN, OVER_BUDGET, WEIGHT_WITHOUT_GRADIENT = "ETL302", "ETL303", "ETL304"


@dataclass(frozen=True)
class AdviceFacts:
    """What the advice measured of the configured algorithm and of the best alternative, formatted."""

    algorithm: str
    alternative: str  # the alternative and its figures: "snap (trace 3.52 KiB at batch 2, 107.8x ...)"
    error: str = ""  # why the configured algorithm did not compile or run
    stage: str = ""  # "does not compile" / "compiles but its first online step raises"
    trace: str = ""  # the configured algorithm's trace bytes at the batch
    budget: str = ""
    batch: str = ""
    weight: str = ""


def _figures(row: AdviceRow) -> str:
    parts = []
    if row.trace_bytes is not None:
        parts.append(f"trace {format_size(row.trace_bytes)} at batch {row.batch if row.batch is not None else 1}")
    if row.flops_ratio is not None:
        parts.append(f"{row.flops_ratio:.1f}x the flops of a forward step")
    verdicts = [w.verdict.advice_text for w in row.weights]
    if verdicts:
        parts.append(", ".join(f"{verdicts.count(v)} {v}" for v in dict.fromkeys(verdicts)))
    return f"{row.label} ({'; '.join(parts)})" if parts else row.label


def _find(rows: list[AdviceRow], configured: str) -> AdviceRow | None:
    name, _, variant = configured.partition(":")
    label = ALIASES.get(name, name) + (f":{variant}" if variant else "")
    return next((row for row in rows if row.label == label), None)


def _alternative(rows: list[AdviceRow], configured_row: AdviceRow,
                 keep: Callable[[AdviceRow], bool]) -> AdviceRow | None:
    """The recommended row when it qualifies, else the closest row that does."""
    others = [row for row in rows if row is not configured_row and keep(row)]
    chosen = [row for row in others if row.recommended]
    if chosen:
        return chosen[0]
    return max(others, key=lambda row: row.closeness, default=None)


def configured_findings(rows: list[AdviceRow], configured: str | None, budget: int | None, context: AnalysisContext,
                        target: str) -> list[Finding]:
    if not configured:
        return []
    row = _find(rows, configured)
    if row is None:
        return []
    rules = all_rules()
    where = context.locator.factory
    found = []

    def finding(rule_id: str, facts: AdviceFacts, alternative: AdviceRow) -> Finding:
        explain = measured_rule(rule_id).explain
        assert explain is not None  # every advice rule words its facts (rules/etl30[2-4]*.py)
        return Finding(rule_id, rules[rule_id].level, explain(facts), target, where,
                       (context.locator.factory_related,),
                       subject=Subject(weight=facts.weight or "", algorithm=row.label),
                       details=Advice(row.label, alternative))

    if not row.runs:
        alternative = _alternative(rows, row, lambda other: other.runs)
        if alternative is not None:
            stage = "does not compile" if not row.compiles else "compiles, but its first online step raises"
            found.append(finding(DOES_NOT_RUN, AdviceFacts(row.label, _figures(alternative), row.error or "",
                                                           stage), alternative))
        return found
    if budget is not None and row.trace_bytes is not None and row.trace_bytes > budget:
        alternative = _alternative(rows, row, lambda other: other.runs and fits(other, budget))
        if alternative is not None:
            found.append(finding(OVER_BUDGET, AdviceFacts(
                row.label, _figures(alternative), trace=format_size(row.trace_bytes, up=True),
                budget=format_size(budget), batch=str(row.batch)), alternative))
    for weight in row.zero_gradient_weights:
        alternative = _alternative(rows, row, lambda other: other.runs and weight not in other.zero_gradient_weights
                                   and any(w.weight == weight for w in other.weights))
        if alternative is not None:
            found.append(finding(WEIGHT_WITHOUT_GRADIENT, AdviceFacts(row.label, _figures(alternative),
                                                                      weight=weight), alternative))
    return found

