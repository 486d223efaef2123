"""The effective configuration of a run, after defaults, pyproject.toml and the command line.

:class:`Settings` has one typed field per row of :data:`~etrace_lint.options.OPTIONS`
(same name, type and default), plus what a run learns while starting. The
engine, verify and the workers read a plain dict instead, made by
:func:`run_options` alone.
"""

from __future__ import annotations

import copy
from collections.abc import MutableMapping
from dataclasses import InitVar, field, make_dataclass
from typing import Any

from .options import OPTIONS, RUN_OPTIONS

_BY_RUN_KEY = {option.run_key: option for option in RUN_OPTIONS}


def run_options(settings) -> dict:
    """What the engine, verify and the workers read of the settings.

    Keys are the options' ``run_key`` (``check_online_grad``, ``verify``,
    ``verify_steps``, ``verify_batch``, ``verify_seed``, ``verify_cosine_floor``,
    ``verify_algorithms``, ``device``, ``environ``); an option left unset is
    absent, so the same configuration gives the same dict and cache key.
    ``environ`` holds plain data (numbers, booleans, strings such as
    ``"0.1 ms"``), made quantities only in a worker.
    """
    values = {}
    for option in RUN_OPTIONS:
        value = getattr(settings, option.name)
        if value is not None and value is not False:
            values[option.run_key] = value
    return values


class RunOptions(MutableMapping):
    """``settings.run_options``: :func:`run_options` as a live view; writing a key sets its typed field.

    Kept for callers written against the dict that preceded the typed
    fields (``settings.run_options["environ"] = ...``); new code sets the
    field (``settings.environ = ...``).
    """

    def __init__(self, settings):
        self._settings = settings

    def __getitem__(self, key: str) -> Any:
        return run_options(self._settings)[key]

    def __iter__(self):
        return iter(run_options(self._settings))

    def __len__(self) -> int:
        return len(run_options(self._settings))

    def __setitem__(self, key: str, value: Any) -> None:
        if key not in _BY_RUN_KEY:
            raise KeyError(f"{key!r} is not a run option (known: {', '.join(_BY_RUN_KEY)})")
        setattr(self._settings, _BY_RUN_KEY[key].name, value)

    def __delitem__(self, key: str) -> None:
        self[key] = _BY_RUN_KEY[key].default if key in _BY_RUN_KEY else None

    def __repr__(self) -> str:
        return repr(run_options(self._settings))


class _SettingsMethods:
    def __post_init__(self, run_options: dict | None) -> None:
        # Settings(run_options={...}) and dataclasses.replace(s, run_options={...}) set the
        # typed fields; replace() passes the old object's view when none is given: ignored
        if isinstance(run_options, dict):
            for key, option in _BY_RUN_KEY.items():
                setattr(self, option.name, run_options.get(key, _default(option)))

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
        return {"compile_options": self.compile_options, "run_options": run_options(self)}


def _default(option) -> Any:
    if option.factory is not None:
        return option.factory()
    return copy.deepcopy(option.default)


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
        ("run_options", InitVar[dict | None], None),
    ],
    bases=(_SettingsMethods,),
    namespace={"__module__": __name__, "__doc__": "One typed field per option of etrace_lint.options.OPTIONS."},
)
Settings.run_options = property(RunOptions, doc=RunOptions.__doc__)
