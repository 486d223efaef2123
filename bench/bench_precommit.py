"""A pre-commit run of one edited model, with the warm daemon and without it, side by side.

    python bench/bench_precommit.py [--repeat 7] [--keep DIR]

Copies the bundled example models into a project of its own, lints them once
to fill the cache, then repeats, alternating: edit ``models/gru.py`` (a comment
line appended, so its file is linted again while the other models come from
the cache) and run ``etrace-lint models/gru.py`` as the pre-commit hook does,
once through the project's daemon and once with ``--no-daemon``. Prints each
run's wall time, the medians and their ratio, and whether both gave the same
output and exit code. Goal: at most 1.0 s with the daemon.
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

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EDITED = os.path.join("models", "gru.py")


def _run(root: str, env: dict[str, str], *args: str) -> tuple[float, subprocess.CompletedProcess[str]]:
    started = time.perf_counter()
    proc = subprocess.run([os.path.join(os.path.dirname(sys.executable), "etrace-lint"), *args], cwd=root, env=env,
                          capture_output=True, text=True, timeout=600)
    return time.perf_counter() - started, proc


def _edit(root: str, count: int) -> None:
    with open(os.path.join(root, EDITED), "a", encoding="utf-8") as handle:
        handle.write(f"# edit {count}\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=7, help="edited runs of each kind (default: 7)")
    parser.add_argument("--keep", metavar="DIR", help="build the project in DIR and keep it")
    args = parser.parse_args()
    root = args.keep or tempfile.mkdtemp(prefix="etrace-lint-bench-precommit-")
    sockets = tempfile.mkdtemp(prefix="etl-bench-")
    shutil.copytree(os.path.join(REPO, "examples", "models"), os.path.join(root, "models"), dirs_exist_ok=True)
    with open(os.path.join(root, "pyproject.toml"), "w", encoding="utf-8") as handle:
        handle.write("[tool.etrace-lint]\n")
    env = {name: value for name, value in os.environ.items() if name not in ("ETRACE_LINT_NO_DAEMON", "CI")}
    env["ETRACE_LINT_DAEMON_DIR"] = sockets
    try:
        cold, _ = _run(root, env, "models", "--no-daemon")
        _edit(root, -1)
        start, _ = _run(root, env, EDITED)  # starts the daemon, whose fork server imports JAX once
        print(f"cold run of the {len(os.listdir(os.path.join(root, 'models')))} example files: {cold:.2f} s; "
              f"first edited run, which starts the daemon: {start:.2f} s")
        warm: list[float] = []
        direct: list[float] = []
        same = True
        for count in range(args.repeat):
            _edit(root, 2 * count)
            seconds, served = _run(root, env, EDITED)
            warm.append(seconds)
            _edit(root, 2 * count + 1)
            seconds, alone = _run(root, env, EDITED, "--no-daemon")
            direct.append(seconds)
            same = same and (served.returncode, served.stdout, served.stderr) == (
                alone.returncode, alone.stdout, alone.stderr)
            print(f"  edit {count + 1}: daemon {warm[-1]:.2f} s, --no-daemon {direct[-1]:.2f} s")
        warm_median, direct_median = statistics.median(warm), statistics.median(direct)
        print(f"python {sys.version.split()[0]}: one edited model, median of {args.repeat}: "
              f"daemon {warm_median:.2f} s, --no-daemon {direct_median:.2f} s, "
              f"ratio {warm_median / direct_median:.2f}x; same output and exit code: {same}; "
              f"goal (daemon <= 1.0 s): {'met' if warm_median <= 1.0 else 'not met'}")
    finally:
        _run(root, env, "daemon", "stop")
        shutil.rmtree(sockets, ignore_errors=True)
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
