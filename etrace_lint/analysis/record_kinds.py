"""What each compiler record says about its weight, read in the context of the other records.

The compiler reports a weight excluded behind other weights (``relation_excluded_weight_to_weight``);
when every weight blocking it reaches no hidden state itself, what happens to it is what happens to
a readout, and it is reported as one: in the findings and in what the rules see.
"""

from __future__ import annotations

from ..core.naming import StatePath
from . import braintrace_adapter as bt

WEIGHT_TO_WEIGHT, NON_TEMPORAL = "relation_excluded_weight_to_weight", "relation_excluded_non_temporal"


def reported_kinds(compilation: bt.Compilation) -> list[tuple[str, str]]:
    """(kind, braintrace level) of each record as it is reported: a weight excluded behind weights that
    reach no hidden state is reported as one that reaches none itself (a note, not ETL005's warning)."""
    readouts = weights_reaching_no_state(compilation)
    return [(kind_in_context(record, readouts), record.level) for record in compilation.records]


def weights_reaching_no_state(compilation: bt.Compilation) -> set[StatePath]:
    readouts = _reaching_no_state(compilation.records)
    if readouts and compilation.graph is not None:  # a probe pass's record the final graph contradicts
        readouts -= bt.relation_weight_paths(compilation.graph)
    return readouts


def _reaching_no_state(records: list[bt.RecordView]) -> set[StatePath]:
    return {r.weight_path for r in records if r.kind == NON_TEMPORAL and r.weight_path}


def kind_in_context(record: bt.RecordView, readouts: set[StatePath]) -> str:
    """A weight whose op feeds only ops of weights that reach no hidden state (an LRU's output
    projection feeding a readout) reaches none either: the compiler calls it excluded behind
    another weight, but what happens to it is what happens to a readout (its exact same-step
    gradient), so it is reported as one."""
    kind = record.kind
    if kind == WEIGHT_TO_WEIGHT:
        blocking = [tuple(p) for p in record.context.get("blocking_weight_paths", ()) or () if p]
        if blocking and all(path in readouts for path in blocking):
            return NON_TEMPORAL
    return kind
