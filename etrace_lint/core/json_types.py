"""The types of JSON data as the writers, the cache and the wire build and read it.

``JsonValue`` is what ``json.loads`` returns and ``json.dumps`` takes; a
finding's SARIF properties, a cache entry and a worker's message are made of it.
"""

from __future__ import annotations

from typing import TypeAlias

JsonValue: TypeAlias = "None | bool | int | float | str | list[JsonValue] | dict[str, JsonValue]"
JsonObject: TypeAlias = "dict[str, JsonValue]"
