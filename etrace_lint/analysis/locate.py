"""Turn what the compiler talks about (equations, weight paths, vars, states)
into lines of the user's file.

Order of preference: the equation where the thing was computed, then the line
where its state was created (for a state a library module creates, such as a
neuron's ``V``, the line where the model's class put that module in place),
then the factory's line.

The compiler rewrites the jaxpr before it analyses it: jit calls are inlined,
conds if-converted, short scans unrolled. Equations keep their source info
through every rewrite, but an equation of a cached jit body only knows the
frames inside that body; the jit call around it, which exists only in the
jaxpr as traced, is where such an equation is recovered.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.findings import Location
from ..core.naming import StatePath, display_name, preferred_path
from . import braintrace_adapter as bt
from . import jaxpr_view as jv
from .assignments import Assignments

if TYPE_CHECKING:  # the model's class, for annotations only
    import brainstate


# equations that only lay a value out again: the weight behind ``w.value.T`` is ``w``
_LAYOUT = frozenset({"transpose", "reshape", "convert_element_type", "broadcast_in_dim", "squeeze", "expand_dims",
                     "copy", "copy_p"})


def _as_location(frame: jv.SourceFrame | None, label: str = "") -> Location | None:
    if frame is None:
        return None
    return Location(frame.path, frame.line, frame.column, label)


_JitCalls = dict[int, tuple[jv.JaxprEqn, ...]]  # id of an equation (or of its source info) -> the jit calls around it


class Locator:
    """Answers "where in the user's code" for one compiled model."""

    def __init__(self, model: brainstate.nn.Module, module_info: bt.ModuleInfo | None, factory_location: Location,
                 traced_jaxpr: jv.JaxprLike | None = None, raw_jaxpr: jv.JaxprLike | None = None):
        # Every table below is built on first use: most models are placed by
        # a few lookups, and a lint must not walk the jaxpr more than it needs.
        self.factory = factory_location
        # the factory's line, or where a program compiled the model (``etrace-lint run``): its own label
        self.factory_related = Location(factory_location.path, factory_location.line, factory_location.column,
                                        factory_location.label or "target factory")
        self.module_info = module_info
        self._model = model
        self._assignments = Assignments(model)
        self._states: dict[StatePath, bt.ModelState] | None = None
        self._named: dict[str, StatePath] | None = None
        self._site_of: dict[int, jv.EqnSite] | None = None  # by id() of its equation, which self.sites keeps alive
        self._compiled_states = bt.compiled_states(module_info) if module_info is not None else {}
        self._sites: list[jv.EqnSite] | None = None
        self._consumers: dict[int, list[jv.EqnSite]] | None = None
        self._weight_vars: dict[StatePath, list[jv.Var]] | None = None
        self._state_frames: dict[int, jv.SourceFrame | None] = {}
        self._weight_site_cache: dict[tuple[StatePath, str], list[jv.EqnSite]] = {}
        self._weight_location_cache: dict[StatePath, Location | None] = {}
        self._by_primitive: dict[str, list[jv.EqnSite]] = {}
        self._traced_by_primitive: dict[str, list[jv.EqnSite]] = {}
        self._producers: dict[int, jv.EqnSite] | None = None
        self._weight_var_to_path = bt.weight_invars(module_info) if module_info is not None else {}
        # the step's jaxpr before canonicalisation (the conds and scans the compiler rewrote are still
        # there) and before jit inlining, when known
        self._traced_jaxpr = traced_jaxpr
        self._raw_jaxpr = raw_jaxpr
        self._traced_site_list: list[jv.EqnSite] | None = None
        self._jit_index: tuple[_JitCalls, _JitCalls] | None = None
        self._copies: dict[tuple[str, int], list[jv.JaxprEqn]] = {}
        # keeps the equations behind the id() keys of the jit tables alive
        self._alive: tuple[list[jv.EqnSite], list[jv.JaxprEqn]] = ([], [])

    @property
    def states(self) -> dict[StatePath, bt.ModelState]:
        """Every state of the model by path (a walk of the model, made once when asked)."""
        if self._states is None:
            self._states = bt.model_states(self._model)
        return self._states

    def _state_at(self, path: StatePath) -> bt.ModelState | None:
        found = self._compiled_states.get(path)
        return found if found is not None else self.states.get(path)

    def state_role(self, path: StatePath) -> str:
        """What the state at ``path`` is: ``weight``, ``hidden`` or ``other`` (:func:`bt.state_role`); ""
        when neither the model nor the compiled step holds one there."""
        state = self._state_at(tuple(path))
        return bt.state_role(state) if state is not None else ""

    def path_of_state(self, state_id: int) -> StatePath | None:
        """The path of the model's state whose ``id()`` is ``state_id`` (a write the step made to it)."""
        for path, state in (*self._compiled_states.items(), *self.states.items()):
            if id(state) == state_id:
                return path
        return None

    def paths_named(self, names: tuple[str, ...]) -> tuple[StatePath, ...]:
        """The paths of the states a finding shows as ``names``, in their order; none unless every name is
        one of the model's states (a path is a fact, never a guess)."""
        if self._named is None:
            self._named = {}
            for path in (*self._compiled_states, *self.states):
                self._named.setdefault(display_name(path), path)
        paths = tuple(self._named.get(name) for name in names)
        return tuple(path for path in paths if path is not None) if all(paths) else ()

    def _jit_tables(self) -> tuple[_JitCalls, _JitCalls]:
        """The jit calls around each equation of the inlined step, by equation and by source info."""
        if self._jit_index is not None:
            return self._jit_index
        by_eqn: _JitCalls = {}
        by_source: _JitCalls = {}
        if self._raw_jaxpr is not None:
            flat = list(jv.flatten_jit_calls(self._raw_jaxpr))
            inlined = self._traced_jaxpr if self._traced_jaxpr is not None else (
                bt.traced_jaxpr(self.module_info) if self.module_info is not None else None)
            top = list(jv.open_jaxpr(inlined).eqns) if inlined is not None else []
            # inlining turns each non-jit equation into exactly one equation, in order
            if len(top) == len(flat):
                for eqn, site in zip(top, flat):
                    if site.parents:
                        by_eqn[id(eqn)] = site.parents
            for site in flat:
                if site.parents:
                    by_source.setdefault(id(site.eqn.source_info), site.parents)
            self._alive = (flat, top)
        self._jit_index = (by_eqn, by_source)
        return self._jit_index

    def jit_parents(self, eqn: jv.JaxprEqn) -> tuple[jv.JaxprEqn, ...]:
        """The jit calls around ``eqn`` that the compiler inlined before the step was kept."""
        by_eqn, by_source = self._jit_tables()
        return by_eqn.get(id(eqn)) or by_source.get(id(eqn.source_info), ())

    @property
    def sites(self) -> list[jv.EqnSite]:
        """Every equation of the traced step, with the loop and branch bodies around it, in the step's order."""
        if self._sites is None:
            self._sites = list(jv.walk(bt.traced_jaxpr(self.module_info))) if self.module_info is not None else []
        return self._sites

    @property
    def _traced_sites(self) -> list[jv.EqnSite]:
        if self._traced_jaxpr is None:
            return self.sites
        if self._traced_site_list is None:
            self._traced_site_list = list(jv.walk(self._traced_jaxpr))
        return self._traced_site_list

    def _consumer_table(self) -> dict[int, list[jv.EqnSite]]:
        if self._consumers is None:
            table: dict[int, list[jv.EqnSite]] = {}
            for site in self.sites:
                for var in jv.invars(site.eqn):
                    table.setdefault(id(var), []).append(site)
            self._consumers = table
        return self._consumers

    def consumers(self, var: jv.Atom) -> list[jv.EqnSite]:
        """The equations that read ``var`` (an empty list for a var the step only returns)."""
        return self._consumer_table().get(id(var), [])

    def producer(self, var: jv.Atom) -> jv.EqnSite | None:
        """The equation that computes ``var``; None for an input of the step (a state's value at its start)."""
        if self._producers is None:
            self._producers = {id(v): site for site in self.sites for v in jv.outvars(site.eqn)}
        return self._producers.get(id(var))

    def of_state_use(self, state: bt.ModelState, label: str = "") -> Location | None:
        """The user's line of the first equation of the step that reads ``state``."""
        if self.module_info is None:
            return None
        for var in bt.state_invars(self.module_info, state):
            for site in self.consumers(var):
                location = self.of_site(site, label)
                if location is not None:
                    return location
        return None

    def weight_behind(self, var: jv.Var, layout: frozenset[str] = _LAYOUT) -> StatePath | None:
        """The ParamState path whose value ``var`` is, through layout-only equations (``w.value.T``)."""
        for _ in range(16):
            path = self.weight_path_of_var(var)
            if path is not None:
                return path
            site = self.producer(var)
            if site is None or jv.primitive_name(site.eqn) not in layout or not jv.invars(site.eqn):
                return None
            var = jv.invars(site.eqn)[0]
        return None

    def weights_read_by(self, eqn: jv.JaxprEqn) -> tuple[StatePath, ...]:
        """The ParamStates whose values an equation reads, through layout-only equations and out of the loop
        and branch bodies around it (an ETP op in a while body reads the weight the loop was handed)."""
        if self._site_of is None:
            self._site_of = {id(s.eqn): s for s in self.sites}
        site = self._site_of.get(id(eqn))
        parents = site.parents if site is not None and site.eqn is eqn else ()
        found = (self._weight_in_scope(var, list(parents)) for var in jv.invars(eqn) if jv.is_var(var))
        return tuple(dict.fromkeys(path for path in found if path is not None))

    def _weight_in_scope(self, var: jv.Var, parents: list[jv.JaxprEqn]) -> StatePath | None:
        for _ in range(64):
            path = self.weight_behind(var)
            if path is not None:
                return path
            for _ in range(16):  # to the value the layout-only equations start from
                site = self.producer(var)
                if site is None or jv.primitive_name(site.eqn) not in _LAYOUT or not jv.invars(site.eqn):
                    break
                var = jv.invars(site.eqn)[0]
            if not parents or self.producer(var) is not None:
                return None
            parent = parents.pop()
            outer = next((atom for binding in jv.sub_jaxpr_bindings(parent) or () for atom, inner in binding.inputs
                          if inner is var), None)
            if outer is None or not jv.is_var(outer):
                return None
            var = outer
        return None

    # ------------------------------------------------------------------ lookups

    def of_site(self, site: jv.EqnSite, label: str = "") -> Location | None:
        """The user's line of an equation (the innermost frame of the user's code that made it)."""
        frame = jv.eqn_location(site)
        if frame is None:
            # a cached jit body only knows its own frames: the jit calls around it know the user's line
            calls = self.jit_parents(site.parents[0] if site.parents else site.eqn)
            if calls:
                frame = jv.eqn_location(jv.EqnSite(calls[-1], calls[:-1]))
        return _as_location(frame, label)

    def of_eqn(self, eqn: jv.JaxprEqn | None, label: str = "") -> Location | None:
        """An equation met outside a walk (the one a compiler pass was working on)."""
        return None if eqn is None else self.of_site(jv.EqnSite(eqn), label)

    def of_state(self, path: StatePath | None, label: str = "") -> Location | None:
        """Where the state was created when that is in one of the model's own classes; else where a
        class of the model put in place the library module holding it (``self.neu = bps.LIF(...)``)."""
        if path is None:
            return None
        path = tuple(path)
        state = self._state_at(path)
        if state is None:
            return None
        created = self.of_state_object(state, label)
        assigned, spans = self._assignments.holder(preferred_path(path))
        if assigned is None or (created is not None and any(
                created.path == file and first <= created.line <= last for file, first, last in spans)):
            return created
        return Location(assigned.path, assigned.line, assigned.column, label)

    def of_state_object(self, state: bt.ModelState, label: str = "") -> Location | None:
        """Where a state was created; decoded once per state (many records name the same one)."""
        key = id(state)
        try:
            frame = self._state_frames[key]
        except KeyError:
            frame = self._state_frames[key] = jv.user_frame_of(bt.state_source_info(state))
        return None if frame is None else Location(frame.path, frame.line, frame.column, label)

    @property
    def weight_vars(self) -> dict[StatePath, list[jv.Var]]:
        """ParamState path -> its input vars in the traced step: the weights the step reads (the context's
        ``weight_paths`` is this table)."""
        if self._weight_vars is None:
            table: dict[StatePath, list[jv.Var]] = {}
            for var, weight in self._weight_var_to_path.items():
                table.setdefault(tuple(weight), []).append(var)
            self._weight_vars = table
        return self._weight_vars

    def _vars_of_weight(self, path: StatePath) -> list[jv.Var]:
        return self.weight_vars.get(tuple(path), [])

    def weight_sites(self, path: StatePath, primitive_name: str = "") -> list[jv.EqnSite]:
        """Equations consuming a weight's vars, ETP ops first."""
        key = (tuple(path), primitive_name)
        if key not in self._weight_site_cache:
            sites = [s for v in self._vars_of_weight(path) for s in self.consumers(v)]
            if primitive_name:
                named = [s for s in sites if jv.primitive_name(s.eqn) == primitive_name]
                sites = named or sites
            self._weight_site_cache[key] = sorted(sites, key=lambda s: not bt.is_etp_primitive(s.eqn))
        return self._weight_site_cache[key]

    def of_weight(self, path: StatePath | None, primitive_name: str = "", label: str = "") -> Location | None:
        """The first line that applies the weight (an ETP op first, or the ``primitive_name`` op), else its creation."""
        if path is None:
            return None
        key = (tuple(path), primitive_name)
        if key not in self._weight_location_cache:
            found = None
            for site in self.weight_sites(path, primitive_name):
                found = self.of_site(site)
                if found is not None:
                    break
            self._weight_location_cache[key] = found or self.of_state(path)
        found = self._weight_location_cache[key]
        return Location(found.path, found.line, found.column, label) if found is not None else None

    def of_var(self, var: jv.Var, primitive_name: str = "", label: str = "") -> Location | None:
        """The user's line of the first equation that reads ``var`` (the ``primitive_name`` one, if given)."""
        for site in self.consumers(var):
            if primitive_name and jv.primitive_name(site.eqn) != primitive_name:
                continue
            loc = self.of_site(site, label)
            if loc is not None:
                return loc
        path = self._weight_var_to_path.get(var)
        return self.of_state(path, label) if path else None

    def of_producer(self, var: jv.Atom, label: str = "") -> Location | None:
        """The user's line of the equation that computes ``var``."""
        site = self.producer(var)
        return self.of_site(site, label) if site is not None else None

    def sites_named(self, primitive_name: str, traced: bool = False) -> list[jv.EqnSite]:
        """Sites of one primitive, indexed once per jaxpr (records ask for many)."""
        index = self._traced_by_primitive if traced else self._by_primitive
        if not index:
            for site in (self._traced_sites if traced else self.sites):
                index.setdefault(jv.primitive_name(site.eqn), []).append(site)
            index.setdefault("", [])
        return index.get(primitive_name, [])

    def of_primitive(self, primitive_name: str, label: str = "") -> Location | None:
        """The user's line of the first ``primitive_name`` equation of the step."""
        for site in self.sites_named(primitive_name):
            loc = self.of_site(site, label)
            if loc is not None:
                return loc
        return None

    def _touches_learning(self, eqn: jv.JaxprEqn) -> bool:
        """The compiler's own test for control flow it must canonicalise."""
        minfo = self.module_info
        assert minfo is not None  # only a traced step has equations to ask about
        watched = set(self._weight_var_to_path) | set(bt.hidden_invars(minfo))
        if any(v in watched for v in jv.invars(eqn)):
            return True
        if any(v in bt.hidden_outvars(minfo) for v in jv.outvars(eqn)):
            return True
        return any(bt.is_etp_primitive(s.eqn) for sub in jv.sub_jaxprs(eqn) for s in jv.walk(sub))

    def of_nth_control_flow(self, primitive_name: str, ordinal: int, label: str = "") -> Location | None:
        """The ``ordinal``-th top-level ``primitive_name`` equation the compiler had to look at.

        Skip records are emitted after canonicalisation settles, one per
        surviving equation in jaxpr order, without naming the equation.
        """
        site = self.nth_control_flow(primitive_name, ordinal)
        if site is not None:
            return self.of_site(site, label)
        return self.of_nth_primitive(primitive_name, ordinal, label)

    def nth_control_flow(self, primitive_name: str, ordinal: int) -> jv.EqnSite | None:
        """The equation :meth:`of_nth_control_flow` places a record on, when the step was traced."""
        if self.module_info is None:
            return None
        relevant = [s for s in self.sites if not s.parents and jv.primitive_name(s.eqn) == primitive_name
                    and self._touches_learning(s.eqn)]
        return relevant[min(ordinal, len(relevant) - 1)] if relevant else None

    def weight_path_of_var(self, var: jv.Var) -> StatePath | None:
        """The ParamState path behind an input var of the step (a record's ``invar``)."""
        try:
            return self._weight_var_to_path.get(var)
        except TypeError:  # not a var
            return None

    def unrolled_iteration(self, eqn: jv.JaxprEqn | None) -> tuple[int, int]:
        """(1-based index, count) of ``eqn`` among the copies of its source line's op that an
        unrolled scan left in the step; (1, 1) when the op has no copies (or no equation is known)."""
        if eqn is None:
            return 1, 1
        key = (jv.primitive_name(eqn), id(eqn.source_info.traceback) if eqn.source_info else 0)
        copies = self._copies.get(key)
        if copies is None:
            copies = self._copies[key] = [
                s.eqn for s in self.sites_named(key[0])
                if (id(s.eqn.source_info.traceback) if s.eqn.source_info else 0) == key[1]]
        for index, copy in enumerate(copies):
            if copy is eqn:
                return index + 1, len(copies)
        return 1, 1

    def of_primitive_on_hidden_path(self, primitive_name: str, hidden_paths: list[StatePath],
                                    label: str = "") -> Location | None:
        """The first ``primitive_name`` equation that reads one of ``hidden_paths`` (directly or
        through the equations before it): an op of those states' transition."""
        if self.module_info is None:
            return None
        reached = {var for var, path in bt.hidden_invars(self.module_info).items() if path in set(hidden_paths)}
        if not reached:
            return None
        for eqn in jv.open_jaxpr(bt.traced_jaxpr(self.module_info)).eqns:
            if not any(v in reached for v in jv.invars(eqn)):
                continue
            if jv.primitive_name(eqn) == primitive_name:
                found = self.of_eqn(eqn, label)
                if found is not None:
                    return found
            reached.update(jv.outvars(eqn))
        return None

    def of_nth_primitive(self, primitive_name: str, ordinal: int, label: str = "") -> Location | None:
        """The ``ordinal``-th equation of a primitive in the step as traced (before rewriting)."""
        sites = self.sites_named(primitive_name, traced=True)
        if not sites:
            return None
        return self.of_site(sites[min(ordinal, len(sites) - 1)], label)

    def first(self, *candidates: Location | None) -> Location:
        for candidate in candidates:
            if candidate is not None:
                return candidate
        return self.factory
