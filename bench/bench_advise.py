"""The advisor against a plain script, and a forecast at batch 4096 against batch 1.

    python bench/bench_advise.py [--steps 8] [--model two_layers]

1. ``advise --algorithms all`` on one model (tests/fixtures/advise), through
   the Python path, against a plain public-API script that computes the same
   rows one algorithm at a time, as a user would by hand: for each algorithm
   a fresh model, the learner's state allocated at batch sizes 1, 2 and 3 to
   read its bytes, the online gradient over T jitted steps, BPTT with
   ``jax.grad`` through the unrolled model, and XLA's analysis of one online
   step and one forward step. Both run in this process, alternately
   (``--repeat``, the fastest of each kept: a shared machine's load comes and
   goes), after a warm-up that imports and compiles what both share. Target: the
   advisor takes at most half the script's time.
2. ``advise`` on a model whose D-RTRL trace needs several GiB at batch 4096,
   once with ``--batch-size 1`` and once with ``--batch-size 4096``, each in
   its own process: wall time and peak resident memory (``wait4``'s
   ``ru_maxrss``). Target: batch 4096 costs no more than batch 1.

Prints what it measured and the ratios; the times depend on the machine's load.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import time
import warnings

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)
FIXTURES = os.path.join(REPO, "tests", "fixtures", "advise")


def _module(name: str):
    spec = importlib.util.spec_from_file_location(f"advise_{name}", os.path.join(FIXTURES, f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


FACTORIES = {"rate_rnn": ("models", "etrace_target_rate_rnn"),
             "two_layers": ("surprises", "etrace_target_two_layers"),
             "diagonal": ("surprises", "etrace_target_diagonal")}


def plain_rows(factory, algorithms, steps: int, xs) -> dict:
    """The rows, one algorithm at a time, with braintrace's, brainstate's and JAX's public API only."""
    import brainstate
    import braintrace
    import jax
    import jax.numpy as jnp
    import numpy as np

    def loss(out):
        return jnp.mean(out ** 2)

    def nbytes(tree):
        total = 0
        for leaf in jax.tree.leaves(tree):
            leaf = jnp.asarray(leaf)
            if jax.dtypes.issubdtype(leaf.dtype, jax.dtypes.prng_key):
                leaf = jax.random.key_data(leaf)
            total += leaf.nbytes
        return total

    rows = {}
    for algorithm in algorithms:
        cls = getattr(braintrace, algorithm.class_name)
        row = {}
        sizes = {}
        try:
            for batch in (1, 2, 3):
                model, _ = factory()
                brainstate.nn.init_all_states(model, batch_size=batch)
                own = {id(st) for st in brainstate.graph.states(model).values()}
                learner = cls(model, **algorithm.options)
                learner.compile_graph(jnp.ones((batch, xs.shape[-1])))
                sizes[batch] = nbytes([st.value for st in brainstate.graph.states(learner).values()
                                       if id(st) not in own])
            row["sizes"] = sizes
            model, inputs = factory()
            start = {p: st.value for p, st in brainstate.graph.states(model).items()}
            weights = brainstate.graph.states(model).filter(brainstate.ParamState)

            def total():
                return sum(loss(model(xs[t])) for t in range(steps))

            bptt = brainstate.transform.jit(lambda: brainstate.transform.grad(total, weights)())()
            for p, st in brainstate.graph.states(model).items():
                st.value = start[p]
            learner = cls(model, **algorithm.options)
            learner.compile_graph(*inputs)

            @brainstate.transform.jit
            def step(x):
                return learner.etrace_grad(x, step_fn=lambda x: loss(learner(x)), reduction="sum",
                                           loss_output="scalar")
            online = None
            for t in range(steps):
                grads = step(xs[t:t + 1])
                online = grads if online is None else jax.tree.map(jnp.add, online, grads)
            row["cosines"] = [float(np.vdot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b) or 1.0))
                              for a, b in zip(jax.tree.leaves(online), jax.tree.leaves(bptt))]
            analysed = step.lower(xs[:1]).compile()
            forward = brainstate.transform.jit(lambda x: loss(model(x))).lower(xs[0]).compile()
            row["temp"] = analysed.memory_analysis().temp_size_in_bytes
            row["flops"] = analysed.cost_analysis(), forward.cost_analysis()
        except Exception as exc:  # noqa: BLE001 - the row says it failed, as the advisor's does
            row["error"] = f"{type(exc).__name__}: {exc}"[:200]
        rows[algorithm.label] = row
    return rows


def compare(model_name: str, steps: int, repeat: int = 1) -> None:
    import jax.numpy as jnp
    import numpy as np

    from etrace_lint.verify.advise.algorithms import select
    from etrace_lint.verify.advise.run import AdviceSettings, advise_model

    module_name, factory_name = FACTORIES[model_name]
    factory = getattr(_module(module_name), factory_name)
    xs = jnp.asarray(np.random.default_rng(0).standard_normal((steps, 2, 3)).astype(np.float32))
    algorithms = select("all")

    def advised():
        model, inputs = factory()
        return advise_model(model, inputs, target=model_name, batch_size=2,
                            settings=AdviceSettings(algorithms="all", steps=steps,
                                                    inputs=lambda s, b, seed: xs))

    # warm-up: imports, and what both compile alike (the first jit of any kind pays for XLA's start)
    plain_rows(factory, algorithms[:1], 1, xs)
    timings: dict[str, float] = {}
    for _ in range(repeat):  # alternated, the fastest of each kept: a shared machine's load comes and goes
        for name, run in (("advise", advised), ("plain", lambda: plain_rows(factory, algorithms, steps, xs))):
            start = time.perf_counter()
            result = run()
            timings[name] = min(timings.get(name, float("inf")), time.perf_counter() - start)
            if name == "advise":
                ran = sum(row.runs for row in result)
    print(f"{model_name}, {len(algorithms)} algorithms, T={steps}, fastest of {repeat}: "
          f"advise {timings['advise']:.1f} s, "
          f"plain script {timings['plain']:.1f} s, ratio advise/plain = "
          f"{timings['advise'] / timings['plain']:.2f} (target <= 0.5); {ran} algorithms ran")


CHILD = r"""
import sys, json, time, warnings
warnings.simplefilter("ignore")
sys.path.insert(0, {repo!r})
import importlib.util
spec = importlib.util.spec_from_file_location("m", {models!r})
m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
from etrace_lint.verify.advise.run import AdviceSettings, advise_model
model, inputs = m.etrace_target_wide_rnn()
start = time.perf_counter()
rows = advise_model(model, inputs, target="wide", batch_size=1,
                    settings=AdviceSettings(algorithms="d_rtrl", steps=2, batch_size={batch}))
print(json.dumps({{"seconds": time.perf_counter() - start, "trace_bytes": rows[0].trace_bytes,
                  "law": rows[0].trace_bytes_law.to_json()}}))
"""


def forecast() -> None:
    measured = {}
    for batch in (1, 4096):
        code = CHILD.format(repo=REPO, models=os.path.join(FIXTURES, "models.py"), batch=batch)
        child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        started = time.perf_counter()
        out = child.stdout.read()
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - started
        child.stdout.close()
        if status != 0:
            print(f"batch {batch}: the child failed with status {status}")
            return
        data = json.loads(out.decode().strip().splitlines()[-1])
        measured[batch] = (data, usage.ru_maxrss * 1024, wall)
        print(f"wide RNN, --batch-size {batch}: D-RTRL trace {data['trace_bytes'] / 2 ** 30:.2f} GiB "
              f"(law {data['law']}), advice {data['seconds']:.1f} s, process {wall:.1f} s, "
              f"peak RSS {usage.ru_maxrss / 1024:.0f} MiB")
    (one, rss1, _), (big, rss4096, _) = measured[1], measured[4096]
    print(f"batch 4096 / batch 1: time {big['seconds'] / one['seconds']:.2f}, peak RSS {rss4096 / rss1:.2f} "
          f"(target: <= 1 within noise)")


def main() -> int:
    warnings.simplefilter("ignore")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--model", choices=sorted(FACTORIES), default="two_layers")
    parser.add_argument("--repeat", type=int, default=2, help="alternate runs of each, keep the fastest")
    parser.add_argument("--skip-forecast", action="store_true")
    args = parser.parse_args()
    compare(args.model, args.steps, args.repeat)
    if not args.skip_forecast:
        forecast()
    return 0


if __name__ == "__main__":
    sys.exit(main())
