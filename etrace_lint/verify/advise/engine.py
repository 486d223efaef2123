"""The advice inside a lint run: called by the engine for each compiled model when ``--advise`` is on.

Runs in the worker that linted the model, after the rules and ``--verify``;
the rows travel back as JSON with the target's result (and so are cached
with it). What goes wrong for one algorithm is said in its row; anything
else raised here stops the target, which the worker reports as a tool error
naming the file and the factory.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...analysis import braintrace_adapter as bt
from ...core.findings import Finding
from ...core.json_types import JsonObject
from ..settings import Loss, VerifySettingsError, resolve_settings
from .findings import configured_findings
from .recommend import default_budget
from .run import AdviceSettings, advise_model

if TYPE_CHECKING:  # annotations only
    from ...analysis.context import AnalysisContext
    from ...analysis.loaded_target import LoadedTarget
    from ...config.settings import EngineSettings

DEFAULT_STEPS = 8


def settings_for(loaded: LoadedTarget, run: EngineSettings) -> tuple[AdviceSettings, Loss | None]:
    """The run's advice options, with the target's own ``verify`` loss and inputs; and that loss."""
    try:
        verify = resolve_settings(loaded.verify_options, None)
        loss, inputs = verify.loss, verify.inputs
    except VerifySettingsError:  # --verify reports it; the advice draws its own inputs
        loss = inputs = None
    algorithms = run.advise_algorithms
    settings = AdviceSettings(algorithms=",".join(algorithms) if algorithms else None,
                              steps=run.advise_steps or DEFAULT_STEPS, batch_size=run.advise_batch_size,
                              memory_budget=run.memory_budget or None, inputs=inputs)
    return settings, loss


def configured_algorithm(loaded: LoadedTarget, run: EngineSettings) -> str | None:
    """The algorithm the user trains with, when they said: the target's ``verify={"algorithms": [...]}``,
    else ``[tool.etrace-lint.verify] algorithms``; its first entry."""
    named = (loaded.verify_options or {}).get("algorithms") or run.verify_algorithms
    if isinstance(named, str):
        named = [part for part in named.split(",") if part.strip()]
    return str(named[0]).strip().lower() if named else None


def advise_target(loaded: LoadedTarget, context: AnalysisContext,
                  run: EngineSettings) -> tuple[list[Finding], list[JsonObject]]:
    """(findings about the configured algorithm, the rows as JSON)."""
    settings, loss = settings_for(loaded, run)
    rows = advise_model(context.model, loaded.inputs, target=loaded.spec.key, batch_size=loaded.batch_size,
                        settings=settings, weights=bt.step_param_states(context.module_info), loss=loss,
                        rebuilt=loaded.rebuilt)
    budget = settings.memory_budget if settings.memory_budget is not None else default_budget()[0]
    findings = configured_findings(rows, configured_algorithm(loaded, run), budget, context, loaded.name)
    return findings, [row.to_json() for row in rows]
