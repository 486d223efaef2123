"""Where our SARIF and JSON outputs put the facts of a run, for the writers that put them there and
for the one reader of our own logs, ``etrace-lint merge``.

Nothing else reads an output back: the rest of the program reads a :class:`~etrace_lint.core.findings.Finding`'s
typed fields. A merge reads shards' documents, so what it needs of them is read here, by name, and
nowhere else.
"""

from __future__ import annotations

from ..core.json_types import JsonObject, JsonValue, json_at, json_object, json_str

SHARD_PROPERTY = "etraceLintShard"  # which part of the targets a --shard run linted
MODEL_PROPERTY = "model"  # the model a SARIF result or notification is about
DEVICE_PROPERTY = "device"  # the device --verify ran on, a SARIF run's property


def sarif_run_properties(log: JsonObject) -> JsonObject:
    """The properties of the one run in a SARIF log of ours."""
    return json_object(json_object(json_at(log, "runs", 0)).get("properties", {}))


def sarif_model(item: JsonObject) -> str:
    """The model a SARIF result or tool execution notification of ours is about ("" when none)."""
    return json_str(json_object(item.get("properties", {})).get(MODEL_PROPERTY, ""))


def sarif_device(log: JsonObject) -> str:
    """The device a SARIF log of ours says --verify ran on ("" when none)."""
    return json_str(sarif_run_properties(log).get(DEVICE_PROPERTY, ""))


def shard_record(kind: str, document: JsonObject) -> JsonValue:
    """The shard record of a ``--shard`` run's SARIF log or JSON output (None when it has none)."""
    holder = sarif_run_properties(document) if kind == "sarif" else document
    return holder.get(SHARD_PROPERTY)
