"""Names a modeller recognises for the states and weights the compiler talks about.

The compiler names a state by its path in the module tree, a tuple such as
``('layers', 1, 'h')``. A message shows it the way the user's code reaches
it, ``layers[1].h``. Some libraries keep states under keys that are not
attribute names: brainpy.state files a projection's synapse under a key
that is the repr of the descriptor that built it
(``"(<class 'brainpy.state.Expon'>, (20,), {'tau': '10. ms'}) // ..."``) in a
private dict (``_before_updates``). Such a key becomes the class it names,
with its short keyword arguments (``<Expon tau=10. ms>``), and the private
dict that holds it is left out. The full path stays on a finding
(:func:`path_key`).

A state the model reaches along several attributes (a brainpy.state neuron
is both ``net.N`` and every projection's ``post``) is named along the
shortest: the compiler's own path follows attributes in sorted order
(``E.post.V``), the user wrote ``N.V``. :func:`preferred_paths` sets, for
one model at a time, which paths are shown as which.
"""

from __future__ import annotations

import contextlib
import re
from contextvars import ContextVar
from typing import Hashable, Iterable, Iterator

_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_CLASS_REPR = re.compile(r"<class '(?:[\w.]*\.)?(\w+)'>")
_KWARGS = re.compile(r"\{([^{}]*)\}")
_KWARG = re.compile(r"'(\w+)':\s*'?([^',]*)'?")


def _descriptor_name(key: str) -> str | None:
    """``"(<class 'brainpy.state.Expon'>, (20,), {'tau': '10. ms'}) // ..."`` -> ``<Expon tau=10. ms>``."""
    first = key.split(" // ")[0]
    found = _CLASS_REPR.search(first)
    if found is None:
        return None
    name = found.group(1)
    kwargs = _KWARGS.search(first)
    shown = ""
    if kwargs:
        pairs = [f"{k}={v.strip()}" for k, v in _KWARG.findall(kwargs.group(1))]
        shown = " ".join(pairs)
    if shown and len(shown) <= 30:
        return f"<{name} {shown}>"
    return f"<{name}>"


def _segment(part: object) -> tuple[str, bool]:
    """How one path element is shown, and whether it is a library's own key (not an attribute)."""
    if isinstance(part, int) and not isinstance(part, bool):
        return f"[{part}]", False
    text = str(part)
    if _IDENTIFIER.match(text):
        return f".{text}", False
    described = _descriptor_name(text)
    if described is not None:
        return f".{described}", True
    short = text if len(text) <= 24 else text[:21] + "..."
    return f"[{short!r}]", True


PathPart = Hashable
"""One step of a state's path: an attribute name or a dict key (``str``), a list index (``int``), or a
dict key of another hashable type."""

StatePath = tuple[PathPart, ...]
"""A state's path in the module tree: ``("cell", "Wr", "weight")``, ``("layers", 0, "w")``."""

_PREFERRED: ContextVar[dict[StatePath, StatePath]] = ContextVar("etrace_lint_preferred_paths", default={})


@contextlib.contextmanager
def preferred_paths(shorter: dict[StatePath, StatePath]) -> Iterator[None]:
    """While linting one model: show each path of ``shorter`` as the path it maps to."""
    token = _PREFERRED.set(shorter)
    try:
        yield
    finally:
        _PREFERRED.reset(token)


def preferred_path(path: StatePath) -> StatePath:
    """The path a message shows for ``path`` (the shortest the model reaches the state by)."""
    return _PREFERRED.get().get(path, path)


def display_name(path: object) -> str:
    """A state or weight path as the user's code names it: ``('layers', 1, 'h')`` -> ``layers[1].h``."""
    if not isinstance(path, (tuple, list)):
        return str(path)
    path = preferred_path(tuple(path))
    if not path:
        return "(the model itself)"
    segments = [_segment(part) for part in path]
    shown = []
    for index, (text, keyed) in enumerate(segments):
        following_keyed = index + 1 < len(segments) and segments[index + 1][1]
        if following_keyed and text.startswith("._"):
            continue  # a library's private dict holding the keyed entry: the key says more
        shown.append(text)
    name = "".join(shown)
    return name[1:] if name.startswith(".") else name


def display_names(paths: Iterable[object]) -> str:
    """Several paths, comma separated, in the order given, each once."""
    return ", ".join(dict.fromkeys(display_name(p) for p in paths))


def joined(names: Iterable[str]) -> str:
    """Display names already made, comma separated, in the order given, each once (as :func:`display_names`)."""
    return ", ".join(dict.fromkeys(names))


def path_key(path: Iterable[Hashable]) -> tuple[str | int, ...]:
    """The full path as a finding keeps it: ints and text stay, anything else as text."""
    return tuple(p if isinstance(p, (int, str)) and not isinstance(p, bool) else str(p) for p in path)


def callable_name(function: object) -> str:
    """A user function's name as a message shows it (``sigmoid``, ``<lambda>``): its ``__name__``, or its type's
    name where it has none (a ``functools.partial``, a callable object)."""
    try:
        return str(function.__name__)  # type: ignore[attr-defined]
    except AttributeError:
        return type(function).__name__
