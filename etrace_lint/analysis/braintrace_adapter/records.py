"""Reading braintrace's compiler records: kind, level, primitive and context, whatever the version's layout."""

from __future__ import annotations

from typing import Any, Mapping


def _enum_value(member: Any) -> str:
    value = getattr(member, "value", None)
    return value if isinstance(value, str) else str(member)


def record_kind(record: Any) -> str:
    return _enum_value(getattr(record, "kind", None))


def record_level(record: Any) -> str:
    return _enum_value(getattr(record, "level", None))


def record_primitive_name(record: Any) -> str:
    prim = getattr(record, "primitive", None)
    return getattr(prim, "name", "") if prim is not None else ""


def record_context(record: Any) -> Mapping[str, Any]:
    """The record's context, read-only (it is the compiler's own dict)."""
    return getattr(record, "context", None) or {}
