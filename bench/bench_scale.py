"""How etrace-lint scales with the size of the step: its cost next to the compiler's.

For models from about 100 to 10,000 equations this measures, in one run and
on fresh identical models:

* ``compile``: bare ``braintrace.compile_etrace_graph(..., include_hidden_perturb=True)``,
  the floor (the linter has to run it once);
* ``lint``: ``engine.lint_model`` on the same target as ``etrace-lint``
  runs it by default (notes hidden, so not built), and within it ``ours``:
  everything that is not the compiler call (locations, rules, records);
* ``--show-info``: the same with every note built and located;
* peak resident memory of each, in a fresh process per measurement
  (VmHWM; the baseline of a process that only imports JAX and builds the
  model is printed with it).

Times are the best of ``--reps`` runs after a JAX warm-up, the three kinds of
run interleaved: on a shared machine noise only ever adds time, so the
fastest run is the closest to the cost itself (as ``timeit`` reports it).
``--profile`` runs
cProfile over one lint of the largest model of each family and prints where
our passes spend their time. Usage::

    python bench/bench_scale.py                 # the README table
    python bench/bench_scale.py --quick         # up to ~1,000 equations
    python bench/bench_scale.py --profile --families deep
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import os
import pstats
import resource
import subprocess
import sys
import time
import warnings

warnings.simplefilter("ignore")

import brainstate  # noqa: E402
import braintrace  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from braintools import surrogate  # noqa: E402

from etrace_lint.analysis import braintrace_adapter as bt  # noqa: E402
from etrace_lint.analysis import jaxpr_view as jv  # noqa: E402
from etrace_lint.analysis.loaded_target import LoadedTarget  # noqa: E402
from etrace_lint.config.settings import EngineSettings, Settings  # noqa: E402
from etrace_lint.core.findings import Location  # noqa: E402
from etrace_lint.engine import lint as engine  # noqa: E402
from etrace_lint.policy.scope import engine_scope  # noqa: E402

HERE = os.path.abspath(__file__)
N = 8


class DeepLIF(brainstate.nn.Module):
    """A deep stack of LIF layers, each fed by an ETP linear layer."""

    def __init__(self, depth: int):
        super().__init__()
        self.fcs = [braintrace.nn.Linear(N, N) for _ in range(depth)]
        self.vs = [brainstate.HiddenState(jnp.zeros((N,))) for _ in range(depth)]
        self.readout = brainstate.ParamState(jnp.ones((N, 2)) * 0.1)

    def update(self, x):
        for fc, v in zip(self.fcs, self.vs):
            u = 0.9 * v.value + fc(x)
            x = surrogate.sigmoid(u - 1.0)
            v.value = u - x
        return braintrace.matmul(x, self.readout.value)


class WideReadout(brainstate.nn.Module):
    """One recurrent layer read out by many separate weights (each a non-temporal warning)."""

    def __init__(self, width: int):
        super().__init__()
        self.fc = braintrace.nn.Linear(N, N)
        self.h = brainstate.HiddenState(jnp.zeros((N,)))
        self.heads = [brainstate.ParamState(jnp.ones((N, 2)) * 0.1) for _ in range(width)]

    def update(self, x):
        self.h.value = 0.9 * self.h.value + self.fc(x)
        out = jnp.zeros((2,))
        for head in self.heads:
            out = out + braintrace.matmul(self.h.value, head.value)
        return out


class UnrolledScan(brainstate.nn.Module):
    """A recurrent update repeated by a scan the compiler unrolls into flat equations."""

    def __init__(self, length: int):
        super().__init__()
        self.length = length
        self.w = brainstate.ParamState(jnp.ones((N, N)) * 0.1)
        self.h = brainstate.HiddenState(jnp.zeros((N,)))

    def update(self, x):
        def body(c, _):
            return jnp.tanh(0.9 * c + braintrace.matmul(x, self.w.value)), None

        self.h.value = jax.lax.scan(body, self.h.value, None, length=self.length)[0]
        return self.h.value


def _scan_options(length: int) -> dict:
    return {"control_flow": braintrace.ControlFlowPolicy(scan_unroll_limit=length)}


# family -> (model class, knob values giving ~100 .. ~10,000 equations, compile options for a knob)
FAMILIES = {
    "deep": (DeepLIF, (10, 30, 100, 300, 800), lambda knob: {}),
    "wide": (WideReadout, (40, 150, 500, 1500, 3300), lambda knob: {}),
    "scan": (UnrolledScan, (25, 80, 250, 800, 2000), _scan_options),
}
QUICK_LIMIT = 3  # --quick keeps the first three sizes of each family
SLOW_SECONDS = 20.0  # a size whose compile takes longer is measured once
# sizes repeat until this much bare compiling, up to MAX_REPS: on a shared machine the
# same compile varies by a third from run to run, and seven runs of a one-second
# compile may keep an unlucky minimum on one side only
BUDGET_SECONDS = 20.0
MAX_REPS = 60


def build(cls, knob):
    model = cls(knob)
    brainstate.nn.init_all_states(model)
    return model, (jnp.ones((N,)),)


def bare_compile(model, inputs, options):
    with bt.quiet([]):
        return braintrace.compile_etrace_graph(model, *inputs, include_hidden_perturb=True, **options)


class CompileClock:
    """Wraps the adapter's compile call to learn how much of a lint is the compiler itself."""

    def __init__(self):
        self.seconds = 0.0
        self.eqns = 0
        self._module_info = None
        self._original = bt.compile_model

    def __enter__(self):
        def timed(model, inputs, options, **hooks):
            compilation = self._original(model, inputs, options, **hooks)
            self.seconds = compilation.seconds
            self._module_info = compilation.module_info  # counted after the clock stops
            return compilation

        bt.compile_model = timed
        return self

    def __exit__(self, *exc):
        bt.compile_model = self._original
        if self._module_info is not None:
            self.eqns = jv.count_eqns(bt.traced_jaxpr(self._module_info))


# what `etrace-lint` passes the engine by default: notes are hidden, so they are not built
DEFAULT_RUN = Settings().for_engine(engine_scope(Settings()))


def lint(model, inputs, options, show_info: bool = False):
    loaded = LoadedTarget(None, "bench", model, inputs, options, factory_location=Location(HERE, 1))
    return engine.lint_model(loaded, EngineSettings() if show_info else DEFAULT_RUN).findings


def _timed_lint(cls, knob, options, show_info: bool) -> tuple[float, float, int, int]:
    """(seconds, of which the compiler, equations, findings) of one lint of a fresh model."""
    model, inputs = build(cls, knob)
    gc.collect()
    with CompileClock() as clock:
        start = time.perf_counter()
        findings = lint(model, inputs, options, show_info)
        seconds = time.perf_counter() - start
    return seconds, clock.seconds, clock.eqns, len(findings)


def _timed_bare(cls, knob, options) -> float:
    model, inputs = build(cls, knob)
    gc.collect()
    start = time.perf_counter()
    bare_compile(model, inputs, options)
    return time.perf_counter() - start


def measure(cls, knob, options, reps):
    """Bare compile, a default lint and a ``--show-info`` lint, interleaved rep by rep
    in a rotating order. A model of up to a few seconds gets more reps (about
    ``BUDGET_SECONDS`` of compiling): its differences are a millisecond or two, or
    smaller than the run-to-run noise of the compile itself."""
    bare, total, compiler, info = [], [], [], []
    found = {}

    def run_bare():
        bare.append(_timed_bare(cls, knob, options))

    def run_lint():
        seconds, in_compiler, found["eqns"], found["shown"] = _timed_lint(cls, knob, options, show_info=False)
        total.append(seconds)
        compiler.append(in_compiler)

    def run_info():
        seconds, _, _, found["all"] = _timed_lint(cls, knob, options, show_info=True)
        info.append(seconds)

    runs = [run_bare, run_lint, run_info]
    rep = 0
    while rep < reps or (rep < MAX_REPS and sum(bare) < BUDGET_SECONDS):
        if bare and bare[0] > SLOW_SECONDS:
            break
        for run in runs[rep % 3:] + runs[:rep % 3]:
            run()
        rep += 1
    ours = [t - c for t, c in zip(total, compiler)]
    return {
        "eqns": found["eqns"], "findings": found["shown"], "all_findings": found["all"], "bare": min(bare),
        "lint": min(total), "ours": min(ours), "info": min(info), "reps": len(bare),
    }


def peak_rss_mib(family: str, knob: int, mode: str) -> float:
    """Peak resident memory of a fresh process that imports everything and runs one ``mode``."""
    child = subprocess.run([sys.executable, HERE, "--memory-of", f"{family}:{knob}:{mode}"],
                           capture_output=True, text=True, check=True)
    return float(child.stdout.strip().splitlines()[-1])


def _peak_rss_kib() -> float:
    """This process's own peak: VmHWM starts afresh at exec, while ru_maxrss is
    inherited from the parent on Linux (a big earlier size would mask every later one)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return float(line.split()[1])
    except OSError:
        pass
    return float(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)


def _memory_child(spec: str) -> int:
    family, knob, mode = spec.split(":")
    cls, _, options = FAMILIES[family]
    model, inputs = build(cls, int(knob))
    if mode == "import":
        pass
    elif mode == "bare":
        bare_compile(model, inputs, options(int(knob)))
    else:
        lint(model, inputs, options(int(knob)))
    print(_peak_rss_kib() / 1024)
    return 0


def profile_lint(cls, knob, options, top: int) -> str:
    model, inputs = build(cls, knob)
    profiler = cProfile.Profile()
    profiler.enable()
    lint(model, inputs, options)
    profiler.disable()
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    stats.sort_stats("cumulative").print_stats(r"etrace_lint", top)
    stats.sort_stats("tottime").print_stats(top)
    return out.getvalue()


def warm_up():
    for cls, knobs, options in FAMILIES.values():
        model, inputs = build(cls, knobs[0])
        lint(model, inputs, options(knobs[0]))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=7, help="repetitions per size (the best is kept)")
    parser.add_argument("--quick", action="store_true", help="only the sizes up to ~1,000 equations")
    parser.add_argument("--families", default=",".join(FAMILIES), help="comma-separated: " + ", ".join(FAMILIES))
    parser.add_argument("--no-memory", action="store_true", help="skip the peak-memory processes")
    parser.add_argument("--memory-of", help=argparse.SUPPRESS)
    parser.add_argument("--profile", action="store_true", help="cProfile one lint of the largest size")
    parser.add_argument("--top", type=int, default=25, help="rows of each profile table")
    args = parser.parse_args(argv)
    if args.memory_of:
        return _memory_child(args.memory_of)

    warm_up()
    rows = []
    print(f"braintrace {braintrace.__version__}, jax {jax.__version__}, Python {sys.version.split()[0]}, "
          f"best of {args.reps}", flush=True)
    for family in args.families.split(","):
        cls, knobs, options = FAMILIES[family]
        for knob in knobs[:QUICK_LIMIT] if args.quick else knobs:
            row = measure(cls, knob, options(knob), args.reps)
            row.update(family=family, knob=knob)
            if not args.no_memory:
                for mode in ("import", "bare", "lint"):
                    row[f"{mode}_mib"] = peak_rss_mib(family, knob, mode)
            rows.append(row)
            print(f"  {family} {knob}: {row['eqns']} eqns, bare {row['bare']:.3f}s, lint {row['lint']:.3f}s "
                  f"({row['lint'] / row['bare']:.2f}x), ours {row['ours']:.3f}s, --show-info {row['info']:.3f}s "
                  f"({row['info'] / row['bare']:.2f}x)", flush=True)
        if args.profile:
            print(profile_lint(cls, knobs[-1] if not args.quick else knobs[QUICK_LIMIT - 1],
                               options(knobs[-1]), args.top))
    print()
    print(markdown_table(rows, memory=not args.no_memory))
    return 0


def markdown_table(rows, memory: bool) -> str:
    head = ["model", "equations", "runs", "findings shown (all)", "compile (s)", "etrace-lint (s)", "ratio",
            "our passes (s)", "our passes (µs/eqn)", "--show-info (s)", "ratio"]
    if memory:
        head += ["peak RSS MiB: model only", "compile", "etrace-lint"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        cells = [f"{r['family']} ({r['knob']})", str(r["eqns"]), str(r["reps"]),
                 f"{r['findings']} ({r['all_findings']})", f"{r['bare']:.3f}",
                 f"{r['lint']:.3f}", f"{r['lint'] / r['bare']:.2f}x", f"{r['ours']:.3f}",
                 f"{1e6 * r['ours'] / max(r['eqns'], 1):.0f}", f"{r['info']:.3f}", f"{r['info'] / r['bare']:.2f}x"]
        if memory:
            cells += [f"{r['import_mib']:.0f}", f"{r['bare_mib']:.0f}", f"{r['lint_mib']:.0f}"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
