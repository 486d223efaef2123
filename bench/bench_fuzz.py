"""Throughput of a campaign of generated models (tests/fuzz), beside a plain lint of the same models.

    python bench/bench_fuzz.py                # 12 models of seed 47
    python bench/bench_fuzz.py -n 30 --seed 7

In one run, on the same machine, one after the other:

* ``campaign``: ``python -m tests.fuzz run -n N -j 1 --seed S`` (each model generated, written to a file, linted
  by etrace-lint's worker and judged by braintrace's public API in the oracle's worker);
* ``lint``: a cold lint of the models the campaign wrote, as a user runs it (``etrace-lint MODELS --no-cache
  -j 1 --sarif``, the probe on, no daemon).

For each: wall time and CPU time of the process tree, and models per CPU minute; then the campaign's CPU per
model over the lint's, what judging every weight against braintrace costs on top of linting it, and the
campaign's own figure (its workers' CPU time, as ``summary`` prints it). Run from the repository's root with the
test extras installed. docs/development/testing-against-braintrace.md gives the figures of the campaigns.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _timed(command: list[str], env: dict[str, str]) -> tuple[float, float, subprocess.CompletedProcess[str]]:
    """Wall and CPU seconds of ``command``'s process tree (its children are reaped before it ends)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=12, help="models of the campaign (12)")
    parser.add_argument("--seed", type=int, default=47, help="hypothesis's seed (47)")
    args = parser.parse_args(argv)
    # each command line here runs in its own cold process tree: the project's daemon would serve the lint warm
    env = {**os.environ, "ETRACE_LINT_NO_DAEMON": "1"}
    with tempfile.TemporaryDirectory(prefix="etrace-lint-bench-fuzz-") as folder:
        table, models = os.path.join(folder, "t.json"), os.path.join(folder, "models")
        wall, cpu, done = _timed([sys.executable, "-m", "tests.fuzz", "run", "-n", str(args.n), "-j", "1",
                                  "--seed", str(args.seed), "--out", table, "--keep", models], env)
        if done.returncode != 0 or not os.path.exists(table):
            print(done.stdout[-2000:], done.stderr[-3000:], sep="\n", file=sys.stderr)
            return 1
        summary = json.loads(subprocess.run([sys.executable, "-m", "tests.fuzz", "summary", table], cwd=REPO,
                                            env=env, capture_output=True, text=True, check=True).stdout
                             .split("\n}\n")[0] + "\n}")
        written = sorted(name for name in os.listdir(models) if name.endswith(".py"))
        lint_wall, lint_cpu, linted = _timed([sys.executable, "-m", "etrace_lint", models, "--no-cache", "-j", "1",
                                              "-q", "--sarif", os.path.join(folder, "lint.sarif")], env)
        if linted.returncode not in (0, 1, 2):
            print(linted.stderr[-3000:], file=sys.stderr)
            return 1
    judged = int(summary["judged"])
    print(f"seed {args.seed}: {summary['models']} models ({judged} judged, {len(written)} files), "
          f"{summary['weights']} weights, {summary['agree']} agreeing, "
          f"{len(summary['disagreements'])} disagreement mechanisms")
    print(f"{'run':<10}{'wall (s)':>10}{'CPU (s)':>10}{'models / CPU min':>18}")
    for name, seconds, used in (("campaign", wall, cpu), ("lint", lint_wall, lint_cpu)):
        print(f"{name:<10}{seconds:>10.1f}{used:>10.1f}{60 * len(written) / max(used, 1e-9):>18.2f}")
    print(f"campaign CPU per model / lint CPU per model: {cpu / max(lint_cpu, 1e-9):.2f}x; the campaign's workers: "
          f"{summary['models_per_cpu_minute']} models per CPU minute")
    return 0


if __name__ == "__main__":
    sys.exit(main())
