"""Cost of ``--verify`` relative to one plain jitted BPTT gradient of the same model.

    python bench/bench_verify.py            # GRU width 256, LIF 1,000 neurons, T=100, batch 16
    python bench/bench_verify.py --small    # a quick run with small models

For each model, measured side by side in one process: one jitted BPTT
gradient over T steps (compile + run, then the run alone), and the whole
``--verify`` check (both algorithms, T=1 and T, BPTT included) as the engine
runs it. The ratio is what ``--verify`` adds over training-style BPTT once.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def models(small: bool):
    import brainstate
    import braintrace
    import jax
    import jax.numpy as jnp
    from spiking import spike

    class GRU(brainstate.nn.Module):
        def __init__(self, n_in, n):
            super().__init__()
            self.cell = braintrace.nn.GRUCell(n_in, n)

        def update(self, x):
            return self.cell(x)

    class LIF(brainstate.nn.Module):
        def __init__(self, n_in, n):
            super().__init__()
            self.n = n
            self.fc = braintrace.nn.Linear(n_in, n)

        def init_state(self, batch_size=None, **kwargs):
            self.v = brainstate.HiddenState(jnp.zeros((batch_size, self.n) if batch_size else (self.n,)))

        def update(self, x):
            v = 0.9 * self.v.value + self.fc(x)
            s = spike(v - 0.5)
            self.v.value = v - jax.lax.stop_gradient(s) * 0.5
            return spike(self.v.value - 0.25) + 0.1 * self.v.value

    gru_width, lif_width, n_in = (32, 100, 8) if small else (256, 1000, 64)
    return [(f"GRU({gru_width})", GRU(n_in, gru_width), n_in), (f"LIF({lif_width})", LIF(n_in, lif_width), n_in)]


def plain_bptt_seconds(model, n_in: int, steps: int, batch: int) -> tuple[float, float]:
    """(compile + first run, one more run) of one jitted BPTT gradient."""
    import brainstate
    import jax
    import jax.numpy as jnp

    brainstate.nn.init_all_states(model, batch_size=batch)
    xs = jax.random.normal(jax.random.PRNGKey(0), (steps, batch, n_in))
    weights = model.states(brainstate.ParamState)

    @brainstate.transform.jit
    def grad(xs):
        def total():
            return brainstate.transform.for_loop(lambda x: jnp.mean(model(x) ** 2), xs).sum()
        return brainstate.transform.grad(total, weights)()

    start = time.perf_counter()
    jax.block_until_ready(grad(xs))
    first = time.perf_counter() - start
    start = time.perf_counter()
    jax.block_until_ready(grad(xs))
    return first, time.perf_counter() - start


def verify_seconds(model, n_in: int, steps: int, batch: int) -> tuple[float, list]:
    import brainstate
    import jax.numpy as jnp

    from etrace_lint.analysis import braintrace_adapter as bt
    from etrace_lint.analysis.context import AnalysisContext
    from etrace_lint.analysis.loaded_target import LoadedTarget
    from etrace_lint.analysis.locate import Locator
    from etrace_lint.core.findings import Location
    from etrace_lint.verify import verify_model

    inputs = (jnp.ones((n_in,)),)
    brainstate.nn.init_all_states(model)  # the lint compiles the unbatched example
    compilation = bt.compile_model(model, inputs, {})
    if compilation.graph is None:
        raise SystemExit(f"the model does not compile: {compilation.error}")
    where = Location(os.path.abspath(__file__), 1)
    locator = Locator(model, compilation.module_info, where, compilation.traced_jaxpr, compilation.raw_jaxpr)
    context = AnalysisContext(model, inputs, compilation, locator, {})
    loaded = LoadedTarget(None, "bench", model, inputs, {}, None, {}, where)
    start = time.perf_counter()
    _, rows = verify_model(loaded, context, {"verify": True, "verify_steps": steps, "verify_batch": batch},
                           findings=[])
    return time.perf_counter() - start, rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", action="store_true", help="small models and T=20, batch 4")
    parser.add_argument("--steps", type=int)
    parser.add_argument("--batch", type=int)
    args = parser.parse_args(argv)
    steps = args.steps or (20 if args.small else 100)
    batch = args.batch or (4 if args.small else 16)
    import jax

    print(f"device {jax.devices()[0]}, T={steps}, batch {batch}")
    print(f"{'model':<12} {'bptt (compile+run)':>19} {'bptt (run)':>11} {'--verify':>9} {'ratio':>7}  verdicts")
    for name, model, n_in in models(args.small):
        first, again = plain_bptt_seconds(model, n_in, steps, batch)
        seconds, rows = verify_seconds(model, n_in, steps, batch)
        verdicts = sorted({f"{r['algorithm']}:{r['verdict']}" for r in rows if r["steps"] == steps})
        print(f"{name:<12} {first:>18.2f}s {again:>10.3f}s {seconds:>8.2f}s {seconds / first:>6.1f}x  "
              f"{', '.join(verdicts)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
