"""Verdicts -> findings on the user's lines, and the rows of the summary table."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from ..core.details import VerifyHarness, VerifyLeaf, VerifyNotRun, VerifyWeight
from ..core.findings import Finding, Location, Subject
from ..core.naming import StatePath, display_name, path_key
from ..core.registry import all_rules, measured_rule
from ..core.rule import GradientFacts
from . import verdict as judge
from .rows import VerifyRow

if TYPE_CHECKING:  # annotations only
    from ..analysis.context import AnalysisContext

NOT_RUN, HARNESS = "ETL405", "ETL499"


def _number(value: float | None) -> str:
    if value is None:
        return "n/a"
    return f"{value:.3g}"


def _span(steps: int, warmup: int) -> str:
    """The run a row measured: its length, and where it started when not from rest."""
    span = f"over {steps} step{'s' if steps != 1 else ''}"
    if warmup:
        span += (f" from the states {warmup} steps of its inputs leave (from rest that step drives nothing to "
                 f"compare)")
    return span


def _why_scaled(factor: float) -> str:
    """What a multiple of the exact gradient usually means."""
    whole = judge.whole_multiple(factor)
    if whole is not None:
        return (f"a whole multiple usually means the online rule counts one path from the weight to the loss "
                f"{judge.times_word(whole)}, as braintrace does when a hidden state is computed in the same step "
                f"from "
                f"another hidden state's new value (braintrace.nn.LSTMCell's c feeding h)")
    if factor < 0:
        return "the sign is flipped: an ETP rule or the compiler is wrong"
    return "an ETP rule or the compiler scales this gradient"


class FindingMaker:
    """Knows where a model's weights live and which other findings explain them."""

    def __init__(self, context: AnalysisContext, target: str, other_findings: list[Finding], device: str = ""):
        self.context = context
        self.locator = context.locator
        self.target = target
        self.device = device
        self._others = other_findings

    # ------------------------------------------------------------------ places

    def explanation(self, weight: StatePath) -> Finding | None:
        """The linter's own finding that tells why ``weight`` is left out, if there is one."""
        name = display_name(weight)
        rules = all_rules()
        found = [f for f in self._others
                 if f.subject.weight == name and rules[f.rule_id].explains_weight and not rules[f.rule_id].measured]
        found.sort(key=lambda f: (-f.level.rank, f.rule_id))
        return found[0] if found else None

    def weight_locations(self, weight: StatePath) -> tuple[Location, list[Location]]:
        """Where the ParamState is created; the ETP op (or first use) and the factory as related."""
        created = self.locator.of_state(weight)
        used = self.locator.of_weight(weight, label=f"{display_name(weight)} is used here")
        primary = self.locator.first(created, used)
        related = [used] if used is not None and (used.path, used.line) != (primary.path, primary.line) else []
        return primary, related

    def _finding(self, rule_id: str, message: str, primary: Location, related: list[Location],
                 details: VerifyWeight | VerifyNotRun | VerifyHarness, subject: Subject) -> Finding:
        related = list(related) + [self.locator.factory_related]
        return Finding(rule_id, all_rules()[rule_id].level, message, self.target, primary, tuple(related),
                       subject=subject, details=details)

    # ------------------------------------------------------------------ findings

    def for_weight(self, rule_id: str, algorithm: str, steps: int, weight: tuple[object, ...],
                   rows: list[VerifyRow]) -> Finding:
        """One finding for the leaves of one weight that share a verdict's rule; ``rows[0]`` is the worst."""
        worst = rows[0]
        shown = display_name(weight) + (worst.leaf if len(rows) == 1 else "")
        more = f" ({len(rows)} leaves; worst {worst.leaf})" if len(rows) > 1 else ""
        primary, related = self.weight_locations(weight)
        details = VerifyWeight(_leaf(worst), tuple(_leaf(r) for r in rows) if len(rows) > 1 else ())
        factor = worst.scale
        explained = self.explanation(weight) if rule_id == "ETL402" else None
        if explained is not None:
            details = replace(details, explained_by=explained.rule_id)
            related.insert(0, Location(explained.location.path, explained.location.line,
                                       explained.location.column, f"{explained.rule_id}: why it is left out"))
        facts = GradientFacts(
            algorithm=algorithm, weight=shown, leaves=more, span=_span(steps, worst.warmup),
            verdict=worst.verdict.value, reason=worst.reason or "", rel_error=_number(worst.rel_error),
            cosine=_number(worst.cosine), cosine_floor=worst.cosine_floor,
            scale=judge.describe_scale(factor) if factor is not None else "",
            why_scaled=_why_scaled(factor) if factor is not None else "",
            explained_by=f"{explained.rule_id} on line {explained.line}" if explained is not None else "",
            draws=judge.describe_further_draws(worst.draws, worst.more_draws) if worst.draws else "",
            online_without_bptt=_number(worst.online_norm) if worst.bptt_norm == 0 and worst.online_norm else "")
        explain = measured_rule(rule_id).explain
        assert explain is not None  # every --verify rule words its facts (rules/etl40*.py)
        message = explain(facts)  # the rule words what was measured
        subject = Subject(weight=display_name(weight), weight_path=path_key(weight), algorithm=algorithm)
        return self._finding(rule_id, message, primary, related, details, subject)

    def not_run(self, message: str, algorithm: str = "", learner_failed: bool = False) -> Finding:
        details = VerifyNotRun(algorithm, self.device, learner_failed)
        return self._finding(NOT_RUN, message, self.locator.factory, [], details, Subject(algorithm=algorithm))

    def harness_mismatch(self, algorithm: str, steps: int, online_loss: float, bptt_loss: float) -> Finding:
        message = (f"--verify compared nothing for {algorithm} over {steps} steps: the online run's loss "
                   f"{online_loss:.6g} differs from the BPTT run's {bptt_loss:.6g} on the same inputs and "
                   f"states; the check itself is broken for this model")
        details = VerifyHarness(algorithm, steps, online_loss, bptt_loss, self.device)
        return self._finding(HARNESS, message, self.locator.factory, [], details, Subject(algorithm=algorithm))


def _leaf(row: VerifyRow) -> VerifyLeaf:
    """One leaf's row of the --verify table, as its finding keeps it."""
    return VerifyLeaf(row.algorithm, row.steps, row.weight, row.leaf, row.verdict.value, row.expected,
                      row.rel_error, row.cosine, row.scale, row.device)
