"""Which algorithm to train with: the cheapest that runs and fits the memory budget at the training batch,
exact where one is exact, else the closest to BPTT."""

from __future__ import annotations

import math
import os
from dataclasses import replace

import jax.numpy as jnp

from ...core.advice import AdviceRow


def default_budget() -> tuple[int | None, str]:
    """The memory of the device the advice runs on (JAX's ``bytes_limit``), or the host's RAM on a CPU, which
    reports none; and where it came from. The device is where JAX puts a new array: the default backend's
    first device, or the one ``jax.default_device`` names."""
    device = next(iter(jnp.zeros(()).devices()))
    try:
        stats = device.memory_stats() or {}
    except Exception:  # noqa: BLE001 - a CPU backend may not report
        stats = {}
    if stats.get("bytes_limit"):
        return int(stats["bytes_limit"]), f"{device.platform} device memory"
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"), "host memory"
    except (ValueError, OSError, AttributeError):
        return None, "unknown"


def fits(row: AdviceRow, budget: int | None) -> bool:
    """The trace fits when its bytes at the training batch are known and within the budget (None: no budget)."""
    return row.trace_bytes is not None and (budget is None or row.trace_bytes <= budget)


def _cost(row: AdviceRow) -> tuple[float, float]:
    flops = row.flops_ratio if row.flops_ratio is not None else math.inf
    return (flops, row.trace_bytes if row.trace_bytes is not None else math.inf)


def choose(rows: list[AdviceRow], budget: int | None) -> AdviceRow | None:
    usable = [row for row in rows if row.runs and fits(row, budget) and row.weights]
    if not usable:
        return None
    exact = [row for row in usable if row.exact]
    if exact:
        return min(exact, key=_cost)
    return min(usable, key=lambda row: (-row.closeness, *_cost(row)))


def mark(rows: list[AdviceRow], budget: int | None) -> list[AdviceRow]:
    best = choose(rows, budget)
    return [replace(row, recommended=row is best) for row in rows]
