"""``etrace-lint merge``: the logs of ``--shard 1/N`` ... ``N/N`` -> the log of one unsharded run.

Each shard's SARIF (or JSON) output records which shard it is and which
targets it linted. The merge checks that the N shards are all there, each
once, and that no target was linted twice or by none (runners that split
the tree differently, for example from different caches, would do that);
then it concatenates their results in the order one run writes them and
drops the shard records. Each record carries the SHA-256 of every file
holding a target, so shards made from different copies of a file (runners
on different commits) are refused, naming the file. Apart from the
invocation times, the merged log equals the log of the unsharded run.
"""

from __future__ import annotations

import json
from typing import Callable, Iterable

from ..core.exit_codes import exit_code
from ..core.findings import Level
from ..core.json_types import (
    JsonObject,
    JsonValue,
    json_at,
    json_int,
    json_list,
    json_object,
    json_objects,
    json_str,
    optional_str,
)
from .own_logs import DEVICE_PROPERTY, SHARD_PROPERTY, sarif_device, sarif_model, sarif_run_properties, shard_record


class MergeError(Exception):
    """Logs that cannot be merged: exit 2 with the message."""


def _load(path: str) -> JsonValue:
    """The JSON document at ``path``, of whatever shape: :func:`_kind` tells what it is."""
    try:
        with open(path, encoding="utf-8") as handle:
            document: JsonValue = json.load(handle)
            return document
    except OSError as exc:
        raise MergeError(f"{path}: cannot read it: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise MergeError(f"{path}: not a JSON document: {exc}") from None


def _kind(path: str, document: JsonValue) -> str:
    if isinstance(document, dict) and isinstance(document.get("runs"), list) and document["runs"]:
        return "sarif"
    if isinstance(document, dict) and "findings" in document and "toolErrors" in document:
        return "json"
    raise MergeError(f"{path}: neither an etrace-lint SARIF log nor its JSON output")


def _shard_record(path: str, kind: str, document: JsonObject) -> JsonObject:
    record = shard_record(kind, document)
    if not isinstance(record, dict) or not {"index", "count", "targets"} <= set(record):
        raise MergeError(f"{path}: not the output of a --shard run")
    return record


def _first_difference(a: object, b: object, where: str = "") -> str | None:
    """The first place two records differ, as ``key: a vs b``."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            found = _first_difference(a.get(key), b.get(key), f"{where}.{key}" if where else key)
            if found:
                return found
        return None
    if a != b:
        return f"{where}: {json.dumps(a)} vs {json.dumps(b)}"
    return None


# what every shard of one run shares, in the order a difference is reported
_SAME_RUN = (("etraceLint", "were made by different versions of etrace-lint"),
             ("libraries", "were made with different library versions"),
             ("configuration", "were made with different configurations"),
             ("count", "come from splits into different numbers of shards"),
             ("discovered", "discovered different targets (every runner must lint the same tree)"))


def check_same_run(paths: list[str], records: list[JsonObject]) -> None:
    """Refuse shards of different runs: another version, configuration, split or tree, or another copy
    of a file in the same tree."""
    for key, why in _SAME_RUN:
        for path, record in zip(paths[1:], records[1:]):
            if key not in records[0] and key not in record:
                continue
            difference = _first_difference(records[0].get(key), record.get(key), key)
            if difference:
                raise MergeError(f"{paths[0]} and {path} {why}: {difference}")
    _check_same_files(paths, records)


def _check_same_files(paths: list[str], records: list[JsonObject]) -> None:
    """Refuse shards whose trees hold different copies of a linted file (a runner on another commit)."""
    first = records[0].get("files")
    for path, record in zip(paths[1:], records[1:]):
        files = record.get("files")
        if first is None and files is None:
            continue
        if not isinstance(first, dict) or not isinstance(files, dict):
            missing = paths[0] if not isinstance(first, dict) else path
            raise MergeError(f"{missing} does not record the digests of its files (made by another version of "
                             f"etrace-lint): it cannot be told to come from the same tree")
        for name in sorted(set(first) | set(files)):
            if first.get(name) != files.get(name):
                raise MergeError(f"{paths[0]} and {path} were made from different copies of {name} (sha256 "
                                 f"{_short_digest(optional_str(first.get(name)))} vs "
                                 f"{_short_digest(optional_str(files.get(name)))}): every "
                                 f"runner must lint the same commit")


def _short_digest(digest: str | None) -> str:
    return "none" if digest is None else (digest[:16] or "unreadable")


def check_shards(paths: list[str], records: list[JsonObject]) -> None:
    check_same_run(paths, records)
    counts = {json_int(record["count"]) for record in records}
    if len(counts) != 1:
        raise MergeError("the logs come from splits into different numbers of shards: "
                         + ", ".join(f"{p} ({r['index']}/{r['count']})" for p, r in zip(paths, records)))
    count = counts.pop()
    seen: dict[int, str] = {}
    for path, record in zip(paths, records):
        index = json_int(record["index"])
        if index in seen:
            raise MergeError(f"{seen[index]} and {path} are both shard {index}/{count}")
        seen[index] = path
    missing = sorted(set(range(1, count + 1)) - set(seen))
    if missing:
        raise MergeError("missing shard" + ("s " if len(missing) > 1 else " ")
                         + ", ".join(f"{i}/{count}" for i in missing))
    owner: dict[str, str] = {}
    for path, record in zip(paths, records):
        for target in map(json_str, json_list(record["targets"])):
            if target in owner:
                raise MergeError(f"{target} was linted by two shards ({owner[target]} and {path}): every runner "
                                 "must see the same tree and the same cache (or none) to split it the same way")
            owner[target] = path
    expected = {json_int(total) if (total := record.get("total")) is not None else None for record in records}
    if len(expected) == 1 and None not in expected and expected.pop() != len(owner):
        raise MergeError("the shards linted fewer targets than the run holds: every runner must see the same tree "
                         "and the same cache (or none) to split it the same way")


def _sarif_result_key(result: JsonObject) -> tuple[str, int, int, str, str, str]:
    location = json_at(result, "locations", 0, "physicalLocation")
    region = json_object(json_at(location, "region"))
    model = sarif_model(result)
    text = json_str(json_at(result, "message", "text"))
    suffix = f" [{model}]" if model else ""
    message = text[: -len(suffix)] if suffix and text.endswith(suffix) else text
    return (json_str(json_at(location, "artifactLocation", "uri")), json_int(region["startLine"]),
            json_int(region.get("startColumn", 1)), json_str(result["ruleId"]), model, message)


def _sarif_notification_key(note: JsonObject) -> tuple[str, int, str, str]:
    location = json_at(note, "locations", 0, "physicalLocation")
    model = sarif_model(note)
    return (json_str(json_at(location, "artifactLocation", "uri")), json_int(json_at(location, "region", "startLine")),
            model, json_str(json_at(note, "message", "text")))


def _in_order(items: Iterable[JsonObject], key: Callable[[JsonObject], tuple[str | int, ...]]) -> list[JsonValue]:
    """Items of several logs in the order one run writes them."""
    ordered = sorted(items, key=key)
    return [item for item in ordered]  # a list of objects, as the list of JSON values a log holds


def _run(document: JsonObject) -> JsonObject:
    """The one run of a SARIF log of ours."""
    return json_object(json_at(document, "runs", 0))


def merge_sarif(documents: list[JsonObject]) -> JsonObject:
    merged = json_object(json.loads(json.dumps(documents[0])))
    run = _run(merged)
    rules = [json_object(json_at(doc, "runs", 0, "tool", "driver")).get("rules") for doc in documents]
    if any(r != rules[0] for r in rules):
        raise MergeError("the shards ran with different rules or versions of etrace-lint")
    run["results"] = _in_order((r for doc in documents for r in json_objects(_run(doc).get("results"))),
                               _sarif_result_key)
    invocations = [json_object(json_at(doc, "runs", 0, "invocations", 0)) for doc in documents]
    notes = _in_order((n for inv in invocations for n in json_objects(inv.get("toolExecutionNotifications"))),
                      _sarif_notification_key)
    invocation = json_object(json_at(run, "invocations", 0))
    invocation["executionSuccessful"] = not notes
    if notes:
        invocation["toolExecutionNotifications"] = notes
    else:
        invocation.pop("toolExecutionNotifications", None)
    starts = [json_str(inv["startTimeUtc"]) for inv in invocations if inv.get("startTimeUtc")]
    ends = [json_str(inv["endTimeUtc"]) for inv in invocations if inv.get("endTimeUtc")]
    if starts:
        invocation["startTimeUtc"] = min(starts)
    if ends:
        invocation["endTimeUtc"] = max(ends)
    devices = sorted({sarif_device(doc) for doc in documents} - {""})
    properties: JsonObject = {DEVICE_PROPERTY: devices[0]} if devices else {}
    properties.update((key, value) for key, value in sarif_run_properties(merged).items()
                      if key not in (SHARD_PROPERTY, DEVICE_PROPERTY))
    if properties:
        run["properties"] = properties
    else:
        run.pop("properties", None)
    return merged


def _json_key(item: JsonObject) -> tuple[str, int, int, str, str, str]:
    location = json_object(item["location"])
    return (json_str(location["path"]), json_int(location["line"]), json_int(location.get("column", 1)),
            json_str(item.get("rule", "")), json_str(item.get("model", "")), json_str(item.get("message", "")))


def _tool_error_key(error: JsonObject) -> tuple[str, int, str, str]:
    location = json_object(error["location"])
    return (json_str(location["path"]), json_int(location["line"]), json_str(error.get("model", "")),
            json_str(error.get("message", "")))


def merge_json(documents: list[JsonObject]) -> JsonObject:
    merged = json_object(json.loads(json.dumps(documents[0])))
    merged.pop(SHARD_PROPERTY, None)
    merged["findings"] = _in_order((f for doc in documents for f in json_objects(doc["findings"])), _json_key)
    merged["toolErrors"] = _in_order((e for doc in documents for e in json_objects(doc["toolErrors"])),
                                     _tool_error_key)
    summary = merged.get("summary")
    if isinstance(summary, dict):
        for key, value in summary.items():
            # every shard discovers the whole tree; what each linted adds up
            if isinstance(value, int) and key != "files":
                summary[key] = sum(json_int(json_object(doc.get("summary", {})).get(key, 0)) for doc in documents)
    return merged


def merge_files(paths: list[str]) -> tuple[str, JsonObject]:
    """The kind ("sarif" or "json") and the merged document of the shard logs at ``paths``."""
    if not paths:
        raise MergeError("merge needs the logs of every shard")
    loaded = [_load(p) for p in paths]
    kinds = {_kind(p, d) for p, d in zip(paths, loaded)}
    documents = [json_object(document) for document in loaded]  # _kind refuses anything but an object
    if len(kinds) != 1:
        raise MergeError("cannot merge SARIF logs with JSON outputs")
    kind = kinds.pop()
    check_shards(paths, [_shard_record(p, kind, d) for p, d in zip(paths, documents)])
    return kind, (merge_sarif(documents) if kind == "sarif" else merge_json(documents))


def merged_exit_code(kind: str, document: JsonObject, fail_rank: int, exit_zero: bool) -> int:
    """The exit code the unsharded run would have had, read from its merged document."""
    ranks = {level.value: level.rank for level in Level}
    if kind == "sarif":
        run = _run(document)
        failed = not json_object(json_at(run, "invocations", 0)).get("executionSuccessful", True)
        levels = [json_str(r.get("level", "warning")) for r in json_objects(run.get("results"))
                  if not r.get("suppressions")]
    else:
        failed = bool(document["toolErrors"])
        levels = [json_str(f["level"]) for f in json_objects(document["findings"]) if not f.get("suppressed")]
    return exit_code(failed, any(ranks.get(level, 0) >= fail_rank for level in levels), exit_zero)
