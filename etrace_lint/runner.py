"""Run the engine over many targets. In-process, one after another."""

from __future__ import annotations

from typing import Callable

from .discover import TargetSpec
from .findings import TargetResult
from .settings import Settings


def run_targets(specs: list[TargetSpec], settings: Settings,
                progress: Callable[[int, int, TargetSpec], None] | None = None) -> list[TargetResult]:
    from .engine import lint_target

    results = []
    for index, spec in enumerate(specs):
        if progress is not None:
            progress(index, len(specs), spec)
        results.append(lint_target(spec, settings.root, settings.run_options | {
            "compile_options": settings.compile_options}))
    return results
