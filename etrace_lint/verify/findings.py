"""Verdicts -> findings on the user's lines, and the rows of the summary table."""

from __future__ import annotations

from typing import Any

from ..naming import display_name, format_path
from ..findings import Finding, Location
from ..registry import all_rules
from . import compare

NOT_RUN, HARNESS = "ETL405", "ETL499"


def _number(value: Any) -> str:
    if value is None:
        return "n/a"
    return f"{value:.3g}"


def _why_scaled(factor: float) -> str:
    """What a multiple of the exact gradient usually means."""
    size = abs(factor)
    whole = round(size)
    if factor > 0 and whole >= 2 and abs(size - whole) < 0.01:
        times = {2: "twice", 3: "three times"}.get(whole, f"{whole} times")
        return (f"a whole multiple usually means the online rule counts one path from the weight to the loss "
                f"{times}, as braintrace does when a hidden state is computed in the same step from "
                f"another hidden state's new value (braintrace.nn.LSTMCell's c feeding h)")
    if factor < 0:
        return "the sign is flipped: an ETP rule or the compiler is wrong"
    return "an ETP rule or the compiler scales this gradient"


class FindingMaker:
    """Knows where a model's weights live and which other findings explain them."""

    def __init__(self, context: Any, target: str, other_findings: list[Finding], device: str = ""):
        self.context = context
        self.locator = context.locator
        self.target = target
        self.device = device
        self._others = other_findings

    # ------------------------------------------------------------------ places

    def explanation(self, weight: tuple) -> Finding | None:
        """The linter's own finding that tells why ``weight`` is left out, if there is one."""
        name = display_name(weight)
        found = [f for f in self._others
                 if f.properties.get("weight") == name and all_rules()[f.rule_id].explains_weight
                 and not f.rule_id.startswith("ETL4")]
        found.sort(key=lambda f: (-f.level.rank, f.rule_id))
        return found[0] if found else None

    def weight_locations(self, weight: tuple) -> tuple[Location, list[Location]]:
        """Where the ParamState is created; the ETP op (or first use) and the factory as related."""
        created = self.locator.of_state(weight)
        used = self.locator.of_weight(weight, label=f"{display_name(weight)} is used here")
        primary = self.locator.first(created, used)
        related = [used] if used is not None and (used.path, used.line) != (primary.path, primary.line) else []
        return primary, related

    def _finding(self, rule_id: str, message: str, primary: Location, related: list[Location],
                 properties: dict) -> Finding:
        related = list(related) + [self.locator.factory_related]
        return Finding(rule_id, all_rules()[rule_id].level, message, self.target, primary, tuple(related), properties)

    # ------------------------------------------------------------------ findings

    def for_weight(self, rule_id: str, algorithm: str, steps: int, weight: tuple, rows: list[dict]) -> Finding:
        """One finding for the leaves of one weight that share a verdict's rule; ``rows[0]`` is the worst."""
        worst = rows[0]
        shown = display_name(weight) + (worst["leaf"] if len(rows) == 1 else "")
        more = f" ({len(rows)} leaves; worst {worst['leaf']})" if len(rows) > 1 else ""
        numbers = f"relative error {_number(worst['relError'])}, cosine {_number(worst['cosine'])}"
        primary, related = self.weight_locations(weight)
        properties = {"weight": format_path(weight), "verify": self._verify_properties(worst)}
        if len(rows) > 1:
            properties["verify"]["leaves"] = [self._verify_properties(r) for r in rows]
        factor = worst.get("scale")
        span = f"over {steps} step{'s' if steps != 1 else ''}"
        scaled = (f"{shown}{more} under {algorithm} {span}: online gradient is "
                  f"{compare.describe_scale(factor)}" if factor is not None else "")
        if rule_id == "ETL401" and worst["verdict"] == compare.NONFINITE:
            message = (f"{algorithm} online gradient of {shown}{more} is NaN or infinite {span}, although it "
                       f"must equal BPTT here ({worst['reason']}): an ETP rule or the compiler is wrong")
        elif rule_id == "ETL401" and factor is not None:
            message = (f"{scaled}, although it must equal BPTT here ({worst['reason']}): "
                       f"{_why_scaled(factor)}")
        elif rule_id == "ETL401":
            message = (f"{algorithm} online gradient of {shown}{more} differs from BPTT ({numbers}) {span}, "
                       f"although it must equal BPTT here ({worst['reason']}): an ETP rule or the compiler "
                       f"is wrong")
        elif rule_id == "ETL402":
            message = (f"{shown} gets no online gradient under {algorithm} {span} while its "
                       f"BPTT gradient is not zero: it will not learn online")
            explained = self.explanation(weight)
            if explained is not None:
                message += f" (see {explained.rule_id} on line {explained.line})"
                properties["explainedBy"] = explained.rule_id
                related.insert(0, Location(explained.location.path, explained.location.line,
                                           explained.location.column, f"{explained.rule_id}: why it is left out"))
        elif rule_id == "ETL403" and factor is not None:
            message = f"{scaled}, an approximation ({worst['reason']})"
        elif rule_id == "ETL403":
            message = (f"{algorithm} online gradient of {shown}{more} approximates BPTT {span}: "
                       f"{numbers} ({worst['reason']})")
        elif factor is not None:
            message = (f"{scaled}: cosine {_number(worst['cosine'])} is below the floor "
                       f"{worst['cosineFloor']} ({worst['reason']})")
        else:
            message = (f"{algorithm} online gradient of {shown}{more} points away from BPTT {span}: "
                       f"cosine {_number(worst['cosine'])} is below the floor {worst['cosineFloor']} "
                       f"({worst['reason']})")
        return self._finding(rule_id, message, primary, related, properties)

    def _verify_properties(self, row: dict) -> dict:
        return {"algorithm": row["algorithm"], "steps": row["steps"], "weight": row["weight"],
                "leaf": row["leaf"], "verdict": row["verdict"], "expected": row["expected"],
                "relError": row["relError"], "cosine": row["cosine"], "scale": row.get("scale"),
                "device": row["device"]}

    def not_run(self, message: str, algorithm: str = "") -> Finding:
        properties = {"verify": {"algorithm": algorithm, "device": self.device}}
        return self._finding(NOT_RUN, message, self.locator.factory, [], properties)

    def harness_mismatch(self, algorithm: str, steps: int, online_loss: float, bptt_loss: float) -> Finding:
        message = (f"--verify compared nothing for {algorithm} over {steps} steps: the online run's loss "
                   f"{online_loss:.6g} differs from the BPTT run's {bptt_loss:.6g} on the same inputs and "
                   f"states; the check itself is broken for this model")
        properties = {"verify": {"algorithm": algorithm, "steps": steps, "onlineLoss": online_loss,
                                 "bpttLoss": bptt_loss, "device": self.device}}
        return self._finding(HARNESS, message, self.locator.factory, [], properties)
