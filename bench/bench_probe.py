"""Cost of the learning-signal probe next to the bare compile it follows, and of a whole run with it.

    python bench/bench_probe.py               # every target of bench/corpus.py
    python bench/bench_probe.py --limit 12    # the first 12 targets
    python bench/bench_probe.py --no-runs     # only the per-target table
    python bench/bench_probe.py --real        # the tests' real-model corpus (upstream SNNs and RNNs)

For each target, measured side by side in one process on the same loaded
model: the bare compile (``braintrace.compile_etrace_graph`` through the
adapter, as every lint runs it), the probe as it runs (BPTT and the online
learner over 1 and 4 steps, evaluated with NumPy) and the same probe with its
programs compiled by XLA, as it ran before. Prints each target's ratios and
the corpus totals, then where the probe's time went, summed over the
targets: tracing braintrace's online step and the BPTT program (each call's
time less its NumPy evaluation), evaluating them, building the learner
(braintrace's second ETrace compile) and the one-step shape check.

Then the whole command line, cold (no cache, ``-j 1``), on the same files:
``--sarif`` with the probe, and ``--sarif --no-probe``, one after the other,
wall and CPU time of the process tree, and their ratio.

``--real`` measures the same on a copy of ``tests/real_models`` (the corpus the referee tests judge:
models from braintrace's, brainpy.state's and brainstate's examples and published experiment code)
instead of ``bench/corpus.py``'s small recurrent cells; the goals of the whole run differ (1.5x there,
1.35x on the cells).
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import traceback

# each command line here runs in its own cold process tree: the project's daemon would serve it warm
os.environ["ETRACE_LINT_NO_DAEMON"] = "1"

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

THRESHOLD = 0.5
# the whole cold run with the probe against the same run with --no-probe, at most
RUN_GOAL = {"real": 1.5, "cells": 1.35}
REPO = os.path.dirname(HERE)


def measure(spec, root: str, settings, interpret: bool = True,
            parts: collections.Counter | None = None) -> tuple[float, float, str] | str:
    """(compile seconds, probe seconds, what the probe found) of one target; why, when it does not load.
    ``interpret=False``: the probe's programs compiled by XLA instead. ``parts``: where the probe's time
    went is added to it (see ``_timed_parts``)."""
    from etrace_lint.analysis import braintrace_adapter as bt
    from etrace_lint.analysis.context import AnalysisContext
    from etrace_lint.analysis.locate import Locator
    from etrace_lint.config.environ import environ_context
    from etrace_lint.engine.fresh_state import target_state
    from etrace_lint.engine.targets import TargetLoadError, load_target
    from etrace_lint.verify import harness
    from etrace_lint.verify.probe.measure import probe_runs

    with target_state():
        try:
            loaded = load_target(spec, root, environ=settings.environ)
        except TargetLoadError as exc:
            return str(exc)
        options = {**settings.compile_options, **loaded.compile_options}
        with environ_context(loaded.environ):
            start = time.perf_counter()
            bt.ensure_states(loaded.model, loaded.batch_size)
            compilation = bt.compile_model(loaded.model, loaded.inputs, options)
            compiled = time.perf_counter() - start
            if compilation.graph is None:
                return compiled, 0.0, "does not compile"
            locator = Locator(loaded.model, compilation.module_info, loaded.factory_location,
                              compilation.traced_jaxpr, compilation.raw_jaxpr)
            context = AnalysisContext(loaded.model, loaded.inputs, compilation, locator, settings)
            start = time.perf_counter()
            with _staged(harness, interpret), _timed_parts(parts):
                result = probe_runs(loaded, context, options)
            probed = time.perf_counter() - start
    found = []
    for run in result.runs:
        if run.failure is not None:
            found.append(f"{run.algorithm}: step raises")
        found.extend(f"{'/'.join(map(str, s.weight))}: zero" for s in run.signals if s.not_learning)
        found.extend(f"{'/'.join(map(str, s.weight))}: {s.scale:.2f}x" for s in run.signals if s.scale is not None)
    return compiled, probed, "; ".join(sorted(set(found))) or (result.skipped[:300] if result.skipped else "ok")


@contextlib.contextmanager
def _staged(harness, interpret: bool):
    """The probe's harness as it is, or with its programs compiled by XLA (``interpret=False``)."""
    if interpret:
        yield
        return
    original = harness.Harness.__init__

    def compiled(self, *args, interpret=False, **kwargs):
        original(self, *args, **kwargs)

    harness.Harness.__init__ = compiled
    try:
        yield
    finally:
        harness.Harness.__init__ = original


# the harness's steps timed by ``_timed_parts``, and the names they are printed under
_STEPS = {"online": "online step (traced and evaluated)", "bptt": "BPTT (traced and evaluated)",
          "_compile": "building the learner (compile_graph)", "_step_changes_shapes": "one-step shape check"}


@contextlib.contextmanager
def _timed_parts(parts: collections.Counter | None):
    """Add each timed step's seconds to ``parts``, and the NumPy evaluation inside the online step and
    inside BPTT apart, so that tracing is what is left of each."""
    if parts is None:
        yield
        return
    from etrace_lint.verify import harness, interpret

    def timed(function, name):
        def run(*args, **kwargs):
            start = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                parts[name] += time.perf_counter() - start
        return run

    depth = [0]  # a scan's or a call's body is evaluated inside its program's evaluation: counted once

    def evaluate(*args, **kwargs):
        depth[0] += 1
        start = time.perf_counter()
        try:
            return original_evaluate(*args, **kwargs)
        finally:
            seconds = time.perf_counter() - start
            depth[0] -= 1
            if depth[0] == 0:
                callers = {frame.name for frame in traceback.extract_stack(limit=16)}
                within = "online" if "online" in callers else "bptt" if "bptt" in callers else "other"
                parts[f"evaluate:{within}"] += seconds

    originals = {name: getattr(harness.Harness, name) for name in _STEPS}
    original_evaluate = interpret.evaluate
    for name, function in originals.items():
        setattr(harness.Harness, name, timed(function, name))
    interpret.evaluate = evaluate
    try:
        yield
    finally:
        for name, function in originals.items():
            setattr(harness.Harness, name, function)
        interpret.evaluate = original_evaluate


def _print_parts(parts: collections.Counter, total_compile: float, total_probe: float) -> float:
    """Prints the split; returns the seconds of tracing no probe of braintrace's gradient can leave out."""
    online, bptt = parts["online"] - parts["evaluate:online"], parts["bptt"] - parts["evaluate:bptt"]
    rows = [("tracing braintrace's online step", online), ("tracing the BPTT program", bptt),
            ("evaluating both with NumPy", parts["evaluate:online"] + parts["evaluate:bptt"]),
            ("building the learner (braintrace's compile_graph)", parts["_compile"]),
            ("one-step shape check", parts["_step_changes_shapes"])]
    rows.append(("the rest (inputs, states, comparisons)", total_probe - sum(seconds for _, seconds in rows)))
    print("where the probe's time went, all targets:")
    for name, seconds in rows:
        print(f"  {name:<52} {seconds:>6.2f}s {seconds / total_probe:>5.0%} {seconds / total_compile:>6.1f}x compile")
    floor = online + bptt + parts["_compile"]
    print(f"what it must trace to run braintrace's learner against BPTT costs {floor / total_compile:.1f}x the "
          f"bare compile")
    return floor


def _cli(root: str, *args: str) -> tuple[float, float]:
    """Wall and CPU seconds (the whole process tree) of one cold etrace-lint run over ``root``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "etrace_lint", "--no-cache", "-j", "1", *args], cwd=root,
                          capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        sys.exit(f"etrace-lint {' '.join(args)} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=0, help="only the first N targets")
    parser.add_argument("--no-runs", action="store_true", help="leave out the whole command-line runs")
    parser.add_argument("--real", action="store_true",
                        help="the tests' real-model corpus (tests/real_models) instead of bench/corpus.py's cells")
    args = parser.parse_args(argv)

    from corpus import target_files, write_corpus

    from etrace_lint.config.pyproject import load_settings
    from etrace_lint.discovery.discover import discover

    with tempfile.TemporaryDirectory() as root:
        if args.real:
            models = os.path.join(root, "models")
            shutil.copytree(os.path.join(REPO, "tests", "real_models"), models,
                            ignore=shutil.ignore_patterns("__pycache__"))
            corpus_files = sorted(os.path.join(models, name) for name in os.listdir(models) if name.endswith(".py"))
        else:
            corpus_files = target_files(write_corpus(root))
        corpus = "tests/real_models" if args.real else "bench/corpus.py"
        goal = RUN_GOAL["real" if args.real else "cells"]
        settings = load_settings(root).for_engine()
        specs = discover(corpus_files, root).targets
        specs = specs[: args.limit] if args.limit else specs
        import jax

        print(f"device {jax.devices()[0]}, {len(specs)} targets of {corpus}")
        print(f"{'target':<40} {'compile':>8} {'probe':>7} {'ratio':>7} {'XLA':>7} {'ratio':>7}  found")
        total_compile = total_probe = total_xla = 0.0
        parts: collections.Counter = collections.Counter()
        for spec in specs:
            measured = measure(spec, root, settings, parts=parts)
            name = f"{os.path.relpath(spec.path, root)}::{spec.factory}"
            if isinstance(measured, str):
                print(f"{name[-40:]:<40} not measured: {measured[:120]}")
                continue
            xla = measure(spec, root, settings, interpret=False)
            compiled, probed, found = measured
            xla_seconds = xla[1] if not isinstance(xla, str) else float("nan")
            total_compile += compiled
            total_probe += probed
            total_xla += xla_seconds
            print(f"{name[-40:]:<40} {compiled:>7.2f}s {probed:>6.2f}s {probed / compiled:>6.1f}x "
                  f"{xla_seconds:>6.2f}s {xla_seconds / compiled:>6.1f}x  {found}")
        ratio = total_probe / total_compile if total_compile else float("nan")
        print(f"{'total':<40} {total_compile:>7.2f}s {total_probe:>6.2f}s {ratio:>6.1f}x "
              f"{total_xla:>6.2f}s {total_xla / total_compile:>6.1f}x")
        print(f"the probe costs {ratio:.1f}x the bare compile ({THRESHOLD}x is the goal); "
              f"compiled by XLA it cost {total_xla / total_compile:.1f}x")
        floor = _print_parts(parts, total_compile, total_probe)
        if not args.no_runs:
            files = [os.path.relpath(p, root) for p in corpus_files]
            if args.limit:
                files = sorted({os.path.relpath(spec.path, root) for spec in specs})
            probe_wall, probe_cpu = _cli(root, *files, "--sarif", "probed.sarif")
            bare_wall, bare_cpu = _cli(root, *files, "--sarif", "bare.sarif", "--no-probe")
            print(f"cold -j 1 --sarif on {len(files)} files: {probe_wall:.1f}s wall {probe_cpu:.1f}s CPU "
                  f"with the probe, {bare_wall:.1f}s wall {bare_cpu:.1f}s CPU with --no-probe: "
                  f"{probe_wall / bare_wall:.2f}x wall, "
                  f"{probe_cpu / bare_cpu:.2f}x CPU (goal {goal}x wall)")
            # a lower bound: the run lints at least the targets measured above (all of their files' targets)
            print(f"the same run with a probe that only traced what it must ({floor:.1f}s, measured above): "
                  f"at least {(bare_wall + floor) / bare_wall:.2f}x wall")
    return 0


if __name__ == "__main__":
    sys.exit(main())
