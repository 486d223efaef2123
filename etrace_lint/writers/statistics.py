"""``--statistics``: the number of findings per rule, as ``ruff check --statistics`` prints it."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, TextIO, TypedDict

from ..core.findings import Level
from ..core.registry import all_rules
from .run_info import RunInfo

if TYPE_CHECKING:  # annotations only: printing needs neither the policy nor the settings it loads
    from ..policy.decide import Outcome


class RuleCount(TypedDict):
    """One rule's row: its id, name, highest level and number of findings."""

    code: str
    name: str
    level: str
    count: int


def rule_counts(outcome: Outcome) -> list[RuleCount]:
    """One row per rule with findings, most findings first, then by id.

    A rule's level is its findings' highest (a configured level may differ per file).
    """
    rows: dict[str, RuleCount] = {}
    for finding in outcome.findings:
        row = rows.get(finding.rule_id)
        if row is None:
            rule = all_rules().get(finding.rule_id)
            row = rows[finding.rule_id] = {"code": finding.rule_id, "name": rule.name if rule else "",
                                           "level": finding.level.value, "count": 0}
        row["count"] += 1
        if finding.level.rank > Level(row["level"]).rank:
            row["level"] = finding.level.value
    return sorted(rows.values(), key=lambda row: (-row["count"], row["code"]))


def write_statistics_json(outcome: Outcome, info: RunInfo, stream: TextIO) -> None:
    """``[{"code": "ETL005", "name": ..., "level": ..., "count": 2}, ...]``."""
    json.dump(rule_counts(outcome), stream, indent=2, sort_keys=True)
    stream.write("\n")
