"""CPU time of test files, each run alone: what a file costs the suite, its workers included.

    python bench/suite_cpu.py tests/test_fixes.py tests/test_a.py,tests/test_b.py [--python PATH] [-k EXPR]

Each file runs as ``python -m pytest FILE -q -p no:randomly`` with the repository first on the
path; files joined by commas run in one pytest, as the suite runs them (what one file's tests
leave for another's, such as a lint shared for the session, is then counted once). The bench
marks itself a child subreaper (Linux), so a fork server or worker that outlives the process that
started it is reaped here and its CPU is counted with the file's. One line per file: wall
seconds, CPU seconds (user + system of every descendant) and pytest's summary line.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import resource
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_PR_SET_CHILD_SUBREAPER = 36


def _become_subreaper() -> bool:
    try:
        return ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _reap_orphans(patience: float) -> int:
    """Waits for descendants left behind by the run; returns how many were still alive at the end."""
    deadline = time.monotonic() + patience
    while time.monotonic() < deadline:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return 0
        if pid == 0:
            time.sleep(0.05)
    try:
        return len([entry for entry in os.listdir("/proc") if entry.isdigit()
                    and _parent_of(int(entry)) == os.getpid()])
    except OSError:
        return -1


def _parent_of(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return int(handle.read().rpartition(b")")[2].split()[1])
    except (OSError, ValueError, IndexError):
        return -1


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measure(python: str, path: str, select: str | None, log: str | None) -> tuple[float, float, str, int]:
    command = [python, "-m", "pytest", *path.split(","), "-q", "-p", "no:randomly", "--durations=10"]
    command += ["-k", select] if select else []
    env = dict(os.environ, PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""))
    cpu, start = _cpu(), time.monotonic()
    proc = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True)
    left = _reap_orphans(patience=20.0)
    if log:
        with open(log, "w", encoding="utf-8") as handle:
            handle.write(proc.stdout + proc.stderr)
    wall = time.monotonic() - start
    lines = [line.strip("= ") for line in proc.stdout.splitlines() if line.strip()]
    return wall, _cpu() - cpu, lines[-1] if lines else f"exit {proc.returncode}", left


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+")
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("-k", dest="select")
    parser.add_argument("--logs", help="a folder to keep each run's pytest output in")
    args = parser.parse_args()
    if args.logs:
        os.makedirs(args.logs, exist_ok=True)
    if not _become_subreaper():
        print("note: not a subreaper here: CPU of processes that outlive their parent is not counted")
    print(f"{'file':40} {'wall s':>8} {'cpu s':>8}  pytest", flush=True)
    for path in args.files:
        name = "+".join(os.path.basename(part) for part in path.split(","))
        log = os.path.join(args.logs, name + ".log") if args.logs else None
        wall, cpu, summary, left = measure(args.python, path, args.select, log)
        alive = f"  ({left} processes still running, not counted)" if left else ""
        print(f"{name:40} {wall:8.1f} {cpu:8.1f}  {summary}{alive}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
