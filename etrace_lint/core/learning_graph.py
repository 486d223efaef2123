"""The learning graph of one model, read off its findings: weights -> ETP ops -> hidden states -> groups.

Every edge and every verdict here was reported by a rule (ETL001 says a
weight's op drives a state, ETL028 that states form one group, ETL005 that
a weight is excluded, ...); this module only arranges them, so the HTML
report and the Python API show the same picture the text output tells.
It imports no JAX: a cached run draws its graph from cached findings.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from .details import CompilerRecord
from .findings import Finding, Level

# what a weight's findings say about its learning, strongest first
LEARNS = "learns"
SAME_STEP = "same-step only"  # a readout: exact gradients from the same step, no trace (ETL003)
# a plain path under a multi-step VJP: its gradient within each window of steps, no trace across (ETL213)
WITHIN_WINDOW = "learns within each window"
PARTLY = "learns partly"  # learns through some of its uses (ETL001), not through others (ETL005, ETL201, ...)
NOT_LEARNING = "does not learn"
# --verify measured a gradient that is not BPTT's (ETL401, ETL404), or the probe a multiple of it (ETL412)
WRONG = "wrong online gradient"
AGAINST = "learns against BPTT"  # measured over several input draws: cosine below 0 (ETL414, ETL415)
UNKNOWN = "no verdict"  # the run built no finding about this weight (notes hidden, or the model did not compile)

_SAME_STEP_RULES = frozenset({"ETL003"})
# a weight whose value reaches the step's output around the hidden states gets its exact same-step gradient
# there (ETL019, a readout the compiler lists by its path only): all it learns, unless a trace trains it too
_BYPASS_RULES = frozenset({"ETL019"})
# what stands between a weight and learning, as each rule's finding names it (its related locations' labels)
_BLOCKING_WEIGHT = "blocking weight "  # ETL005: the compiler excluded the weight behind another weight's op
_BLOCKING_LABELS = {"the mean is subtracted here": "mean subtracted",  # ETL207
                    "the learning signal is cut at this loop": "while loop cuts the learning signal"}  # ETL212
_APPLIED = " applied here"  # ETL202: an opaque transform (checkpoint, custom_jvp) around the op
_BLOCKED_AT_LOCATION = {"ETL203": "op decomposed under vmap"}  # the finding's own line is the plain op
_OUTPUT_ONLY_RULES = frozenset({"ETL209"})  # a weight whose value reaches the output and no hidden state
_LEARNS_RULES = frozenset({"ETL001"})
_WITHIN_WINDOW_RULES = frozenset({"ETL213"})
_WRONG_RULES = frozenset({"ETL401", "ETL404", "ETL412"})
_AGAINST_RULES = frozenset({"ETL414", "ETL415"})
# measured: the weight's online gradient is zero (or the step raises); a compiler relation does not outweigh it
_MEASURED_ZERO_RULES = frozenset({"ETL402", "ETL410", "ETL411", "ETL413"})


_DRAWN_ON = ("weight", "site", "output", "group", "state", "op")
OUTPUT = "output:step"
# compiler records about what reaches the step's output without a hidden state (ETL003, ETL019)
_OUTPUT_KINDS = frozenset({"relation_excluded_non_temporal", "output_bypasses_hidden"})


@dataclass(frozen=True)
class Node:
    """A weight, an op, a hidden state, a hidden group, or a place in the step a finding speaks of."""

    id: str
    kind: str  # weight | op | state | group | output | site
    label: str
    verdict: str = ""  # weights only
    findings: tuple[int, ...] = ()  # indexes into the target's findings
    plain: bool = False  # an op that is not an ETP op (the compiler cannot see through it)
    regions: tuple[str, ...] = ()  # ids of the control-flow regions around an op, outermost first


@dataclass(frozen=True)
class Region:
    """A body the user wrote ops in: a scan, while or cond body, a jit call, a vmap or brainstate Map."""

    id: str
    kind: str  # scan | while | cond | jit | vmap | Map | custom_jvp | ...
    label: str  # "scan (line 27)"
    parent: str = ""  # the region around this one


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    # drives | plain | member | bypass (into the step output) | blocked (why a weight does not learn)
    kind: str = "drives"
    findings: tuple[int, ...] = ()  # the findings that say so (a blocked or bypass edge)


@dataclass(frozen=True)
class LearningGraph:
    """One target's graph; ``findings`` are the target's findings the nodes point into."""

    target: str
    findings: tuple[Finding, ...]
    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...]
    regions: tuple[Region, ...] = ()

    def weights(self) -> dict[str, str]:
        """Each weight's verdict by name: ``{"w_rec": "does not learn", ...}``."""
        return {node.label: node.verdict for node in self.nodes if node.kind == "weight"}

    def node_of(self, index: int) -> Node:
        """The node that finding ``index`` is drawn on: its weight first, else its group, state or place."""
        candidates = [node for node in self.nodes if index in node.findings]
        return min(candidates, key=lambda node: _DRAWN_ON.index(node.kind))


def _op_id(finding: Finding, weight: str) -> str:
    """An ETP op applies one weight: two weights on one line (a library cell) are two ops."""
    loc = finding.location
    return f"op:{finding.subject.primitive or '?'}:{weight}:{loc.path}:{loc.line}:{loc.column}"


def _record_kind(finding: Finding) -> str:
    """The kind of the compiler record a finding is made from ("" when it is not one)."""
    return finding.details.kind if isinstance(finding.details, CompilerRecord) else ""


def _denies(finding: Finding) -> bool:
    """A finding that says a weight (or one of its uses) does not learn, or learns a wrong gradient."""
    return finding.rule_id not in _LEARNS_RULES | _SAME_STEP_RULES and finding.level.rank >= Level.WARNING.rank


def _measured_zero(finding: Finding) -> bool:
    return finding.rule_id in _MEASURED_ZERO_RULES or any(m.rule in _MEASURED_ZERO_RULES for m in finding.measured)


def _verdict(findings: list[Finding]) -> str:
    """A weight's state: what its findings say together, never one of them against another.

    A weight the compiler connects through one use (ETL001) while another of its uses is left out
    (ETL005, ETL201, ...) learns partly, unless a measurement says its whole online gradient is zero. A run
    that hides notes does not build ETL001's: its weight's other findings say the compiler connects it."""
    denying = [f for f in findings if _denies(f)]
    blocked = [f for f in denying if f.rule_id not in _WRONG_RULES | _AGAINST_RULES]
    if blocked:
        learns = any(f.rule_id in _LEARNS_RULES or f.weight_connected for f in findings)
        return PARTLY if learns and not any(_measured_zero(f) for f in findings) else NOT_LEARNING
    if any(f.rule_id in _AGAINST_RULES for f in denying):
        return AGAINST
    if denying:
        return WRONG
    if any(f.rule_id in _SAME_STEP_RULES for f in findings):
        return SAME_STEP
    if any(f.rule_id in _LEARNS_RULES for f in findings):
        return LEARNS
    if any(f.rule_id in _WITHIN_WINDOW_RULES for f in findings):
        return WITHIN_WINDOW
    if any(f.rule_id in _BYPASS_RULES for f in findings):
        return SAME_STEP
    return UNKNOWN


def _regions_of(finding: Finding) -> tuple[Region, ...]:
    """The regions a finding's op sits in (its ``control_flow``), outermost first."""
    regions, parent = [], ""
    for boundary in finding.control_flow:
        kind = boundary.kind
        where = f"{boundary.file}:" if boundary.file else ""
        name = f" {boundary.name}" if boundary.name else ""
        region_id = f"region:{kind}:{where}{boundary.line}:{boundary.column}:{parent}"
        regions.append(Region(region_id, kind, f"{kind}{name} (line {where}{boundary.line})", parent))
        parent = region_id
    return tuple(regions)


class _Builder:
    def __init__(self) -> None:
        self.nodes: dict[str, dict[str, Any]] = {}
        self.edges: dict[tuple[str, str], Any] = {}  # (source, target) -> [kind, finding indexes]
        self.regions: dict[str, Region] = {}
        self.ops_of: dict[str, list[tuple[str, str, int]]] = {}  # weight -> (op id, path, line)

    def node(self, node_id: str, kind: str, label: str, finding: int | None = None, plain: bool = False,
             regions: tuple[Region, ...] = ()) -> str:
        entry = self.nodes.setdefault(node_id, {"kind": kind, "label": label, "findings": [], "plain": plain,
                                                "regions": tuple(r.id for r in regions)})
        for region in regions:
            self.regions.setdefault(region.id, region)
        if finding is not None and finding not in entry["findings"]:
            entry["findings"].append(finding)
        return node_id

    def edge(self, source: str, target: str, kind: str = "drives", finding: int | None = None) -> None:
        """An edge; a ``blocked`` edge replaces the plain drawing of the same pair, since it says more."""
        entry = self.edges.setdefault((source, target), [kind, []])
        if kind == "blocked":
            entry[0] = kind
        if finding is not None and finding not in entry[1]:
            entry[1].append(finding)


def learning_graph(target: str, findings: list[Finding]) -> LearningGraph:
    """The graph of ``target`` drawn from its ``findings`` (in the order given)."""
    build = _Builder()
    by_weight: dict[str, list[Finding]] = {}
    for index, finding in enumerate(findings):
        weight = finding.subject.weight
        states = list(finding.subject.hidden_states)
        primitive = finding.subject.primitive
        kind = _record_kind(finding)
        drawn = False
        if weight:
            by_weight.setdefault(weight, []).append(finding)
            build.node(f"weight:{weight}", "weight", weight, index)
            drawn = True
            if primitive:
                plain = not str(primitive).startswith("etp_")
                op = build.node(_op_id(finding, weight), "op", f"{primitive} (line {finding.line})", index, plain=plain,
                                regions=_regions_of(finding))
                build.ops_of.setdefault(weight, []).append((op, finding.path, finding.line))
                build.edge(f"weight:{weight}", op, "plain" if plain else "drives")
                for state in states:
                    build.edge(op, build.node(f"state:{state}", "state", state), "plain" if plain else "drives")
                if kind in _OUTPUT_KINDS:  # a readout: its op feeds the step's output, not a state
                    build.edge(op, build.node(OUTPUT, "output", "step output"), "bypass")
        elif finding.subject.weights:  # about the weights it names, none of them alone: each is drawn with it
            for name in finding.subject.weights:
                by_weight.setdefault(name, []).append(finding)
                build.node(f"weight:{name}", "weight", name, index)
            drawn = True
        if kind in _OUTPUT_KINDS and not weight:  # what reaches the output around the states
            build.node(OUTPUT, "output", "step output", index)
            drawn = True
        if kind == "hidden_group_merged" and states:
            group = build.node("group:" + "+".join(states), "group", "group " + ", ".join(states), index)
            for state in states:
                build.edge(build.node(f"state:{state}", "state", state), group, "member")
            drawn = True
        elif not weight and states:
            for state in states:
                build.node(f"state:{state}", "state", state, index)
            drawn = True
        if not drawn:  # about the step itself: a loop, a unit mismatch, a write to a parameter
            build.node(f"site:{finding.path}:{finding.line}:{finding.rule_id}", "site",
                       f"{finding.rule_id} (line {finding.line})", index)
    for index, finding in enumerate(findings):  # every op is drawn now: the ones that block others too
        _why_not(build, index, finding)
    nodes = []
    for node_id, entry in build.nodes.items():
        verdict = _verdict(by_weight.get(entry["label"], [])) if entry["kind"] == "weight" else ""
        nodes.append(Node(node_id, entry["kind"], entry["label"], verdict, tuple(entry["findings"]),
                          entry["plain"], entry["regions"]))
    edges = tuple(Edge(source, dest, kind, tuple(found)) for (source, dest), (kind, found) in build.edges.items())
    return LearningGraph(target, tuple(findings), tuple(nodes), edges, tuple(build.regions.values()))


def _blocker(build: _Builder, finding: Finding, index: int) -> str | None:
    """The node of what keeps a finding's weight from learning: a plain op, another weight's op, a
    mean-subtracting op, an opaque transform; None when the finding names none."""
    primitive = finding.subject.primitive
    if primitive and not primitive.startswith("etp_"):
        return _op_id(finding, finding.subject.weight)
    if finding.rule_id in _BLOCKED_AT_LOCATION:
        return build.node(f"block:{finding.path}:{finding.line}:{finding.rule_id}", "op",
                          f"{_BLOCKED_AT_LOCATION[finding.rule_id]} (line {finding.line})", index, plain=True)
    for related in finding.related:
        label = related.label or ""
        if label.startswith(_BLOCKING_WEIGHT):
            other = label[len(_BLOCKING_WEIGHT):]
            ops = build.ops_of.get(other, [])
            same_line = [op for op, path, line in ops if (path, line) == (related.path, related.line)]
            if same_line or ops:
                return build.node((same_line or [ops[0][0]])[0], "op", "", index)
            return build.node(f"block:{other}:{related.path}:{related.line}", "op",
                              f"{other}'s op (line {related.line})", index)
        if label in _BLOCKING_LABELS:
            return build.node(f"block:{related.path}:{related.line}:{label}", "op",
                              f"{_BLOCKING_LABELS[label]} (line {related.line})", index, plain=True)
        if label.endswith(_APPLIED):
            name = label[:-len(_APPLIED)].strip("`")
            return build.node(f"block:{related.path}:{related.line}:{name}", "op",
                              f"{name} (line {related.line})", index, plain=True)
    return None


def _why_not(build: _Builder, index: int, finding: Finding) -> None:
    """Edges that show why a weight does not learn (to what blocks it) or where its value goes instead
    (straight into the step's output), each linked to the finding that says so."""
    weight = finding.subject.weight
    if not weight:
        if _record_kind(finding) in _OUTPUT_KINDS:  # an op at this line feeds the output around the states
            for ops in build.ops_of.values():
                for op, path, line in ops:
                    if (path, line) == (finding.path, finding.line):
                        build.edge(op, build.node(OUTPUT, "output", "step output", index), "bypass", index)
        return
    source = f"weight:{weight}"
    if finding.rule_id in _OUTPUT_ONLY_RULES:
        build.edge(source, build.node(OUTPUT, "output", "step output"), "bypass", index)
        return
    if not _denies(finding):
        return
    blocker = _blocker(build, finding, index)
    if blocker is None or blocker == source:
        return
    build.edge(source, blocker, "blocked", index)
    if blocker.startswith("block:"):  # a node of its own: show where the blocked value goes on to
        for state in finding.subject.hidden_states:
            build.edge(blocker, build.node(f"state:{state}", "state", state), "plain")


def graphs_by_target(findings: list[Finding], targets: Sequence[str] = ()) -> list[LearningGraph]:
    """One graph per target, in the order of ``targets`` then of first appearance in ``findings``."""
    grouped: dict[str, list[Finding]] = {name: [] for name in targets}
    for finding in findings:
        if finding.target:
            grouped.setdefault(finding.target, []).append(finding)
    return [learning_graph(name, items) for name, items in grouped.items()]


__all__ = ["AGAINST", "Edge", "LEARNS", "LearningGraph", "NOT_LEARNING", "Node", "PARTLY", "Region", "SAME_STEP",
           "UNKNOWN", "WRONG",
           "graphs_by_target", "learning_graph"]
