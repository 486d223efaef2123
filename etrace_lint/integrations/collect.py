"""Each distinct compile linted once, and kept with whoever compiled it (a test id, a notebook cell).

:class:`CompileLinter` is the capture handler: the capture core lints the model in the program's own
process and puts its state back; the linter remembers the result under the compile's key, so a model
that several tests compile is linted once and every one of those tests still sees its findings.
"""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from ..capture.handover import Capture
from ..capture.site import CaptureSite
from ..config.settings import EngineSettings, OutputSettings, PolicySettings
from ..core.findings import Finding, Level, TargetResult
from ..core.json_types import JsonObject, JsonValue
from ..fixes import attach_fixes
from ..policy.decide import Outcome, apply_policy, counted_notes
from ..writers import RunInfo


@dataclass(frozen=True)
class LintedModel:
    """One distinct compile and what its lint found."""

    key: str  # the same model, inputs and algorithm compiled again has the same key, in any process
    site: CaptureSite
    result: TargetResult

    def to_json(self) -> JsonObject:
        return {"key": self.key, "site": self.site.to_json(), "result": self.result.to_json()}

    @classmethod
    def from_json(cls, data: JsonObject) -> LintedModel:
        return cls(str(data["key"]), CaptureSite.from_json(_object(data["site"])),
                   TargetResult.from_json(_object(data["result"])))


def _object(value: JsonValue) -> JsonObject:
    if not isinstance(value, dict):
        raise ValueError(f"not a JSON object: {value!r}")
    return value


@dataclass(frozen=True)
class Compiled:
    """Who compiled which model: a test id or a cell, and the model's key."""

    owner: str
    key: str


@dataclass
class CompileLinter:
    """The capture handler: lints each distinct compile once and records who compiled what."""

    settings: EngineSettings
    owner: Callable[[], str]  # who is compiling now
    models: dict[str, LintedModel] = field(default_factory=dict)
    compiles: list[Compiled] = field(default_factory=list)

    def __call__(self, capture: Capture) -> None:
        self.lint(capture)

    def lint(self, capture: Capture) -> LintedModel:
        """The capture's lint: done now, or the earlier result of the same model."""
        from ..capture import key, lint  # import JAX: the program compiling a model has, by now

        digest = key.capture_key(capture)
        model = self.models.get(digest)
        if model is None:
            model = self.models[digest] = LintedModel(digest, capture.site, lint.lint_capture(capture, self.settings))
        record = Compiled(self.owner(), digest)
        if record not in self.compiles:
            self.compiles.append(record)
        return model

    def models_of(self, compiles: Iterable[Compiled]) -> list[LintedModel]:
        """The distinct models of these compiles, in the order they were first compiled."""
        keys = dict.fromkeys(record.key for record in compiles)
        return [self.models[key] for key in keys if key in self.models]

    def to_json(self) -> JsonObject:
        return {"models": [model.to_json() for model in self.models.values()],
                "compiles": [[record.owner, record.key] for record in self.compiles]}

    def merge(self, data: JsonObject) -> None:
        """Another process's lints (an xdist worker's): a model linted in both is kept once."""
        models, compiles = data.get("models", []), data.get("compiles", [])
        if not isinstance(models, list) or not isinstance(compiles, list):
            raise ValueError("not the lints of another process")
        for item in models:
            model = LintedModel.from_json(_object(item))
            self.models.setdefault(model.key, model)
        for pair in compiles:
            if not isinstance(pair, list):
                raise ValueError(f"not a compile: {pair!r}")
            owner, key = pair
            record = Compiled(str(owner), str(key))
            if record not in self.compiles:
                self.compiles.append(record)


def policy_outcome(models: list[LintedModel], settings: PolicySettings, fixes: bool = True) -> Outcome:
    """What the policy shows of these models' lints, as for a run of the CLI (with the fixes offered)."""
    results = [model.result for model in models]
    findings = [finding for result in results for finding in result.findings]
    tool_errors = [error for result in results for error in result.tool_errors]
    # no file was linted whole here: a suppression no compile matched is not reported as unused
    outcome = apply_policy(findings, tool_errors, settings, [], notes_left_out=counted_notes(results))
    return dataclasses.replace(outcome, findings=attach_fixes(outcome.findings)) if fixes else outcome


def at_or_above(outcome: Outcome, level: Level) -> list[Finding]:
    """The findings shown that are not suppressed and at least as severe as ``level``."""
    return [f for f in outcome.findings if not f.suppressed and f.level.rank >= level.rank]


def now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def run_info(models: list[LintedModel], settings: OutputSettings, started: str, color: bool = False) -> RunInfo:
    """The facts the writers print about these lints."""
    results = [model.result for model in models]
    verify_rows = [row for result in results for row in result.verify_rows]
    return RunInfo(root=settings.root, start_time=started, end_time=now(), targets=len(models),
                   files_seen=len({model.site.path for model in models}),
                   targets_failed=sum(1 for result in results if result.tool_errors),
                   verify_rows=verify_rows, advice_rows=[row for result in results for row in result.advice_rows],
                   device=next((str(row.get("device", "")) for row in verify_rows if row.get("device")), ""),
                   show_flows=settings.show_flows, unsafe_fixes=settings.unsafe_fixes, color=color)
