"""Var-level data flow of the traced step, nested jaxprs included: which weights each var carries and
which vars depend on which (:class:`StepFlow`), for the analysis's facts to follow a weight to the hidden
states it reaches, and to ask, given the values whose derivative is zero, whose gradient reaches the loss
(:class:`GradientWalk`: the weights every path of which crosses one, :meth:`GradientWalk.starved_weights`;
whether any value passes one back, :meth:`GradientWalk.passes_gradient`)."""

from __future__ import annotations

import functools
from collections.abc import Collection, Container, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

from ..core.naming import StatePath
from . import braintrace_adapter as bt
from . import jaxpr_view as jv

# Primitives that only move or re-type data: a weight passing through them is
# still "the weight" (the compiler traces through the same kind of chain).
LAYOUT_PRIMITIVES = frozenset({
    "reshape", "convert_element_type", "broadcast_in_dim", "transpose", "squeeze",
    "expand_dims", "copy", "copy_p", "slice", "dynamic_slice", "concatenate", "pjit",
    "jit", "closed_call", "core_call", "stop_gradient", "rev", "select_n", "gather", "stack", "split",
})

Node = tuple[int, jv.Var]  # (scope, var): the id of the enclosing equation (0 at the top) and a jaxpr var
TOP = 0
_Label = TypeVar("_Label")  # what a walk reports for each end it reaches: a state path, a name


@dataclass(frozen=True)
class CarriedState:
    """A state the step carries to the next one: a hidden state, or one the compiler does not follow."""

    invars: tuple[jv.Var, ...]  # the step's input vars of its value at the step's start
    outvars: tuple[jv.Var, ...]  # the step's output vars of its new value (its input vars when the step keeps it)
    hidden: bool  # a hidden state (else a ShortTermState or another state the compiler does not trace)


@dataclass(frozen=True)
class StarvedWeight:
    """A weight whose every path to the loss crosses a value with a zero derivative (a cut): it gets no gradient."""

    weight: StatePath  # the ParamState's path
    cuts: tuple[int, ...]  # the cuts it meets first that lead on to the loss: indices into those given, ascending
    states: tuple[StatePath, ...]  # the carried states it reaches whose values reach the loss only through a cut


class AnyOf:
    """The nodes in any of ``parts`` (each anything with ``in``): to avoid several kinds of node in one walk."""

    def __init__(self, *parts: Container[Node]):
        self.parts = parts

    def __contains__(self, node: object) -> bool:
        return any(node in part for part in self.parts)


class _Without:
    """The nodes of ``kept`` that are not in ``passed``."""

    def __init__(self, kept: Container[Node], passed: Container[Node]):
        self.kept = kept
        self.passed = passed

    def __contains__(self, node: object) -> bool:
        return node not in self.passed and node in self.kept


@dataclass(frozen=True)
class WeightConsumer:
    """A plain (non-ETP, non-layout) equation that reads a weight."""

    site: jv.EqnSite
    weights: frozenset[StatePath]
    outputs: tuple[Node, ...]


class StepFlow:
    """Var-level data flow of the traced step, nested jaxprs included.

    Vars are keyed by the equation that encloses their jaxpr, so a body
    reused at two call sites does not tie the two sites together. A weight
    keeps its identity through layout primitives and across call
    boundaries; the first other equation that reads it is where the user
    "uses" it.
    """

    def __init__(self, jaxpr: jv.JaxprLike, weight_invars: dict[jv.Var, StatePath],
                 hidden_outvars: dict[jv.Var, StatePath]):
        # Edges are kept as the equations themselves (inputs -> outputs, built into
        # (scope, var) nodes only when a rule follows a path: most models never ask)
        # and as node pairs at call boundaries.
        self._eqn_edges: list[tuple[int, jv.JaxprEqn]] = []
        self._node_edges: list[tuple[Sequence[Node], Sequence[Node]]] = []
        self._successors: dict[Node, list[Node]] | None = None
        # the weights each var carries, per scope: a lookup needs no node built
        self._weights: dict[int, dict[jv.Var, frozenset[StatePath]]] = {
            TOP: {v: frozenset([p]) for v, p in weight_invars.items()}}
        self.hidden: dict[Node, StatePath] = {(TOP, v): p for v, p in hidden_outvars.items()}
        self.consumers: list[WeightConsumer] = []
        self.etp_sites: list[jv.EqnSite] = []
        self.etp_outputs: set[Node] = set()
        self._build(jv.open_jaxpr(jaxpr), TOP, ())

    @property
    def successors(self) -> dict[Node, list[Node]]:
        if self._successors is None:
            table: dict[Node, list[Node]] = {}
            for scope, eqn in self._eqn_edges:
                outs = [(scope, v) for v in eqn.outvars]
                for var in jv.invars(eqn):
                    table.setdefault((scope, var), []).extend(outs)
            for sources, destinations in self._node_edges:
                for node in sources:
                    table.setdefault(node, []).extend(destinations)
            self._successors = table
        return self._successors

    def _scope_weights(self, scope: int) -> dict[jv.Var, frozenset[StatePath]]:
        return self._weights.setdefault(scope, {})

    def _edge(self, src: Node, dst: Node) -> None:
        self._node_edges.append(((src,), (dst,)))
        carried = self._scope_weights(src[0]).get(src[1])
        if carried:
            into = self._scope_weights(dst[0])
            into[dst[1]] = into.get(dst[1], frozenset()) | carried

    def _build(self, jaxpr: jv.Jaxpr, scope: int, parents: tuple[jv.JaxprEqn, ...]) -> None:
        edges, weights = self._eqn_edges, self._scope_weights(scope)
        is_etp = bt.is_etp_primitive
        for eqn in jaxpr.eqns:
            bindings = jv.sub_jaxpr_bindings(eqn)
            if bindings:
                self._build_call(eqn, bindings, scope, parents)
                continue
            edges.append((scope, eqn))
            if bindings is None:
                continue  # a body laid out as we do not know: what happens inside is unknown, not plain
            if is_etp(eqn):
                self.etp_sites.append(jv.EqnSite(eqn, parents))
                self.etp_outputs.update((scope, v) for v in eqn.outvars)
                continue
            carried = None
            for var in jv.invars(eqn):
                more = weights.get(var)
                if more:
                    carried = more if carried is None else carried | more
            if not carried:
                continue
            if jv.primitive_name(eqn) in LAYOUT_PRIMITIVES:
                for out in eqn.outvars:
                    weights[out] = carried
            else:
                outs = tuple((scope, v) for v in eqn.outvars)
                self.consumers.append(WeightConsumer(jv.EqnSite(eqn, parents), carried, outs))

    def _build_call(self, eqn: jv.JaxprEqn, bindings: list[jv.SubJaxprBinding], scope: int,
                    parents: tuple[jv.JaxprEqn, ...]) -> None:
        inner = id(eqn)
        bound = set()
        for binding in bindings:
            for outer, var in binding.inputs:
                if jv.is_var(outer):
                    self._edge((scope, outer), (inner, var))
                    bound.add(id(outer))
            for out, var in binding.carries:
                if jv.is_var(out):
                    self._edge((inner, out), (inner, var))
            self._build(binding.jaxpr, inner, parents + (eqn,))
            for result, out in binding.outputs:
                if jv.is_var(result):
                    self._edge((inner, result), (scope, out))
        # a cond's branch index, a loop's predicate: they decide every output
        self._node_edges.append(([(scope, var) for var in jv.invars(eqn) if id(var) not in bound],
                                 [(scope, v) for v in eqn.outvars]))

    @staticmethod
    def scope_of(site: jv.EqnSite) -> int:
        """The scope whose nodes hold the site's operands: the id of its innermost enclosing equation, or TOP."""
        return id(site.parents[-1]) if site.parents else TOP

    def weights_read_by(self, site: jv.EqnSite) -> frozenset[StatePath]:
        weights = self._weights.get(self.scope_of(site), {})
        return frozenset().union(*(weights.get(v, frozenset()) for v in jv.invars(site.eqn)))

    def hidden_reached(self, starts: tuple[Node, ...], avoid: Container[Node] = frozenset()) -> list[StatePath]:
        """Hidden states whose new value depends on ``starts``, not passing through ``avoid``."""
        return self.reached(starts, self.hidden, avoid)

    def reached(self, starts: tuple[Node, ...], ends: Mapping[Node, _Label], avoid: Container[Node] = frozenset(),
                past_ends: bool = True) -> list[_Label]:
        """The labels of ``ends`` (node -> label) whose nodes depend on ``starts``, not passing through ``avoid``
        (nor through an end, unless ``past_ends``).

        ``avoid`` is anything with ``in`` (a set, a frozenset); the starts themselves are never checked
        against it, and an end that is also in ``avoid`` is never found: to stop at some nodes and still
        report them, make them ends and pass ``past_ends=False``. A site's operands are the nodes
        ``(flow.scope_of(site), var)``."""
        seen = set(starts)
        pending = list(starts)
        found: set[_Label] = set()
        successors = self.successors
        while pending:
            node = pending.pop()
            if node in ends:
                found.add(ends[node])
                if not past_ends and node not in starts:
                    continue
            for nxt in successors.get(node, ()):
                if nxt not in seen and nxt not in avoid:
                    seen.add(nxt)
                    pending.append(nxt)
        return sorted(found, key=str)

    def outputs_of(self, site: jv.EqnSite) -> tuple[Node, ...]:
        """The nodes of the site's outputs."""
        scope = self.scope_of(site)
        return tuple((scope, v) for v in jv.outvars(site.eqn))

    def gradient_walk(self, cuts: Sequence[Collection[Node]], ends: Mapping[Node, object],
                      carried: Mapping[StatePath, CarriedState] | None = None,
                      blocked: Container[Node] = frozenset()) -> GradientWalk:
        """The walk that asks whose gradient reaches ``ends`` around every one of ``cuts`` (:class:`GradientWalk`):
        build it once per kind of construct, then ask it of each weight or value."""
        return GradientWalk(self, cuts, ends, carried, blocked)

    def starved_weights(self, weight_vars: Mapping[StatePath, Sequence[jv.Var]], cuts: Sequence[Collection[Node]],
                        ends: Mapping[Node, object], carried: Mapping[StatePath, CarriedState] | None = None,
                        blocked: Container[Node] = frozenset()) -> list[StarvedWeight]:
        """The weights every path of whose value to ``ends`` crosses one of ``cuts``: ``self.gradient_walk(cuts,
        ends, carried, blocked).starved_weights(weight_vars)``, for a fact that asks nothing else of the walk."""
        return self.gradient_walk(cuts, ends, carried, blocked).starved_weights(weight_vars)


class GradientWalk:
    """Which values of the step pass a gradient back from the loss, given the nodes whose derivative is zero.

    ``cuts``: the nodes whose derivative is zero, one collection per construct that makes them (a softmax's output,
    the outputs of the equations one ``jnp.heaviside`` is), in the step's order; ``ends``: what the loss reads (the
    step's float output, ``gradient_cuts.loss_ends``); ``carried``: the states the step carries to the next one
    (``context.carried_states``): one whose value reaches ``ends`` around every cut, at this step or a later one, is
    an end too (it is *live*), and one that does not is followed from its value at the next step's start;
    ``blocked``: other nodes no gradient passes, whatever the cuts (integer and boolean values:
    ``gradient_cuts.NoGradient``)."""

    def __init__(self, flow: StepFlow, cuts: Sequence[Collection[Node]], ends: Mapping[Node, object],
                 carried: Mapping[StatePath, CarriedState] | None = None, blocked: Container[Node] = frozenset()):
        self.flow = flow
        self.cuts = cuts
        self.ends = ends
        self.carried = carried or {}
        self.blocked = blocked
        self.index = {node: number for number, nodes in enumerate(cuts) for node in nodes}
        self.stopped = AnyOf(self.index, blocked)  # no gradient passes a cut or a blocked node
        self.passing = _Without(blocked, self.index)  # the walk past the cuts still stops at what they do not make

    def _state_nodes(self, paths: Sequence[StatePath]) -> tuple[Node, ...]:
        carried, blocked = self.carried, self.blocked
        return tuple(node for path in paths for v in carried[path].invars + carried[path].outvars
                     if (node := (TOP, v)) not in blocked)

    @functools.cached_property
    def live(self) -> frozenset[StatePath]:
        """The carried states whose value reaches the loss around every cut, at this step or a later one."""
        live: set[StatePath] = set()
        changed = True
        while changed:
            changed = False
            reading = self._reading_with(live)
            for path in self.carried:
                if path not in live and self.flow.reached(self._state_nodes((path,)), reading, avoid=self.stopped):
                    live.add(path)
                    changed = True
        return frozenset(live)

    @functools.cached_property
    def reading(self) -> dict[Node, object]:
        """What passes a gradient back from the loss: ``ends`` and the new values of the live carried states."""
        return self._reading_with(self.live)

    def _reading_with(self, live: Collection[StatePath]) -> dict[Node, object]:
        reading = dict(self.ends)
        reading.update({(TOP, v): path for path in live for v in self.carried[path].outvars})
        return reading

    def passes_gradient(self, starts: Sequence[Node]) -> bool:
        """Whether the gradient of the values at ``starts`` reaches the loss around every cut, at this step or
        through a state the step carries to a later one: a path from them to an end or a live carried state that
        crosses no cut and no blocked node."""
        return bool(self.flow.reached(tuple(starts), self.reading, avoid=self.stopped))

    def read_through(self, ops: Sequence[jv.EqnSite]) -> tuple[jv.EqnSite, ...]:
        """Of ``ops``, the ETP ops the compiler connected to a starved weight (``context.connected_ops``), those
        whose output passes a gradient to the loss: the weight reaches such an op only through a cut, which
        braintrace's online rule reads through, so the weight's online gradient is not zero there although
        BPTT's is. A rule that says ``ZERO`` of a starved weight leaves out one with any."""
        return tuple(site for site in ops if self.passes_gradient(self.flow.outputs_of(site)))

    def starved_weights(self, weight_vars: Mapping[StatePath, Sequence[jv.Var]]) -> list[StarvedWeight]:
        """The weights every path of whose value to the loss crosses one of the cuts, at this step or through the
        states the step carries to a later one, each with the cuts it meets first, in the order of ``weight_vars``
        (ParamState path -> its input vars in the step). A weight that reaches an end around every cut learns
        there, and one that reaches none even through the cuts is unused, not starved: neither is returned."""
        index = self.index
        if not index:
            return []
        flow, carried = self.flow, self.carried
        reading, live = self.reading, self.live
        dead = {(TOP, v): path for path, state in carried.items() if path not in live for v in state.outvars}
        # the cuts whose value would reach the loss if they passed a gradient: past any other cut
        onward = {number for number, nodes in enumerate(self.cuts)
                  if flow.reached(tuple(nodes), reading, avoid=self.passing)}
        found = []
        for weight, variables in weight_vars.items():
            starts = tuple((TOP, v) for v in variables)
            if flow.reached(starts, reading, avoid=self.stopped):
                continue  # a path to the loss around every cut: it learns there
            states = tuple(flow.reached(starts, dead, avoid=self.stopped))
            met = sorted(number for number in flow.reached(starts + self._state_nodes(states), index,
                                                            avoid=self.passing, past_ends=False) if number in onward)
            if met:
                found.append(StarvedWeight(weight, tuple(met), states))
        return found


@dataclass(frozen=True)
class BufferedUse:
    """An ETP op whose weight learns nothing online because its output is stored in a state the
    compiler does not follow (a ShortTermState, say), which a hidden state reads in a later step."""

    weight: StatePath
    site: jv.EqnSite
    buffer: StatePath  # the state path its output is stored in
    buffer_kind: str  # that state's class
    hidden: tuple[StatePath, ...]  # hidden state paths whose update reads the stored value


class StepFacts(Protocol):
    """What the passes that find zero gradients and carried states read of the compiled step; the
    AnalysisContext holds it all and hands their findings to the rules."""

    @property
    def graph(self) -> bt.ETraceGraph: ...

    @property
    def module_info(self) -> bt.ModuleInfo: ...

    @property
    def single_step_vjp(self) -> bool: ...

    @property
    def weight_paths(self) -> dict[StatePath, list[jv.Var]]: ...

    @property
    def learning_weights(self) -> set[StatePath]: ...

    @property
    def hidden_outvars(self) -> dict[jv.Var, StatePath]: ...

    @property
    def output_vars(self) -> list[jv.Var]: ...

    @property
    def hidden_groups(self) -> list[bt.GroupView]: ...

    @property
    def relations(self) -> list[bt.RelationView]: ...

    @property
    def jaxpr(self) -> jv.ClosedJaxpr: ...

    @property
    def flow(self) -> StepFlow: ...

    @property
    def buffered_uses(self) -> list[BufferedUse]: ...

    def weights_reaching_hidden(self) -> dict[StatePath, list[StatePath]]: ...
