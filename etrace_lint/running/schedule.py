"""Which file a worker lints next.

The targets of one file always go to one worker (the file is imported once).
How files are handed out depends on what is known of them:

- With the times their targets took on an earlier run (the cache records
  them), the slowest files go first, to whichever worker is free: the run
  ends when the slowest files do, not after them.
- On a first run nothing is known, and what a target costs is mostly XLA
  compiling the small programs its model's initialisers run, once per shape
  in each process. Files next to each other build alike models, so the files
  are cut into one contiguous run per worker, in path order (the cut shards
  use too); each worker works through its own run and meets the programs it
  compiled for the file before. A worker that finishes its run takes files from the far end of the
  longest run left, so no worker waits while work remains.
"""

from __future__ import annotations

import time
from collections.abc import Hashable, Sequence, Set
from typing import Protocol

from ..discovery.discover import TargetSpec


def group_by_file(specs: list[TargetSpec]) -> list[list[int]]:
    """Indices of ``specs`` grouped by file, in the order of their first target."""
    groups: dict[str, list[int]] = {}
    for index, spec in enumerate(specs):
        groups.setdefault(spec.path, []).append(index)
    return list(groups.values())


class Schedule:
    """The files not yet given to a worker.

    ``next_group(worker)`` hands a worker (any hashable handle) its next file's
    target indices; ``put_back(group)`` returns the rest of a file whose worker
    died, to be taken first.
    """

    def __init__(self, specs: list[TargetSpec], workers: int, durations: dict[str, float] | None = None):
        groups = group_by_file(specs)
        durations = durations or {}
        known = [durations[spec.key] for spec in specs if spec.key in durations]
        if known:
            typical = sum(known) / len(known)
            cost = [sum(durations.get(specs[i].key, typical) for i in group) for group in groups]
            order = sorted(range(len(groups)), key=lambda g: -cost[g])  # stable: ties keep file order
            self._runs = [[groups[g] for g in order]]  # one queue every worker takes from
        else:
            cuts = contiguous_cuts([len(group) for group in groups], max(1, workers))
            self._runs = [groups[start:end] for start, end in cuts]
        self._owner: dict[Hashable, int] = {}
        self._retry: list[list[int]] = []

    def __len__(self) -> int:
        return len(self._retry) + sum(len(run) for run in self._runs)

    def next_group(self, worker: Hashable, alive: Set[Hashable] | None = None) -> list[int] | None:
        """The next file for ``worker``; ``alive``: the workers that still hold a run (others' runs are free)."""
        if self._retry:
            return self._retry.pop(0)
        if len(self._runs) == 1:
            return self._runs[0].pop(0) if self._runs[0] else None
        if alive is not None:
            self._owner = {w: run for w, run in self._owner.items() if w in alive or w == worker}
        run = self._owner.get(worker)
        if run is None or not self._runs[run]:
            run = self._free_run()
            if run is not None:
                self._owner[worker] = run
        if run is not None:
            return self._runs[run].pop(0)
        # every run left belongs to a busy worker: take from the far end of the longest
        longest = max(self._runs, key=len, default=None)
        return longest.pop() if longest else None

    def _free_run(self) -> int | None:
        owned = set(self._owner.values())
        for index, run in enumerate(self._runs):
            if run and index not in owned:
                return index
        return None

    def put_back(self, group: list[int]) -> None:
        self._retry.append(group)

    def take_all(self) -> list[list[int]]:
        """Every file not yet handed out (the run gives up on them)."""
        groups = self._retry + [group for run in self._runs for group in run]
        self._retry, self._runs = [], [[] for _ in self._runs]
        return groups


def contiguous_cuts(work: list[float], parts: int) -> list[tuple[int, int]]:
    """``parts`` consecutive slices ``[start, end)`` of ``work`` (neighbouring files build alike models,
    so a worker or a shard compiles fewer programs twice).

    The largest slice total is as small as it can be (found by bisection); within that bound each
    slice ends where its total comes closest to an even share of what is left."""
    if not work:
        return [(0, 0)] * parts

    def slices_needed(start: int, limit: float) -> int:
        count, total = 1, 0.0
        for value in work[start:]:
            if total and total + value > limit:
                count, total = count + 1, 0.0
            total += value
        return count

    low, high = max(work), sum(work)  # high always fits; bisect down to the smallest limit that does
    for _ in range(64):
        middle = (low + high) / 2
        if slices_needed(0, middle) <= parts:
            high = middle
        else:
            low = middle
    limit = high

    cuts: list[tuple[int, int]]
    cuts, start, total, left = [], 0, 0.0, sum(work)
    for index, value in enumerate(work):
        if index > start and len(cuts) < parts - 1:
            share = left / (parts - len(cuts))
            must = total + value > limit
            closer = abs(total - share) <= abs(total + value - share)
            if must or (closer and slices_needed(index, limit) <= parts - len(cuts) - 1):
                cuts.append((start, index))
                start, left, total = index, left - total, 0.0
        total += value
    cuts.append((start, len(work)))
    return cuts + [(len(work), len(work))] * (parts - len(cuts))


# A start this quick is a fork of the fork server (a spawned worker imports JAX for seconds): it
# costs less than linting a typical target
CHEAP_START = 1.0


class StartedWorker(Protocol):
    """What :class:`Scaling` reads of a worker (the pool's handle on one)."""

    @property
    def ready(self) -> bool: ...

    @property
    def index(self) -> int | None: ...  # the target it is on; None: idle

    @property
    def started(self) -> float: ...  # when it took that target, ``time.monotonic()``


class Scaling:
    """How many workers are worth starting.

    One worker starts first, and tells what a start costs. A forked worker
    starts in a fraction of a second (:data:`CHEAP_START`), less than most
    targets take: then every worker the files allow starts at once. A worker
    that imports afresh takes seconds: more of those start once the work
    left, judged by the targets linted so far, would keep each of them busy
    for longer than a start costs, or once a target has run longer than a
    start (slow models, or one that hangs while the rest wait).
    """

    def __init__(self) -> None:
        self.startup: float | None = None
        self.durations: list[float] = []

    def started(self, seconds: float) -> None:
        if self.startup is None:
            self.startup = seconds

    def finished(self, seconds: float) -> None:
        self.durations.append(seconds)

    def more_workers(self, workers: Sequence[StartedWorker], pending: int, most: int) -> int:
        if len(workers) >= most or not pending or self.startup is None or not all(w.ready for w in workers):
            return 0
        wanted = len(workers)
        if self.startup < CHEAP_START:
            wanted = max(wanted, min(most, pending))
        elif self.durations:
            work_left = sum(self.durations) / len(self.durations) * pending
            wanted = max(wanted, int(work_left / (1.5 * self.startup)))
        now = time.monotonic()
        if any(w.index is not None and now - w.started > self.startup for w in workers):
            wanted = max(wanted, len(workers) + 1)
        return max(0, min(most, wanted) - len(workers))

    def next_look(self, workers: Sequence[StartedWorker], pending: int, most: int) -> float | None:
        """When :meth:`more_workers` may next say yes with no message in between: once the earliest
        busy worker has run longer than a start."""
        if len(workers) >= most or not pending or self.startup is None:
            return None
        busy = [w.started + self.startup for w in workers if w.index is not None]
        return min(busy) if busy else None
