"""What each compiler record says about its weight, read in the context of the other records.

The compiler reports a weight excluded behind other weights (``relation_excluded_weight_to_weight``);
when every weight blocking it reaches no hidden state itself, what happens to it is what happens to
a readout, and it is reported as one: in the findings and in what the rules see. It lists the weights
whose same-step gradient it adds (``output_bypasses_hidden``) by what they reach of every value the
step keeps; those of them that reach the step's return value only through a new hidden state get
nothing from it, and the record is read as being about the others.
"""

from __future__ import annotations

import dataclasses
import types
from collections.abc import Set

from ..core.naming import StatePath
from . import braintrace_adapter as bt

WEIGHT_TO_WEIGHT, NON_TEMPORAL = "relation_excluded_weight_to_weight", "relation_excluded_non_temporal"
OUTPUT_BYPASS = "output_bypasses_hidden"


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


def narrowed_output_bypass(record: bt.RecordView, reaching: Set[StatePath]) -> bt.RecordView | None:
    """An ``output_bypasses_hidden`` record about only the weights and previous hidden values of ``reaching`` (those
    whose value reaches the step's return value around every new hidden state: ``AnalysisContext.reaching_the_
    output_around_hidden``); None when it is left about nothing.

    The compiler adds the same-step gradient of a source along every path to a value the step keeps that is not a
    new hidden state, to the new values of the states the loss does not read too (a BatchNorm's running mean, a
    ShortTermState). The loss reads the return value only: along such a path the gradient it adds is zero
    (measured: a weight whose only other use is a plain matmul gets none at all online). The caller passes records
    of that kind only, as it computes ``reaching`` for them alone."""
    listed = {key: [tuple(path) for path in record.context.get(key, ()) or ()] for key in ("params", "hidden")}
    narrowed = {key: tuple(path for path in paths if path in reaching) for key, paths in listed.items()}
    if all(len(narrowed[key]) == len(paths) for key, paths in listed.items()):
        return record
    if not any(narrowed.values()):
        return None
    return dataclasses.replace(record, context=types.MappingProxyType({**record.context, **narrowed}))
