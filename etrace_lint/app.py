"""flake8's application shape: initialise -> run checks -> report -> exit code."""

from __future__ import annotations

import datetime
import os
import sys
from contextlib import ExitStack

from .policy import apply_policy
from .settings import Settings
from .writers import RunInfo, get_writer


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def run(settings: Settings, argv: list[str]) -> int:
    from .discover import discover
    from .runner import run_targets

    info = RunInfo(root=settings.root, command_line=["etrace-lint", *argv], start_time=_now(),
                   show_info=settings.show_info)
    discovery = discover(settings.paths, settings.root, tuple(settings.exclude))
    info.targets = len(discovery.targets)
    info.files_seen = discovery.files_seen
    info.files_without_targets = discovery.files_without_targets
    results = run_targets(discovery.targets, settings)
    findings = [f for r in results for f in r.findings]
    tool_errors = list(discovery.tool_errors) + [e for r in results for e in r.tool_errors]
    outcome = apply_policy(findings, tool_errors, settings)
    info.verify_rows = [row for r in results for row in r.verify_rows]
    info.end_time = _now()
    info.versions = _versions()
    stream_is_tty = sys.stdout.isatty() and not settings.output_file
    info.color = settings.color if settings.color is not None else (stream_is_tty and "NO_COLOR" not in os.environ)
    write_outputs(outcome, info, settings)
    return outcome.exit_code(settings)


def _versions() -> dict:
    import importlib.metadata as md

    found = {}
    for dist in ("etrace-lint", "braintrace", "brainstate", "jax", "jaxlib", "saiunit"):
        try:
            found[dist] = md.version(dist)
        except md.PackageNotFoundError:
            found[dist] = ""
    return found


def write_outputs(outcome, info: RunInfo, settings: Settings) -> None:
    fmt = settings.output_format
    with ExitStack() as stack:
        if settings.output_file:
            stream = stack.enter_context(open(settings.output_file, "w", encoding="utf-8"))
            info.color = settings.color is True
        else:
            stream = sys.stdout
        if settings.quiet and fmt == "text":
            from .writers.text import write_text_quiet
            write_text_quiet(outcome, info, stream)
        else:
            get_writer(fmt)(outcome, info, stream)
    if settings.sarif:
        with open(settings.sarif, "w", encoding="utf-8") as handle:
            get_writer("sarif")(outcome, info, handle)
