"""Lint one captured compile as a target is linted, in the program's process, and leave the program
as it was (:class:`~.program_state.ProgramState`).

This module imports JAX, brainstate and braintrace: its callers import it only once the program has
compiled a model, so the program's own imports always come first.
"""

from __future__ import annotations

import dataclasses
import time

import brainstate
from braintrace import _compile

from ..analysis import braintrace_adapter as bt
from ..analysis.loaded_target import LoadedTarget
from ..config.settings import EngineSettings
from ..core.findings import Finding, Level, TargetResult, ToolError
from ..core.registry import all_rules
from ..core.weight_verdict import WeightVerdict
from ..core.wording import exception_line
from ..engine.fresh_state import reseed
from ..engine.lint import lint_model
from ..engine.rules_compiler import classify_error
from ..running.worker_loop import use_compile_mode
from .handover import Capture
from .program_state import ProgramState


def registered_name(algorithm_class: type | None) -> str | None:
    """braintrace's registered name of the learner's class, or of the nearest registered class it
    derives from (a user's own ``D_RTRL`` subclass is checked as D_RTRL); None when there is none."""
    if algorithm_class is None:
        return None
    registry = dict(_compile._ALGORITHM_REGISTRY)  # the registry behind braintrace.compile's names
    for cls in algorithm_class.__mro__:
        for name, registered in registry.items():
            if registered is cls:
                return name
    return None


def loaded_target(capture: Capture) -> LoadedTarget:
    """The capture as the engine takes a target: the compile call is where the model was built."""
    site = capture.site
    verify_options: dict[str, object] = {}
    name = registered_name(capture.algorithm_class)
    if name is not None:  # --verify, the probe and --advise measure the algorithm the program trains with
        verify_options["algorithms"] = [name]
        if capture.algorithm_options:
            verify_options["algorithm_options"] = {name: dict(capture.algorithm_options)}
    return LoadedTarget(site.spec, site.display_name, capture.model, tuple(capture.inputs),
                        dict(capture.graph_options), capture.batch_size, verify_options, {},
                        factory_location=site.location, single_step_vjp=capture.single_step_vjp)


def with_refusal(capture: Capture, findings: list[Finding]) -> list[Finding]:
    """braintrace refused the compile: that is an error on the call. A finding that explains the refusal
    becomes an error; when none does and no other error explains it, the refusal itself is one."""
    if capture.error is None or any(f.level is Level.ERROR for f in findings):
        return findings
    # a finding that already says braintrace.compile refuses the model (its rule ``says`` REFUSED: a target
    # may never be compiled that way, so there it is a warning; here the program's compile did fail)
    refusing = {rule.id for rule in all_rules().values() if rule.says is WeightVerdict.REFUSED}
    if any(f.rule_id in refusing for f in findings):
        return [dataclasses.replace(f, level=Level.ERROR) if f.rule_id in refusing else f for f in findings]
    rule = classify_error(capture.error)
    message = f"{capture.entry} refused the model: {exception_line(capture.error)}"
    return [*findings, Finding(rule.id, Level.ERROR, message, capture.site.display_name, capture.site.location,
                               (capture.site.location,))]


def lint_capture(capture: Capture, settings: EngineSettings) -> TargetResult:
    """Every rule on the captured model, the probe, ``--verify`` and ``--advise`` as asked. Never
    raises for the model; the program's states, random keys, JAX flags and environ are put back."""
    start = time.perf_counter()
    site = capture.site
    saved = ProgramState(capture.model)
    try:
        use_compile_mode(settings)  # as in a worker; the program's own flag comes back with its state
        if capture.vmap:  # the learner is built per sample: the lint sees the model unbatched
            _unbatched_states(capture.model)
        reseed()
        report = lint_model(loaded_target(capture), settings)
        findings = with_refusal(capture, report.findings)
        return TargetResult(target=site.spec.key, findings=findings, notes_left_out=report.notes_left_out,
                            verify_rows=report.verify_rows, advice_rows=report.advice_rows,
                            counted_only=settings.scope.count_only, seconds=time.perf_counter() - start)
    except Exception as exc:  # noqa: BLE001 - a lint that fails is a tool error about this capture, not the program's
        error = ToolError(site.display_name, f"{site.display_name}: linting the captured model raised "
                                             f"{exception_line(exc)}", site.location, "crash")
        return TargetResult(target=site.spec.key, tool_errors=[error], seconds=time.perf_counter() - start)
    finally:
        saved.restore()


def _unbatched_states(model: brainstate.nn.Module) -> None:
    with bt.quiet([]):
        brainstate.nn.init_all_states(model)
