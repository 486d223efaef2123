"""Code flows: the route a finding describes, as steps in the user's code.

A rule whose message is about a route from a weight to a hidden state (or to
the step's output) names :func:`weight_flow` as its ``flow``; the engine
calls :func:`flow_for` with the record or hit it turned into a finding. The
steps, in data-flow order: where the weight is created, the op that uses it,
each ETP op of another weight and each control-flow boundary its value
crosses, and where the hidden state gets its new value. Only lines of the
user's code are kept (library frames are skipped by the locator), and
consecutive steps on one line are merged.
"""

from __future__ import annotations

import dataclasses
import weakref
from collections import deque
from typing import TYPE_CHECKING, Any, Iterable, Mapping

from ..core.details import Boundary
from ..core.findings import Finding, Location
from ..core.naming import StatePath, display_name
from ..core.rule import Hit, Rule, rule_flow

if TYPE_CHECKING:  # the engine's Locator and the record views' package import braintrace; annotations only
    from .braintrace_adapter import RecordView
    from .locate import Locator

MAX_STEPS = 64  # a route longer than this is cut in the middle: its ends say the most
_BOUNDARIES = {"while": "a `while` loop", "scan": "a `scan`", "cond": "a `cond`",
               "custom_jvp_call": "a custom-derivative function", "custom_vjp_call": "a custom-derivative function",
               "custom_vjp_call_jaxpr": "a custom-derivative function"}


def merge_steps(steps: Iterable[Location | None]) -> tuple[Location, ...]:
    """Steps without the unknown ones, consecutive steps on one line merged (labels joined)."""
    merged: list[Location] = []
    for step in steps:
        if step is None:
            continue
        last = merged[-1] if merged else None
        if last is not None and (last.path, last.line) == (step.path, step.line):
            if step.label and step.label not in last.label:
                label = f"{last.label}; {step.label}" if last.label else step.label
                merged[-1] = dataclasses.replace(last, label=label)
            continue
        merged.append(step)
    if len(merged) > MAX_STEPS:
        half = MAX_STEPS // 2
        merged = merged[:half] + merged[-half:]
    return tuple(merged)


def _route(locator: Locator, start: Any, targets: set[int]) -> list[Any]:
    """The top-level equations (EqnSites) from ``start`` to the first that writes one of ``targets``
    (var ids), by the fewest equations; empty when none is reached."""
    from . import jaxpr_view as jv  # imports JAX; a cached run must not

    top = start.parents[0] if start.parents else start.eqn
    first = jv.EqnSite(top)
    if any(id(v) in targets for v in jv.outvars(top)):
        return [first]
    previous: dict[int, Any] = {id(top): None}
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
                    while previous[id(route[-1].eqn)] is not None:
                        route.append(previous[id(route[-1].eqn)])
                    return route[::-1]
                queue.append(consumer)
    return []


def _weight_of(locator: Locator, eqn: Any) -> StatePath | None:
    from . import jaxpr_view as jv  # imports JAX; a cached run must not

    for var in jv.invars(eqn):
        path = locator.weight_path_of_var(var)
        if path:
            return path
    return None


def weight_flow(locator: Locator, subject: RecordView | Hit[Any]) -> tuple[Location, ...]:
    """The route of a weight (a compiler record's ``weight_path``, a hit's ``weight_path``) to the
    hidden states a record names (else any hidden state), through its use (a hit's equation; else
    the weight's first use), past the blocking weights a record names."""
    from . import braintrace_adapter as bt  # imports JAX; a cached run must not
    from . import jaxpr_view as jv  # imports JAX; a cached run must not

    hidden: set[StatePath] = set()
    context: Mapping[str, Any] = {}
    if isinstance(subject, Hit):
        weight, use = tuple(subject.weight_path or ()), subject.eqn
    else:
        weight, use = subject.weight_path, None
        hidden = {tuple(p) for p in subject.hidden_paths}
        context = subject.context
    if not weight or locator.module_info is None:
        return ()
    name = display_name(weight)
    if use is not None and not isinstance(use, jv.EqnSite):
        use = jv.EqnSite(use)
    if use is None:
        sites = locator.weight_sites(weight)
        use = sites[0] if sites else None
    steps = [locator.of_state(weight, f"{name} is created here")]
    if use is None:
        return merge_steps(steps)
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
    return merge_steps(steps)


# per locator and primitive: (path, line) of an op -> the boundaries around it (built on first use)
_RegionIndex = dict[tuple[str, int], tuple[Boundary, ...]]
_REGION_INDEXES: "weakref.WeakKeyDictionary[Locator, dict[str, _RegionIndex]]" = weakref.WeakKeyDictionary()


def _boundaries_of(locator: Locator, site: Any) -> list[tuple[str, Location, str]]:
    """(kind, where, jit name) of the control flow, jit calls and mappings around one equation of the
    step as traced, outermost first."""
    from . import jaxpr_view as jv  # imports JAX: a cached run never reaches here

    found: list[tuple[str, Location, str]] = []
    outermost = site.parents[0] if site.parents else site.eqn
    calls = locator._jit_parents(outermost)  # jit calls the compiler inlined before the step was kept
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
        for site in locator._sites_named(primitive, traced=True):
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


def _with_control_flow(finding: Finding, locator: Locator) -> Finding:
    try:
        boundaries = enclosing_control_flow(locator, finding)
    except Exception:  # a step this JAX lays out otherwise: the finding stays as it is
        return finding
    if not boundaries:
        return finding
    return dataclasses.replace(finding, control_flow=boundaries)


def flow_for(rule: Rule, finding: Finding, locator: Locator, subject: RecordView | Hit[Any]) -> Finding:
    """``finding`` with the route its rule's ``flow`` finds for ``subject`` (a record or a hit), and the
    control flow around its op (``control_flow``)."""
    finding = _with_control_flow(finding, locator)
    flow = rule_flow(rule)
    if flow is None or finding.flow:
        return finding
    try:
        steps = flow(locator, subject)
    except Exception:  # a route that cannot be worked out leaves the finding as it is
        return finding
    return dataclasses.replace(finding, flow=tuple(steps)) if len(steps) > 1 else finding
