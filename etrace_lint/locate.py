"""Turn what the compiler talks about (weight paths, vars, equations, states)
into lines of the user's file.

Order of preference: the equation where the thing was written, then the line
where its state was created, then the factory's line.
"""

from __future__ import annotations

from typing import Any

from . import braintrace_adapter as bt
from . import jaxpr_view as jv
from .findings import Location


def _as_location(frame: jv.SourceFrame | None, label: str = "") -> Location | None:
    if frame is None:
        return None
    return Location(frame.path, frame.line, frame.column, label)


class Locator:
    """Answers "where in the user's code" for one compiled model."""

    def __init__(self, model: Any, module_info: Any, factory_location: Location, traced_jaxpr: Any = None):
        self.factory = factory_location
        self.states = bt.model_states(model)
        self.module_info = module_info
        self._sites = list(jv.walk(bt.traced_jaxpr(module_info))) if module_info is not None else []
        # before canonicalisation: the conds and scans the compiler rewrote are still there
        self._traced_sites = list(jv.walk(traced_jaxpr)) if traced_jaxpr is not None else self._sites
        self._consumers: dict[int, list[jv.EqnSite]] | None = None
        self._weight_var_to_path = bt.weight_invars(module_info) if module_info is not None else {}

    @property
    def sites(self) -> list[jv.EqnSite]:
        return self._sites

    def _consumer_table(self) -> dict[int, list[jv.EqnSite]]:
        if self._consumers is None:
            table: dict[int, list[jv.EqnSite]] = {}
            for site in self._sites:
                for var in jv.invars(site.eqn):
                    table.setdefault(id(var), []).append(site)
            self._consumers = table
        return self._consumers

    def consumers(self, var: Any) -> list[jv.EqnSite]:
        return self._consumer_table().get(id(var), [])

    # ------------------------------------------------------------------ lookups

    def of_site(self, site: jv.EqnSite, label: str = "") -> Location | None:
        return _as_location(jv.eqn_location(site), label)

    def of_state(self, path: tuple | None, label: str = "") -> Location | None:
        if path is None:
            return None
        state = self.states.get(tuple(path))
        if state is None:
            return None
        return _as_location(jv.user_frame_of(bt.state_source_info(state)), label)

    def of_state_object(self, state: Any, label: str = "") -> Location | None:
        return _as_location(jv.user_frame_of(bt.state_source_info(state)), label)

    def weight_sites(self, path: tuple, primitive_name: str = "") -> list[jv.EqnSite]:
        """Equations consuming a weight's vars, ETP ops first."""
        vars_ = [v for v, p in self._weight_var_to_path.items() if p == tuple(path)]
        sites = [s for v in vars_ for s in self.consumers(v)]
        if primitive_name:
            named = [s for s in sites if jv.primitive_name(s.eqn) == primitive_name]
            sites = named or sites
        return sorted(sites, key=lambda s: not bt.is_etp_primitive(s.eqn))

    def of_weight(self, path: tuple | None, primitive_name: str = "", label: str = "") -> Location | None:
        if path is None:
            return None
        for site in self.weight_sites(path, primitive_name):
            loc = self.of_site(site, label)
            if loc is not None:
                return loc
        return self.of_state(path, label)

    def of_var(self, var: Any, primitive_name: str = "", label: str = "") -> Location | None:
        for site in self.consumers(var):
            if primitive_name and jv.primitive_name(site.eqn) != primitive_name:
                continue
            loc = self.of_site(site, label)
            if loc is not None:
                return loc
        path = self._weight_var_to_path.get(var)
        return self.of_state(path, label) if path else None

    def of_primitive(self, primitive_name: str, label: str = "") -> Location | None:
        for site in self._sites:
            if jv.primitive_name(site.eqn) == primitive_name:
                loc = self.of_site(site, label)
                if loc is not None:
                    return loc
        return None

    def of_nth_primitive(self, primitive_name: str, ordinal: int, label: str = "") -> Location | None:
        """The ``ordinal``-th equation of a primitive in the step as traced (before rewriting)."""
        sites = [s for s in self._traced_sites if jv.primitive_name(s.eqn) == primitive_name]
        if not sites:
            return None
        return self.of_site(sites[min(ordinal, len(sites) - 1)], label)

    def first(self, *candidates: Location | None) -> Location:
        for candidate in candidates:
            if candidate is not None:
                return candidate
        return self.factory
