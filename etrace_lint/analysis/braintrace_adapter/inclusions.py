"""The compiler's inclusion records, one per ParamState an included op trains.

Part of the adapter over braintrace's private layout (its ``CompilationRecord``
and relations).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from ...core.naming import StatePath
from .records import record_context, record_kind, record_primitive_name

if TYPE_CHECKING:  # braintrace's own classes, for annotations only
    from braintrace._compiler.graph import ETraceGraph


def one_inclusion_per_weight(graph: ETraceGraph, records: list[Any],
                             subjects: list[Any]) -> tuple[list[Any], list[Any]]:
    """The compiler's records, with its record that it connected an op (``relation_included``) repeated
    for each further ParamState the op trains: braintrace names only the op's first trainable leaf's
    state, so a ``lora_matmul(x, B, A)`` is recorded as connecting ``B`` while ``A`` learns as well."""
    owners: dict[tuple[Any, ...], list[StatePath]] = {}  # (primitive, hidden groups, path) -> paths
    for relation in graph.hidden_param_op_relations:
        paths = list(dict.fromkeys(tuple(p) for p in (relation.trainable_paths or {}).values()))
        key = (getattr(relation.primitive, "name", str(relation.primitive)),
               tuple(g.index for g in relation.hidden_groups))
        for path in paths:
            owners.setdefault(key + (path,), paths)
    if not any(len(paths) > 1 for paths in owners.values()):
        return records, subjects
    subjects = list(subjects) + [None] * (len(records) - len(subjects))
    out_records, out_subjects = [], []
    for record, subject in zip(records, subjects):
        out_records.append(record)
        out_subjects.append(subject)
        weight_path = getattr(record, "weight_path", None)
        if record_kind(record) != "relation_included" or not weight_path:
            continue
        context = record_context(record)
        record_key = (record_primitive_name(record), tuple(context.get("hidden_group_indices") or ()),
                      tuple(weight_path))
        for other in owners.get(record_key, ()):
            if other != tuple(weight_path):
                out_records.append(dataclasses.replace(record, weight_path=other))
                out_subjects.append(subject)
    return out_records, out_subjects

