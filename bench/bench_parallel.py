"""Cores and CI runners: -j 2 against -j 1, worker start, and three shards against one run.

Side by side in one run, on the corpus of real models from installed
libraries (bench/corpus.py), cold (no cache) unless said otherwise:

- `-j 1` and `-j 2`: wall time and the CPU time of the whole process tree
  (every worker and the fork server are waited for, so their time counts);
- worker start: from asking the warm fork server for a worker to the worker
  saying it is ready;
- `--shard 1/3`, `2/3`, `3/3` run one after the other (as on three runners),
  against the unsharded run at the same `-j`: once without a cache (split by
  file) and once with the cache of an earlier run whose files all changed
  since (split by the time each file took; every target is linted again).
  The merged log is checked against the unsharded one.

Usage: python bench/bench_parallel.py [--repeat N] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from corpus import write_corpus  # noqa: E402

# each command line here runs in its own cold process tree: the project's daemon would serve it warm
os.environ["ETRACE_LINT_NO_DAEMON"] = "1"

_TIMES = re.compile(r'"(startTimeUtc|endTimeUtc)": "[^"]*"')


def _cli(root: str, *args: str) -> tuple[float, float, subprocess.CompletedProcess]:
    """Wall and CPU seconds (user + system of the whole process tree) of one etrace-lint run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "etrace_lint", *args], cwd=root, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode not in (0, 1, 2):
        sys.exit(f"etrace-lint {' '.join(args)} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return wall, cpu, proc


def _worker_start(repeat: int) -> list[float]:
    code = (
        "import time\n"
        "from etrace_lint.running.workers import WorkerPool\n"
        "if __name__ == '__main__':\n"
        "    pool = WorkerPool()\n"
        "    pool._fork_server()\n"
        f"    for _ in range({repeat}):\n"
        "        start = time.perf_counter()\n"
        "        worker = pool._start_worker()\n"
        "        worker.conn.recv()\n"
        "        print(time.perf_counter() - start, flush=True)\n"
        "        pool.workers.append(worker)\n"
        "        worker.ready = True\n"
        "    print(pool.start_method)\n"
        "    pool.close()\n")
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as handle:
        handle.write(code)
    try:
        out = subprocess.run([sys.executable, handle.name], capture_output=True, text=True, check=True).stdout
    finally:
        os.unlink(handle.name)
    lines = out.split()
    if lines[-1] != "fork":
        print(f"  (workers are not forked here: {lines[-1]})")
    return [float(x) for x in lines[:-1]]


def _touch_every_model(root: str) -> None:
    for dirpath, _, files in os.walk(root):
        if ".etrace-lint-cache" in dirpath:
            continue
        for name in files:
            if name.endswith(".py"):
                with open(os.path.join(dirpath, name), "a", encoding="utf-8") as handle:
                    handle.write("\n# changed\n")


def _read_log(root: str, name: str) -> dict:
    with open(os.path.join(root, name), encoding="utf-8") as handle:
        log = json.loads(_TIMES.sub(r'"\1": ""', handle.read()))
    return log


def _first_difference(a: dict, b: dict) -> str:
    run_a, run_b = a["runs"][0], b["runs"][0]
    for key in sorted(set(run_a) | set(run_b)):
        if run_a.get(key) != run_b.get(key):
            if key == "results":
                only_a = [r for r in run_a["results"] if r not in run_b["results"]]
                only_b = [r for r in run_b["results"] if r not in run_a["results"]]
                return (f"results: {len(run_a['results'])} vs {len(run_b['results'])}; only unsharded: "
                        f"{json.dumps(only_a[:1])[:600]}; only merged: {json.dumps(only_b[:1])[:600]}")
            return f"{key}: {json.dumps(run_a.get(key))[:600]} vs {json.dumps(run_b.get(key))[:600]}"
    return ""


def _shards(root: str, jobs: str, cache: str | None, reference: str) -> tuple[list[float], str]:
    """Three shards one after the other, each from its own copy of ``cache`` (as each CI runner restores
    its own); the merged log is compared with ``reference``."""
    walls = []
    for k in (1, 2, 3):
        cache_args = ["--no-cache"]
        if cache:
            copy = os.path.join(root, f".cache-shard{k}")
            shutil.rmtree(copy, ignore_errors=True)
            shutil.copytree(cache, copy)
            cache_args = ["--cache-dir", copy]
        wall, _, _ = _cli(root, ".", "-q", "-j", jobs, "--shard", f"{k}/3", "--sarif", f"shard{k}.sarif",
                          *cache_args)
        walls.append(wall)
    merge = subprocess.run([sys.executable, "-m", "etrace_lint", "merge", "shard1.sarif", "shard2.sarif",
                            "shard3.sarif", "-o", "merged.sarif"], cwd=root, capture_output=True, text=True)
    if merge.returncode not in (0, 1, 2):
        sys.exit(merge.stderr)
    difference = _first_difference(_read_log(root, reference), _read_log(root, "merged.sarif"))
    return walls, difference or "the merged log equals the unsharded one"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1, help="cold runs of each -j, interleaved (1)")
    parser.add_argument("--keep", help="write the corpus here and keep it")
    args = parser.parse_args()
    root = args.keep or tempfile.mkdtemp(prefix="etrace-lint-parallel-")
    os.makedirs(root, exist_ok=True)
    files = write_corpus(root)
    targets = json.loads(_cli(root, ".", "--list-targets", "--output-format", "json")[2].stdout)["targets"]
    print(f"corpus: {len(targets)} targets in {len(files)} files, {os.cpu_count()} cores, "
          f"Python {sys.version.split()[0]}")
    cache = os.path.join(root, ".etrace-lint-cache")

    runs = {"1": [], "2": []}
    for _ in range(args.repeat):
        # cold: nothing cached, not even JAX's compiled programs; -j 2 records each target's time
        shutil.rmtree(cache, ignore_errors=True)
        runs["1"].append(_cli(root, ".", "-q", "-j", "1", "--no-cache", "--sarif", "whole.sarif")[:2])
        shutil.rmtree(cache, ignore_errors=True)
        runs["2"].append(_cli(root, ".", "-q", "-j", "2", "--sarif", "whole-j2.sarif")[:2])
    (w1, c1), (w2, c2) = min(runs["1"]), min(runs["2"])
    print(f"-j 1 cold: {w1:6.1f} s wall, {c1:6.1f} s CPU")
    print(f"-j 2 cold: {w2:6.1f} s wall, {c2:6.1f} s CPU")
    print(f"  ratio -j 2 / -j 1: wall {w2 / w1:.2f}x (target <= 0.65x), CPU {c2 / c1:.2f}x (target <= 1.15x)")
    same = _first_difference(_read_log(root, "whole.sarif"), _read_log(root, "whole-j2.sarif"))
    print(f"  -j 1 and -j 2 logs: {same or 'equal'}")

    starts = _worker_start(5)
    print(f"worker start: median {statistics.median(starts):.3f} s, max {max(starts):.3f} s (target <= 0.3 s)")

    walls, same = _shards(root, "1", None, "whole.sarif")
    print(f"3 shards, no cache (split by file): {', '.join(f'{w:.1f}' for w in walls)} s; slowest "
          f"{max(walls) / w1:.2f}x the unsharded -j 1 run ({w1:.1f} s) (target <= 0.45x); {same}")

    # a CI cache restored from the default branch, every model changed since: all targets are linted
    # again, split by the time each took then, with JAX's compiled programs already on disk
    _touch_every_model(root)
    stale = os.path.join(root, ".cache-stale")
    shutil.rmtree(stale, ignore_errors=True)
    shutil.copytree(cache, stale)
    whole, _, _ = _cli(root, ".", "-q", "-j", "1", "--cache-dir", stale, "--sarif", "whole-stale.sarif")
    walls, same = _shards(root, "1", cache, "whole-stale.sarif")
    print(f"3 shards, stale cache (split by recorded time): {', '.join(f'{w:.1f}' for w in walls)} s; slowest "
          f"{max(walls) / whole:.2f}x the unsharded -j 1 run from the same cache ({whole:.1f} s); {same}")
    if not args.keep:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
