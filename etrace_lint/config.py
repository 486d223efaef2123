"""``[tool.etrace-lint]`` in the nearest pyproject.toml, checked and turned into Settings.

Layers in a fixed order: defaults, then the file, then the command line.
Reading configuration never imports JAX: compile options stay plain data
until a worker builds the compiler's objects from them.
"""

from __future__ import annotations

import difflib
import os
import tomllib
from typing import Any

from .findings import Level
from .settings import Settings


class ConfigError(Exception):
    """A configuration the user must fix: reported as a usage error (exit 2)."""


def _strings(value: Any, key: str, path: str) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    raise ConfigError(f"{path}: [tool.etrace-lint] {key} must be a string or a list of strings, "
                      f"not {type(value).__name__}")


def _number(value: Any, key: str, path: str, kind: type) -> Any:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or (kind is int and not isinstance(value, int)):
        raise ConfigError(f"{path}: [tool.etrace-lint] {key} must be {'an integer' if kind is int else 'a number'}, "
                          f"not {value!r}")
    if value < 0:
        raise ConfigError(f"{path}: [tool.etrace-lint] {key} must not be negative")
    return value


def _level(value: Any, key: str, path: str) -> Level:
    try:
        return Level.parse(value) if isinstance(value, str) else Level(value)
    except ValueError:
        raise ConfigError(f"{path}: [tool.etrace-lint] {key} must be one of note, warning, error, "
                          f"not {value!r}") from None


def _table(value: Any, key: str, path: str) -> dict:
    if not isinstance(value, dict):
        raise ConfigError(f"{path}: [tool.etrace-lint] {key} must be a table, not {type(value).__name__}")
    return value


VERIFY_KEYS = {"steps": ("verify_steps", int), "batch": ("verify_batch", int),
               "algorithms": ("verify_algorithms", list), "seed": ("verify_seed", int),
               "cosine-floor": ("verify_cosine_floor", float), "device": ("device", str)}


def _apply(settings: Settings, key: str, value: Any, path: str, base: str) -> None:
    if key == "paths":
        settings.paths = [os.path.join(base, p) for p in _strings(value, key, path)]
    elif key == "exclude":
        settings.exclude = _strings(value, key, path)
    elif key == "extend-exclude":
        settings.exclude = settings.exclude + _strings(value, key, path)
    elif key == "select":
        settings.select = _strings(value, key, path)
    elif key == "extend-select":
        settings.select = (settings.select or ["ALL"]) + _strings(value, key, path)
    elif key == "ignore":
        settings.ignore = _strings(value, key, path)
    elif key == "per-file-ignores":
        settings.per_file_ignores = {glob: _strings(v, f"per-file-ignores.{glob}", path)
                                     for glob, v in _table(value, key, path).items()}
    elif key == "levels":
        settings.levels = {rule.upper(): _level(v, f"levels.{rule}", path)
                           for rule, v in _table(value, key, path).items()}
    elif key == "fail-level":
        settings.fail_level = _level(value, key, path)
    elif key == "timeout":
        settings.timeout = float(_number(value, key, path, float))
    elif key == "jobs":
        settings.jobs = int(_number(value, key, path, int))
    elif key == "cache-dir":
        if not isinstance(value, str):
            raise ConfigError(f"{path}: [tool.etrace-lint] cache-dir must be a string")
        settings.cache_dir = os.path.join(base, value)
    elif key == "compile-options":
        settings.compile_options = {k.replace("-", "_"): v for k, v in _table(value, key, path).items()}
    elif key == "show-info":
        settings.show_info = bool(value)
    elif key == "verify":
        for name, item in _table(value, key, path).items():
            if name not in VERIFY_KEYS:
                raise ConfigError(_unknown(f"verify.{name}", [f"verify.{k}" for k in VERIFY_KEYS], path))
            option, kind = VERIFY_KEYS[name]
            if kind is list:
                item = _strings(item, f"verify.{name}", path)
            elif kind is str:
                if not isinstance(item, str):
                    raise ConfigError(f"{path}: [tool.etrace-lint] verify.{name} must be a string")
            else:
                item = kind(_number(item, f"verify.{name}", path, kind))
            settings.run_options[option] = item


KNOWN_KEYS = ("paths", "exclude", "extend-exclude", "select", "extend-select", "ignore", "per-file-ignores",
              "levels", "fail-level", "timeout", "jobs", "cache-dir", "compile-options", "show-info", "verify")


def _unknown(key: str, known, path: str) -> str:
    close = difflib.get_close_matches(key, list(known), n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    return f"{path}: unknown key {key!r} in [tool.etrace-lint]{hint}"


def find_pyproject(start: str) -> str | None:
    directory = os.path.abspath(start)
    while True:
        candidate = os.path.join(directory, "pyproject.toml")
        if os.path.isfile(candidate):
            return candidate
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


def load_settings(start: str, explicit: str | None = None) -> tuple[Settings, str | None]:
    """Defaults overlaid with the nearest pyproject.toml's ``[tool.etrace-lint]``."""
    settings = Settings()
    path = explicit or find_pyproject(start)
    if path is None:
        return settings, None
    display = os.path.relpath(path) if not os.path.relpath(path).startswith("..") else path
    try:
        with open(path, "rb") as handle:
            document = tomllib.load(handle)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{display}: not valid TOML: {exc}") from None
    except OSError as exc:
        raise ConfigError(f"{display}: cannot be read: {exc.strerror}") from None
    table = document.get("tool", {}).get("etrace-lint")
    if table is None:
        return settings, path
    if not isinstance(table, dict):
        raise ConfigError(f"{display}: [tool.etrace-lint] must be a table")
    base = os.path.dirname(path)
    for key, value in table.items():
        if key not in KNOWN_KEYS:
            raise ConfigError(_unknown(key, KNOWN_KEYS, display))
        _apply(settings, key, value, display, base)
    return settings, path
