"""``[tool.etrace-lint]`` in the nearest pyproject.toml, checked and turned into Settings.

Layers in a fixed order: defaults, then the file, then the command line.
Reading configuration never imports JAX: compile options stay plain data
(a ControlFlowPolicy is a table) until a worker builds the compiler's
objects from them.

Example::

    [tool.etrace-lint]
    paths = ["models"]
    extend-exclude = ["models/legacy"]
    extend-select = ["ETL205"]
    ignore = ["ETL013"]
    fail-level = "error"
    timeout = 120
    jobs = 4

    [tool.etrace-lint.per-file-ignores]
    "models/experimental/*" = ["ETL201"]

    [tool.etrace-lint.levels]
    ETL005 = "error"

    [tool.etrace-lint.compile-options]
    include-recurrent-mixing = true
    control-flow = { cond = "opaque" }

    [tool.etrace-lint.verify]
    steps = 32
    algorithms = ["d_rtrl"]

    [tool.etrace-lint.environ]    # brainstate.environ while building and tracing
    dt = "0.1 ms"
"""

from __future__ import annotations

import dataclasses
import datetime
import os
import tomllib
from typing import Callable, Iterable, TypeAlias

from ..core.findings import Level
from ..core.registry import all_rules
from ..core.sizes import parse_size
from .environ import EnvironError, check_value
from .options import (
    BY_KEY,
    KNOWN_KEYS,
    MINIMUM_WORDS,
    SECTIONS,
    Option,
    below_minimum,
    did_you_mean,
    did_you_mean_rule,
    flag_is_on,
    option_for_flag,
)
from .search import nearest
from .search import search_start as search_start  # where callers have always found it
from .settings import Settings, option_values

TABLE = "[tool.etrace-lint]"

# what tomllib reads: JSON's values without null, and dates and times
TomlValue: TypeAlias = ("str | int | float | bool | datetime.datetime | datetime.date | datetime.time"
                        " | list[TomlValue] | dict[str, TomlValue]")
TomlTable: TypeAlias = "dict[str, TomlValue]"
# an option's value as the file gives it, read by its kind (see _READERS)
OptionValue: TypeAlias = ("bool | int | float | str | Level | list[str] | dict[str, list[str]] | dict[str, Level]"
                          " | dict[str, TomlValue] | dict[str, bool | int | float | str]")


class ConfigError(Exception):
    """A configuration the user must fix: reported as a usage error (exit 2)."""


class _Reader:
    """Checks the values of one file's table; every message names the file."""

    def __init__(self, display: str):
        self.display = display

    def fail(self, message: str) -> ConfigError:
        return ConfigError(f"{self.display}: {TABLE} {message}")

    def strings(self, value: TomlValue, key: str) -> list[str]:
        if isinstance(value, str):
            return [value]
        if isinstance(value, list):
            strings = [v for v in value if isinstance(v, str)]
            if len(strings) == len(value):
                return strings
        raise self.fail(f"{key} must be a string or a list of strings, not {_describe(value)}")

    def number(self, value: TomlValue, key: str, kind: type[int] | type[float], minimum: str | None = None) -> float:
        """An int or float; ``minimum`` is "zero" or "positive" (see :class:`~etrace_lint.config.options.Option`)."""
        if (isinstance(value, bool) or not isinstance(value, (int, float))
                or (kind is int and not isinstance(value, int))):
            raise self.fail(f"{key} must be {'an integer' if kind is int else 'a number'}, not {_describe(value)}")
        if below_minimum(value, minimum):
            raise self.fail(f"{key} must be {MINIMUM_WORDS[minimum or '']}, not {value!r}")
        return kind(value)

    def boolean(self, value: TomlValue, key: str) -> bool:
        if not isinstance(value, bool):
            raise self.fail(f"{key} must be true or false, not {_describe(value)}")
        return value

    def string(self, value: TomlValue, key: str) -> str:
        if not isinstance(value, str):
            raise self.fail(f"{key} must be a string, not {_describe(value)}")
        return value

    def level(self, value: TomlValue, key: str) -> Level:
        try:
            if isinstance(value, str):
                return Level.parse(value)
        except ValueError:
            pass
        raise self.fail(f"{key} must be one of \"note\", \"warning\", \"error\", not {_describe(value)}")

    def table(self, value: TomlValue, key: str) -> TomlTable:
        if not isinstance(value, dict):
            raise self.fail(f"{key} must be a table, not {_describe(value)}")
        return value


def _describe(value: TomlValue) -> str:
    kind = {bool: "a boolean", int: "an integer", float: "a number", str: "a string",
            list: "a list", dict: "a table"}.get(type(value), type(value).__name__)
    return f"{kind} ({value!r})" if not isinstance(value, (list, dict)) else kind


def unknown_message(display: str, key: str, known: Iterable[str]) -> str:
    return f"{display}: unknown key {key!r} in {TABLE}{did_you_mean(key, known, quote=True)}"


# Every keyword of braintrace.compile_etrace_graph a user may set, over the
# supported braintrace versions; the compiler itself judges the values.
COMPILE_OPTIONS = ("include_recurrent_mixing", "sparse_n", "snap_max_jacobian_elements", "control_flow",
                   "include_output_bypass")
CONTROL_FLOW_FIELDS = ("cond", "scan_unroll_limit", "while_hidden", "etp_in_control_flow", "scan_descent",
                       "fixpoint_iteration_limit")


def _compile_options(reader: _Reader, table: TomlTable) -> TomlTable:
    options: TomlTable = {}
    for key, value in table.items():
        name = key.replace("-", "_")
        if name not in COMPILE_OPTIONS:
            raise ConfigError(unknown_message(reader.display, f"compile-options.{key}",
                                              [f"compile-options.{k.replace('_', '-')}" for k in COMPILE_OPTIONS]))
        if name == "control_flow":
            policy: TomlTable = {}
            for field_key, field_value in reader.table(value, "compile-options.control-flow").items():
                field_name = field_key.replace("-", "_")
                if field_name not in CONTROL_FLOW_FIELDS:
                    raise ConfigError(unknown_message(
                        reader.display, f"compile-options.control-flow.{field_key}",
                        [f"compile-options.control-flow.{f.replace('_', '-')}" for f in CONTROL_FLOW_FIELDS]))
                policy[field_name] = field_value
            value = policy
        options[name] = value
    return options


def _environ(reader: _Reader, table: TomlTable) -> dict[str, bool | int | float | str]:
    """Plain values, syntax checked; units become saiunit quantities only in a worker."""
    values = {}
    for key, value in table.items():
        try:
            values[key] = check_value(key, value)
        except EnvironError as exc:
            raise reader.fail(f"environ: {exc}") from None
    return values


def _memory(reader: _Reader, value: TomlValue, key: str) -> int:
    try:
        return parse_size(value)
    except ValueError as exc:
        raise reader.fail(f"{key}: {exc}") from None


# how a value of each kind of option is read: (reader, option, value, key, folder of the file) -> value
_READERS: dict[str, Callable[[_Reader, Option, TomlValue, str, str], OptionValue]] = {
    "flag": lambda r, o, v, k, base: r.boolean(v, k),
    "int": lambda r, o, v, k, base: r.number(v, k, int, o.minimum),
    "float": lambda r, o, v, k, base: r.number(v, k, float, o.minimum),
    "str": lambda r, o, v, k, base: r.string(v, k),
    "folder": lambda r, o, v, k, base: os.path.join(base, r.string(v, k)),
    "paths": lambda r, o, v, k, base: [os.path.join(base, p) for p in r.strings(v, k)],
    "list": lambda r, o, v, k, base: r.strings(v, k),
    "level": lambda r, o, v, k, base: r.level(v, k),
    "per-file-ignores": lambda r, o, v, k, base: {glob: r.strings(item, f"{k}.{glob!r}")
                                                  for glob, item in r.table(v, k).items()},
    "levels": lambda r, o, v, k, base: {rule.upper(): r.level(item, f"{k}.{rule}")
                                        for rule, item in r.table(v, k).items()},
    "compile-options": lambda r, o, v, k, base: _compile_options(r, r.table(v, k)),
    "environ": lambda r, o, v, k, base: _environ(r, r.table(v, k)),
    "memory": lambda r, o, v, k, base: _memory(r, v, k),
}


def _table_values(table: TomlTable, reader: _Reader, base: str) -> tuple[dict[str, OptionValue], dict[str, str]]:
    """Each key's option value, by option name, and where it was set; ``[tool.etrace-lint.verify]``
    holds the ``verify.*`` options."""
    values: dict[str, OptionValue] = {}
    origins: dict[str, str] = {}
    for key, value in table.items():
        if key in SECTIONS:
            items = [(f"{key}.{name}", item) for name, item in reader.table(value, key).items()]
            known = [k for k in BY_KEY if k.startswith(f"{key}.")]
        else:
            items, known = [(key, value)], list(KNOWN_KEYS)
        for full_key, item in items:
            option = BY_KEY.get(full_key)
            if option is None:
                raise ConfigError(unknown_message(reader.display, full_key, known))
            values[option.name] = _READERS[option.kind](reader, option, item, full_key, base)
            origins[option.name] = f"{reader.display} ({full_key})"
    return values, origins


def _read_toml(path: str, display: str) -> TomlTable:
    try:
        with open(path, "rb") as handle:
            return tomllib.load(handle)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{display}: not valid TOML: {exc}") from None
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else None
        raise ConfigError(f"{display}: cannot be read: {reason or exc}") from None


def _our_table(document: TomlTable, display: str) -> TomlTable | None:
    tool = document.get("tool")
    if tool is None:
        return None
    if not isinstance(tool, dict):
        raise ConfigError(f"{display}: [tool] must be a table")
    table = tool.get("etrace-lint")
    if table is not None and not isinstance(table, dict):
        raise ConfigError(f"{display}: {TABLE} must be a table")
    return table


def _display(path: str) -> str:
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel


def find_config(start: str) -> tuple[str, TomlTable] | None:
    """The nearest pyproject.toml at or above ``start`` with a ``[tool.etrace-lint]`` table.

    Like ruff, a pyproject.toml without the table does not stop the search,
    but one that is not valid TOML does: it may be the one the user meant.
    """
    return nearest(start, lambda candidate: _our_table(_read_toml(candidate, _display(candidate)),
                                                       _display(candidate)))


def load_settings(start: str, explicit: str | None = None) -> Settings:
    """Defaults overlaid with ``[tool.etrace-lint]`` of ``explicit`` or of the nearest pyproject.toml."""
    settings = Settings()
    found: tuple[str, TomlTable] | None
    if explicit is not None:
        display = _display(explicit)
        table = _our_table(_read_toml(explicit, display), display) or {}
        found = (os.path.abspath(explicit), table)
    else:
        found = find_config(start)
    if found is None:
        return settings
    path, table = found
    reader = _Reader(_display(path))
    values, origins = _table_values(table, reader, os.path.dirname(path))
    settings = dataclasses.replace(settings.with_values(values, origins), config_file=path)
    # a rule the file selects by its id runs wherever the file is read (the language server too);
    # the command line repeats this after its flags
    turned_on = selected_opt_in_rules(settings)[0]
    return settings.with_values({name: True for name in turned_on},
                                {name: f"{reader.display} (selecting {selector})"
                                 for name, selector in turned_on.items()})


def validate_selectors(selectors: list[str], where: str) -> None:
    """An unknown rule id or name is a ConfigError that suggests the closest known one."""
    rules = all_rules()
    names = [rule.name for rule in rules.values()]
    for selector in selectors:
        if selector.upper() == "ALL" or selector in names or any(rid.startswith(selector.upper()) for rid in rules):
            continue
        raise ConfigError(f"{where}unknown rule {selector!r}{did_you_mean_rule(selector)}")


def validate_configured_selectors(settings: Settings) -> None:
    """The rule ids and names the configuration file selects, ignores or grades all exist."""
    if not settings.config_file:
        return
    where = os.path.relpath(settings.config_file)
    where = settings.config_file if where.startswith("..") else where
    validate_selectors([*settings.select, *settings.extend_select, *settings.ignore, *settings.levels,
                        *(s for group in settings.per_file_ignores.values() for s in group)],
                       f"{where}: [tool.etrace-lint] ")


def selected_opt_in_rules(settings: Settings) -> tuple[dict[str, str], list[str]]:
    """What a selection of opt-in rules asks for: the options to turn on, and what cannot run.

    A rule selected by its own id or name (``--extend-select ETL205``) runs:
    its opt-in option is turned on, and the result maps that option's name to
    the selector. A prefix that selects nothing but opt-in rules whose option
    is off (``--select ETL4`` without ``--verify``) selects nothing that runs:
    the second list says so, one line a selector (ruff does the same for a
    selector of preview rules without ``--preview``).
    """
    rules = {rule_id: rule for rule_id, rule in all_rules().items() if not rule.retired}
    values = option_values(settings)
    turned_on: dict[str, str] = {}
    idle: list[str] = []
    for selector in [*settings.select, *settings.extend_select]:
        exact = [rule for rule_id, rule in rules.items() if selector.upper() == rule_id or selector == rule.name]
        for rule in exact:
            if rule.opt_in_flag and not flag_is_on(rule.opt_in_flag, values):
                turned_on.setdefault(option_for_flag(rule.opt_in_flag).name, selector)
        if exact or selector.upper() == "ALL":
            continue
        matched = [rule for rule_id, rule in rules.items() if rule_id.startswith(selector.upper())]
        idle_rules = [rule for rule in matched if rule.opt_in_flag and not flag_is_on(rule.opt_in_flag, values)
                      and option_for_flag(rule.opt_in_flag).name not in turned_on]
        off = sorted({rule.opt_in_flag for rule in idle_rules})
        if matched and len(idle_rules) == len(matched):
            idle.append(f"selection {selector!r} has no effect: its rules run only with {' or '.join(off)}")
    return turned_on, idle
