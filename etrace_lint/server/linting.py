"""What one lint of the server does, in a lane's thread (``lanes``): which targets a save touches, and running them.

A save is linted in two passes when the probe is on: the static lint (every
rule but the probe's), published at once, then the whole lint, which replaces
it. The second pass gives what the command line gives for the same files.

The same discovery, runner, cache and workers as the CLI: the targets in the
saved files, and the targets elsewhere whose recorded imports include one of
them (from the cache, and from the results the server holds).
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

from ..config.settings import Settings
from ..core.findings import TargetResult, ToolError
from ..discovery.discover import TargetSpec, discover
from ..policy.scope import stage_settings
from ..running.runner import run_targets
from ..running.workers import WorkerPool
from .folders import Folder

if TYPE_CHECKING:  # the cache module loads only when a run needs it (running.runner.open_cache); annotations only
    from ..running.cache import Cache


class RunStopped(Exception):
    """A lint stopped before its end: cancelled, or superseded by a newer save."""


def configured(folder: Folder) -> Settings:
    """The settings a lint of ``folder`` runs with. The server lints only a trusted folder, and a
    folder is trusted only once its settings are read (``folders.load_folder``)."""
    if folder.settings is None:
        raise ValueError(f"{folder.root} has no settings to lint with: {folder.error or 'not configured'}")
    return folder.settings


@dataclass
class LintPlan:
    folder: Folder
    specs: list[TargetSpec] = field(default_factory=list)
    rediscovered: list[str] = field(default_factory=list)  # files whose targets were discovered afresh
    file_errors: dict[str, ToolError] = field(default_factory=dict)  # those that cannot be parsed
    verify: bool = False
    static_only: bool = False  # the first pass of a save: no probe, published at once (the probe's pass follows)
    cache: Cache | None = None

    @property
    def settings(self) -> Settings:
        return configured(self.folder)

    def probes(self) -> bool:
        """Whether this plan's lint runs the probe: the folder's settings say so, it is not the static
        pass, and there is a model to probe (a file that does not parse has none: its one pass says so)."""
        return bool(self.settings.probe) and bool(self.specs) and not self.static_only and not self.verify

    def reads(self) -> set[str]:
        """The files this lint depends on, as far as is known before it runs."""
        return set(self.rediscovered) | self.folder.store.reads(self.specs)


def plan_lint(folder: Folder, files: list[str]) -> LintPlan:
    """The targets in ``files`` (those the folder lints) and the targets that import one of them."""
    settings = configured(folder)
    plan = LintPlan(folder, cache=folder.open_cache())
    named = sorted(f for f in set(files) if folder.lints(f) and os.path.isfile(f))
    dependents = set(folder.store.dependents(files))
    if plan.cache is not None:
        dependents.update(plan.cache.dependents(files))
    others = sorted({spec.path for spec in dependents} - set(named))
    others = [f for f in others if folder.lints(f) and os.path.isfile(f)]
    known: set[str] = set()
    for group in (named, others):
        # discovered again: a target deleted since it was cached is not resurrected
        found = discover(group, folder.root, settings.excludes)
        plan.specs.extend(spec for spec in found.targets if spec.key not in known)
        known.update(spec.key for spec in found.targets)
        plan.rediscovered.extend(group)
        for error in found.tool_errors:
            plan.file_errors[os.path.abspath(error.location.path)] = error
    return plan


def plan_verify(folder: Folder, path: str) -> LintPlan:
    settings = folder.settings  # a folder without settings lints no file
    found = discover([path], folder.root, settings.excludes) if settings is not None and folder.lints(path) else None
    plan = LintPlan(folder, verify=True)
    if found is not None:
        plan.specs = list(found.targets)
        plan.rediscovered = [path]
        plan.file_errors = {os.path.abspath(e.location.path): e for e in found.tool_errors}
    return plan


def run_plan(plan: LintPlan, pool: WorkerPool | None,
             progress: Callable[[int, int, TargetSpec], None]) -> list[TargetResult]:
    """One result per spec of the plan. ``progress`` may raise RunStopped to stop the run."""
    settings = plan.settings
    if plan.verify:
        settings = dataclasses.replace(settings, verify=True)
    elif plan.static_only:
        settings = dataclasses.replace(settings, probe=False)
    run = stage_settings(settings).run
    return run_targets(plan.specs, run, progress, plan.folder.open_cache(run), pool=pool)
