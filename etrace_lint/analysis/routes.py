"""The JAX side of :mod:`.flows`: the equations from a weight's use to the hidden state it reaches,
and the control flow around an op, read off the traced step.

Imports JAX (through :mod:`.jaxpr_view` and the braintrace adapter), as the engine that calls
:mod:`.flows` does.
"""

from __future__ import annotations

import weakref
from collections import deque
from typing import Any, Mapping

from ..core.details import Boundary, Violation
from ..core.findings import Finding, Location
from ..core.naming import StatePath, display_name
from ..core.rule import Hit
from . import braintrace_adapter as bt
from . import jaxpr_view as jv
from .braintrace_adapter import RecordView
from .locate import Locator

_BOUNDARIES = {"while": "a `while` loop", "scan": "a `scan`", "cond": "a `cond`",
               "custom_jvp_call": "a custom-derivative function", "custom_vjp_call": "a custom-derivative function",
               "custom_vjp_call_jaxpr": "a custom-derivative function"}


def _route(locator: Locator, start: jv.EqnSite, targets: set[int]) -> list[jv.EqnSite]:
    """The top-level equations (EqnSites) from ``start`` to the first that writes one of ``targets``
    (var ids), by the fewest equations; empty when none is reached."""
    top = start.parents[0] if start.parents else start.eqn
    first = jv.EqnSite(top)
    if any(id(v) in targets for v in jv.outvars(top)):
        return [first]
    previous: dict[int, jv.EqnSite | None] = {id(top): None}
    sites = {id(top): first}
    queue = deque([first])
    while queue:
        site = queue.popleft()
        for var in jv.outvars(site.eqn):
            for consumer in locator.consumers(var):
                if consumer.parents or id(consumer.eqn) in previous:
                    continue
                previous[id(consumer.eqn)] = site
                sites[id(consumer.eqn)] = consumer
                if any(id(v) in targets for v in jv.outvars(consumer.eqn)):
                    route = [consumer]
                    before = previous[id(consumer.eqn)]
                    while before is not None:
                        route.append(before)
                        before = previous[id(before.eqn)]
                    return route[::-1]
                queue.append(consumer)
    return []


def _weight_of(locator: Locator, eqn: jv.JaxprEqn) -> StatePath | None:
    for var in jv.invars(eqn):
        path = locator.weight_path_of_var(var)
        if path:
            return path
    return None


def weight_route(locator: Locator, subject: RecordView | Hit[Violation]) -> list[Location | None]:
    """The steps of :func:`~.flows.weight_flow`, unmerged (a step the locator cannot place is None)."""
    hidden: set[StatePath] = set()
    context: Mapping[str, Any] = {}  # the record's context, braintrace's open dict
    use: jv.EqnSite | None = None
    if isinstance(subject, Hit):
        weight = tuple(subject.weight_path or ())
        if isinstance(subject.eqn, jv.EqnSite):
            use = subject.eqn
        elif isinstance(subject.eqn, jv.JaxprEqn):
            use = jv.EqnSite(subject.eqn)
    else:
        weight = subject.weight_path
        hidden = {tuple(p) for p in subject.hidden_paths}
        context = subject.context
    if not weight or locator.module_info is None:
        return []
    name = display_name(weight)
    if use is None:
        sites = locator.weight_sites(weight)
        use = sites[0] if sites else None
    steps = [locator.of_state(weight, f"{name} is created here")]
    if use is None:
        return steps
    steps.append(locator.of_site(use, f"{name} is used here"))
    outvars = bt.hidden_outvars(locator.module_info)
    targets = {id(v): path for v, path in outvars.items() if not hidden or path in hidden}
    route = _route(locator, use, set(targets))
    crossed = set()
    for site in route[1:-1] if len(route) > 1 else ():
        primitive = jv.primitive_name(site.eqn)
        if bt.is_etp_primitive(site.eqn):
            other = _weight_of(locator, site.eqn)
            if other and other != weight:
                crossed.add(other)
                steps.append(locator.of_site(site, f"its value crosses {display_name(other)}'s op"))
        elif primitive in _BOUNDARIES:
            steps.append(locator.of_site(site, f"its value crosses {_BOUNDARIES[primitive]}"))
    for blocking in context.get("blocking_weight_paths", ()) or ():
        if blocking and tuple(blocking) not in crossed:
            steps.append(locator.of_weight(tuple(blocking), label=f"its value crosses {display_name(blocking)}'s op"))
    if route:
        last = route[-1]
        written = [targets[id(v)] for v in jv.outvars(last.eqn) if id(v) in targets]
        steps.append(locator.of_site(last, f"{display_name(written[0])} gets its new value here"))
    else:  # a route to the step's output instead (a same-step bypass)
        outputs = {id(v) for v in jv.open_jaxpr(bt.traced_jaxpr(locator.module_info)).outvars}
        route = _route(locator, use, outputs)
        if route:
            steps.append(locator.of_site(route[-1], "it reaches the step's output here"))
    return steps


# per locator and primitive: (path, line) of an op -> the boundaries around it (built on first use)
_RegionIndex = dict[tuple[str, int], tuple[Boundary, ...]]
_REGION_INDEXES: "weakref.WeakKeyDictionary[Locator, dict[str, _RegionIndex]]" = weakref.WeakKeyDictionary()


def _boundaries_of(locator: Locator, site: jv.EqnSite) -> list[tuple[str, Location, str]]:
    """(kind, where, jit name) of the control flow, jit calls and mappings around one equation of the
    step as traced, outermost first."""
    found: list[tuple[str, Location, str]] = []
    outermost = site.parents[0] if site.parents else site.eqn
    calls = locator.jit_parents(outermost)  # jit calls the compiler inlined before the step was kept
    chain = (*calls, *site.parents)
    for index, eqn in enumerate(chain):
        kind = jv.BOUNDARY_PRIMITIVES.get(jv.primitive_name(eqn))
        where = locator.of_site(jv.EqnSite(eqn, chain[:index])) if kind else None
        if kind and where is not None:
            found.append((kind, where, str(eqn.params.get("name", "")) if kind == "jit" else ""))
    mapped = jv.mapping_call(site.eqn.source_info)
    if mapped is not None:
        kind, frame = mapped
        found.append((kind, Location(frame.path, frame.line, frame.column), ""))
    return found


def _boundary(kind: str, where: Location, name: str, path: str) -> Boundary:
    # a boundary in another file than the op: the file's name tells them apart
    file = where.path.replace("\\", "/").rsplit("/", 1)[-1] if where.path != path else ""
    return Boundary(kind, where.line, where.column, name, file)


def enclosing_control_flow(locator: Locator, finding: Finding) -> tuple[Boundary, ...]:
    """The boundaries around the op a finding is about (its ``primitive`` on its line), outermost
    first: scan, while, cond, jit, vmap, Map, ...

    Read off the step as traced, before the compiler unrolled scans and
    converted conds: the body a user wrote the op in is the one they look for.
    """
    primitive = finding.subject.primitive
    if not primitive or locator.module_info is None:
        return ()
    indexes = _REGION_INDEXES.setdefault(locator, {})
    index = indexes.get(primitive)
    if index is None:
        index = indexes[primitive] = {}
        for site in locator.sites_named(primitive, traced=True):
            boundaries = _boundaries_of(locator, site)
            where = locator.of_site(site) if boundaries else None
            if where is None:
                continue
            # a jit call on the op's own line is a library's jitted helper (brainevent's kernels), not
            # a body the user wrote: the op is that call
            boundaries = [(kind, at, name) for kind, at, name in boundaries
                          if kind != "jit" or (at.path, at.line) != (where.path, where.line)]
            if boundaries:
                index.setdefault((where.path, where.line),
                                 tuple(_boundary(kind, at, name, where.path) for kind, at, name in boundaries))
    return index.get((finding.path, finding.line), ())

