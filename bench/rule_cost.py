"""What each rule of our own costs next to the compile it analyses.

For realistic models (GRU, LSTM, LIF stacks, a 10-layer stack) this compiles
each model, then runs every analysis rule on a fresh analysis context (so a
rule pays for the derived facts it needs, as the first rule to ask does in a
real run) and prints the rule's time as a fraction of the compile's, measured
side by side in one process. A rule above 10% of the compile belongs behind
an opt-in flag.

    python bench/rule_cost.py [--repeat N]
"""

from __future__ import annotations

import argparse
import time

import brainstate
import braintrace
import jax
import jax.numpy as jnp

from etrace_lint.analysis import braintrace_adapter as bt
from etrace_lint.analysis.context import AnalysisContext
from etrace_lint.analysis.locate import Locator
from etrace_lint.core.findings import Location
from etrace_lint.core.registry import analysis_rules

OPT_IN_RUN = {"check_online_grad": True}
BUDGET = 0.10


from spiking import spike  # noqa: E402


class LIF(brainstate.nn.Module):
    def __init__(self, n_in, n):
        super().__init__()
        self.fc = braintrace.nn.Linear(n_in, n)
        self.v = brainstate.HiddenState(jnp.zeros((n,)))

    def update(self, x):
        v = 0.95 * self.v.value + self.fc(x)
        s = spike(v - 1.0)
        self.v.value = v - s
        return s


class Stack(brainstate.nn.Module):
    def __init__(self, layers, n_out):
        super().__init__()
        self.layers = layers
        self.readout = braintrace.nn.Linear(layers[-1].fc.out_size[-1] if hasattr(layers[-1], "fc") else 32, n_out)

    def update(self, x):
        for layer in self.layers:
            x = layer(x)
        return self.readout(x)


class RNNStack(brainstate.nn.Module):
    def __init__(self, cells, n):
        super().__init__()
        self.cells = cells
        self.readout = braintrace.nn.Linear(n, 4)

    def update(self, x):
        for cell in self.cells:
            x = cell(x)
        return self.readout(x)


def models():
    """(name, factory, input): a fresh model per compile, as each target of a lint run is."""
    yield "gru(32->64)", lambda: braintrace.nn.GRUCell(32, 64), jnp.ones((32,))
    yield "lstm(32->64)", lambda: braintrace.nn.LSTMCell(32, 64), jnp.ones((32,))
    yield "lif stack x3", lambda: Stack([LIF(32, 128), LIF(128, 128), LIF(128, 64)], 10), jnp.ones((32,))
    yield "lif stack x10", lambda: Stack([LIF(32, 64)] + [LIF(64, 64) for _ in range(9)], 10), jnp.ones((32,))
    yield "gru stack x10", lambda: RNNStack([braintrace.nn.GRUCell(16, 32)] +
                                            [braintrace.nn.GRUCell(32, 32) for _ in range(9)], 32), jnp.ones((16,))


def compile_once(model, x):
    brainstate.nn.init_all_states(model)
    compilation = bt.compile_model(model, (x,), {})
    if compilation.error is not None:
        raise compilation.error
    return compilation


def context_for(model, x, compilation):
    locator = Locator(model, compilation.module_info, Location(__file__, 1), compilation.traced_jaxpr,
                      compilation.raw_jaxpr)
    return AnalysisContext(model, (x,), compilation, locator, dict(OPT_IN_RUN))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="best of N timings (3)")
    args = parser.parse_args()
    rules = analysis_rules()
    print(f"braintrace {braintrace.__version__}, jax {jax.__version__}; "
          f"rule time / compile time, best of {args.repeat}\n")
    print(f"{'model':16s} {'compile s':>9s} " + " ".join(f"{r.id:>8s}" for r in rules))
    worst = {r.id: 0.0 for r in rules}
    compile_once(braintrace.nn.GRUCell(3, 4), jnp.ones((3,)))  # JAX's one-off start-up is nobody's cost
    for name, factory, x in models():
        best_compile = float("inf")
        best = {r.id: float("inf") for r in rules}
        for _ in range(args.repeat):
            model = factory()
            compilation = compile_once(model, x)
            best_compile = min(best_compile, compilation.seconds)
            for rule in rules:
                context = context_for(model, x, compilation)
                start = time.perf_counter()
                list(rule.check(context))
                best[rule.id] = min(best[rule.id], time.perf_counter() - start)
        ratios = {rid: t / best_compile for rid, t in best.items()}
        for rid, ratio in ratios.items():
            worst[rid] = max(worst[rid], ratio)
        print(f"{name:16s} {best_compile:9.3f} " + " ".join(f"{ratios[r.id]:8.1%}" for r in rules))
    print(f"\n{'worst':16s} {'':9s} " + " ".join(f"{worst[r.id]:8.1%}" for r in rules))
    for rule in rules:
        over = worst[rule.id] > BUDGET
        gate = f"behind {rule.opt_in_flag}" if rule.opt_in_flag else "on by default"
        verdict = "ok" if over == bool(rule.opt_in_flag) else "RECONSIDER"
        print(f"{rule.id}: worst {worst[rule.id]:.1%} of the compile, {gate}: {verdict}")


if __name__ == "__main__":
    main()
