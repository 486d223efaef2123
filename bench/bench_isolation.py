"""What isolation costs: this tree against an earlier revision, side by side, on the bench corpus.

For each of the two (the revision is exported with ``git archive`` into a
temporary folder and put first on ``PYTHONPATH``), interleaved so that a
change in the machine's load hits both alike: a cold ``-j 1`` run and a cold
``-j 2`` run (no result cache, no compiled programs), wall time and the CPU
time of the whole process tree. Printed: each run, the medians, and the
ratios this tree / the revision (target: cold ``-j 1`` within 1.05x) and
``-j 2`` / ``-j 1`` of each (target: at most 0.65x on two idle cores).

Usage: python bench/bench_isolation.py [--against REV] [--repeat N]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)

from corpus import write_corpus  # noqa: E402


def _run(source: str, root: str, jobs: str) -> tuple[float, float]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [source, os.environ.get("PYTHONPATH", "")])))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "etrace_lint", ".", "-q", "-j", jobs, "--no-cache"], cwd=root,
                          env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in (0, 1, 2):
        sys.exit(f"{source}: etrace-lint -j {jobs} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


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
        runs: dict[tuple[str, str], list[tuple[float, float]]] = {}
        for _ in range(args.repeat):
            for jobs in ("1", "2"):
                for name, source in sources.items():
                    result = _run(source, root, jobs)
                    runs.setdefault((name, jobs), []).append(result)
                    print(f"{name:6} -j {jobs}: {result[0]:6.1f} s wall, {result[1]:6.1f} s CPU", flush=True)
        median = {key: (statistics.median(w for w, _ in values), statistics.median(c for _, c in values))
                  for key, values in runs.items()}
        print(f"against {args.against}, {os.cpu_count()} cores, Python {sys.version.split()[0]}, "
              f"medians of {args.repeat}:")
        for jobs in ("1", "2"):
            (bw, bc), (nw, nc) = median[("before", jobs)], median[("now", jobs)]
            print(f"  cold -j {jobs}: now/before wall {nw / bw:.3f}x, CPU {nc / bc:.3f}x"
                  + ("  (target: -j 1 within 1.05x)" if jobs == "1" else ""))
        for name in sources:
            (w1, _), (w2, _) = median[(name, "1")], median[(name, "2")]
            print(f"  {name}: -j 2 / -j 1 wall {w2 / w1:.2f}x (target <= 0.65x on two idle cores)")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
