"""braintrace's compiler records, read once into :class:`RecordView`, whatever the version's layout.

The engine, the analyses and the rules read only the view: its kind and level as
braintrace spells them, the primitive by name, the paths as tuples, the context
read-only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Mapping

from ...core.naming import StatePath

_NO_CONTEXT: Mapping[str, Any] = MappingProxyType({})


@dataclass(frozen=True)
class RecordView:
    """One ``CompilationRecord`` of the compiler, as the rest of the linter reads it."""

    kind: str  # the ``DiagnosticKind`` value: ``relation_included``
    level: str  # the ``DiagnosticLevel`` value: ``info``, ``warning``, ``error``
    message: str  # braintrace's own text
    primitive: str = ""  # the name of the primitive it is about, if any
    weight_path: StatePath = ()  # the weight ParamState it is about (empty: none)
    hidden_paths: tuple[StatePath, ...] = ()  # the hidden states it is about
    # the open dict of what the emitting pass adds (per kind, see braintrace's DiagnosticKind), read-only
    context: Mapping[str, Any] = field(default_factory=lambda: _NO_CONTEXT)


def _enum_value(member: object) -> str:
    value = getattr(member, "value", None)
    return value if isinstance(value, str) else str(member)


def record_view(record: object) -> RecordView:
    """The view of one of braintrace's ``CompilationRecord`` (or anything laid out like one)."""
    primitive = getattr(record, "primitive", None)
    weight_path = getattr(record, "weight_path", None)
    context = getattr(record, "context", None)
    return RecordView(
        kind=_enum_value(getattr(record, "kind", None)),
        level=_enum_value(getattr(record, "level", None)),
        message=str(getattr(record, "message", "")),
        primitive=getattr(primitive, "name", "") if primitive is not None else "",
        weight_path=tuple(weight_path) if weight_path else (),
        hidden_paths=tuple(getattr(record, "hidden_paths", ()) or ()),
        context=MappingProxyType(context) if context else _NO_CONTEXT,
    )
