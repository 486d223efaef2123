"""Workspace folders, each with the settings the CLI would read there.

Settings come from ``[tool.etrace-lint]`` of the folder's pyproject.toml
(``etrace_lint.config.pyproject``, as for ``etrace-lint`` run in that folder), then the
editor's initialization options, as the command line's flags would: ``paths``,
``select``, ``ignore`` (added to the configured ones, like ``--ignore``),
``environ`` (brainstate.environ values over ``[tool.etrace-lint.environ]``,
like ``--environ``) and ``trusted``.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterator

from ..config.environ import EnvironError, check_value
from ..config.pyproject import ConfigError, load_settings, validate_configured_selectors, validate_selectors
from ..config.settings import RunSettings, Settings
from ..discovery.discover import IgnoreRules
from ..policy.scope import stage_settings
from ..running.runner import open_cache
from .store import ResultStore
from .trust import inside, is_trusted, project_root

if TYPE_CHECKING:  # the cache module loads only when a run needs it (running.runner.open_cache); annotations only
    from ..running.cache import Cache


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
    def parse(cls, raw: object) -> "ServerOptions":
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

        try:
            options.environ = {key: check_value(key, value) for key, value in environ.items()}
        except EnvironError as exc:
            raise OptionsError(f"initialization option 'environ': {exc}") from None
        return options


def _strings(value: object, key: str) -> list[str]:
    if isinstance(value, str):
        value = value.split(",")
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise OptionsError(f"initialization option {key!r} must be a list of strings")
    return [v.strip() for v in value if v.strip()]


@dataclass
class Folder:
    root: str
    settings: Settings | None = None
    error: str | None = None  # a configuration the user must fix; nothing is linted meanwhile
    trusted: bool = False
    store: ResultStore = field(default_factory=ResultStore)
    nested: bool = False  # a project of its own inside a workspace folder
    real_root: str = ""

    def __post_init__(self) -> None:
        self.real_root = self.real_root or os.path.realpath(self.root)

    def owns(self, path: str) -> bool:
        """Whether ``path``, by its real path, is a file of this project: inside it, and not inside a
        project nested in it. Nothing else is ever imported on this folder's trust."""
        real = os.path.realpath(path)
        return inside(real, self.real_root) and project_root(real, self.real_root) == self.real_root

    def open_cache(self, settings: RunSettings | None = None) -> Cache | None:
        """A cache for one lint: a Cache remembers the digests it read, and files change between lints;
        ``settings``: the lint's own, by default the folder's."""
        if settings is None and self.settings is not None:
            settings = stage_settings(self.settings).run
        return open_cache(settings) if settings is not None else None

    def lints(self, path: str) -> bool:
        """Whether ``path`` is among the files ``paths`` names and no exclude (the configured
        ones, the defaults such as ``.venv``, ``.gitignore``) leaves it out."""
        if self.settings is None or not path.endswith(".py") or not self.owns(path):
            return False
        if not any(inside(path, os.path.abspath(p)) for p in self.settings.paths):
            return False

        ignore = IgnoreRules(self.root, self.settings.excludes)
        inner = os.path.dirname(path)
        while inside(inner, self.root) and inner != self.root:  # an excluded folder excludes its files
            if ignore.excluded(inner, True):
                return False
            inner = os.path.dirname(inner)
        return not ignore.excluded(path, False)


def load_folder(root: str, options: ServerOptions, nested: bool = False) -> Folder:
    """The folder's settings, trust and cache; a bad configuration is kept as ``error``.

    ``nested``: a project inside a workspace folder. It is trusted by its own table only: the
    search for pyproject.toml goes on upward past one without the table, as the CLI's does, and
    would otherwise find the workspace's; the editor's ``trusted`` and ``paths`` are about the
    workspace folders it named."""
    if nested:
        options = dataclasses.replace(options, trusted=False, paths=None)
    folder = Folder(os.path.abspath(root), nested=nested)
    try:
        settings = load_settings(folder.root)
        validate_configured_selectors(settings)
        validate_selectors([*(options.select or ()), *(options.ignore or ())], "initialization options: ")
    except ConfigError as exc:
        folder.error = str(exc)  # shown on the files opened; nothing runs
        return folder
    editor: dict[str, Any] = {"root": folder.root, "quiet": True}
    if options.paths is not None:
        editor["paths"] = [os.path.join(folder.root, p) for p in options.paths]
    elif settings.paths == ["."]:
        editor["paths"] = [folder.root]
    if options.select is not None:
        editor["select"] = list(options.select)
    if options.ignore:
        editor["ignore"] = settings.ignore + list(options.ignore)
    if options.environ:
        editor["environ"] = {**(settings.environ or {}), **options.environ}
    settings = settings.with_values(editor, "the editor's initialization options")
    folder.settings = settings
    own_config = settings.config_file is not None and inside(os.path.realpath(settings.config_file), folder.real_root)
    folder.trusted = is_trusted(settings.config_file if own_config or not nested else None, options.trusted)
    return folder


class Folders:
    """The workspace folders, and the projects nested in them (found as their files are opened).

    A file belongs to the project that holds its real path: the innermost workspace folder holding
    it, or a project nested there."""

    def __init__(self, options: ServerOptions):
        self.options = options
        self._folders: dict[str, Folder] = {}
        self._nested: dict[str, Folder] = {}  # by real root

    def add(self, root: str) -> Folder:
        folder = load_folder(root, self.options)
        self._folders[folder.root] = folder  # the projects nested in it keep their own settings and results
        return folder

    def remove(self, root: str) -> None:
        folder = self._folders.pop(os.path.abspath(root), None)
        if folder is not None:
            self._nested = {key: f for key, f in self._nested.items() if not inside(key, folder.real_root)}

    def reload(self, root: str) -> Folder:
        """Settings read again (a pyproject.toml was saved); results linted so far are kept."""
        key = os.path.abspath(root)
        old: Folder | None
        if key in self._folders:
            old = self._folders[key]
            folder = self.add(root)
        else:
            old = self._nested.get(os.path.realpath(root))
            folder = self._nested[os.path.realpath(root)] = load_folder(root, self.options, nested=True)
        if old is not None and folder.settings is not None and old.settings is not None \
                and folder.settings.fingerprint_data() == old.settings.fingerprint_data():
            folder.store = old.store
        return folder

    def __iter__(self) -> Iterator[Folder]:
        return iter(list(self._folders.values()) + list(self._nested.values()))

    def workspace_of(self, path: str) -> Folder | None:
        """The innermost workspace folder that ``path`` lies in as named, whatever its real path."""
        holding = [f for f in self._folders.values() if inside(path, f.root)]
        return max(holding, key=lambda f: len(f.root)) if holding else None

    def folder_of(self, path: str) -> Folder | None:
        """The project whose file ``path`` is, by its real path; None outside every workspace folder."""
        real = os.path.realpath(path)
        holding = [f for f in self._folders.values() if inside(real, f.real_root)]
        if not holding:
            return None
        workspace = max(holding, key=lambda f: len(f.real_root))
        root = project_root(real, workspace.real_root)
        if root == workspace.real_root:
            return workspace
        if root not in self._nested:
            self._nested[root] = load_folder(self._named(workspace, root), self.options, nested=True)
        return self._nested[root]

    @staticmethod
    def _named(workspace: Folder, real_root: str) -> str:
        """A nested project's root as the workspace folder names it (its files keep that prefix)."""
        named = os.path.join(workspace.root, os.path.relpath(real_root, workspace.real_root))
        return named if os.path.realpath(named) == real_root else real_root
