"""What rules of our own get to look at: one compiled model and facts derived from it.

Derived facts are computed once, on first use, so a rule that does not need
them costs nothing.
"""

from __future__ import annotations

import functools
from collections.abc import Container, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

import braintrace

from ..config.settings import EngineSettings
from ..core.findings import Level
from ..core.naming import StatePath
from ..core.registry import rule_for_record_kind
from . import braintrace_adapter as bt
from . import jaxpr_view as jv
from .locate import Locator
from .record_kinds import reported_kinds

# Primitives that only move or re-type data: a weight passing through them is
# still "the weight" (the compiler traces through the same kind of chain).
LAYOUT_PRIMITIVES = frozenset({
    "reshape", "convert_element_type", "broadcast_in_dim", "transpose", "squeeze",
    "expand_dims", "copy", "copy_p", "slice", "dynamic_slice", "concatenate", "pjit",
    "jit", "closed_call", "core_call", "stop_gradient", "rev", "select_n", "gather", "stack", "split",
})


@dataclass
class AnalysisContext:
    """The rules' view of one compiled model: weights, hidden states, ops and paths.

    Rules read the typed properties below; the compilation itself (graph,
    module info) is for the adapter's views and --verify.
    """

    model: Any
    inputs: tuple[Any, ...]
    compilation: bt.Compilation
    locator: Locator
    settings: EngineSettings  # the run's opt-in flags
    # the learner's VJP: single-step (braintrace's default, and what a target is linted for) reads each
    # step's learning signal at the hidden states' new values; multi-step reverses the whole window
    single_step_vjp: bool = True

    @property
    def graph(self) -> bt.ETraceGraph:
        graph = self.compilation.graph
        assert graph is not None  # the engine builds a context only for a model that compiled
        return graph

    @property
    def module_info(self) -> bt.ModuleInfo:
        module_info = self.compilation.module_info
        assert module_info is not None  # a model that compiled was traced
        return module_info

    @functools.cached_property
    def weight_paths(self) -> dict[StatePath, list[Any]]:
        """ParamState path -> its input vars in the traced step."""
        table: dict[StatePath, list[Any]] = {}
        for var, path in bt.weight_invars(self.module_info).items():
            table.setdefault(path, []).append(var)
        return table

    @functools.cached_property
    def learning_weights(self) -> set[StatePath]:
        return bt.relation_weight_paths(self.graph) if self.graph is not None else set()

    @functools.cached_property
    def hidden_outvars(self) -> dict[Any, StatePath]:
        return bt.hidden_outvars(self.module_info)

    @functools.cached_property
    def jaxpr(self) -> Any:
        return bt.traced_jaxpr(self.module_info)

    @functools.cached_property
    def sites(self) -> list[jv.EqnSite]:
        return self.locator.sites

    @functools.cached_property
    def flow(self) -> "StepFlow":
        return StepFlow(self.jaxpr, bt.weight_invars(self.module_info), self.hidden_outvars)

    @functools.cached_property
    def plain_uses(self) -> list["PlainUse"]:
        return plain_uses(self)

    @functools.cached_property
    def buffered_uses(self) -> list["BufferedUse"]:
        return buffered_uses(self)

    @functools.cached_property
    def weight_provenance(self) -> dict[Any, frozenset[StatePath]]:
        """Top-level var -> the ParamState paths whose value flows into it."""
        flow: dict[Any, frozenset[StatePath]] = {
            v: frozenset([p]) for v, p in bt.weight_invars(self.module_info).items()}
        for eqn in jv.open_jaxpr(self.jaxpr).eqns:
            sources = frozenset().union(*(flow.get(v, frozenset()) for v in jv.invars(eqn)))
            if sources:
                for out in jv.outvars(eqn):
                    flow[out] = sources
        return flow

    @functools.cached_property
    def relation_outputs(self) -> frozenset[int]:
        """Identities of the ETP op outputs the compiler connected to a hidden state."""
        return frozenset(bt.relation_output_ids(self.graph)) if self.graph is not None else frozenset()

    @functools.cached_property
    def fully_connected_weights(self) -> frozenset[StatePath]:
        """Weights each of whose ETP ops in the compiled step the compiler connected to a hidden state:
        a record calling one of them excluded, or reaching no hidden state, comes from another pass over
        the step (brainstate.nn.Map traces it more than once) and is contradicted by the final graph."""
        ops: dict[StatePath, list[Any]] = {}
        step_outputs = {(TOP, v): True for v in jv.open_jaxpr(self.jaxpr).outvars if jv.is_var(v)}
        for site in self.flow.etp_sites:
            if not self.flow.reached(self.flow.outputs_of(site), step_outputs):
                continue  # a dead copy (a probe pass's): its output reaches nothing the step returns or keeps
            for weight in self.flow.weights_read_by(site):
                ops.setdefault(weight, []).append(site)
        connected = self.relation_outputs
        return frozenset(weight for weight, sites in ops.items() if weight in self.learning_weights
                         and all(any(id(out) in connected for out in jv.outvars(s.eqn)) for s in sites))

    @functools.cached_property
    def vmap_warnings(self) -> list[str]:
        """The compiler's warnings that an ETP op was decomposed into plain ops under ``vmap``."""
        return bt.vmap_decomposition_warnings(self.compilation.warnings)

    @functools.cached_property
    def vmap_decomposed_ops(self) -> frozenset[str]:
        """The ETP primitives those warnings name."""
        return frozenset(bt.vmap_warning_primitive(w) for w in self.vmap_warnings) - {""}

    def is_vmap_decomposition(self, site: jv.EqnSite) -> bool:
        """Whether a plain equation is what an ETP op became under ``vmap``."""
        return bt.is_vmap_decomposition(site.eqn)

    @functools.cached_property
    def compiler_warned(self) -> bool:
        """Whether a compiler record is reported at warning or error level: it then explains why a
        weight does not learn (a record braintrace grades a warning that is a note of ours, such as a
        readout reaching no hidden state, explains nothing of the kind)."""
        return any(rule_for_record_kind(kind, level).level.rank >= Level.WARNING.rank
                   for kind, level in reported_kinds(self.compilation))

    def online_gradient_error(self) -> BaseException | None:
        """What building one online (D-RTRL) gradient step of the model raises, if anything."""
        return bt.online_gradient_error(self.model, self.inputs)

    def weights_reaching_hidden(self) -> dict[StatePath, list[StatePath]]:
        """ParamState path -> hidden state paths whose new value depends on it."""
        reach: dict[StatePath, list[StatePath]] = {}
        for var, hidden in self.hidden_outvars.items():
            for weight in self.weight_provenance.get(var, ()):
                reach.setdefault(weight, []).append(hidden)
        return reach



# Transforms whose bodies the compiler never opens: an ETP op inside one is invisible to it.
OPAQUE_TRANSFORMS = {
    "remat": "jax.checkpoint", "remat2": "jax.checkpoint", "checkpoint": "jax.checkpoint",
    "custom_jvp_call": "jax.custom_jvp", "custom_vjp_call": "jax.custom_vjp",
    "custom_vjp_call_jaxpr": "jax.custom_vjp", "custom_lin": "jax.custom_vjp",
}

Node = tuple[int, Any]  # (scope, var): the id of the enclosing equation (0 at the top) and a jaxpr var
TOP = 0


@dataclass(frozen=True)
class WeightConsumer:
    """A plain (non-ETP, non-layout) equation that reads a weight."""

    site: jv.EqnSite
    weights: frozenset[StatePath]
    outputs: tuple[Any, ...]


class StepFlow:
    """Var-level data flow of the traced step, nested jaxprs included.

    Vars are keyed by the equation that encloses their jaxpr, so a body
    reused at two call sites does not tie the two sites together. A weight
    keeps its identity through layout primitives and across call
    boundaries; the first other equation that reads it is where the user
    "uses" it.
    """

    def __init__(self, jaxpr: Any, weight_invars: dict[Any, StatePath], hidden_outvars: dict[Any, StatePath]):
        # Edges are kept as the equations themselves (inputs -> outputs, built into
        # (scope, var) nodes only when a rule follows a path: most models never ask)
        # and as node pairs at call boundaries.
        self._eqn_edges: list[tuple[int, Any]] = []
        self._node_edges: list[tuple[Any, Any]] = []
        self._successors: dict[Node, list[Node]] | None = None
        # the weights each var carries, per scope: a lookup needs no node built
        self._weights: dict[int, dict[Any, frozenset[StatePath]]] = {
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

    def _scope_weights(self, scope: int) -> dict[Any, frozenset[StatePath]]:
        return self._weights.setdefault(scope, {})

    def _edge(self, src: Node, dst: Node) -> None:
        self._node_edges.append(((src,), (dst,)))
        carried = self._scope_weights(src[0]).get(src[1])
        if carried:
            into = self._scope_weights(dst[0])
            into[dst[1]] = into.get(dst[1], frozenset()) | carried

    def _build(self, jaxpr: Any, scope: int, parents: tuple[Any, ...]) -> None:
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

    def _build_call(self, eqn: Any, bindings: list[Any], scope: int, parents: tuple[Any, ...]) -> None:
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
            for var, outer in binding.outputs:
                if jv.is_var(var):
                    self._edge((inner, var), (scope, outer))
        # a cond's branch index, a loop's predicate: they decide every output
        self._node_edges.append(([(scope, var) for var in jv.invars(eqn) if id(var) not in bound],
                                 [(scope, v) for v in eqn.outvars]))

    @staticmethod
    def _scope_of(site: jv.EqnSite) -> int:
        """The scope whose nodes hold the site's operands: its innermost enclosing jaxpr."""
        return id(site.parents[-1]) if site.parents else TOP

    def weights_read_by(self, site: jv.EqnSite) -> frozenset[StatePath]:
        weights = self._weights.get(self._scope_of(site), {})
        return frozenset().union(*(weights.get(v, frozenset()) for v in jv.invars(site.eqn)))

    def hidden_reached(self, starts: tuple[Node, ...], avoid: Container[Node] = frozenset()) -> list[StatePath]:
        """Hidden states whose new value depends on ``starts``, not passing through ``avoid``."""
        return self.reached(starts, self.hidden, avoid)

    def reached(self, starts: tuple[Node, ...], ends: Mapping[Node, Any], avoid: Container[Node] = frozenset(),
                past_ends: bool = True) -> list[Any]:
        """The values of ``ends`` (node -> label) whose nodes depend on ``starts``, not passing
        through ``avoid`` (nor through an end, unless ``past_ends``)."""
        seen = set(starts)
        pending = list(starts)
        found: set[Any] = set()
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
        scope = self._scope_of(site)
        return tuple((scope, v) for v in jv.outvars(site.eqn))


@dataclass(frozen=True)
class PlainUse:
    """A weight read by a plain JAX op whose result reaches a hidden state."""

    weight: StatePath
    site: jv.EqnSite
    hidden: tuple[StatePath, ...]  # hidden state paths it reaches
    partial: bool  # the weight also learns through an ETP op; this path is missing from it
    decomposed: bool  # the op is an ETP op that vmap decomposed (braintrace's batching fallback)


def explained_weights(context: AnalysisContext) -> set[StatePath]:
    """Weights a compiler record already explains (besides connecting them).

    A record's rule says whether it does (``Rule.explains_weight``): an
    output-bypass record lists every parameter on the step's output path,
    which says nothing about how a weight reaches the hidden state.
    """
    explained = set()
    for record in context.compilation.records:
        if not rule_for_record_kind(record.kind, record.level).explains_weight:
            continue
        if record.weight_path:
            explained.add(record.weight_path)
        if record.level != "info":  # e.g. weights a descended scan left without a relation
            for path in (record.context.get("weight_paths") or ()):
                if isinstance(path, tuple):
                    explained.add(path)
    return explained


def plain_uses(context: AnalysisContext) -> list[PlainUse]:
    """Every plain use of a weight that reaches a hidden state, in the step's order.

    For a weight the compiler connected through an ETP op, only a plain path
    that reaches the hidden state without crossing an ETP op counts: through
    the ETP op's weight operand (a mask, ``abs``) the compiler follows the
    weight itself.
    """
    flow = context.flow
    if not flow.consumers:  # every weight goes through ETP ops or layout only
        return []
    explained = explained_weights(context)
    learning = context.learning_weights
    found = []
    for consumer in flow.consumers:
        weights = sorted(w for w in consumer.weights if w not in explained)
        if not weights:
            continue
        decomposed = bt.is_vmap_decomposition(consumer.site.eqn)
        for weight in weights:
            partial = weight in learning
            hidden = flow.hidden_reached(consumer.outputs, flow.etp_outputs if partial else frozenset())
            if hidden:
                found.append(PlainUse(weight, consumer.site, tuple(hidden), partial, decomposed))
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


def buffered_uses(context: AnalysisContext) -> list[BufferedUse]:
    """Every ETP op of a weight that does not learn online whose output is written into an untraced
    state that feeds a hidden state: one step late, through a value the compiler takes as a constant.

    Only a direct store counts: a path through a hidden state's new value (a spike kept for the
    next step, say) is the hidden state's own business."""
    untraced = bt.untraced_states(context.module_info)
    if not untraced:
        return []
    flow = context.flow
    feeds: dict[StatePath, tuple[bt.UntracedState, tuple[StatePath, ...]]] = {}
    for state in untraced:
        hidden = flow.reached(tuple((TOP, v) for v in state.invars), flow.hidden, past_ends=False)
        if hidden:
            feeds[state.path] = (state, tuple(hidden))
    if not feeds:
        return []
    stored = {(TOP, v): state.path for state, _ in feeds.values() for v in state.outvars}
    learning = context.learning_weights
    found: list[BufferedUse] = []
    for site in flow.etp_sites:
        weights = sorted(w for w in flow.weights_read_by(site) if w not in learning)
        if not weights:
            continue
        for path in flow.reached(flow.outputs_of(site), stored, avoid=flow.hidden):
            state, hidden_paths = feeds[path]
            found.extend(BufferedUse(w, site, path, state.kind, hidden_paths) for w in weights)
    return found


class _WeightUse(Protocol):
    @property
    def weight(self) -> StatePath: ...


_Use = TypeVar("_Use", bound=_WeightUse)


def first_per_weight(uses: list[_Use]) -> list[_Use]:
    """Each weight's first use, in order (a plain op's, a buffered store's)."""
    first: dict[StatePath, _Use] = {}
    for use in uses:
        first.setdefault(use.weight, use)
    return list(first.values())


def opaque_transform_of(site: jv.EqnSite) -> jv.EqnSite | None:
    """The outermost enclosing transform the compiler does not open, as a site of its own."""
    for index, parent in enumerate(site.parents):
        if jv.primitive_name(parent) in OPAQUE_TRANSFORMS:
            return jv.EqnSite(parent, site.parents[:index])
    return None


def owner_module(model: Any, path: StatePath) -> Any:
    """The object that holds the state at ``path`` (the layer a weight belongs to), or None."""
    node = model
    for part in path[:-1]:
        try:
            node = getattr(node, part) if isinstance(part, str) and hasattr(node, part) else node[part]
        except (KeyError, IndexError, TypeError, AttributeError):
            return None
    return node


def etp_layer_for(layer: Any) -> str:
    """``braintrace.nn.Linear`` for a ``brainstate.nn.Linear``: the layer of braintrace.nn with the same
    name as a plain layer of another library, which does the same through an ETP op.

    braintrace.nn re-exports many of brainstate's layers (``braintrace.nn.LayerNorm`` *is*
    ``brainstate.nn.LayerNorm``): a name found there is a twin only when it is another class, one
    braintrace defines itself."""
    cls = type(layer)
    if layer is None or cls.__module__.startswith("braintrace"):
        return ""
    twin = getattr(braintrace.nn, cls.__name__, None)
    if not isinstance(twin, type) or twin is cls or issubclass(cls, twin):
        return ""
    return f"braintrace.nn.{cls.__name__}" if twin.__module__.startswith("braintrace") else ""


def library_layer(layer: Any) -> str:
    """``brainstate.nn.LayerNorm``: how a user imports the class of a layer another library defines
    (its module up to the first private part), or nothing for a layer of the user's own code."""
    if layer is None:
        return ""
    module = type(layer).__module__
    if module.split(".")[0] not in ("brainstate", "brainpy", "braintools", "brainscale"):
        return ""
    parts = module.split(".")
    first_private = next((i for i, part in enumerate(parts) if part.startswith("_")), len(parts))
    return f"{'.'.join(parts[:first_private] or parts[:1])}.{type(layer).__name__}"
