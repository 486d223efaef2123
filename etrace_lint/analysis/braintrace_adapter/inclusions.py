"""The compiler's inclusion records, one per ParamState an included op trains.

Part of the adapter over braintrace's private layout (its relations); the records are
already read into :class:`~.records.RecordView`.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from jax.extend.core import JaxprEqn

from ...core.naming import StatePath
from .records import RecordView

if TYPE_CHECKING:  # braintrace's own classes, for annotations only
    from braintrace._compiler.graph import ETraceGraph


def one_inclusion_per_weight(graph: ETraceGraph, records: list[RecordView],
                             subjects: list[JaxprEqn | None]) -> tuple[list[RecordView], list[JaxprEqn | None]]:
    """The compiler's records, with its record that it connected an op (``relation_included``) repeated
    for each further ParamState the op trains: braintrace names only the op's first trainable leaf's
    state, so a ``lora_matmul(x, B, A)`` is recorded as connecting ``B`` while ``A`` learns as well."""
    owners: dict[tuple[object, ...], list[StatePath]] = {}  # (primitive, hidden groups, path) -> paths
    for relation in graph.hidden_param_op_relations:
        paths: list[StatePath] = list(dict.fromkeys(tuple(p) for p in (relation.trainable_paths or {}).values()))
        key = (getattr(relation.primitive, "name", str(relation.primitive)),
               tuple(g.index for g in relation.hidden_groups))
        for path in paths:
            owners.setdefault(key + (path,), paths)
    if not any(len(paths) > 1 for paths in owners.values()):
        return records, subjects
    subjects = list(subjects) + [None] * (len(records) - len(subjects))
    out_records: list[RecordView] = []
    out_subjects: list[JaxprEqn | None] = []
    for record, subject in zip(records, subjects):
        out_records.append(record)
        out_subjects.append(subject)
        weight_path = record.weight_path
        if record.kind != "relation_included" or not weight_path:
            continue
        record_key = (record.primitive, tuple(record.context.get("hidden_group_indices") or ()), weight_path)
        for other in owners.get(record_key, ()):
            if other != weight_path:
                out_records.append(dataclasses.replace(record, weight_path=other))
                out_subjects.append(subject)
    return out_records, out_subjects

