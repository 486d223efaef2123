"""The types of JSON data as the writers, the cache and the wire build and read it.

``JsonValue`` is what ``json.loads`` returns and ``json.dumps`` takes; a
finding's SARIF properties, a cache entry and a worker's message are made of it.
"""

from __future__ import annotations

import enum
from typing import TypeAlias

JsonValue: TypeAlias = "None | bool | int | float | str | list[JsonValue] | dict[str, JsonValue]"
JsonObject: TypeAlias = "dict[str, JsonValue]"


# Readers of a document we wrote ourselves (a cache entry, a worker's message, a shard's output):
# each narrows one value to the type its writer gave it, and a value of another type (a document
# from another version, or damaged) is a TypeError, which the cache reads as a miss.


def _wrong(value: JsonValue, wanted: str) -> TypeError:
    return TypeError(f"expected {wanted} in the JSON document, not {type(value).__name__}")


def json_object(value: JsonValue) -> JsonObject:
    if not isinstance(value, dict):
        raise _wrong(value, "an object")
    return value


def json_list(value: JsonValue) -> list[JsonValue]:
    if not isinstance(value, list):
        raise _wrong(value, "a list")
    return value


def json_str(value: JsonValue) -> str:
    if not isinstance(value, str):
        raise _wrong(value, "a string")
    return value


def json_int(value: JsonValue) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise _wrong(value, "an integer")
    return value


def json_float(value: JsonValue) -> float:
    """A number: JSON writes a float with an integral value as it was, and an int stays one."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise _wrong(value, "a number")
    return value


def optional_int(value: JsonValue) -> int | None:
    return None if value is None else json_int(value)


def optional_float(value: JsonValue) -> float | None:
    return None if value is None else json_float(value)


def optional_str(value: JsonValue) -> str | None:
    return None if value is None else json_str(value)


def json_objects(value: JsonValue) -> list[JsonObject]:
    """A list of objects (``None`` or a missing key reads as none)."""
    return [json_object(item) for item in json_list(value)] if value is not None else []


def json_strs(value: JsonValue) -> list[str]:
    """A list of strings (``None`` or a missing key reads as none)."""
    return [json_str(item) for item in json_list(value)] if value is not None else []


def json_at(value: JsonValue, *path: str | int) -> JsonValue:
    """The value at ``path`` (keys of objects, indices of lists): ``json_at(log, "runs", 0, "tool")``."""
    for step in path:
        value = json_object(value)[step] if isinstance(step, str) else json_list(value)[step]
    return value


def shown_as_json(value: object) -> JsonValue:
    """A value as JSON shows it: an enum by its value, lists and dicts item by item, a value JSON has no
    type for by its text (as ``json.dumps(default=str)`` writes it), anything else as it is."""
    if isinstance(value, enum.Enum) and not isinstance(value, (str, int)):  # a str or int enum prints as itself
        return shown_as_json(value.value)
    if isinstance(value, (list, tuple)):
        return [shown_as_json(v) for v in value]
    if isinstance(value, dict):
        return {str(k): shown_as_json(v) for k, v in value.items()}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)
