"""The advice inside a lint run: called by the engine for each compiled model when ``--advise`` is on.

Runs in the worker that linted the model, after the rules and ``--verify``;
the rows travel back as JSON with the target's result (and so are cached
with it). What goes wrong for one algorithm is said in its row; anything
else raised here stops the target, which the worker reports as a tool error
naming the file and the factory.
"""

from __future__ import annotations

from typing import Any

from ...analysis import braintrace_adapter as bt
from ..settings import VerifySettingsError, resolve_settings
from .findings import configured_findings
from .recommend import default_budget
from .run import AdviceSettings, advise_model

DEFAULT_STEPS = 8


def settings_for(loaded: Any, run: Any) -> tuple[AdviceSettings, Any]:
    """The run's advice options, with the target's own ``verify`` loss and inputs; and that loss."""
    try:
        verify = resolve_settings(loaded.verify_options, None)
        loss, inputs = verify.loss, verify.inputs
    except VerifySettingsError:  # --verify reports it; the advice draws its own inputs
        loss = inputs = None
    algorithms = getattr(run, "advise_algorithms", None)
    settings = AdviceSettings(algorithms=",".join(algorithms) if algorithms else None,
                              steps=getattr(run, "advise_steps", None) or DEFAULT_STEPS,
                              batch_size=getattr(run, "advise_batch_size", None),
                              memory_budget=getattr(run, "memory_budget", None) or None, inputs=inputs)
    return settings, loss


def configured_algorithm(loaded: Any, run: Any) -> str | None:
    """The algorithm the user trains with, when they said: the target's ``verify={"algorithms": [...]}``,
    else ``[tool.etrace-lint.verify] algorithms``; its first entry."""
    named = (loaded.verify_options or {}).get("algorithms") or getattr(run, "verify_algorithms", None)
    if isinstance(named, str):
        named = [part for part in named.split(",") if part.strip()]
    return str(named[0]).strip().lower() if named else None


def advise_target(loaded: Any, context: Any, run: Any) -> tuple[list, list[dict]]:
    """(findings about the configured algorithm, the rows as JSON)."""
    settings, loss = settings_for(loaded, run)
    rows = advise_model(context.model, loaded.inputs, target=loaded.spec.key, batch_size=loaded.batch_size,
                        settings=settings, weights=bt.step_param_states(context.module_info), loss=loss)
    budget = settings.memory_budget if settings.memory_budget is not None else default_budget()[0]
    findings = configured_findings(rows, configured_algorithm(loaded, run), budget, context, loaded.name)
    return findings, [row.to_json() for row in rows]
