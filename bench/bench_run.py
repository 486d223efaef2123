"""What ``etrace-lint run`` costs: the time to a program's first compile, the lint, and the whole run,
beside ``etrace-lint`` on an equivalent target file, measured in one run.

    python bench/bench_run.py                          # the programs the tests carry
    python bench/bench_run.py --examples PATH/examples # and braintrace's example scripts (a checkout)

For each program: ``run`` is started cold (a new process, as a user runs it); the child's own clock
says when the program started, when its first compile reached the lint and when the lint was done.
A program with an equivalent target file (``NAME_target.py`` beside it) is also linted the usual way,
cold and without the cache, right after: the column "target" is that whole command. Prints seconds
and the ratio run / target; capturing adds the lint of the captured model and nothing to a training
step (``--all`` leaves the step functions unwrapped once the compile has returned).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

# each command line here runs in its own cold process tree: the project's daemon would serve it warm
os.environ["ETRACE_LINT_NO_DAEMON"] = "1"

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)

CARRIED = os.path.join(ROOT, "tests", "data", "programs")
# braintrace's example scripts that need no download and compile within seconds of starting
EXAMPLES = ("drtrl/01-basics-integrator.py", "drtrl/02-batching-vmap.py", "pp_prop/01-basics-lif-integrator.py",
            "pp_prop/03-neurons-gif-working-memory.py", "100-gru-on-copying-task.py")


def measure_run(script: str) -> dict[str, float | str]:
    """Run the script through ``etrace-lint run`` in this process's child, as the CLI does."""
    from etrace_lint.cli.main import build_parser, resolve_settings
    from etrace_lint.cli.run_program import ProgramLine, run_child

    parser = build_parser()
    args = parser.parse_args(["--no-cache", "-q"])
    args.paths = [script]
    settings, _ = resolve_settings(args)
    folder, name = os.path.split(os.path.abspath(script))
    here = os.getcwd()
    os.chdir(folder)
    start = time.time()
    try:
        with open(os.devnull, "w") as quiet:
            saved = os.dup(1)
            os.dup2(quiet.fileno(), 1)
            try:
                run = run_child(ProgramLine([], [name], False, False), settings)
            finally:
                os.dup2(saved, 1)
                os.close(saved)
    finally:
        os.chdir(here)
    total = time.time() - start
    if run.first_lint_at is None or run.first_linted_at is None or run.started_at is None:
        return {"total": total, "why": run.raised or run.stopped or "no compile"}
    return {"total": total, "to_compile": run.first_lint_at - start, "lint": run.first_linted_at - run.first_lint_at,
            "started": run.started_at - start}


def measure_target(target: str) -> float:
    start = time.time()
    subprocess.run([sys.executable, "-m", "etrace_lint", "--no-cache", "-q", "-j", "1", target],
                   capture_output=True, check=False)
    return time.time() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", help="braintrace's examples folder (a checkout)")
    options = parser.parse_args()
    scripts = [os.path.join(CARRIED, "train_gru.py")]
    if options.examples:
        scripts += [os.path.join(options.examples, name) for name in EXAMPLES]
    os.environ.setdefault("MPLBACKEND", "Agg")
    print(f"{'program':48} {'start':>7} {'to 1st':>7} {'lint':>7} {'run':>7} {'target':>7} {'run/target':>10}")
    for script in scripts:
        row = measure_run(script)
        target = os.path.splitext(script)[0] + "_target.py"
        target_seconds = measure_target(target) if os.path.isfile(target) else None
        name = os.path.relpath(script, options.examples) if options.examples and not script.startswith(CARRIED) \
            else os.path.basename(script)
        if "why" in row:
            print(f"{name:48} not linted: {row['why']}")
            continue
        ratio = f"{row['total'] / target_seconds:9.2f}x" if target_seconds else "       n/a"
        shown = f"{target_seconds:7.1f}" if target_seconds else "    n/a"
        print(f"{name:48} {row['started']:7.1f} {row['to_compile']:7.1f} {row['lint']:7.1f} {row['total']:7.1f} "
              f"{shown} {ratio}")
    print("seconds, wall; start: the program's process running its first line; to 1st: its first compile "
          "reaching the lint; target: `etrace-lint --no-cache -j 1 NAME_target.py`, cold")


if __name__ == "__main__":
    main()
