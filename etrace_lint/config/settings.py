"""The effective configuration of a run, after defaults, pyproject.toml and the command line.

:class:`Settings` has one typed field per row of :data:`~etrace_lint.config.options.OPTIONS`
(same name, type and default), plus what a run learns while starting. The
engine, verify and the workers get :class:`EngineSettings` instead: the
fields of the options the engine reads (``engine=True`` in the table) and
what the run decided for them (compile options, hidden notes, variables to
drop). It is plain typed data: it crosses the pipe to a worker as it is.
"""

from __future__ import annotations

import copy
from dataclasses import field, make_dataclass

from .options import ENGINE_OPTIONS, OPTIONS


class _EngineSettingsMethods:
    def set_options(self) -> dict:
        """The engine options that are set, by name (an option left unset is absent): part of cache keys."""
        values = {option.name: getattr(self, option.name) for option in ENGINE_OPTIONS}
        return {name: value for name, value in values.items() if value is not None and value is not False}


class _SettingsMethods:
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
        return {"compile_options": self.compile_options, "engine": self.for_engine().set_options()}

    def for_engine(self, hidden_note_levels: dict[str, str] | None = None) -> "EngineSettings":
        """What the engine reads of these settings; ``hidden_note_levels``: how the run hides notes
        (``policy.hidden_note_levels``), None when every note is built."""
        return EngineSettings(**{option.name: copy.deepcopy(option.effective(self)) for option in ENGINE_OPTIONS},
                              compile_options=copy.deepcopy(self.compile_options),
                              hidden_note_levels=hidden_note_levels, drop_env=tuple(self.drop_env))


def _field(option):
    if option.factory is not None:
        return field(default_factory=option.factory)
    if isinstance(option.default, (list, dict)):
        return field(default_factory=lambda: copy.deepcopy(option.default))
    return field(default=option.default)


Settings = make_dataclass(
    "Settings",
    [(option.name, option.type, _field(option)) for option in OPTIONS] + [
        ("config_file", "str | None", field(default=None)),  # the pyproject.toml that was read
        ("baseline_fingerprints", "set[str] | None", field(default=None)),  # read from ``baseline`` before linting
        ("origins", "dict[str, str]", field(default_factory=dict)),  # option name -> where its value was set
    ],
    bases=(_SettingsMethods,),
    namespace={"__module__": __name__, "__doc__": "One typed field per option of etrace_lint.config.options.OPTIONS."},
)

def _engine_field(option):
    """An option that ``auto`` decides reaches the engine decided: its unset value is what ``auto`` makes of
    no other settings."""
    if option.auto is not None:
        return option.name, "bool", field(default=option.auto(None))
    return option.name, option.type, _field(option)


EngineSettings = make_dataclass(
    "EngineSettings",
    [_engine_field(option) for option in ENGINE_OPTIONS] + [
        ("compile_options", "dict", field(default_factory=dict)),  # keywords of braintrace.compile_etrace_graph
        ("hidden_note_levels", "dict[str, str] | None", field(default=None)),  # notes counted, not built
        ("drop_env", "tuple[str, ...]", field(default=())),  # removed from os.environ before model code runs
    ],
    bases=(_EngineSettingsMethods,),
    frozen=True,
    namespace={"__module__": __name__,
               "__doc__": "What the engine, verify and a worker read of a run's settings (typed, picklable)."},
)
