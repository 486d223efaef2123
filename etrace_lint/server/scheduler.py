"""When the server lints: one pass at a time in each lane, per document the newest save wins.

Saves that arrive together are coalesced into one lint. A save of a file
that a running lint reads supersedes that lint: it may go on for about as
long as starting the workers again would cost (a small model's compile ends
well within that) and is then stopped, so a hanging model never holds up
the newest save for its whole timeout. Either way none of its results that
read the saved file are published, and the file is linted again.
Staleness is decided per target, from the files its import actually read.
With the probe on, a lint publishes twice: the static verdicts first, then
what the probe's pass changed (see ``linting``). The two passes run in two
lanes (``lanes``): the static pass of a save goes ahead while the probe's pass
of an earlier one measures, and a probe's pass waits only for the one before
it, which a newer save of a file it reads makes stale (it is then skipped or
stopped, and its results are not published).

An editor writes a file before it sends the save, so a running lint can
read the new text while its save is still on its way. A result is therefore
also stale when a file it read no longer holds, at the end of the lint, the
text it held when the lint began (compared by digest): the save that follows
lints it again. Only the order of events decides what is published, never
how long a step takes.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import logging
import time
from collections import defaultdict
from typing import Awaitable, Callable, Iterable

from ..core.findings import TargetResult
from ..discovery.discover import TargetSpec
from .folders import Folder
from .linting import LintPlan, RunStopped

log = logging.getLogger(__name__)

COALESCE_SECONDS = 0.02
STALE_GRACE_SECONDS = 0.5  # stopping a stale lint costs its busy workers: restarting one takes about 0.3 s


def digests(paths: Iterable[str]) -> dict[str, str | None]:
    """What each file holds now (None: it cannot be read)."""
    found: dict[str, str | None] = {}
    for path in paths:
        try:
            with open(path, "rb") as handle:
                found[path] = hashlib.blake2b(handle.read(), digest_size=16).hexdigest()
        except OSError:
            found[path] = None
    return found


class Run:
    """One lint in flight, as its lane's thread sees it: checked between steps of the runner."""

    def __init__(self, reads: Iterable[str] = ()) -> None:
        self.reads = frozenset(reads)
        self.superseded_at: float | None = None
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True

    def supersede(self) -> None:
        if self.superseded_at is None:
            self.superseded_at = time.monotonic()

    def check(self) -> None:
        """Raise RunStopped in the lane's thread once the run should end."""
        if self.cancelled:
            raise RunStopped("cancelled")
        if self.superseded_at is not None and time.monotonic() - self.superseded_at > STALE_GRACE_SECONDS:
            raise RunStopped("superseded by a newer save")


class Scheduler:
    def __init__(self, plan: Callable[[Folder, list[str]], Awaitable[LintPlan]],
                 execute: Callable[[LintPlan, Run], Awaitable[list[TargetResult]]],
                 apply: Callable[[LintPlan, list[tuple[TargetSpec, TargetResult]], list[str]], None]) -> None:
        self._plan, self._execute, self._apply = plan, execute, apply
        self._generation: dict[str, int] = defaultdict(int)
        self._dirty: dict[str, tuple[Folder, set[str]]] = {}
        self._running: set[Run] = set()
        self._static_lane = asyncio.Lock()  # planning and the static passes
        self._probe_lane = asyncio.Lock()  # the probe's passes and commands
        self._probing: set[asyncio.Task[None]] = set()
        self._task: asyncio.Task[None] | None = None
        self._stopped = False

    def stop_all(self) -> None:
        """The server shuts down: stop every run, and lint nothing more (its lanes are ending)."""
        self._stopped = True
        self._dirty.clear()
        for run in self._running:
            run.cancel()

    def request(self, folder: Folder, path: str) -> None:
        """``path`` was opened or saved: lint it, and what imports it, soon."""
        self._generation[path] += 1
        for run in self._running:
            if path in run.reads:
                run.supersede()
        self._queue(folder, [path])

    def _queue(self, folder: Folder, paths: Iterable[str]) -> None:
        if self._stopped:
            return
        entry = self._dirty.setdefault(folder.root, (folder, set()))
        if entry[0] is not folder:  # the folder's settings were reloaded
            entry = self._dirty[folder.root] = (folder, entry[1])
        entry[1].update(paths)
        if self._task is None or self._task.done():
            self._task = asyncio.ensure_future(self._loop())

    def changed_since(self, snapshot: dict[str, int], paths: Iterable[str],
                      contents: dict[str, str | None] | None = None) -> bool:
        """Saved since ``snapshot`` was taken, or (``contents``: digests taken then) rewritten since."""
        paths = list(paths)
        if any(self._generation.get(p, 0) != snapshot.get(p, 0) for p in paths):
            return True
        if not contents:
            return False
        known = [p for p in paths if p in contents]
        return bool(known) and digests(known) != {p: contents[p] for p in known}

    async def _loop(self) -> None:
        while self._dirty:
            await asyncio.sleep(COALESCE_SECONDS)
            batch, self._dirty = self._dirty, {}
            for folder, files in batch.values():
                try:
                    await self.lint(folder, sorted(files))
                except Exception:  # the server stays up; the next save tries again
                    log.exception("linting %s failed", ", ".join(sorted(files)))

    def _unsaved(self, snapshot: dict[str, int], files: Iterable[str]) -> list[str]:
        """Those of ``files`` not saved since ``snapshot``: a save queues its own file's lint."""
        return [f for f in files if self._generation.get(f, 0) == snapshot.get(f, 0)]

    async def lint(self, folder: Folder, files: list[str]) -> None:
        run = Run(files)
        self._running.add(run)
        probing = False
        try:
            async with self._static_lane:
                snapshot = dict(self._generation)
                contents = digests(files)  # before discovery reads them
                began = time.monotonic()
                plan = await self._plan(folder, files)
                planned = time.monotonic()
                run.reads = run.reads | plan.reads()
                contents.update(digests(run.reads - contents.keys()))  # before a worker imports them
                if self.changed_since(snapshot, run.reads, contents):
                    self._queue(folder, self._unsaved(snapshot, files))  # saved again while planning
                    return
                log.info("linting %d targets for %s", len(plan.specs), ", ".join(files))
                # the probe measures for a while: the static verdicts are published first, then replaced
                first = dataclasses.replace(plan, static_only=True) if plan.probes() else plan
                await self._pass(first, run, snapshot, contents, planned - began)
                if not plan.probes() or self.changed_since(snapshot, run.reads, contents):
                    return  # saved again: finish queued the newer lint, whose own passes follow
            task = asyncio.ensure_future(self._probe_pass(plan, run, snapshot, contents))
            self._probing.add(task)
            task.add_done_callback(self._probing.discard)
            probing = True
        except RunStopped as stopped:
            self._stopped_run(run, stopped, folder, snapshot, files)
        finally:
            if not probing:
                self._running.discard(run)

    async def _probe_pass(self, plan: LintPlan, run: Run, snapshot: dict[str, int],
                          contents: dict[str, str | None]) -> None:
        """The probe's pass of a lint whose static pass was published, once the probe's lane is free; none
        where a file it reads was saved or rewritten since (the newer save's lint has its own)."""
        try:
            async with self._probe_lane:
                if run.cancelled or self.changed_since(snapshot, run.reads, contents):
                    log.info("probe's pass of %s skipped: saved again", ", ".join(sorted(run.reads)))
                    return
                await self._pass(plan, run, snapshot, contents, 0.0)
        except RunStopped as stopped:
            self._stopped_run(run, stopped, plan.folder, snapshot, plan.rediscovered)
        except Exception:  # the server stays up; the next save tries again
            log.exception("the probe's pass of %s failed", ", ".join(plan.rediscovered))
        finally:
            self._running.discard(run)

    async def _pass(self, plan: LintPlan, run: Run, snapshot: dict[str, int], contents: dict[str, str | None],
                    planning: float) -> None:
        started = time.monotonic()
        results = await self._execute(plan, run)
        ran = time.monotonic()
        self.finish(plan, results, snapshot, contents)
        log.info("lint of %s%s: planned in %.3f s, ran in %.3f s, published in %.3f s",
                 ", ".join(plan.rediscovered), " (static pass)" if plan.static_only else "", planning,
                 ran - started, time.monotonic() - ran)

    def _stopped_run(self, run: Run, stopped: RunStopped, folder: Folder, snapshot: dict[str, int],
                     files: list[str]) -> None:
        log.info("lint of %s stopped: %s", ", ".join(files), stopped)
        if not run.cancelled:  # superseded: the newer save's lint follows; a cancelled one is done
            self._queue(folder, self._unsaved(snapshot, files))

    async def run_once(self, plan: LintPlan, run: Run) -> None:
        """Run a plan made elsewhere (a command), in turn with the probe's passes; may raise RunStopped."""
        async with self._probe_lane:
            snapshot = dict(self._generation)
            run.reads = run.reads | plan.reads()
            contents = digests(run.reads)
            self._running.add(run)
            try:
                results = await self._execute(plan, run)
            finally:
                self._running.discard(run)
            self.finish(plan, results, snapshot, contents)

    def finish(self, plan: LintPlan, results: list[TargetResult], snapshot: dict[str, int],
               contents: dict[str, str | None] | None = None) -> None:
        """Keep what no save made stale and what read the texts the lint began with; lint the rest again."""
        contents = contents or {}
        rewritten = {path for path, digest in digests(contents).items() if digest != contents[path]}

        def stale(paths: set[str]) -> bool:
            return self.changed_since(snapshot, paths) or bool(rewritten & paths)

        fresh: list[tuple[TargetSpec, TargetResult]] = []
        again: set[str] = set()
        for spec, result in zip(plan.specs, results):
            if stale({spec.path, *result.dependencies}):
                again.add(spec.path)
            else:
                fresh.append((spec, result))
        current = [f for f in plan.rediscovered if not stale({f})]
        again.update(set(plan.rediscovered) - set(current))
        again = set(self._unsaved(snapshot, again))  # a save queued its own file's lint
        if again:
            log.info("results of %s are stale: linting again", ", ".join(sorted(again)))
        self._apply(plan, fresh, current)
        if again:
            self._queue(plan.folder, again)
