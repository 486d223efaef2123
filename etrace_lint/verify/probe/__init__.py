"""The learning-signal probe: a few online steps of the target's own algorithm, measured.

It answers what the compiled graph cannot show: whether the first online
gradient step runs at all, whether each weight's online gradient is non-zero
and finite, and whether at one step (where it must equal BPTT) it is a whole
multiple of BPTT's. Its measurements decide a weight's verdict over the
compiler's relation (``etrace_lint.engine.evidence``).

It reuses the ``--verify`` harness (same states snapshot, layouts and inputs)
(its programs evaluated with NumPy: ``verify.interpret``) and imports JAX,
brainstate and braintrace, as the engine that runs it (by default;
``--no-probe`` turns it off) does. It may import ``verify``,
``naming``, ``findings``, ``registry`` and ``rule``; nothing imports it but
the engine.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from ...core.findings import Finding
from ...core.naming import StatePath
from .findings import findings_from_probe
from .measure import ProbeResult, probe_runs

if TYPE_CHECKING:  # annotations only
    from ...analysis.context import AnalysisContext
    from ...analysis.loaded_target import LoadedTarget


def probe_model(loaded: LoadedTarget, context: AnalysisContext, compile_options: Mapping[str, object],
                denied: frozenset[StatePath] = frozenset(), refused: bool = False) -> tuple[list[Finding], ProbeResult]:
    """The probe's findings about one compiled model, and what it measured; ``denied``: the weights the graph's
    rules say get no online gradient through one of their uses (paths as strings); ``refused``: a rule of the
    graph says braintrace refuses the model."""
    result = probe_runs(loaded, context, compile_options, denied, refused)
    return findings_from_probe(result, context, loaded.name, denied), result


__all__ = ["probe_model"]
