"""The learning graph of one model, read off its findings: weights -> ETP ops -> hidden states -> groups.

Every edge and every verdict here was reported by a rule (ETL001 says a
weight's op drives a state, ETL028 that states form one group, ETL005 that
a weight is excluded, ...); this module only arranges them, so the HTML
report and the Python API show the same picture the text output tells.
It imports no JAX: a cached run draws its graph from cached findings.
"""

from __future__ import annotations

from dataclasses import dataclass

from .findings import Finding, Level

# what a weight's findings say about its learning, strongest first
LEARNS = "learns"
SAME_STEP = "same-step only"  # a readout: exact gradients from the same step, no trace (ETL003)
NOT_LEARNING = "does not learn"
WRONG = "wrong online gradient"  # --verify measured a gradient that is not BPTT's (ETL401, ETL404)
UNKNOWN = "no verdict"  # the run built no finding about this weight (notes hidden, or the model did not compile)

_SAME_STEP_RULES = frozenset({"ETL003"})
_LEARNS_RULES = frozenset({"ETL001"})
_WRONG_RULES = frozenset({"ETL401", "ETL404"})


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


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    kind: str = "drives"  # drives | plain | member | bypass (into the step output)


@dataclass(frozen=True)
class LearningGraph:
    """One target's graph; ``findings`` are the target's findings the nodes point into."""

    target: str
    findings: tuple[Finding, ...]
    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...]

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
    return f"op:{finding.properties.get('primitive', '?')}:{weight}:{loc.path}:{loc.line}:{loc.column}"


def _verdict(findings: list[Finding]) -> str:
    against = [f for f in findings if f.rule_id not in _LEARNS_RULES | _SAME_STEP_RULES
               and f.level.rank >= Level.WARNING.rank]
    if any(f.rule_id not in _WRONG_RULES for f in against):
        return NOT_LEARNING
    if against:
        return WRONG
    if any(f.rule_id in _SAME_STEP_RULES for f in findings):
        return SAME_STEP
    if any(f.rule_id in _LEARNS_RULES for f in findings):
        return LEARNS
    return UNKNOWN


class _Builder:
    def __init__(self) -> None:
        self.nodes: dict[str, dict] = {}
        self.edges: dict[tuple[str, str], str] = {}

    def node(self, node_id: str, kind: str, label: str, finding: int | None = None, plain: bool = False) -> str:
        entry = self.nodes.setdefault(node_id, {"kind": kind, "label": label, "findings": [], "plain": plain})
        if finding is not None and finding not in entry["findings"]:
            entry["findings"].append(finding)
        return node_id

    def edge(self, source: str, target: str, kind: str = "drives") -> None:
        self.edges.setdefault((source, target), kind)


def learning_graph(target: str, findings: list[Finding]) -> LearningGraph:
    """The graph of ``target`` drawn from its ``findings`` (in the order given)."""
    build = _Builder()
    by_weight: dict[str, list[Finding]] = {}
    for index, finding in enumerate(findings):
        props = finding.properties or {}
        weight = props.get("weight")
        states = [str(s) for s in props.get("hiddenStates") or ()]
        primitive = props.get("primitive")
        kind = props.get("braintraceKind")
        drawn = False
        if weight:
            by_weight.setdefault(weight, []).append(finding)
            build.node(f"weight:{weight}", "weight", weight, index)
            drawn = True
            if primitive:
                plain = not str(primitive).startswith("etp_")
                op = build.node(_op_id(finding, weight), "op", f"{primitive} (line {finding.line})", index, plain=plain)
                build.edge(f"weight:{weight}", op, "plain" if plain else "drives")
                for state in states:
                    build.edge(op, build.node(f"state:{state}", "state", state), "plain" if plain else "drives")
                if kind in _OUTPUT_KINDS:  # a readout: its op feeds the step's output, not a state
                    build.edge(op, build.node(OUTPUT, "output", "step output"), "bypass")
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
    nodes = []
    for node_id, entry in build.nodes.items():
        verdict = _verdict(by_weight.get(entry["label"], [])) if entry["kind"] == "weight" else ""
        nodes.append(Node(node_id, entry["kind"], entry["label"], verdict, tuple(entry["findings"]),
                          entry["plain"]))
    edges = tuple(Edge(source, dest, kind) for (source, dest), kind in build.edges.items())
    return LearningGraph(target, tuple(findings), tuple(nodes), edges)


def graphs_by_target(findings: list[Finding], targets: list[str] = ()) -> list[LearningGraph]:
    """One graph per target, in the order of ``targets`` then of first appearance in ``findings``."""
    grouped: dict[str, list[Finding]] = {name: [] for name in targets}
    for finding in findings:
        if finding.target:
            grouped.setdefault(finding.target, []).append(finding)
    return [learning_graph(name, items) for name, items in grouped.items()]


__all__ = ["Edge", "LEARNS", "LearningGraph", "NOT_LEARNING", "Node", "SAME_STEP", "UNKNOWN", "WRONG",
           "graphs_by_target", "learning_graph"]
