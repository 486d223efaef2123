"""The ``@etrace_lint.target`` decorator and the attribute it leaves on a factory.

Model files import it through ``etrace_lint``; discovery reads the attribute.
It imports nothing of the package, so the package root can offer the
in-process API (``etrace_lint.check``) without an import circle.
"""

from __future__ import annotations

from typing import Callable, Mapping, TypeVar, overload

TARGET_ATTRIBUTE = "__etrace_lint_target__"

# a zero-argument factory returning ``(model, example_inputs[, compile_options])``; the decorator returns it as given
Factory = TypeVar("Factory", bound=Callable[[], object])


@overload
def target(fn: Factory, *, name: str | None = None, compile_options: Mapping[str, object] | None = None,
           batch_size: int | None = None, verify: Mapping[str, object] | None = None,
           environ: Mapping[str, object] | None = None) -> Factory: ...


@overload
def target(fn: None = None, *, name: str | None = None, compile_options: Mapping[str, object] | None = None,
           batch_size: int | None = None, verify: Mapping[str, object] | None = None,
           environ: Mapping[str, object] | None = None) -> Callable[[Factory], Factory]: ...


def target(fn: Factory | None = None, *, name: str | None = None,
           compile_options: Mapping[str, object] | None = None, batch_size: int | None = None,
           verify: Mapping[str, object] | None = None,
           environ: Mapping[str, object] | None = None) -> Factory | Callable[[Factory], Factory]:
    """Mark a zero-argument factory returning ``(model, example_inputs[, compile_options])``.

    Usable bare (``@etrace_lint.target``) or with options
    (``@etrace_lint.target(name="lif", compile_options={...}, verify={"steps": 8})``).
    ``environ`` holds ``brainstate.environ`` values the factory is called and
    the step traced under (``{"dt": "0.1 ms"}`` or ``{"dt": 0.1 * u.ms}``);
    they override ``[tool.etrace-lint.environ]`` and ``--environ``.
    """

    def mark(factory: Factory) -> Factory:
        setattr(factory, TARGET_ATTRIBUTE, {
            "name": name,
            "compile_options": dict(compile_options or {}),
            "batch_size": batch_size,
            "verify": dict(verify or {}),
            "environ": dict(environ or {}),
        })
        return factory

    return mark(fn) if fn is not None else mark
