"""The shortest attribute path to each of a model's states.

The compiler names a state by the first path brainstate's graph walk meets,
attributes in sorted order; a state shared between modules (a neuron that is
also every projection's ``post``) may then be named through a module the
user never thinks of it as part of. A breadth-first walk over the same
attributes, in the order the model defined them, finds the path the user
wrote; at one length, a path of attributes beats one through list items or
dict keys (a ``brainstate.nn.Map``'s store of the states it batched).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable

import brainstate

from ..core.naming import StatePath

# a model of a few thousand modules is walked whole; beyond that the compiler's names stay
_MAX_OBJECTS = 200_000
_CONTAINERS = (list, tuple, dict)


def _children(obj: object) -> Iterable[tuple[str | int, object]]:
    if isinstance(obj, brainstate.graph.Node):
        # the attributes brainstate's graph walks (less those a class keeps out of it), in definition order;
        # a brainstate before graph_invisible_attrs hides none
        hidden = getattr(obj, "graph_invisible_attrs", ())
        items: Iterable[tuple[str | int, object]] = ((k, v) for k, v in vars(obj).items() if k not in hidden)
    elif isinstance(obj, dict):
        items = ((k, v) for k, v in obj.items() if isinstance(k, (str, int)))
    elif isinstance(obj, (list, tuple)):
        items = enumerate(obj)
    else:
        return ()
    # what can hold a state: modules, states and the containers of either (not arrays or numbers)
    return ((k, v) for k, v in items if isinstance(v, (brainstate.graph.Node, brainstate.State, *_CONTAINERS)))


def _rank(path: StatePath) -> tuple[int, int]:
    """Shorter first; at one length, fewer list items and dict keys (brainstate.nn.Map keeps each state
    it batched both at ``module.rnn.h`` and in its ``dict_vmap_states[0][0]``: the attribute path is
    the user's)."""
    return len(path), sum(1 for part in path if isinstance(part, int) or not str(part).isidentifier())


def shorter_paths(model: brainstate.nn.Module, states: dict[StatePath, brainstate.State[object]]
                  ) -> dict[StatePath, StatePath]:
    """For each of ``states`` (the compiler's path -> state) reachable along a shorter path of
    attributes, list items and dict keys: compiler path -> that path."""
    wanted = {id(state): path for path, state in states.items()}
    found: dict[StatePath, StatePath] = {}
    seen = {id(model)}
    queue: deque[tuple[object, StatePath]] = deque([(model, ())])
    while queue and len(seen) < _MAX_OBJECTS:
        obj, path = queue.popleft()
        for key, child in _children(obj):
            if id(child) in seen:
                continue
            seen.add(id(child))
            here = (*path, key)
            if isinstance(child, brainstate.State):
                compiler_path = wanted.get(id(child))
                if compiler_path is not None and _rank(here) < _rank(compiler_path):
                    found[compiler_path] = here
            else:
                queue.append((child, here))
    return found
