"""``etrace-lint run [OPTIONS] SCRIPT [ARGS...]`` and ``etrace-lint run [OPTIONS] -m MODULE [ARGS...]``.

The program runs in a child process (:mod:`etrace_lint.capture.program`) as ``python SCRIPT ARGS``
would run it, with its stdin, stdout and stderr; this process stays free of JAX, watches each lint
the child reports (``--timeout``, ``--memory-limit``: the memory a lint adds to the program), and
writes the outputs from the results, through the same policy and writers as a lint of targets.
Without ``--all`` the program stops right after its first compile has been linted. Ctrl-C stops
the program and the run (exit 130); the program ends with this process however it ends (SIGTERM,
SIGKILL).
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import select
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field

from ..capture.program import CHANNEL, PARENT, SETTINGS
from ..capture.site import CaptureSite
from ..config.settings import Settings
from ..core.exit_codes import EXIT_ERROR, EXIT_INTERRUPTED
from ..core.findings import TargetResult, ToolError
from ..core.json_types import JsonObject, JsonValue
from ..core.sizes import format_size
from ..integrations.collect import LintedModel, now, policy_outcome, run_info
from ..policy.scope import stage_settings
from ..running.memory import resident
from ..writers import relative_path
from .arguments import UsageError, build_parser, resolve_settings
from .outputs import write_outputs

USAGE = "etrace-lint run [OPTIONS] SCRIPT [ARGS...] | etrace-lint run [OPTIONS] -m MODULE [ARGS...]"


def _file_only_options(settings: Settings) -> list[str]:
    """The options given that act on files, which a running program is not (by field name; the error shows a flag)."""
    asked = {"fix": settings.fix, "diff": settings.diff, "fix_only": settings.fix_only, "watch": settings.watch,
             "shard": settings.shard, "list_targets": settings.list_targets, "write_baseline": settings.write_baseline}
    return [name for name, value in asked.items() if value]


class RunUsageError(Exception):
    """A bad command line for ``run``: exit 2 with the message."""


@dataclass(frozen=True)
class ProgramLine:
    """The program to run, and etrace-lint's own flags before it."""

    options: list[str]
    argv: list[str]  # SCRIPT ARGS, or MODULE ARGS
    module: bool
    every: bool  # --all


def split_command_line(argv: list[str], parser: argparse.ArgumentParser) -> ProgramLine:
    """etrace-lint's flags come first; the first word that is not one of them (or what follows ``-m``
    or ``--``) starts the program's command line, which is passed on untouched."""
    options: list[str] = []
    every = False
    index = 0
    takes_value = {flag: action.nargs != 0 for flag, action in parser._option_string_actions.items()}
    while index < len(argv):
        word = argv[index]
        if word == "--":
            rest = argv[index + 1:]
            if not rest:
                break
            return ProgramLine(options, rest, False, every)
        if word == "-m":
            if index + 1 >= len(argv):
                raise RunUsageError("-m needs a module name")
            return ProgramLine(options, argv[index + 1:], True, every)
        if word == "--all":
            every = True
            index += 1
            continue
        if word.startswith("-") and word != "-":
            flag = word.split("=", 1)[0]
            if flag not in takes_value:
                raise RunUsageError(f"unknown option {word} (etrace-lint's options come before the program)")
            options.append(word)
            if takes_value[flag] and "=" not in word:
                if index + 1 >= len(argv):
                    raise RunUsageError(f"{flag} needs a value")
                options.append(argv[index + 1])
                index += 1
            index += 1
            continue
        return ProgramLine(options, argv[index:], False, every)
    raise RunUsageError(f"name the program to run: {USAGE}")


@dataclass
class _Lint:
    """A lint under way in the program, as the parent watches it."""

    site: CaptureSite
    started: float
    base_memory: int | None


@dataclass
class ProgramRun:
    """What the program and its lints reported."""

    results: list[tuple[CaptureSite, TargetResult]] = field(default_factory=list)
    environs: list[dict[str, str]] = field(default_factory=list)  # brainstate.environ at each linted compile
    started_at: float | None = None
    first_lint_at: float | None = None
    first_linted_at: float | None = None
    ended: bool = False
    status: int | None = None  # the program's exit status when it ended or raised
    raised: str = ""  # the exception the program raised, in one line
    raised_at_compile: bool = False  # ... which was braintrace refusing a compile that was linted
    stopped: str = ""  # why etrace-lint stopped the program, when it did

    def fail(self, site: CaptureSite, error: ToolError) -> None:
        """A lint that did not finish: its compile's result is the tool error."""
        self.results.append((site, TargetResult(target=site.spec.key, tool_errors=[error])))
        self.environs.append({})


def _engine_file(settings: Settings, every: bool, module: bool, folder: str) -> str:
    path = os.path.join(folder, "settings.pickle")
    with open(path, "wb") as handle:
        pickle.dump((stage_settings(settings).engine, every, module), handle)
    return path


def _program_stdout(settings: Settings) -> int | None:
    """The program prints on stdout unless stdout carries a machine-readable output: then on stderr."""
    if settings.output_file or settings.silent or settings.output_format in ("text", "concise"):
        return None
    return sys.stderr.fileno()


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is not None:
        return
    process.kill()
    process.wait()


def run_child(line: ProgramLine, settings: Settings) -> ProgramRun:
    """Run the program with its compiles captured; watch each lint's time and memory."""
    folder = tempfile.mkdtemp(prefix="etrace-lint-run-")
    run = ProgramRun()
    read_end, write_end = os.pipe()
    try:
        env = dict(os.environ)
        env[CHANNEL] = str(write_end)
        env[SETTINGS] = _engine_file(settings, line.every, line.module, folder)
        env[PARENT] = str(os.getpid())
        command = [sys.executable, "-m", "etrace_lint.capture.program", "--", *line.argv]
        # the program's process group stays the terminal's: it reads stdin and takes Ctrl-C as under python
        process = subprocess.Popen(command, pass_fds=(write_end,), env=env, stdout=_program_stdout(settings))
    except BaseException:
        os.close(read_end)
        os.close(write_end)
        shutil.rmtree(folder, ignore_errors=True)
        raise
    os.close(write_end)
    try:
        _watch(process, read_end, run, settings)
    except KeyboardInterrupt:
        _stop(process)
        run.stopped = "interrupted"
    finally:
        os.close(read_end)
        shutil.rmtree(folder, ignore_errors=True)
        _stop(process)
    if run.status is None and process.returncode is not None and not run.stopped:
        run.status = process.returncode
    return run


def _watch(process: subprocess.Popen[bytes], read_end: int, run: ProgramRun, settings: Settings) -> None:
    buffer = b""
    lint: _Lint | None = None
    while True:
        ready, _, _ = select.select([read_end], [], [], 0.1)
        if ready:
            chunk = os.read(read_end, 1 << 16)
            if not chunk:
                break
            buffer += chunk
            while b"\n" in buffer:
                raw, buffer = buffer.split(b"\n", 1)
                lint = _on_message(json.loads(raw), run, lint, process, settings)
        if lint is not None:
            reason, why = _over_limit(lint, settings, process.pid)
            if why:
                _stop(process)
                run.fail(lint.site, ToolError(lint.site.display_name, why, lint.site.location, reason))
                run.stopped = reason
                return
    process.wait()
    if lint is not None:  # the program died while a lint was under way
        code = process.returncode
        how = f"signal {-code}" if code is not None and code < 0 else f"exit status {code}"
        run.fail(lint.site, ToolError(lint.site.display_name, f"the program's process ended ({how}) while its "
                                                              f"model was linted", lint.site.location, "crash"))
        run.stopped = "crash"


def _object(value: JsonValue) -> JsonObject:
    """A part of a message that is itself an object (a site, a result)."""
    if not isinstance(value, dict):
        raise ValueError(f"the program's message holds {type(value).__name__} where an object belongs")
    return value


def _number(value: JsonValue) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _bytes(value: JsonValue) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _on_message(message: JsonObject, run: ProgramRun, lint: _Lint | None,
                process: subprocess.Popen[bytes], settings: Settings) -> _Lint | None:
    event = message["event"]
    if event == "started":
        run.started_at = _number(message["time"])
    elif event == "linting":
        if run.first_lint_at is None:
            run.first_lint_at = _number(message["time"])
        return _Lint(CaptureSite.from_json(_object(message["site"])), time.monotonic(), resident(process.pid))
    elif event == "linted":
        if run.first_linted_at is None:
            run.first_linted_at = _number(message["time"])
        site = CaptureSite.from_json(_object(message["site"]))
        over = _over_memory(_bytes(message.get("grew")), _bytes(message.get("held")), settings)
        if over:  # a lint too short for the parent's looks at the process, measured by the program
            run.fail(site, ToolError(site.display_name, over, site.location, "memory"))
            return None
        run.results.append((site, TargetResult.from_json(_object(message["result"]))))
        environ = message.get("environ")
        run.environs.append({str(key): str(value) for key, value in environ.items()} if isinstance(environ, dict)
                            else {})
        return None
    elif event == "ended":
        status = message.get("status", 0)
        run.ended, run.status = True, int(status) if isinstance(status, (int, float, str)) else 0
    elif event == "raised":
        run.raised, run.status = str(message["error"]), 1
        run.raised_at_compile = bool(message.get("at_compile"))
    return lint


def _over_limit(lint: _Lint, settings: Settings, pid: int) -> tuple[str, str]:
    """(reason, message) when the lint under way is past ``--timeout`` or ``--memory-limit``; else empty."""
    seconds = time.monotonic() - lint.started
    if settings.timeout and seconds > settings.timeout:
        return "timeout", f"linting the captured model took more than {settings.timeout:g} s (--timeout)"
    held = resident(pid)
    if lint.base_memory is not None and held is not None:
        over = _over_memory(held - lint.base_memory, lint.base_memory, settings)
        if over:
            return "memory", over
    return "", ""


def _over_memory(grew: int | None, base: int | None, settings: Settings) -> str:
    """The message when a lint added more than ``--memory-limit`` to the program's memory; else empty."""
    limit = settings.memory_limit
    if not limit or grew is None or base is None or grew <= limit:
        return ""
    return (f"linting the captured model took {format_size(grew)} beyond the program's {format_size(base)}, "
            f"over --memory-limit {format_size(limit)}")


def _program_name(line: ProgramLine) -> str:
    return f"-m {line.argv[0]}" if line.module else line.argv[0]


def report_run(run: ProgramRun, line: ProgramLine, settings: Settings, started: str) -> int:
    """The outputs of the lints, and the exit code: the linter's, or 2 when the program could not be linted."""
    name = _program_name(line)
    if run.stopped == "interrupted":
        print("etrace-lint: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    if not run.results:
        if run.raised:
            print(f"etrace-lint: error: {name} raised {run.raised} before compiling any model "
                  f"(its traceback is above)", file=sys.stderr)
        elif run.status:
            print(f"etrace-lint: error: {name} exited with status {run.status} before compiling any model",
                  file=sys.stderr)
        else:
            print(f"etrace-lint: error: {name} ended without compiling a model: nothing called braintrace.compile "
                  f"or an algorithm's compile_graph", file=sys.stderr)
        return EXIT_ERROR
    models = [LintedModel(str(index), site, result) for index, (site, result) in enumerate(run.results)]
    color = settings.color is True if settings.output_file else (
        settings.color if settings.color is not None else (sys.stdout.isatty() and "NO_COLOR" not in os.environ))
    stages = stage_settings(settings)
    outcome = policy_outcome(models, stages.policy)
    write_outputs(outcome, run_info(models, stages.output, started, bool(color)), stages.output)
    code = outcome.exit_code(stages.policy)
    if settings.verbose and not settings.quiet:
        for (site, result), environ in zip(run.results, run.environs):
            shown = ", ".join(f"{key}={value}" for key, value in sorted(environ.items())) or "nothing set"
            print(f"etrace-lint: {relative_path(site.path, settings.root)}:{site.line} ({site.algorithm}) linted in "
                  f"{result.seconds:.1f} s under brainstate.environ {shown}: {len(result.findings)} findings",
                  file=sys.stderr)
    if run.raised and not run.raised_at_compile:
        print(f"etrace-lint: error: {name} raised {run.raised} after its compiles were linted "
              f"(its traceback is above)", file=sys.stderr)
        return EXIT_ERROR
    return code


def main_run(argv: list[str]) -> int:
    parser = build_parser()
    parser.prog = "etrace-lint run"
    if argv and argv[0] in ("-h", "--help"):
        print(f"usage: {USAGE}\n\nRun a Python program as `python SCRIPT ARGS` would and lint every model it "
              f"compiles\nwith braintrace.compile or an algorithm's compile_graph, on the program's own lines.\n"
              f"The program stops right after its first compile has been linted, before any training step.\n\n"
              f"  --all        run the program to its end and lint every distinct compile\n"
              f"  -m MODULE    run a module, as `python -m MODULE`\n\n"
              f"etrace-lint's other options (see `etrace-lint --help`) come before the program.\n"
              f"Exit codes: 0 clean, 1 findings, 2 the program could not be linted (it raised or ended\n"
              f"before compiling, or a lint failed) or a usage error.")
        return 0
    try:
        line = split_command_line(argv, parser)
        args = parser.parse_args(line.options)
        args.paths = [line.argv[0] if not line.module and os.path.exists(line.argv[0]) else os.getcwd()]
        settings, warnings = resolve_settings(args)
    except (RunUsageError, UsageError) as exc:
        print(f"etrace-lint run: error: {exc}\nusage: {USAGE}", file=sys.stderr)
        return EXIT_ERROR
    given = _file_only_options(settings)
    if given:
        print(f"etrace-lint run: error: --{given[0].replace('_', '-')} lints files, not a running program",
              file=sys.stderr)
        return EXIT_ERROR
    if not line.module and not os.path.isfile(line.argv[0]):
        print(f"etrace-lint run: error: can't open file {line.argv[0]!r}: no such file", file=sys.stderr)
        return EXIT_ERROR
    if not settings.quiet:
        for warning in warnings:
            print(f"etrace-lint: warning: {warning}", file=sys.stderr)
    started = now()
    run = run_child(line, settings)
    return report_run(run, line, settings, started)


__all__ = ["ProgramLine", "ProgramRun", "main_run", "split_command_line"]
