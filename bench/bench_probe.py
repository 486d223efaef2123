"""Cost of the learning-signal probe next to the bare compile it follows, on the bench corpus.

    python bench/bench_probe.py               # every target of bench/corpus.py
    python bench/bench_probe.py --limit 12    # the first 12 targets

For each target, measured side by side in one process on the same loaded
model: the bare compile (``braintrace.compile_etrace_graph`` through the
adapter, as the default lint runs it) and the probe (BPTT and the online
learner over 1 and 4 steps, jitted, as ``--probe`` runs it). Prints each
target's ratio probe / compile and the corpus total. The README's rule: above
0.5x the probe is on by default only for CI outputs (``--sarif``, the GitHub
format) and one flag (``--probe``) away elsewhere.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

THRESHOLD = 0.5


def measure(spec, root: str, settings) -> tuple[float, float, str] | str:
    """(compile seconds, probe seconds, what the probe found) of one target; why, when it does not load."""
    from etrace_lint.analysis import braintrace_adapter as bt
    from etrace_lint.analysis.context import AnalysisContext
    from etrace_lint.analysis.locate import Locator
    from etrace_lint.config.environ import environ_context
    from etrace_lint.engine.targets import TargetLoadError, load_target
    from etrace_lint.running.isolation import target_state
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
            result = probe_runs(loaded, context, options)
            probed = time.perf_counter() - start
    found = []
    for run in result.runs:
        if run.failure is not None:
            found.append(f"{run.algorithm}: step raises")
        found.extend(f"{'/'.join(map(str, s.weight))}: zero" for s in run.signals if s.not_learning)
        found.extend(f"{'/'.join(map(str, s.weight))}: {s.scale:.2f}x" for s in run.signals if s.scale is not None)
    return compiled, probed, "; ".join(sorted(set(found))) or (result.skipped[:300] if result.skipped else "ok")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=0, help="only the first N targets")
    args = parser.parse_args(argv)

    from corpus import target_files, write_corpus

    from etrace_lint.config.pyproject import load_settings
    from etrace_lint.discovery.discover import discover

    with tempfile.TemporaryDirectory() as root:
        written = write_corpus(root)
        settings = load_settings(root).for_engine()
        specs = discover(target_files(written), root).targets
        specs = specs[: args.limit] if args.limit else specs
        import jax

        print(f"device {jax.devices()[0]}, {len(specs)} targets of bench/corpus.py")
        print(f"{'target':<44} {'compile':>8} {'probe':>8} {'ratio':>6}  found")
        total_compile = total_probe = 0.0
        for spec in specs:
            measured = measure(spec, root, settings)
            name = f"{os.path.relpath(spec.path, root)}::{spec.factory}"
            if isinstance(measured, str):
                print(f"{name[-44:]:<44} not measured: {measured[:120]}")
                continue
            compiled, probed, found = measured
            total_compile += compiled
            total_probe += probed
            print(f"{name[-44:]:<44} {compiled:>7.2f}s {probed:>7.2f}s {probed / compiled:>5.1f}x  {found}")
        ratio = total_probe / total_compile if total_compile else float("nan")
        print(f"{'total':<44} {total_compile:>7.2f}s {total_probe:>7.2f}s {ratio:>5.1f}x")
        verdict = "above" if ratio > THRESHOLD else "within"
        print(f"the probe costs {ratio:.1f}x the bare compile: {verdict} the {THRESHOLD}x budget of a default rule")
    return 0


if __name__ == "__main__":
    sys.exit(main())
