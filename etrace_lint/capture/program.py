"""The program's side of ``etrace-lint run``: run ``SCRIPT ARGS`` (or ``-m MODULE ARGS``) as ``python``
would, capture its compiles, lint each one and tell the parent on a pipe.

Started by the CLI as ``python -m etrace_lint.capture.program``, with the program's command line
after ``--`` and, in the environment, the pipe's descriptor and the file holding the run's engine
settings. ``sys.argv``, ``__main__``, ``sys.path[0]`` (the script's folder, or the working folder
with ``-m``), the working folder and stdin are the program's, as under ``python``.

Messages, one JSON object a line: ``started``, ``linting`` (a capture's lint begins: the parent's
clock for ``--timeout`` and ``--memory-limit`` starts), ``linted`` (the site, its result and the memory the lint added),
``ended`` (the program returned or called ``sys.exit``), ``raised`` (it raised; its traceback is on
stderr). Without ``--all`` the program stops right after its first compile has been linted: the
process ends there, before any training step runs. The process ends with the etrace-lint process
that started it, however that ends.
"""

from __future__ import annotations

import json
import os
import pickle
import runpy
import sys
import time
import traceback

from ..config.settings import EngineSettings
from ..core.findings import TargetResult, ToolError
from ..core.json_types import JsonObject, JsonValue
from ..core.wording import exception_line
from ..running.children import end_with_parent
from ..running.memory import peak, reset_peak, resident
from . import hooks
from .handover import Capture

CHANNEL = "ETRACE_LINT_RUN_CHANNEL"
SETTINGS = "ETRACE_LINT_RUN_SETTINGS"
PARENT = "ETRACE_LINT_RUN_PARENT"  # the etrace-lint process whose end ends the program


class Channel:
    """The pipe to the parent."""

    def __init__(self, fd: int):
        self.fd = fd
        os.set_inheritable(fd, False)  # the program's own subprocesses never write to it

    def send(self, event: str, **fields: JsonValue) -> None:
        data = (json.dumps({"event": event, "time": time.time(), **fields}) + "\n").encode("utf-8")
        view = memoryview(data)
        while view:
            written = os.write(self.fd, view)
            view = view[written:]


class Session:
    """Lints what the program compiles; stops it after the first lint unless ``every`` is set."""

    def __init__(self, channel: Channel, settings: EngineSettings, every: bool):
        self.channel = channel
        self.settings = settings
        self.every = every
        self.seen: set[str] = set()
        self.refused: set[int] = set()  # the errors braintrace raised at a captured compile

    def __call__(self, capture: Capture) -> None:
        from . import key, lint  # import JAX: the program has, by now

        if capture.error is not None:
            self.refused.add(id(capture.error))
        digest = key.capture_key(capture)
        if digest in self.seen:
            return
        self.seen.add(digest)
        self.channel.send("linting", site=capture.site.to_json(), pid=os.getpid())
        held = resident(os.getpid())
        measured_peak = reset_peak()
        try:
            result = lint.lint_capture(capture, self.settings)
        except Exception as exc:  # noqa: BLE001 - etrace-lint's own failure: a tool error about this compile
            site = capture.site
            result = TargetResult(target=site.spec.key, tool_errors=[ToolError(
                site.display_name, f"linting the captured model raised {exception_line(exc)}", site.location,
                "crash")])
        environ: JsonObject = dict(capture.environ)
        self.channel.send("linted", site=capture.site.to_json(), result=result.to_json(), environ=environ,
                          entry=capture.entry, held=held, grew=_growth(held, measured_peak))
        if not self.every:
            _flush()
            os._exit(0)


def _growth(held: int | None, measured_peak: bool) -> int | None:
    """The memory a lint added to the program's: its peak where the kernel keeps one, else what the
    process holds after it (a lint shorter than the parent's look at the process is still measured)."""
    after = peak() if measured_peak else resident(os.getpid())
    return None if held is None or after is None else max(0, after - held)


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001 - a closed stream has nothing left to write
            pass


def _print_traceback(exc: BaseException) -> None:
    """The program's traceback, as Python prints it, without etrace-lint's frames around the program."""
    tb = exc.__traceback__
    own = os.path.dirname(os.path.abspath(__file__))
    while tb is not None and (os.path.dirname(os.path.abspath(tb.tb_frame.f_code.co_filename)) == own
                              or tb.tb_frame.f_code.co_filename.endswith(f"{os.sep}runpy.py")
                              or tb.tb_frame.f_code.co_filename.startswith("<frozen runpy")):
        tb = tb.tb_next
    traceback.print_exception(type(exc), exc, tb, file=sys.stderr)


def run_program(argv: list[str], module: bool, session: Session) -> int:
    """Run the program as ``python`` would; returns this process's exit status."""
    if module:
        sys.argv = [argv[0], *argv[1:]]
        sys.path[0] = os.getcwd()
    else:
        script = argv[0]
        sys.argv = list(argv)
        sys.path[0] = os.path.dirname(os.path.abspath(script))
    hooks.install(session)
    session.channel.send("started", pid=os.getpid())
    try:
        if module:
            runpy.run_module(argv[0], run_name="__main__", alter_sys=True)
        else:
            runpy.run_path(argv[0], run_name="__main__")
    except SystemExit as exc:
        code = exc.code
        status = 0 if code is None else code if isinstance(code, int) else 1
        if not isinstance(code, (int, type(None))):
            print(code, file=sys.stderr)
        session.channel.send("ended", status=status)
        return status
    except BaseException as exc:  # noqa: BLE001 - the program's own failure: shown as python shows it
        _print_traceback(exc)
        session.channel.send("raised", error=exception_line(exc, 300),
                             at_compile=id(exc) in session.refused)
        return 1
    finally:
        hooks.uninstall()
        _flush()
    session.channel.send("ended", status=0)
    return 0


def main() -> int:
    parent = os.environ.pop(PARENT, "")
    if parent.isdigit():  # no program runs on once etrace-lint is stopped, even by SIGTERM or SIGKILL
        end_with_parent(int(parent))
    fd = int(os.environ.pop(CHANNEL))
    settings_file = os.environ.pop(SETTINGS)
    with open(settings_file, "rb") as handle:
        settings, every, module = pickle.load(handle)
    argv = sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else sys.argv[1:]
    return run_program(argv, module, Session(Channel(fd), settings, every))


if __name__ == "__main__":
    sys.exit(main())
