"""Cold against warm (cached) runs, and two workers against one, on a generated tree.

    python bench/bench_cache.py [--models 30] [--keep DIR]

Prints the wall-clock times and ratios measured in this one run, whether the
warm run imported JAX, and whether its SARIF equals the cold run's. Targets:
warm <= 1/10 of cold, no JAX import on the warm run, identical SARIF.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

# each command line here runs in its own cold process tree: the project's daemon would serve it warm
os.environ["ETRACE_LINT_NO_DAEMON"] = "1"

LAYERS = '''"""Small real models for the benchmark."""

import braintrace
import brainstate
import jax.numpy as jnp


class Leaky(brainstate.nn.Module):
    def __init__(self, n_in, n):
        super().__init__()
        self.w = brainstate.ParamState(jnp.ones((n_in, n)) * 0.1)
        self.h = brainstate.HiddenState(jnp.zeros((n,)))

    def update(self, x):
        self.h.value = 0.9 * self.h.value + braintrace.matmul(x, self.w.value)
        return self.h.value


class PlainLeak(brainstate.nn.Module):
    def __init__(self, n_in, n):
        super().__init__()
        self.w = brainstate.ParamState(jnp.ones((n_in, n)) * 0.1)
        self.leak = brainstate.ParamState(jnp.full((n,), 0.9))
        self.h = brainstate.HiddenState(jnp.zeros((n,)))

    def update(self, x):
        self.h.value = self.leak.value * self.h.value + braintrace.matmul(x, self.w.value)
        return self.h.value


class TwoLayers(brainstate.nn.Module):
    def __init__(self, n_in, n):
        super().__init__()
        self.first = Leaky(n_in, n)
        self.second = Leaky(n, n)

    def update(self, x):
        return self.second(self.first(x))
'''

MODELS = '''import braintrace
import jax.numpy as jnp

from layers import Leaky, PlainLeak, TwoLayers


def etrace_target_leaky_{i}():
    return Leaky({a}, {b}), (jnp.ones(({a},)),)


def etrace_target_plain_leak_{i}():
    return PlainLeak({a}, {b}), (jnp.ones(({a},)),)


def etrace_target_two_layers_{i}():
    return TwoLayers({a}, {b}), (jnp.ones(({a},)),)
'''


def make_tree(root: str, models: int) -> None:
    os.makedirs(os.path.join(root, "models"), exist_ok=True)
    with open(os.path.join(root, "models", "layers.py"), "w", encoding="utf-8") as handle:
        handle.write(LAYERS)
    for i in range((models + 2) // 3):
        with open(os.path.join(root, "models", f"family_{i:02d}.py"), "w", encoding="utf-8") as handle:
            handle.write(MODELS.format(i=i, a=2 + i % 3, b=3 + i % 4))


def lint(root: str, *args: str, env: dict | None = None) -> tuple[float, subprocess.CompletedProcess]:
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "etrace_lint", "models", "-q", *args], cwd=root,
                          capture_output=True, text=True, env=dict(os.environ, **(env or {})))
    elapsed = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        raise SystemExit(f"etrace-lint failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return elapsed, proc


def sarif_without_times(path: str) -> str:
    with open(path, encoding="utf-8") as handle:
        log = json.load(handle)
    for run in log["runs"]:
        run.pop("invocations", None)
    return json.dumps(log)  # the text, key order included


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", type=int, default=30, help="number of targets (30)")
    parser.add_argument("--keep", metavar="DIR", help="build the tree in DIR and keep it")
    args = parser.parse_args()
    root = args.keep or tempfile.mkdtemp(prefix="etrace-lint-bench-")
    try:
        make_tree(root, args.models)
        cache = os.path.join(root, "cache")
        shutil.rmtree(cache, ignore_errors=True)
        one, _ = lint(root, "-j", "1", "--no-cache", "--sarif", "one.sarif")
        cold, cold_proc = lint(root, "-j", "2", "--cache-dir", cache, "--sarif", "cold.sarif")
        warm, warm_proc = lint(root, "-j", "2", "--cache-dir", cache, "--sarif", "warm.sarif",
                               env={"PYTHONPROFILEIMPORTTIME": "1"})
        imported = {line.rsplit("|", 1)[-1].strip() for line in warm_proc.stderr.splitlines() if "|" in line}
        heavy = sorted(m for m in imported if m.split(".")[0] in ("jax", "jaxlib", "brainstate", "braintrace"))
        same_sarif = sarif_without_times(os.path.join(root, "warm.sarif")) == sarif_without_times(
            os.path.join(root, "cold.sarif"))
        same_jobs = sarif_without_times(os.path.join(root, "one.sarif")) == sarif_without_times(
            os.path.join(root, "cold.sarif"))
        targets = len(json.loads(sarif_without_times(os.path.join(root, "cold.sarif")))["runs"][0]["results"])
        print(f"tree: {args.models} targets in {root} ({targets} findings shown), {os.cpu_count()} cores")
        print(f"cold -j 1: {one:7.2f} s")
        print(f"cold -j 2: {cold:7.2f} s   -j 2 / -j 1 = {cold / one:.3f}")
        print(f"warm -j 2: {warm:7.2f} s   warm / cold = {warm / cold:.4f} (target <= 0.1)")
        print(f"warm run imported JAX, brainstate or braintrace: {'yes: ' + ', '.join(heavy[:5]) if heavy else 'no'}")
        print(f"warm SARIF identical to cold: {'yes' if same_sarif else 'NO'}; "
              f"-j 1 SARIF identical to -j 2: {'yes' if same_jobs else 'NO'}; "
              f"same stdout: {'yes' if warm_proc.stdout == cold_proc.stdout else 'NO'}")
        ok = warm <= cold / 10 and not heavy and same_sarif and same_jobs
        return 0 if ok else 1
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
