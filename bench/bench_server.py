"""The language server against the CLI on the same edit, and its memory over many edits.

    python bench/bench_server.py [--cycles 100] [--reps 5] [--keep DIR]
    python bench/bench_server.py --soak 300 [--seed 1] [--timeout 10] [--hangs 15]

``--soak N`` runs the soak of tests/fixtures/server/soak.py instead, the long
form of tests/test_server_soak.py: N saves of random edits through the
protocol with bad frames between them; it prints how many saves' diagnostics
differ from the command line's on the same content, the server's memory
after the first and the last save, and the processes left once the client
exited.

In one run, on a small GRU and a small recurrent LIF network:

* ``compile``: bare ``braintrace.compile_etrace_graph(..., include_hidden_perturb=True)``
  of the model, best of ``--reps`` after a warm-up (a fresh process);
* ``cli cold``: ``etrace-lint FILE --no-cache`` after the edit, best of two;
* ``server``: from ``textDocument/didSave`` to the diagnostics published for
  the file, on a server whose workers are warm (median and best of the
  edit-save cycles);
* resident memory of the server and of the server with its workers after
  the first cycle and after the last (``--cycles`` edit-save cycles, the
  two models taking turns).

Targets: server <= compile + 0.3 s, about 10x faster than the
CLI; memory after the last cycle <= 1.2x after the first.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

# each command line here runs in its own cold process tree: the project's daemon would serve it warm
os.environ["ETRACE_LINT_NO_DAEMON"] = "1"

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "tests", "fixtures", "server"))

MODELS = {
    "gru.py": '''"""braintrace's GRU cell: the reset gate's weight does not learn online (ETL005)."""

import braintrace
import jax.numpy as jnp

EDIT = 0


def etrace_target_gru():
    return braintrace.nn.GRUCell(16, 32), (jnp.ones((16,)),)
''',
    "lif.py": '''"""A recurrent network of 200 leaky integrate-and-fire neurons; its leak weight is used through a
plain op."""

import braintrace
import brainstate
import jax
import jax.numpy as jnp

EDIT = 0


@jax.custom_jvp
def spike_fn(v):
    return (v > 0.0).astype(v.dtype)


@spike_fn.defjvp
def _spike_fn_jvp(primals, tangents):
    (v,), (dv,) = primals, tangents
    return spike_fn(v), dv / (1.0 + jnp.abs(5.0 * v)) ** 2


class RecurrentLIF(brainstate.nn.Module):
    def __init__(self, n_in=40, n_rec=200, v_th=1.0):
        super().__init__()
        self.v_th = v_th
        self.leak = brainstate.ParamState(jnp.full((n_rec,), 0.95))
        self.w_in = braintrace.nn.Linear(n_in, n_rec)
        self.w_rec = braintrace.nn.Linear(n_rec, n_rec, b_init=None)
        self.v = brainstate.HiddenState(jnp.zeros((n_rec,)))

    def update(self, x):
        spikes = spike_fn(self.v.value - self.v_th)
        v = self.leak.value * self.v.value + self.w_in(x) + self.w_rec(spikes)
        self.v.value = v - spike_fn(v - self.v_th) * self.v_th
        return spike_fn(self.v.value - self.v_th)


def etrace_target_lif():
    return RecurrentLIF(), (jnp.ones((40,)),)
''',
}

BARE_COMPILE = r'''
import importlib.util, sys, time
import braintrace, brainstate
path, factory, reps = sys.argv[1], sys.argv[2], int(sys.argv[3])
spec = importlib.util.spec_from_file_location("model_under_bench", path)
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
best = float("inf")
for _ in range(reps + 1):  # the first run warms JAX up
    model, inputs = getattr(module, factory)()
    brainstate.nn.init_all_states(model)
    start = time.perf_counter()
    braintrace.compile_etrace_graph(model, *inputs, include_hidden_perturb=True)
    best = min(best, time.perf_counter() - start) if _ else best
print(best)
'''


def bare_compile(path: str, factory: str, reps: int) -> float:
    out = subprocess.run([sys.executable, "-c", BARE_COMPILE, path, factory, str(reps)], capture_output=True,
                         text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def cli_cold(path: str, root: str) -> float:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "etrace_lint", path, "--no-cache", "-q"], cwd=root,
                          capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise SystemExit(f"etrace-lint {path} failed ({done.returncode}):\n{done.stdout}{done.stderr}")
    return seconds


def edit(path: str, counter: int) -> str:
    """A real change of the file's content (the cache misses), with the same findings."""
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    lines = text.splitlines()
    lines = [f"EDIT = {counter}" if line.startswith("EDIT = ") else line for line in lines]
    return "\n".join(lines) + "\n"


def _rss_kib(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def _descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as handle:
                    ppid = int(handle.read().rsplit(")", 1)[1].split()[1])
                children.setdefault(ppid, []).append(int(entry))
            except (OSError, ValueError, IndexError):
                continue
    found, stack = [], [pid]
    while stack:
        for child in children.get(stack.pop(), []):
            found.append(child)
            stack.append(child)
    return found


def memory(pid: int) -> tuple[float, float]:
    """MiB resident: the server alone, the server with its workers and fork server."""
    own = _rss_kib(pid)
    total = own + sum(_rss_kib(child) for child in _descendants(pid))
    return own / 1024, total / 1024


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cycles", type=int, default=100, help="edit-save cycles for the memory check (100)")
    parser.add_argument("--reps", type=int, default=5, help="bare compiles per model (5)")
    parser.add_argument("--keep", metavar="DIR", help="build the workspace in DIR and keep it")
    parser.add_argument("--server-args", default="", help="extra arguments of `etrace-lint server` (--log-file ...)")
    parser.add_argument("--soak", type=int, metavar="N", help="run the soak of N random saves instead")
    parser.add_argument("--seed", type=int, default=1, help="the soak's random seed (1)")
    parser.add_argument("--timeout", type=float, default=10, help="the soak workspace's timeout in seconds (10)")
    parser.add_argument("--hangs", type=int, default=15, help="saves of the soak whose target hangs (15)")
    args = parser.parse_args()
    if args.soak:
        return soak(args)
    from lsp_session import LspSession

    root = os.path.abspath(args.keep) if args.keep else tempfile.mkdtemp(prefix="etrace-lint-bench-server-")
    os.makedirs(root, exist_ok=True)
    with open(os.path.join(root, "pyproject.toml"), "w", encoding="utf-8") as handle:
        handle.write("[tool.etrace-lint]\n")
    paths = {}
    for name, text in MODELS.items():
        paths[name] = os.path.join(root, name)
        with open(paths[name], "w", encoding="utf-8") as handle:
            handle.write(text)
    factories = {"gru.py": "etrace_target_gru", "lif.py": "etrace_target_lif"}

    compile_s = {name: bare_compile(paths[name], factories[name], args.reps) for name in MODELS}
    cold_s = {}
    for name in MODELS:
        text = edit(paths[name], -1)
        with open(paths[name], "w", encoding="utf-8") as handle:
            handle.write(text)
        cold_s[name] = min(cli_cold(paths[name], root) for _ in range(2))

    session = LspSession(root, server_args=args.server_args.split())
    pid = session.client._server.pid
    try:
        for name in MODELS:
            session.open(paths[name])
            session.wait_for(lambda s, n=name: s.codes(paths[n]), timeout=300, what=f"the findings of {name}")
        latencies: dict[str, list[float]] = {name: [] for name in MODELS}
        first_memory = None
        order = list(MODELS)
        for cycle in range(max(1, args.cycles)):
            name = order[cycle % len(order)]
            since = time.monotonic()
            session.save(paths[name], edit(paths[name], cycle))
            session.wait_for(lambda s, n=name, t=since: any(s.published_after(paths[n], t)), timeout=300, what=name)
            latencies[name].append(time.monotonic() - since)
            if cycle == len(order) - 1:
                first_memory = memory(pid)
        last_memory = memory(pid)
    finally:
        session.close()
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)

    print(f"{'model':<8} {'compile (s)':>11} {'cli cold (s)':>12} {'server median (s)':>17} {'server best (s)':>15} "
          f"{'median - compile':>16} {'cli / server':>12}")
    for name in MODELS:
        median, best = statistics.median(latencies[name]), min(latencies[name])
        print(f"{name:<8} {compile_s[name]:>11.3f} {cold_s[name]:>12.2f} {median:>17.3f} {best:>15.3f} "
              f"{median - compile_s[name]:>16.3f} {cold_s[name] / median:>11.1f}x")
    cycles = sum(len(v) for v in latencies.values())
    print(f"resident memory, MiB: server {first_memory[0]:.0f} after the first cycle of each model, "
          f"{last_memory[0]:.0f} after {cycles} ({last_memory[0] / first_memory[0]:.2f}x); "
          f"with its workers {first_memory[1]:.0f} -> {last_memory[1]:.0f} "
          f"({last_memory[1] / first_memory[1]:.2f}x)")
    return 0


def soak(args) -> int:
    from soak import cli_verdicts, run_soak

    root = os.path.abspath(args.keep) if args.keep else tempfile.mkdtemp(prefix="etrace-lint-bench-soak-")
    try:
        began = time.monotonic()
        result = run_soak(os.path.join(root, "workspace"), args.soak, args.seed, args.timeout, args.hangs)
        served = time.monotonic() - began
        expected = cli_verdicts(root, [text for _, text in result.saves], args.timeout)
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    wrong = [n for n, (got, want) in enumerate(zip(result.published, expected)) if got != want]
    kinds = {}
    for (kind, _), seconds in zip(result.saves, result.seconds):
        kinds.setdefault(kind, []).append(seconds)
    print(f"{len(result.saves)} saves in {served:.0f} s; save to diagnostics, median by kind: "
          + ", ".join(f"{kind} {statistics.median(v):.2f} s ({len(v)})" for kind, v in sorted(kinds.items())))
    print(f"diagnostics equal to the command line's: {len(result.saves) - len(wrong)} of {len(result.saves)}"
          + (f" (differ: saves {wrong[:10]})" if wrong else ""))
    print(f"extra publications: {result.extra_publications}; bad frames sent {result.bad_frames_sent}, "
          f"logged {result.bad_frames_logged}")
    print(f"resident memory, MiB: server {result.rss_first / 1024:.0f} after the first save, "
          f"{result.rss_last / 1024:.0f} after the last ({result.rss_last / result.rss_first:.2f}x); with its "
          f"workers {result.tree_first / 1024:.0f} -> {result.tree_last / 1024:.0f} "
          f"({result.tree_last / result.tree_first:.2f}x)")
    print(f"server exit code {result.exit_code}; processes left behind: {result.left_behind or 'none'}")
    ok = not wrong and not result.left_behind and result.rss_last <= 1.2 * result.rss_first
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
