"""The effective configuration of a run, after defaults, pyproject.toml and the command line.

:class:`Settings` has one typed field per row of :data:`~etrace_lint.config.options.OPTIONS`
(same name, annotation and default, in the table's order), plus what a run learns while starting.
:class:`Settings` is what the command line holds; each stage gets only its own typed view of it, built
once by :meth:`Settings.stages` (ruff's ``LinterSettings``, ``FormatterSettings``): discovery and the plan
get :class:`DiscoverySettings`, running the workers :class:`RunSettings`, the engine, verify and a worker
:class:`EngineSettings` (the fields of the options the engine reads, ``engine=True`` in the table, and what
the policy decided for them: what it may leave out), the policy :class:`PolicySettings`, the outputs
:class:`OutputSettings`. All are frozen: a stage that changes a setting makes a new object
(``dataclasses.replace``) and hands it on; nothing writes into another stage's settings.

The options table declares each option once. The field lines below are printed from it by
``python -m etrace_lint.config.settings`` (a test fails when the two disagree), so a type checker
sees every field while the defaults still come from the table.
"""

from __future__ import annotations

import copy
import dataclasses
import sys
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from ..core.findings import Level
from .options import ENGINE_OPTIONS, OPTIONS, Option

_BY_NAME = {option.name: option for option in OPTIONS}


def _default(name: str) -> Any:  # a field specifier, standing for a value of whichever field's type it fills
    """The option's default as a dataclass field: a list or dict is copied for each Settings."""
    option = _BY_NAME[name]
    if option.factory is not None:
        return field(default_factory=option.factory)
    if isinstance(option.default, (list, dict)):
        return field(default_factory=lambda: copy.deepcopy(option.default))
    return field(default=option.default)


@dataclass(frozen=True)
class Settings:
    """One typed field per option of :data:`etrace_lint.config.options.OPTIONS`, then what a run
    learns while starting."""

    paths: list[str] = _default('paths')
    output_format: str = _default('output_format')
    sarif: str | None = _default('sarif')
    output_file: str | None = _default('output_file')
    quiet: bool = _default('quiet')
    statistics: bool = _default('statistics')
    show_info: bool = _default('show_info')
    show_flows: bool = _default('show_flows')
    color: bool | None = _default('color')
    root: str = _default('root')
    docs_url: str = _default('docs_url')
    select: list[str] = _default('select')
    extend_select: list[str] = _default('extend_select')
    ignore: list[str] = _default('ignore')
    per_file_ignores: dict[str, list[str]] = _default('per_file_ignores')
    levels: dict[str, Level] = _default('levels')
    fail_level: Level = _default('fail_level')
    exit_zero: bool = _default('exit_zero')
    exclude: list[str] = _default('exclude')
    extend_exclude: list[str] = _default('extend_exclude')
    include_suppressed: bool = _default('include_suppressed')
    baseline: str | None = _default('baseline')
    write_baseline: str | None = _default('write_baseline')
    check_online_grad: bool = _default('check_online_grad')
    probe: bool = _default('probe')
    verify: bool = _default('verify')
    verify_steps: int | None = _default('verify_steps')
    verify_batch: int | None = _default('verify_batch')
    verify_algorithms: list[str] | None = _default('verify_algorithms')
    verify_seed: int | None = _default('verify_seed')
    verify_cosine_floor: float | None = _default('verify_cosine_floor')
    device: str | None = _default('device')
    advise: bool = _default('advise')
    advise_algorithms: list[str] | None = _default('advise_algorithms')
    advise_steps: int | None = _default('advise_steps')
    advise_batch_size: int | None = _default('advise_batch_size')
    memory_budget: int | None = _default('memory_budget')
    fix: bool = _default('fix')
    unsafe_fixes: bool = _default('unsafe_fixes')
    diff: bool = _default('diff')
    debug: bool = _default('debug')
    jobs: int = _default('jobs')
    timeout: float = _default('timeout')
    memory_limit: int = _default('memory_limit')
    use_cache: bool = _default('use_cache')
    cache_dir: str = _default('cache_dir')
    compile_options: dict[str, Any] = _default('compile_options')
    environ: dict[str, Any] | None = _default('environ')
    shard: str | None = _default('shard')
    list_targets: bool = _default('list_targets')
    preload: list[str] = _default('preload')
    drop_env: list[str] = _default('drop_env')
    daemon: bool = _default('daemon')
    daemon_idle_timeout: float = _default('daemon_idle_timeout')
    config: str | None = _default('config')
    isolated: bool = _default('isolated')
    stdin_filename: str | None = _default('stdin_filename')
    watch: bool = _default('watch')
    show_fixes: bool = _default('show_fixes')
    fix_only: bool = _default('fix_only')
    verbose: bool = _default('verbose')
    silent: bool = _default('silent')
    show_settings: bool = _default('show_settings')
    config_file: str | None = None  # the pyproject.toml that was read
    baseline_fingerprints: frozenset[str] | None = None  # read from ``baseline`` before linting
    origins: Mapping[str, str] = field(default_factory=dict)  # option name -> where its value was set

    # each value has the type of the field it names: dataclasses.replace sets them by name
    def with_values(self, values: Mapping[str, Any], origin: str | Mapping[str, str] | None = None) -> Settings:
        """These settings with ``values`` set (by option name), each value's origin recorded: one
        text for all, or one per name."""
        if origin is None:
            origins = dict(self.origins)
        elif isinstance(origin, str):
            origins = {**self.origins, **{name: origin for name in values}}
        else:
            origins = {**self.origins, **origin}
        return dataclasses.replace(self, **values, origins=origins)

    @property
    def excludes(self) -> tuple[str, ...]:
        return tuple(self.exclude) + tuple(self.extend_exclude)

    def fingerprint_data(self) -> dict[str, object]:
        """What of the configuration can change what the engine reports (part of cache keys);
        see :meth:`EngineSettings.fingerprint_data`."""
        return self.for_engine().fingerprint_data()

    def for_engine(self, scope: EngineScope | None = None) -> EngineSettings:
        """What the engine reads of these settings; ``scope``: what the policy lets it leave out
        (``policy.engine_scope``), by default nothing but the opt-in rules."""
        values = {name: copy.deepcopy(value) for name, value in option_values(self, ENGINE_OPTIONS).items()}
        return EngineSettings(**values, compile_options=copy.deepcopy(self.compile_options),
                              scope=scope or EngineScope(), drop_env=tuple(self.drop_env))

    def for_policy(self) -> PolicySettings:
        """What the policy reads of these settings: selection, levels, what is shown, what fails the
        run, the baseline's fingerprints, and which options (so which opt-in rules) are on."""
        values = option_values(self)
        flags_on = frozenset(option.name for option in OPTIONS if option.kind == "flag" and values[option.name])
        return PolicySettings(select=tuple(self.select), extend_select=tuple(self.extend_select),
                              ignore=tuple(self.ignore),
                              per_file_ignores={glob: tuple(selectors)
                                                for glob, selectors in self.per_file_ignores.items()},
                              levels=dict(self.levels), root=self.root, show_info=self.show_info,
                              verify=self.verify, include_suppressed=self.include_suppressed,
                              fail_level=self.fail_level, exit_zero=self.exit_zero, flags_on=flags_on,
                              baseline=self.baseline_fingerprints)

    def stages(self, scope_of: Callable[[PolicySettings], EngineScope] | None = None) -> Stages:
        """Each stage's own settings, built once; ``scope_of``: the policy's decision of what the
        engine may leave out (``policy.engine_scope``), asked once."""
        policy = self.for_policy()
        engine = self.for_engine(scope_of(policy) if scope_of is not None else None)
        values = option_values(self)
        discovery = DiscoverySettings(paths=tuple(self.paths), root=self.root, excludes=self.excludes,
                                      shard=self.shard, verbose=self.verbose, configuration=values)
        run = RunSettings(engine=engine, root=self.root, jobs=self.jobs, timeout=self.timeout,
                          memory_limit=self.memory_limit, preload=tuple(self.preload), use_cache=self.use_cache,
                          cache_dir=self.cache_dir, quiet=self.quiet)
        output = OutputSettings(**{f.name: values[f.name] for f in dataclasses.fields(OutputSettings)})
        return Stages(discovery, run, policy, output)


@dataclass(frozen=True)
class EngineScope:
    """What the engine looks for and builds this run, as the policy decided it (``policy.engine_scope``).

    The engine obeys it without knowing why: which opt-in rules the run turned on (no other
    opt-in rule looks at the model), and which rules' findings it only counts, per rule, instead
    of locating and building them (notes nobody will see: locating one costs as much as any
    finding, and a model has one per connected weight).
    """

    opt_in_rules: frozenset[str] = frozenset()
    count_only: frozenset[str] = frozenset()


@dataclass(frozen=True)
class EngineSettings:
    """What the engine, verify and a worker read of a run's settings (typed, picklable)."""

    check_online_grad: bool = _default('check_online_grad')
    probe: bool = _default('probe')
    verify: bool = _default('verify')
    verify_steps: int | None = _default('verify_steps')
    verify_batch: int | None = _default('verify_batch')
    verify_algorithms: list[str] | None = _default('verify_algorithms')
    verify_seed: int | None = _default('verify_seed')
    verify_cosine_floor: float | None = _default('verify_cosine_floor')
    device: str | None = _default('device')
    advise: bool = _default('advise')
    advise_algorithms: list[str] | None = _default('advise_algorithms')
    advise_steps: int | None = _default('advise_steps')
    advise_batch_size: int | None = _default('advise_batch_size')
    memory_budget: int | None = _default('memory_budget')
    environ: dict[str, Any] | None = _default('environ')
    compile_options: dict[str, Any] = field(default_factory=dict)  # keywords of braintrace.compile_etrace_graph
    scope: EngineScope = field(default_factory=EngineScope)  # what the policy lets the engine leave out
    drop_env: tuple[str, ...] = ()  # removed from os.environ before model code runs

    def set_options(self) -> dict[str, object]:
        """The engine options that are set, by name (an option left unset is absent): part of cache keys."""
        values = option_values(self, ENGINE_OPTIONS)
        return {name: value for name, value in values.items() if value is not None and value is not False}

    def fingerprint_data(self) -> dict[str, object]:
        """What of the configuration can change what the engine reports (part of cache keys).

        Selection, levels and suppressions are applied after the cache, so
        changing them never makes a run lint again, with one exception: a
        result that left hidden notes out does not serve a run that shows
        them (``--show-info``, or a level raising a note); see the cache.
        """
        return {"compile_options": self.compile_options, "engine": self.set_options()}


@dataclass(frozen=True)
class DiscoverySettings:
    """What discovery and the plan read: the paths, the folder they are relative to, what is excluded,
    and this run's shard with the configuration its record carries (``etrace-lint merge`` compares them)."""

    paths: tuple[str, ...] = ()
    root: str = ""
    excludes: tuple[str, ...] = ()
    shard: str | None = None
    verbose: bool = False  # -v: the plan looks up which targets the cache holds
    configuration: Mapping[str, Any] = field(default_factory=dict)  # every option's value, by name


@dataclass(frozen=True)
class RunSettings:
    """What running the engine over many targets reads: the workers, their limits, the cache, and
    the engine's own settings, which it hands to each worker."""

    engine: EngineSettings = field(default_factory=EngineSettings)
    root: str = ""
    jobs: int = _default('jobs')
    timeout: float = _default('timeout')
    memory_limit: int = _default('memory_limit')
    preload: tuple[str, ...] = ()
    use_cache: bool = _default('use_cache')
    cache_dir: str = _default('cache_dir')
    quiet: bool = False  # a cache folder that cannot be written is said unless quiet


@dataclass(frozen=True)
class PolicySettings:
    """What the policy reads: selection, levels, what is shown, what fails the run, and the baseline."""

    select: tuple[str, ...] = ()
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    per_file_ignores: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    levels: Mapping[str, Level] = field(default_factory=dict)
    root: str = ""
    show_info: bool = False
    verify: bool = False  # --verify may point at a note: the engine builds every note
    include_suppressed: bool = False
    fail_level: Level = _default('fail_level')
    exit_zero: bool = False
    flags_on: frozenset[str] = frozenset()  # the flag options that are on: which opt-in rules run
    baseline: frozenset[str] | None = None  # fingerprints of the findings a baseline records


@dataclass(frozen=True)
class OutputSettings:
    """What the outputs read: the format, where each output goes, and what it shows (each field is the
    option of the same name)."""

    output_format: str = _default('output_format')
    output_file: str | None = None
    sarif: str | None = None
    quiet: bool = False
    silent: bool = False
    statistics: bool = False
    show_fixes: bool = False
    fix: bool = False
    fix_only: bool = False
    unsafe_fixes: bool = False
    root: str = ""
    color: bool | None = None
    show_flows: bool = False
    docs_url: str = _default('docs_url')


@dataclass(frozen=True)
class Stages:
    """Each stage's settings for one run, built once from :class:`Settings` (:meth:`Settings.stages`)."""

    discovery: DiscoverySettings
    run: RunSettings
    policy: PolicySettings
    output: OutputSettings

    @property
    def engine(self) -> EngineSettings:
        return self.run.engine


_OPTION_NAMES = frozenset(_BY_NAME)


# each value has its own field's type, and the stages' settings are built from them by name
def option_values(settings: Settings | EngineSettings, options: tuple[Option, ...] = OPTIONS) -> dict[str, Any]:
    """The value of each of ``options`` that ``settings`` holds, by name, in the table's order: the one
    place that reads a settings object by an option's name (a dataclass field named by the table)."""
    wanted = {option.name for option in options}
    return {item.name: getattr(settings, item.name) for item in dataclasses.fields(settings)
            if item.name in wanted and item.name in _OPTION_NAMES}


def declared_fields() -> list[str]:
    """The field lines of both classes as the options table declares them (the lines above must match)."""
    return ([f"{option.name}: {option.type}" for option in OPTIONS]
            + [f"{option.name}: {option.type}" for option in ENGINE_OPTIONS])


if __name__ == "__main__":
    sys.stdout.write("\n".join(declared_fields()) + "\n")
