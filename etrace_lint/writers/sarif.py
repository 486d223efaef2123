"""SARIF 2.1.0 for GitHub code scanning and IDE viewers, built with ``sarif-om``.

One run; every active rule in ``tool.driver.rules``; results with
root-relative URIs under ``%SRCROOT%``; tool errors as tool execution
notifications. Apart from the invocation times, the same input gives the
same log.
"""

from __future__ import annotations

import json
from typing import Any, TextIO

import attr
import sarif_om as om

from .. import __version__
from ..findings import Finding, Level, Location, ToolError
from ..registry import active_rules
from ..merge import SHARD_PROPERTY
from .fingerprints import primary_location_line_hash

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
INFORMATION_URI = "https://github.com/etrace-lint/etrace-lint"
ROOT_ID = "%SRCROOT%"
AUTOMATION_ID = "etrace-lint/"
_PROBLEM_SEVERITY = {Level.ERROR: "error", Level.WARNING: "warning", Level.NOTE: "recommendation"}
# sarif-om's defaults for these equal common values ("warning", True); a consumer
# should not have to know the schema's defaults to read them
_ALWAYS_KEPT = {"level", "executionSuccessful", "version", "results"}


def to_json(value: Any) -> Any:
    """sarif-om objects -> plain JSON under SARIF's property names, without unset fields or defaults."""
    if attr.has(type(value)):
        out = {}
        for field in attr.fields(type(value)):
            item = getattr(value, field.name)
            if item is None:
                continue
            name = field.metadata.get("schema_property_name", field.name)
            default = field.default
            if isinstance(default, attr.Factory):
                default = default.factory()
            if name not in _ALWAYS_KEPT and default is not attr.NOTHING and item == default:
                continue
            out[name] = to_json(item)
        return out
    if isinstance(value, dict):
        return {k: to_json(v) for k, v in value.items() if v is not None}
    if isinstance(value, (list, tuple)):
        return [to_json(v) for v in value]
    return value


def _help_text(markdown: str) -> str:
    """The rule's Markdown as plain text: no title line, section titles without ``##``."""
    lines = [line for line in markdown.splitlines() if not line.startswith("# ")]
    return "\n".join(line[3:] if line.startswith("## ") else line for line in lines).strip()


def _rule_descriptor(rule) -> om.ReportingDescriptor:
    markdown = rule.docs or rule.summary
    properties: dict[str, Any] = {
        "tags": sorted(set(rule.tags) | {"etrace"}),
        "precision": rule.precision,
        "problem.severity": _PROBLEM_SEVERITY[rule.level],
    }
    if rule.opt_in_flag:
        properties["optIn"] = rule.opt_in_flag
    return om.ReportingDescriptor(
        id=rule.id,
        name=rule.name,
        short_description=om.MultiformatMessageString(text=rule.summary),
        full_description=om.MultiformatMessageString(text=rule.full_description),
        help=om.MultiformatMessageString(text=_help_text(markdown), markdown=markdown),
        default_configuration=om.ReportingConfiguration(level=rule.level.value, enabled=rule.enabled),
        properties=properties,
    )


def _location(loc: Location, info, message: str | None = None, index: int | None = None) -> om.Location:
    return om.Location(
        id=index,
        physical_location=om.PhysicalLocation(
            artifact_location=om.ArtifactLocation(uri=info.relpath(loc.path), uri_base_id=ROOT_ID),
            region=om.Region(start_line=max(1, loc.line), start_column=max(1, loc.column)),
        ),
        message=om.Message(text=message) if message else None,
    )


def _result(finding: Finding, rule_index: dict[str, int], info) -> om.Result:
    fingerprint = primary_location_line_hash(finding.location.path, finding.location.line)
    suppressions = None
    if finding.suppressed:
        suppressions = [om.Suppression(kind="inSource", properties={"form": finding.suppressed})]
    model = f" [{finding.target}]" if finding.target else ""
    return om.Result(
        rule_id=finding.rule_id,
        rule_index=rule_index.get(finding.rule_id, -1),
        level=finding.level.value,
        message=om.Message(text=f"{finding.message}{model}"),
        locations=[_location(finding.location, info)],
        related_locations=[_location(r, info, r.label or "related", i)
                           for i, r in enumerate(finding.related, start=1)] or None,
        partial_fingerprints={"primaryLocationLineHash": fingerprint} if fingerprint else None,
        properties={"model": finding.target, **finding.properties},
        suppressions=suppressions,
    )


def _notification(error: ToolError, info) -> om.Notification:
    return om.Notification(
        level="error",
        message=om.Message(text=f"{error.message} [{error.target}]"),
        locations=[_location(error.location, info)],
        descriptor=om.ReportingDescriptorReference(id=error.reason),
        properties={"model": error.target},
    )


def build_log(outcome, info) -> dict:
    """The SARIF log as plain JSON."""
    rules = list(active_rules().values())
    rule_index = {rule.id: i for i, rule in enumerate(rules)}
    findings = sorted(outcome.findings, key=Finding.sort_key)
    tool_errors = sorted(outcome.tool_errors, key=ToolError.sort_key)
    invocation = om.Invocation(
        execution_successful=not tool_errors,
        tool_execution_notifications=[_notification(e, info) for e in tool_errors] or None,
        start_time_utc=info.start_time or None,
        end_time_utc=info.end_time or None,
    )
    run_properties = {}
    if info.device:
        run_properties["device"] = info.device
    if info.versions:
        run_properties["versions"] = dict(sorted(info.versions.items()))
    if info.shard:
        run_properties[SHARD_PROPERTY] = info.shard
    run = om.Run(
        tool=om.Tool(driver=om.ToolComponent(
            name="etrace-lint", semantic_version=__version__, version=__version__,
            information_uri=INFORMATION_URI, rules=[_rule_descriptor(r) for r in rules])),
        # the root stays unnamed: a log that holds no absolute path is the same on every
        # machine and leaks no user name; consumers resolve %SRCROOT% to their checkout
        original_uri_base_ids={ROOT_ID: om.ArtifactLocation(description=om.Message(
            text="The root of the linted project (the working directory, or --root)."))},
        automation_details=om.RunAutomationDetails(id=AUTOMATION_ID),
        invocations=[invocation],
        results=[_result(f, rule_index, info) for f in findings],
        column_kind="unicodeCodePoints",
        properties=run_properties or None,
    )
    return to_json(om.SarifLog(version="2.1.0", schema_uri=SCHEMA_URI, runs=[run]))


def write_sarif(outcome, info, stream: TextIO) -> None:
    json.dump(build_log(outcome, info), stream, indent=2, ensure_ascii=False)
    stream.write("\n")
