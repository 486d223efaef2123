"""Findings about the algorithm the user configured, each with the alternative's figures."""

from __future__ import annotations

from typing import Any


def configured_findings(rows: list, configured: str | None, budget: int | None, context: Any,
                        target: str) -> list:
    return []
