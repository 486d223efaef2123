"""SARIF 2.1.0 for GitHub code scanning and IDE viewers, built with ``sarif-om``.

One run; every active rule in ``tool.driver.rules``, its ``helpUri`` the rule's page on the
documentation site (``docs-url``); results with
root-relative URIs under ``%SRCROOT%``; tool errors as tool execution
notifications. Apart from the invocation times, the same input gives the
same log.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, TextIO

import attr
import sarif_om as om

from .. import __version__
from ..core.findings import Edit, Finding, Fix, Level, Location, ToolError
from ..core.json_types import JsonObject, JsonValue, json_object
from ..core.registry import active_rules
from ..core.rule import DOCS_URL, Rule, rule_page_url
from .advice_table import relocated
from .fingerprints import primary_location_line_hash
from .own_logs import DEVICE_PROPERTY, MODEL_PROPERTY, SHARD_PROPERTY
from .properties import finding_properties
from .run_info import RunInfo

if TYPE_CHECKING:  # annotations only: printing needs neither the policy nor the settings it loads
    from ..policy.decide import Outcome

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
INFORMATION_URI = "https://github.com/etrace-lint/etrace-lint"
ROOT_ID = "%SRCROOT%"
AUTOMATION_ID = "etrace-lint/"
_PROBLEM_SEVERITY = {Level.ERROR: "error", Level.WARNING: "warning", Level.NOTE: "recommendation"}


@dataclass(frozen=True)
class SarifLimits:
    """What GitHub code scanning accepts and shows (docs.github.com, "SARIF support for code
    scanning" and "SARIF results exceed limits"). Where GitHub accepts more than it shows,
    the log holds what it shows, so nothing is cut without the log saying so."""

    description_chars: int = 1024  # reportingDescriptor shortDescription / fullDescription text
    message_chars: int = 1024  # result message text, held to the descriptions' limit
    results_per_run: int = 25_000  # more and the upload is rejected; the most severe are kept
    locations_per_result: int = 100  # locations + relatedLocations: 1,000 accepted, 100 shown
    thread_flow_locations: int = 1_000  # per result: 10,000 accepted, 1,000 shown
    code_flows_per_result: int = 1  # one route a finding
    tags_per_rule: int = 10  # 20 accepted, 10 shown


GITHUB_LIMITS = SarifLimits()


def clip(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters at a word boundary, ending in an ellipsis."""
    if len(text) <= limit:
        return text
    cut = text[:limit - 1]
    space = cut.rfind(" ")
    if space > limit // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:") + "\u2026"
# sarif-om's defaults for these equal common values ("warning", True); a consumer
# should not have to know the schema's defaults to read them
_ALWAYS_KEPT = {"level", "executionSuccessful", "version", "results"}


def to_json(value: object) -> JsonValue:
    """sarif-om objects -> plain JSON under SARIF's property names, without unset fields or defaults."""
    kind = type(value)
    if attr.has(kind):
        out: JsonObject = {}
        for field in attr.fields(kind):
            item = getattr(value, field.name)
            if item is None:
                continue
            name = field.metadata.get("schema_property_name", field.name)
            default = field.default
            # attrs' stubs declare Factory a function returning the default's type; it is a class
            if isinstance(default, attr.Factory):  # type: ignore[arg-type]
                default = default.factory()
            if name not in _ALWAYS_KEPT and default is not attr.NOTHING and item == default:
                continue
            out[name] = to_json(item)
        return out
    if isinstance(value, dict):
        return {k: to_json(v) for k, v in value.items() if v is not None}
    if isinstance(value, (list, tuple)):
        return [to_json(v) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    raise TypeError(f"a SARIF log holds no {type(value).__name__}")


def _help_text(markdown: str) -> str:
    """The rule's Markdown as plain text: no title line, section titles without ``##``."""
    lines = [line for line in markdown.splitlines() if not line.startswith("# ")]
    return "\n".join(line[3:] if line.startswith("## ") else line for line in lines).strip()


def _rule_descriptor(rule: Rule, limits: SarifLimits = GITHUB_LIMITS,
                     docs_url: str = DOCS_URL) -> om.ReportingDescriptor:
    markdown = rule.docs or rule.summary
    properties: dict[str, object] = {
        "tags": sorted(set(rule.tags) | {"etrace"})[:limits.tags_per_rule],
        "precision": rule.precision,
        "problem.severity": _PROBLEM_SEVERITY[rule.level],
    }
    if rule.opt_in_flag:
        properties["optIn"] = rule.opt_in_flag
    return om.ReportingDescriptor(
        id=rule.id,
        name=rule.name,
        short_description=om.MultiformatMessageString(text=clip(rule.summary, limits.description_chars)),
        full_description=om.MultiformatMessageString(text=clip(rule.full_description, limits.description_chars)),
        help=om.MultiformatMessageString(text=_help_text(markdown), markdown=markdown),
        help_uri=rule_page_url(rule.id, docs_url),
        default_configuration=om.ReportingConfiguration(level=rule.level.value, enabled=rule.enabled),
        properties=properties,
    )


def _location(loc: Location, info: RunInfo, message: str | None = None, index: int | None = None) -> om.Location:
    return om.Location(
        id=index,
        physical_location=om.PhysicalLocation(
            artifact_location=om.ArtifactLocation(uri=info.relpath(loc.path), uri_base_id=ROOT_ID),
            region=om.Region(start_line=max(1, loc.line), start_column=max(1, loc.column)),
        ),
        message=om.Message(text=message) if message else None,
    )


def _code_flow(finding: Finding, info: RunInfo, limits: SarifLimits) -> om.CodeFlow:
    """The finding's route, as GitHub's "Show paths" draws it: one thread flow, one step a line."""
    steps = list(finding.flow)
    if len(steps) > limits.thread_flow_locations:  # the ends of a long route say the most
        half = limits.thread_flow_locations // 2
        steps = steps[:half] + steps[-(limits.thread_flow_locations - half):]
    return om.CodeFlow(
        message=om.Message(text=clip(f"{steps[0].label} \u2192 {steps[-1].label}", limits.message_chars)),
        thread_flows=[om.ThreadFlow(locations=[
            om.ThreadFlowLocation(location=_location(step, info, clip(step.label or "step", limits.message_chars)),
                                  execution_order=order)
            for order, step in enumerate(steps, start=1)])])


def _region(edit: Edit) -> om.Region:
    return om.Region(start_line=edit.line, start_column=edit.column, end_line=edit.end_line,
                     end_column=edit.end_column)


def _fixes(fix: Fix, info: RunInfo) -> list[om.Fix]:
    """A finding's fix as SARIF ``fixes``: per file, the replacements to make."""
    changes: dict[str, list[om.Replacement]] = {}
    for edit in fix.edits:
        changes.setdefault(edit.path, []).append(om.Replacement(
            deleted_region=_region(edit), inserted_content=om.ArtifactContent(text=edit.replacement)))
    return [om.Fix(description=om.Message(text=fix.message), properties={"applicability": fix.applicability},
                   artifact_changes=[om.ArtifactChange(
                       artifact_location=om.ArtifactLocation(uri=info.relpath(path), uri_base_id=ROOT_ID),
                       replacements=replacements) for path, replacements in changes.items()])]


def _result(finding: Finding, rule_index: dict[str, int], info: RunInfo,
            limits: SarifLimits = GITHUB_LIMITS) -> om.Result:
    fingerprint = primary_location_line_hash(finding.location.path, finding.location.line)
    suppressions = None
    if finding.suppressed:
        suppressions = [om.Suppression(kind="inSource", properties={"form": finding.suppressed})]
    model = f" [{finding.target}]" if finding.target else ""
    related = finding.related[:max(0, limits.locations_per_result - 1)]
    return om.Result(
        rule_id=finding.rule_id,
        rule_index=rule_index.get(finding.rule_id, -1),
        level=finding.level.value,
        message=om.Message(text=clip(f"{finding.message}{model}", limits.message_chars)),
        locations=[_location(finding.location, info)],
        related_locations=[_location(r, info, clip(r.label or "related", limits.message_chars), i)
                           for i, r in enumerate(related, start=1)] or None,
        code_flows=[_code_flow(finding, info, limits)][:limits.code_flows_per_result] if finding.flow else None,
        fixes=_fixes(finding.fix, info) if finding.fix is not None else None,
        partial_fingerprints={"primaryLocationLineHash": fingerprint} if fingerprint else None,
        properties={MODEL_PROPERTY: finding.target, **finding_properties(finding)},
        suppressions=suppressions,
    )


def _notification(error: ToolError, info: RunInfo) -> om.Notification:
    return om.Notification(
        level="error",
        message=om.Message(text=f"{error.message} [{error.target}]"),
        locations=[_location(error.location, info)],
        descriptor=om.ReportingDescriptorReference(id=error.reason),
        properties={MODEL_PROPERTY: error.target},
    )


def _within_results_limit(findings: list[Finding], limits: SarifLimits) -> tuple[list[Finding], int]:
    """At most ``results_per_run`` findings, the most severe kept, in the usual order; and how many
    were left out."""
    if len(findings) <= limits.results_per_run:
        return findings, 0
    kept = sorted(findings, key=lambda f: (-f.level.rank, Finding.sort_key(f)))[:limits.results_per_run]
    return sorted(kept, key=Finding.sort_key), len(findings) - len(kept)


def build_log(outcome: Outcome, info: RunInfo, limits: SarifLimits = GITHUB_LIMITS) -> JsonObject:
    """The SARIF log as plain JSON, within ``limits`` (GitHub's by default)."""
    rules = list(active_rules().values())
    rule_index = {rule.id: i for i, rule in enumerate(rules)}
    findings, left_out = _within_results_limit(sorted(outcome.findings, key=Finding.sort_key), limits)
    tool_errors = sorted(outcome.tool_errors, key=ToolError.sort_key)
    notifications = [_notification(e, info) for e in tool_errors]
    if left_out:
        notifications.append(om.Notification(level="warning", descriptor=om.ReportingDescriptorReference(
            id="results-left-out"), message=om.Message(
            text=f"{left_out} less severe results left out: GitHub code scanning accepts at most "
                 f"{limits.results_per_run} results per run (the text and JSON outputs hold them all)")))
    invocation = om.Invocation(
        execution_successful=not tool_errors,
        tool_execution_notifications=notifications or None,
        start_time_utc=info.start_time or None,
        end_time_utc=info.end_time or None,
    )
    run_properties: dict[str, object] = {}
    if info.device:
        run_properties[DEVICE_PROPERTY] = info.device
    if info.shard:
        run_properties[SHARD_PROPERTY] = info.shard
    if left_out:
        run_properties["resultsLeftOut"] = left_out
    if info.advice_rows:
        run_properties["advice"] = relocated(info.advice_rows, info.relpath)
    run = om.Run(
        tool=om.Tool(driver=om.ToolComponent(
            name="etrace-lint", semantic_version=__version__, version=__version__,
            information_uri=INFORMATION_URI, rules=[_rule_descriptor(r, limits, info.docs_url) for r in rules])),
        # the root stays unnamed: a log that holds no absolute path is the same on every
        # machine and leaks no user name; consumers resolve %SRCROOT% to their checkout
        original_uri_base_ids={ROOT_ID: om.ArtifactLocation(description=om.Message(
            text="The root of the linted project (the working directory, or --root)."))},
        automation_details=om.RunAutomationDetails(id=AUTOMATION_ID),
        invocations=[invocation],
        results=[_result(f, rule_index, info, limits) for f in findings],
        column_kind="unicodeCodePoints",
        properties=run_properties or None,
    )
    return json_object(to_json(om.SarifLog(version="2.1.0", schema_uri=SCHEMA_URI, runs=[run])))


def write_sarif(outcome: Outcome, info: RunInfo, stream: TextIO) -> None:
    json.dump(build_log(outcome, info), stream, indent=2, ensure_ascii=False)
    stream.write("\n")
