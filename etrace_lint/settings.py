"""The effective configuration of a run, after defaults, pyproject.toml and the command line."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from .findings import Level


@dataclass
class Settings:
    paths: list[str] = field(default_factory=lambda: ["."])
    root: str = field(default_factory=os.getcwd)
    exclude: list[str] = field(default_factory=list)
    select: list[str] = field(default_factory=list)  # empty: every rule on by default
    ignore: list[str] = field(default_factory=list)
    per_file_ignores: dict[str, list[str]] = field(default_factory=dict)
    levels: dict[str, Level] = field(default_factory=dict)  # rule id -> level override
    fail_level: Level = Level.WARNING
    show_info: bool = False
    exit_zero: bool = False
    quiet: bool = False
    output_format: str = "text"
    sarif: str | None = None
    output_file: str | None = None
    jobs: int = 0  # 0: number of cores
    timeout: float = 300.0
    cache_dir: str = ".etrace-lint-cache"
    use_cache: bool = True
    compile_options: dict = field(default_factory=dict)
    run_options: dict = field(default_factory=dict)  # opt-in analysis flags and verify settings
    color: bool | None = None
    debug: bool = False
    include_suppressed: bool = False
    baseline: str | None = None
    write_baseline: str | None = None

    def fingerprint_data(self) -> dict:
        """What of the configuration can change a target's findings (part of cache keys)."""
        return {"compile_options": repr(sorted(self.compile_options.items())),
                "run_options": repr(sorted(self.run_options.items()))}
