"""The first stages of a run: discover what the paths hold, then plan what this run lints.

Each stage takes the previous stage's frozen result and returns its own; none writes into another's.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import AbstractSet, Any

from ..config.settings import DiscoverySettings
from ..core.findings import ToolError
from ..discovery.discover import Discovery, IgnoreRules, TargetSpec, discover
from ..running.cache import Cache
from ..running.shards import parse_shard, select, shard_record


@dataclass(frozen=True)
class Discovered:
    """What the paths hold, and the targets elsewhere that import a file named on the command line."""

    found: Discovery
    dependents: tuple[TargetSpec, ...] = ()

    @property
    def targets(self) -> tuple[TargetSpec, ...]:
        return (*self.found.targets, *self.dependents)


@dataclass(frozen=True)
class Plan:
    """What this run lints: its targets (this shard's, with ``--shard``), the shard's record for
    ``etrace-lint merge``, the discovery errors it reports, and which targets the cache holds."""

    discovered: Discovered
    specs: tuple[TargetSpec, ...]
    shard: dict[str, Any] | None = None
    tool_errors: tuple[ToolError, ...] = ()
    cached: frozenset[str] = frozenset()  # target keys with a cache entry; looked up with -v only


def _named_files(paths: tuple[str, ...]) -> list[str]:
    """Files named on the command line (as pre-commit passes them), not folders or ``::`` targets."""
    return [os.path.abspath(p) for p in paths if "::" not in p and os.path.isfile(p)]


def _dependents(cache: Cache | None, found: Discovery, settings: DiscoverySettings) -> tuple[TargetSpec, ...]:
    """Targets elsewhere whose recorded imports include a file named on the command line.

    pre-commit passes only the changed files; a model importing a changed
    helper module must be linted too. Their files are discovered again, so a
    target deleted since it was cached is not resurrected.
    """
    named = _named_files(settings.paths)
    if cache is None or not named:
        return ()
    known = {spec.key for spec in found.targets}
    files = sorted({spec.path for spec in cache.dependents(named)} - set(named))
    again = discover([f for f in files if os.path.isfile(f)], settings.root, settings.excludes)
    return tuple(spec for spec in again.targets if spec.key not in known)


def discover_targets(settings: DiscoverySettings, cache: Cache | None) -> Discovered:
    """The targets the paths hold, and with a cache those that import a named file."""
    found = discover(list(settings.paths), settings.root, settings.excludes)
    return Discovered(found, _dependents(cache, found, settings))


def plan_run(discovered: Discovered, settings: DiscoverySettings, cache: Cache | None) -> Plan:
    """This run's targets: with ``--shard K/N`` the K-th part, balanced by the times the cache
    recorded; a file that cannot be read is reported once, by the first shard."""
    specs = discovered.targets
    shard = None
    tool_errors = tuple(discovered.found.tool_errors)
    if settings.shard:
        part = parse_shard(settings.shard)
        seconds = cache.recorded_seconds(specs) if cache is not None else None
        mine = select(list(specs), settings.root, part, seconds)
        shard = shard_record(list(specs), mine, settings.root, part, settings.configuration)
        specs = tuple(mine)
        if shard["index"] != 1:
            tool_errors = ()
    cached = frozenset(spec.key for spec in specs
                       if settings.verbose and cache is not None and cache.get(spec) is not None)
    return Plan(discovered, specs, shard, tool_errors, cached)


def paths_without_targets(settings: DiscoverySettings, discovery: Discovery,
                          imported: AbstractSet[str] = frozenset()) -> list[str]:
    """Paths to lint that hold no target, as given (ruff warns of a path without Python files).

    A path that does not exist, or holds a file that could not be read, is a
    tool error already; a ``file::factory`` always names a target. A helper
    module that a linted target ``imported`` was linted through it (as
    pre-commit names a changed helper).
    """
    found = [spec.path for spec in discovery.targets] + [os.path.abspath(path) for path in imported]
    broken = [error.location.path for error in discovery.tool_errors]
    ignore = IgnoreRules(settings.root, settings.excludes)
    empty = []
    for arg in settings.paths:
        path = os.path.abspath(arg)
        if "::" in arg or not os.path.exists(path) or (os.path.isfile(path) and ignore.excluded_by_config(path)):
            continue
        inside = path + os.sep
        if not any(p == path or p.startswith(inside) for p in found + broken):
            empty.append(arg)
    return empty
