"""Workspace folders, each with the settings the CLI would read there.

Settings come from ``[tool.etrace-lint]`` of the folder's pyproject.toml
(``etrace_lint.config``, as for ``etrace-lint`` run in that folder), then the
editor's initialization options, as the command line's flags would: ``paths``,
``select``, ``ignore`` (added to the configured ones, like ``--ignore``),
``environ`` (brainstate.environ values over ``[tool.etrace-lint.environ]``,
like ``--environ``) and ``trusted``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from ..settings import Settings
from .store import ResultStore
from .trust import is_trusted


class OptionsError(Exception):
    """Initialization options the server cannot use; the editor is told why."""


@dataclass
class ServerOptions:
    trusted: bool = False
    paths: list[str] | None = None
    select: list[str] | None = None
    ignore: list[str] | None = None
    environ: dict[str, Any] = field(default_factory=dict)  # brainstate.environ values, such as dt

    @classmethod
    def parse(cls, raw: Any) -> "ServerOptions":
        if raw is None:
            return cls()
        if not isinstance(raw, dict):
            raise OptionsError("initializationOptions must be an object")
        # editors that nest settings by server name
        raw = raw.get("etrace-lint", raw) if isinstance(raw.get("etrace-lint"), dict) else raw
        known = ("trusted", "paths", "select", "ignore", "environ")
        unknown = sorted(set(raw) - set(known))
        if unknown:
            raise OptionsError(f"unknown initialization option {unknown[0]!r} (known: {', '.join(known)})")
        options = cls()
        if "trusted" in raw:
            if not isinstance(raw["trusted"], bool):
                raise OptionsError("initialization option 'trusted' must be true or false")
            options.trusted = raw["trusted"]
        for key in ("paths", "select", "ignore"):
            if key in raw:
                setattr(options, key, _strings(raw[key], key))
        environ = raw.get("environ") or {}
        if not isinstance(environ, dict):
            raise OptionsError("initialization option 'environ' must map brainstate.environ keys to values")
        from ..environ import EnvironError, check_value

        try:
            options.environ = {key: check_value(key, value) for key, value in environ.items()}
        except EnvironError as exc:
            raise OptionsError(f"initialization option 'environ': {exc}") from None
        return options


def _strings(value: Any, key: str) -> list[str]:
    if isinstance(value, str):
        value = value.split(",")
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise OptionsError(f"initialization option {key!r} must be a list of strings")
    return [v.strip() for v in value if v.strip()]


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


@dataclass
class Folder:
    root: str
    settings: Settings | None = None
    error: str | None = None  # a configuration the user must fix; nothing is linted meanwhile
    trusted: bool = False
    store: ResultStore = field(default_factory=ResultStore)

    def open_cache(self, settings: Settings | None = None):
        """A cache for one lint: a Cache remembers the digests it read, and files change between lints."""
        from ..runner import open_cache

        settings = settings or self.settings
        return open_cache(settings) if settings is not None else None

    def lints(self, path: str) -> bool:
        """Whether ``path`` is among the files ``paths`` names and no exclude (the configured
        ones, the defaults such as ``.venv``, ``.gitignore``) leaves it out."""
        if self.settings is None or not path.endswith(".py"):
            return False
        if not any(_inside(path, os.path.abspath(p)) for p in self.settings.paths):
            return False
        from ..discover import IgnoreRules

        ignore = IgnoreRules(self.root, self.settings.excludes)
        inner = os.path.dirname(path)
        while _inside(inner, self.root) and inner != self.root:  # an excluded folder excludes its files
            if ignore.excluded(inner, True):
                return False
            inner = os.path.dirname(inner)
        return not ignore.excluded(path, False)


def load_folder(root: str, options: ServerOptions) -> Folder:
    """The folder's settings, trust and cache; a bad configuration is kept as ``error``."""
    from ..config import ConfigError, load_settings, validate_configured_selectors, validate_selectors

    folder = Folder(os.path.abspath(root))
    try:
        settings = load_settings(folder.root)
        validate_configured_selectors(settings)
        validate_selectors([*(options.select or ()), *(options.ignore or ())], "initialization options: ")
    except ConfigError as exc:
        folder.error = str(exc)  # shown on the files opened; nothing runs
        return folder
    settings.root = folder.root
    if options.paths is not None:
        settings.paths = [os.path.join(folder.root, p) for p in options.paths]
    elif settings.paths == ["."]:
        settings.paths = [folder.root]
    if options.select is not None:
        settings.select = list(options.select)
    if options.ignore:
        settings.ignore = settings.ignore + list(options.ignore)
    if options.environ:
        settings.environ = {**(settings.environ or {}), **options.environ}
    settings.quiet = True
    folder.settings = settings
    folder.trusted = is_trusted(settings.config_file, options.trusted)
    return folder


class Folders:
    """The workspace folders; a file belongs to the innermost folder holding it."""

    def __init__(self, options: ServerOptions):
        self.options = options
        self._folders: dict[str, Folder] = {}

    def add(self, root: str) -> Folder:
        folder = load_folder(root, self.options)
        self._folders[folder.root] = folder
        return folder

    def remove(self, root: str) -> None:
        self._folders.pop(os.path.abspath(root), None)

    def reload(self, root: str) -> Folder:
        """Settings read again (a pyproject.toml was saved); results linted so far are kept."""
        old = self._folders.get(os.path.abspath(root))
        folder = self.add(root)
        if old is not None and folder.settings is not None and old.settings is not None \
                and folder.settings.fingerprint_data() == old.settings.fingerprint_data():
            folder.store = old.store
        return folder

    def __iter__(self):
        return iter(list(self._folders.values()))

    def folder_of(self, path: str) -> Folder | None:
        holding = [f for f in self._folders.values() if _inside(path, f.root)]
        return max(holding, key=lambda f: len(f.root)) if holding else None
