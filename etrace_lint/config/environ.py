"""``brainstate.environ`` settings (``dt = "0.1 ms"``) that a target is built and traced under.

Spiking models read ``dt`` from ``brainstate.environ`` in their step, and real
scripts run them inside ``brainstate.environ.context(dt=0.1 * u.ms)``. The
settings come from ``[tool.etrace-lint.environ]``, ``--environ dt=0.1ms``
and ``@etrace_lint.target(environ={...})``, in that order of precedence
reversed (the decorator wins).

Two halves, because a fully cached run must not import JAX:

- in the parent, values stay plain data (numbers, booleans, strings such as
  ``"0.1 ms"``) and only their syntax is checked (:func:`check_value`,
  :func:`parse_assignments`);
- in a worker, :func:`target_environ` turns them into saiunit quantities and
  :func:`environ_context` enters ``brainstate.environ.context`` around the
  factory call and the trace.
"""

from __future__ import annotations

import contextlib
import re
from typing import Any, Iterator, Mapping

# a number, then an optional unit expression such as "ms", "mV" or "nA / cm^2"
_NUMBER = r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?"
_QUANTITY = re.compile(rf"^\s*(?P<number>{_NUMBER})\s*(?P<unit>[^\W\d][\w\s*/^().-]*|\([\w\s*/^().-]*)?\s*$")
_KEY = re.compile(r"^[A-Za-z_]\w*$")
_BOOLEANS = {"true": True, "false": False}
_UNSET_KEY = re.compile(r"Key '(?P<key>[^']+)' not found in environment")


# a value as the configuration keeps it: a number, a boolean, or a number with its unit as text ("0.1 ms")
PlainValue = bool | int | float | str


class EnvironError(ValueError):
    """An environ value that cannot be used: the message names the key and why."""


def check_key(key: object) -> str:
    """An environ key must be a keyword of ``brainstate.environ.context``."""
    if not isinstance(key, str) or not _KEY.match(key) or key == "env":
        raise EnvironError(f"{key!r} is not an environ key (a Python name such as dt)")
    return key


def check_value(key: str, value: object) -> PlainValue:
    """The plain value kept in settings, or EnvironError; never imports saiunit.

    Numbers and booleans are kept as they are; a string must be a number
    with an optional unit (``"0.1 ms"``, ``"0.1ms"``, ``"2"``), and a string
    that is a bare number or ``true``/``false`` becomes that value.
    """
    check_key(key)
    if isinstance(value, (bool, int, float)):
        return value
    if not isinstance(value, str):
        raise EnvironError(f"{key}: a number, a boolean or a string such as \"0.1 ms\", not {type(value).__name__}")
    text = value.strip()
    if text.lower() in _BOOLEANS:
        return _BOOLEANS[text.lower()]
    match = _QUANTITY.match(text)
    if match is None:
        raise EnvironError(f"{key} = {value!r} is not a number with an optional unit, such as \"0.1 ms\"")
    if match["unit"] is None:
        return _number(match["number"])
    return text


def parse_assignments(text: str) -> dict[str, PlainValue]:
    """``"dt=0.1ms,precision=32"`` (one ``--environ`` value) -> checked plain values."""
    values = {}
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        key, equals, value = item.partition("=")
        if not equals or not key.strip() or not value.strip():
            raise EnvironError(f"{item!r} is not KEY=VALUE (for example dt=0.1ms)")
        values[key.strip()] = check_value(key.strip(), value)
    return values


def _number(text: str) -> int | float:
    return int(text) if re.fullmatch(r"[+-]?\d+", text) else float(text)


def to_value(key: str, value: object) -> object:
    """The object ``brainstate.environ`` gets: strings with a unit become saiunit quantities.

    Anything that is not a string (a number, or a quantity given in a
    decorator) is passed as it is.
    """
    if not isinstance(value, str):
        return value
    plain = check_value(key, value)
    if not isinstance(plain, str):
        return plain
    match = _QUANTITY.match(plain)
    assert match is not None  # check_value returns a string only when it reads as a quantity
    import saiunit  # a cached run never imports saiunit

    unit_text = match["unit"].strip()
    try:
        unit = saiunit.parse_unit(unit_text)
    except Exception:
        raise EnvironError(f"environ {key} = {value!r}: saiunit knows no unit {unit_text!r} "
                           f"(write units as saiunit prints them, such as ms, mV, nA / cm^2)") from None
    return float(match["number"]) * unit  # a quantity of an integer would keep an integer dtype


def target_environ(configured: Mapping[str, object] | None, declared: Mapping[str, object] | None) -> dict[str, object]:
    """The values a target runs under: the configuration's, overridden by its decorator's."""
    merged = {**(configured or {}), **(declared or {})}
    values = {}
    for key, value in merged.items():
        try:
            check_key(key)
        except EnvironError as exc:
            raise EnvironError(f"environ: {exc}") from None
        values[key] = to_value(key, value)
    return values


@contextlib.contextmanager
def environ_context(values: Mapping[str, object] | None) -> Iterator[None]:
    """``brainstate.environ.context(**values)``; nothing at all when there are none."""
    if not values:
        yield
        return
    import brainstate  # a cached run never imports brainstate

    # brainstate takes its settings as untyped keywords beside one typed parameter, env, a key check_key refuses
    settings: dict[str, Any] = dict(values)
    with brainstate.environ.context(**settings):
        yield


def unset_key(exc: BaseException) -> str | None:
    """The key, when ``exc`` is brainstate's "Key 'dt' not found in environment" error."""
    if not isinstance(exc, KeyError):
        return None
    match = _UNSET_KEY.search(str(exc))
    return match["key"] if match else None


def how_to_set(key: str) -> str:
    """The three ways to give a key a value, with a value a reader can copy for ``dt``."""
    example = "0.1 ms" if key == "dt" else "VALUE"
    return (f"set it in pyproject.toml (`[tool.etrace-lint.environ]` {key} = \"{example}\"), "
            f"on the command line (`--environ {key}={example.replace(' ', '')}`) "
            f"or on the target (`@etrace_lint.target(environ={{\"{key}\": \"{example}\"}})`)")
