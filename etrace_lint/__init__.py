"""etrace-lint: which weights of a braintrace model really learn online, and why not.

This module stays light: model files import it for the :func:`target`
decorator, and a cached run must not import JAX.
"""

from __future__ import annotations

import os as _os
from typing import Any, Callable

# An installed etrace-lint carries its rules as ``etrace_lint/rules``; a source
# checkout keeps them in ``rules/`` at the top of the repository. When this
# package is imported from a checkout (``python -m etrace_lint`` or pytest from
# the repository root), let ``etrace_lint.rules`` resolve to that folder.
_here = _os.path.dirname(_os.path.abspath(__file__))
if not _os.path.isdir(_os.path.join(_here, "rules")) and _os.path.isfile(
        _os.path.join(_os.path.dirname(_here), "rules", "__init__.py")):
    __path__.append(_os.path.dirname(_here))  # noqa: F821 - a package's own __path__

__version__ = "0.1.0"
__all__ = ["target", "__version__"]

TARGET_ATTRIBUTE = "__etrace_lint_target__"


def target(fn: Callable | None = None, *, name: str | None = None,
           compile_options: dict | None = None, batch_size: int | None = None,
           verify: dict | None = None, environ: dict | None = None) -> Any:
    """Mark a zero-argument factory returning ``(model, example_inputs[, compile_options])``.

    Usable bare (``@etrace_lint.target``) or with options
    (``@etrace_lint.target(name="lif", compile_options={...}, verify={"steps": 8})``).
    ``environ`` holds ``brainstate.environ`` values the factory is called and
    the step traced under (``{"dt": "0.1 ms"}`` or ``{"dt": 0.1 * u.ms}``);
    they override ``[tool.etrace-lint.environ]`` and ``--environ``.
    """

    def mark(factory: Callable) -> Callable:
        setattr(factory, TARGET_ATTRIBUTE, {
            "name": name,
            "compile_options": dict(compile_options or {}),
            "batch_size": batch_size,
            "verify": dict(verify or {}),
            "environ": dict(environ or {}),
        })
        return factory

    return mark(fn) if fn is not None else mark
