"""etrace-lint: which weights of a braintrace model really learn online, and why not.

This module stays light: model files import it for the :func:`target`
decorator, and a cached run must not import JAX.
"""

from __future__ import annotations

from typing import Any, Callable

__version__ = "0.1.0"
__all__ = ["target", "__version__"]

TARGET_ATTRIBUTE = "__etrace_lint_target__"


def target(fn: Callable | None = None, *, name: str | None = None,
           compile_options: dict | None = None, batch_size: int | None = None,
           verify: dict | None = None) -> Any:
    """Mark a zero-argument factory returning ``(model, example_inputs[, compile_options])``.

    Usable bare (``@etrace_lint.target``) or with options
    (``@etrace_lint.target(name="lif", compile_options={...}, verify={"steps": 8})``).
    """

    def mark(factory: Callable) -> Callable:
        setattr(factory, TARGET_ATTRIBUTE, {
            "name": name,
            "compile_options": dict(compile_options or {}),
            "batch_size": batch_size,
            "verify": dict(verify or {}),
        })
        return factory

    return mark(fn) if fn is not None else mark
