"""What isolation costs: this tree against an earlier revision, side by side, on the bench corpus.

For each of the two (the revision is exported with ``git archive`` into a
temporary folder and put first on ``PYTHONPATH``), interleaved (in alternating
order) so that a change in the machine's load hits both alike: a cold ``-j 1`` run and a cold
``-j 2`` run (no result cache, no compiled programs), wall time and the CPU
time of the whole process tree, and (``-v``) the time the workers spent inside the targets.
Printed: each run, then the ratios this tree / the revision (target: cold ``-j 1`` within
1.05x) and ``-j 2`` / ``-j 1`` of each (target: at most 0.65x on two idle cores), from the
medians and from each one's best run (on a shared machine noise only ever adds time: the best
of several runs is the nearest to what a quiet machine gives).

Most of a run is the models' own construction and tracing, which is the same code in both
trees and varies by seconds between runs on a shared machine; so the time around the targets
(start-up, the check after each target, handing results back), where isolation's cost lies, is
printed as well, with the ratio the two runs would have if their targets had taken the same time.

Usage: python bench/bench_isolation.py [--against REV] [--repeat N]
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)

from corpus import write_corpus  # noqa: E402

# each command line here runs in its own cold process tree: the project's daemon would serve it warm
os.environ["ETRACE_LINT_NO_DAEMON"] = "1"


@dataclass(frozen=True)
class Run:
    wall: float
    cpu: float  # the whole process tree
    in_targets: float  # the workers' own clocks around each target, summed (``-v``)

    @property
    def around_targets(self) -> float:
        """Wall time outside the targets: start-up, the per-target checks, the hand-over of results."""
        return self.wall - self.in_targets


def _run(source: str, root: str, jobs: str) -> Run:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [source, os.environ.get("PYTHONPATH", "")])))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "etrace_lint", ".", "-v", "--color", "never", "-j", jobs,
                           "--no-cache"], cwd=root, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in (0, 1, 2):
        sys.exit(f"{source}: etrace-lint -j {jobs} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    in_targets = sum(float(seconds) for seconds in _LINTED.findall(proc.stderr))
    return Run(wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), in_targets)


_LINTED = re.compile(r"linted in ([0-9.]+) s")


def _summary(runs: dict[tuple[str, str], list[Run]], pick, title: str) -> None:
    def value(name: str, jobs: str, field: str) -> float:
        return pick(getattr(run, field) for run in runs[(name, jobs)])

    print(title)
    for jobs in ("1", "2"):
        bw, nw = value("before", jobs, "wall"), value("now", jobs, "wall")
        bc, nc = value("before", jobs, "cpu"), value("now", jobs, "cpu")
        print(f"  cold -j {jobs}: now/before wall {nw / bw:.3f}x, CPU {nc / bc:.3f}x"
              + ("  (target: -j 1 within 1.05x)" if jobs == "1" else ""))
    # building the models (user code, in the targets) varies by seconds from run to run on a shared
    # machine and is the same code in both; what isolation adds is around the targets
    bt, nt = value("before", "1", "in_targets"), value("now", "1", "in_targets")
    ba, na = value("before", "1", "around_targets"), value("now", "1", "around_targets")
    print(f"  cold -j 1, around the targets: now {na:.1f} s, before {ba:.1f} s (in the targets: now {nt:.1f} s, "
          f"before {bt:.1f} s); with the targets' time of before: {(bt + na) / (bt + ba):.3f}x")
    for name in ("before", "now"):
        w1, w2 = value(name, "1", "wall"), value(name, "2", "wall")
        print(f"  {name}: -j 2 / -j 1 wall {w2 / w1:.2f}x (target <= 0.65x on two idle cores)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", default="HEAD", help="the revision to compare with (HEAD)")
    parser.add_argument("--repeat", type=int, default=2, help="runs of each, interleaved (2)")
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="etrace-lint-isolation-")
    try:
        before = os.path.join(work, "before")
        os.makedirs(before)
        archive = subprocess.run(["git", "-C", REPO, "archive", args.against], capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", before], input=archive, check=True)
        root = os.path.join(work, "corpus")
        write_corpus(root)
        sources = {"before": before, "now": REPO}
        runs: dict[tuple[str, str], list[Run]] = {}
        for round_ in range(args.repeat):
            for jobs in ("1", "2"):
                # the order alternates (ABBA): a run right after another one is often faster or slower
                order = list(sources.items()) if round_ % 2 == 0 else list(sources.items())[::-1]
                for name, source in order:
                    run = _run(source, root, jobs)
                    runs.setdefault((name, jobs), []).append(run)
                    around = f", {run.in_targets:5.1f} s in targets, {run.around_targets:4.1f} s around them"
                    print(f"{name:6} -j {jobs}: {run.wall:6.1f} s wall, {run.cpu:6.1f} s CPU"
                          + (around if jobs == "1" else ""), flush=True)

        for label, pick in (("medians", statistics.median), ("best runs", min)):
            _summary(runs, pick, f"against {args.against}, {os.cpu_count()} cores, Python "
                                 f"{sys.version.split()[0]}, {label} of {args.repeat}:")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
