"""Small commands around a run: ``--show-settings`` and ``etrace-lint clean``.

Both read the configuration the way a run does and import nothing heavy.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from typing import TextIO

from ..config.options import OPTIONS
from ..config.settings import Settings, option_values
from ..core.json_types import JsonObject, shown_as_json
from ..running.cache import _TAG  # the tag the cache writes: its first line is the signature, the second names us

CACHE_TAG = "CACHEDIR.TAG"


def settings_report(settings: Settings) -> list[JsonObject]:
    """Every option: its name as the configuration spells it, its value, and where the value came from."""
    rows: list[JsonObject] = []
    values = option_values(settings)
    for option in OPTIONS:
        name = option.key or option.flag.lstrip("-") or option.name
        rows.append({"name": name, "value": shown_as_json(values[option.name]),
                     "source": settings.origins.get(option.name, "default")})
    return rows


def show_settings(settings: Settings, stream: TextIO | None = None) -> int:
    """``--show-settings``: the effective configuration, one option a line, and where each value came from."""
    stream = stream or sys.stdout
    rows = settings_report(settings)
    if settings.output_format in ("json", "json-lines"):
        json.dump({"configFile": settings.config_file, "settings": rows}, stream, indent=2, default=str)
        stream.write("\n")
        return 0
    stream.write(f"Configuration file: {settings.config_file or 'none (defaults and the command line only)'}\n")
    width = max(len(f"{row['name']} = {json.dumps(row['value'], default=str)}") for row in rows)
    for row in rows:
        setting = f"{row['name']} = {json.dumps(row['value'], default=str)}"
        stream.write(f"{setting.ljust(width)}  # {row['source']}\n")
    return 0


def _is_our_cache(folder: str) -> bool:
    try:
        with open(os.path.join(folder, CACHE_TAG), encoding="utf-8") as handle:
            return handle.read().splitlines()[:2] == _TAG.splitlines()[:2]
    except OSError:
        return False


def cache_folders(settings: Settings, start: str) -> list[str]:
    """The configured cache folder, and every etrace-lint cache folder under ``start``."""
    configured = settings.cache_dir if os.path.isabs(settings.cache_dir) else os.path.join(settings.root,
                                                                                         settings.cache_dir)
    found = [os.path.abspath(configured)] if _is_our_cache(configured) else []
    for folder, subfolders, _ in os.walk(start):
        if _is_our_cache(folder) and os.path.abspath(folder) not in found:
            found.append(os.path.abspath(folder))
            subfolders[:] = []
        subfolders[:] = [s for s in subfolders if s not in (".git", "node_modules", ".venv", "venv")]
    return sorted(found)


def clean(settings: Settings, start: str, quiet: bool = False) -> int:
    """``etrace-lint clean``: remove the caches (only folders etrace-lint tagged as its cache)."""
    folders = cache_folders(settings, start)
    for folder in folders:
        if not quiet:
            print(f"Removing cache at: {os.path.relpath(folder)}", file=sys.stderr)
        shutil.rmtree(folder, ignore_errors=True)
    if not folders and not quiet:
        print("etrace-lint: no cache to remove", file=sys.stderr)
    return 0
