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
    extend_exclude: list[str] = field(default_factory=list)
    select: list[str] = field(default_factory=list)  # empty: every rule on by default
    extend_select: list[str] = field(default_factory=list)  # added to select, or to the defaults
    ignore: list[str] = field(default_factory=list)
    per_file_ignores: dict[str, list[str]] = field(default_factory=dict)
    levels: dict[str, Level] = field(default_factory=dict)  # selector -> level override
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
    # opt-in analysis flags, verify settings, and "environ": brainstate.environ values as plain
    # data (numbers, booleans, strings such as "0.1 ms"), made quantities only in a worker
    run_options: dict = field(default_factory=dict)
    statistics: bool = False  # print the number of findings per rule instead of the findings
    color: bool | None = None
    debug: bool = False
    include_suppressed: bool = False
    baseline: str | None = None
    write_baseline: str | None = None
    baseline_fingerprints: set[str] | None = None  # read from ``baseline`` before any linting

    preload: list[str] = field(default_factory=list)  # libraries the fork server imports for every worker
    drop_env: list[str] = field(default_factory=list)  # variables (or fnmatch patterns) removed before user code runs
    shard: str | None = None  # "K/N": lint only that part of the targets
    list_targets: bool = False  # print the targets a run would execute, import nothing

    config_file: str | None = None

    @property
    def excludes(self) -> tuple[str, ...]:
        return tuple(self.exclude) + tuple(self.extend_exclude)

    def fingerprint_data(self) -> dict:
        """What of the configuration can change what the engine reports (part of cache keys).

        Selection, levels and suppressions are applied after the cache, so
        changing them never makes a run lint again, with one exception: a
        result that left hidden notes out does not serve a run that shows
        them (``--show-info``, or a level raising a note); see the cache.
        """
        return {"compile_options": self.compile_options, "run_options": self.run_options}
