"""The learning graph of one model, read off its findings: weights -> ETP ops -> hidden states -> groups.

Every edge and every verdict here was reported by a rule (ETL001 says a
weight's op drives a state, ETL028 that states form one group, ETL005 that
a weight is excluded, ...), and each rule declares what its findings say of
a weight's learning (its ``says``, ``blocker`` and ``output_only``: core/rule.py);
this module only arranges them, so the HTML
report and the Python API show the same picture the text output tells.
It imports no JAX: a cached run draws its graph from cached findings.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from .details import CompilerRecord
from .findings import Finding, Level
from .registry import all_rules
from .rule import MeasuredRule, Rule
from .weight_verdict import WeightVerdict

# what stands between a weight and learning, as a finding's related locations name it, besides the rule's own
# ``blocker`` (core/rule.py)
_BLOCKING_WEIGHT = "blocking weight "  # the compiler excluded the weight behind another weight's op
_APPLIED = " applied here"  # an opaque transform (checkpoint, custom_jvp) around the op


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
    verdict: WeightVerdict | None = None  # weights only
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

    def weights(self) -> dict[str, WeightVerdict]:
        """Each weight's verdict by name: ``{"w_rec": WeightVerdict.ZERO, ...}``."""
        return {node.label: node.verdict or WeightVerdict.NOT_MEASURED for node in self.nodes if node.kind == "weight"}

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


def _rule(finding: Finding) -> Rule | None:
    return all_rules().get(finding.rule_id)


def _says(finding: Finding) -> WeightVerdict | None:
    """What a finding says of its weight's learning (its rule's ``says``); a denial only at warning or error, or
    measured (a whole multiple of BPTT's is a note, and still what the weight's gradient is)."""
    if measured_exact(finding):
        return WeightVerdict.LEARNS
    rule = _rule(finding)
    says = rule.says if rule is not None else None
    if says is None or says.learns or finding.level.rank >= Level.WARNING.rank or (rule is not None and rule.measured):
        return says
    return None


def _about_the_whole_model(finding: Finding) -> bool:
    """A finding that says the model's online step cannot be had: it raises, or braintrace refuses to compile
    the model. Even where it names the weight the error is about (the parameter whose gradient has another
    shape, an integer ParamState), the step raises for every weight: none learns."""
    return _says(finding) in (WeightVerdict.STEP_RAISES, WeightVerdict.REFUSED)


def _denies(finding: Finding) -> bool:
    """A finding that says a weight (or one of its uses) does not learn, or learns a wrong gradient."""
    says = _says(finding)
    return says is not None and not says.learns


def _folded_rules(finding: Finding) -> list[Rule]:
    """The rules of the measurements folded into the finding."""
    rules = all_rules()
    return [rule for m in finding.measured if (rule := rules.get(m.rule)) is not None]


def _measured_nothing(finding: Finding) -> bool:
    """A measurement (the finding's, or one folded into it) says the weight's online gradient is nothing."""
    own = _rule(finding)
    return any(rule.measured and rule.says is not None and rule.says.learns_nothing
               for rule in ([own] if own is not None else []) + _folded_rules(finding))


def measured_exact(finding: Finding) -> bool:
    """The measurements folded into the finding say the weight's whole online gradient is BPTT's, whatever the use
    the finding names misses (ETL421): every one of them, since one leaf measured exact beside another measured
    learning partly is a weight that learns partly."""
    folded = _folded_rules(finding)
    return bool(folded) and all(isinstance(rule, MeasuredRule) and rule.says is WeightVerdict.LEARNS
                                for rule in folded)


def _measured_learning(finding: Finding) -> bool:
    """A measurement folded into the finding says the weight's online gradient is not zero (it learns partly)."""
    return any(isinstance(rule, MeasuredRule) and rule.learns_partly for rule in _folded_rules(finding))


def _verdict(findings: list[Finding]) -> WeightVerdict:
    """A weight's state: what its findings say together, never one of them against another.

    The strongest claim decides (core/weight_verdict.py), save one case: a weight the compiler connects
    through one use (a finding that says it learns) while another of its uses is left out (one that says
    it does not) learns partly, unless a measurement says its whole online gradient is nothing. A run
    that hides notes does not build the claim that it learns: its weight's other findings say the
    compiler connects it."""
    said = [(says, finding) for finding in findings if (says := _says(finding)) is not None]
    if not said:
        return WeightVerdict.NOT_MEASURED
    strongest = min((says for says, _ in said), key=lambda says: says.rank)
    if strongest is WeightVerdict.ZERO:
        # --verify's rows stand beside the graph's denial, not folded into it: a gradient they measure is learning
        gradients = [says for says, finding in said if _measures_a_gradient(finding, says)]
        learns = (any(says.learns for says, _ in said) or any(finding.weight_connected for finding in findings)
                  or any(_measured_learning(finding) for finding in findings) or bool(gradients))
        if learns and not any(_measured_nothing(f) for f in findings):
            # what the measurement says where it says more (against BPTT), else that it learns through some uses
            return min([WeightVerdict.PARTLY, *gradients], key=lambda says: says.rank)
    return strongest


def _measures_a_gradient(finding: Finding, says: WeightVerdict) -> bool:
    """A measured finding of its own (not folded into a static one) that says the weight's online gradient is
    something: not nothing, and measured (--verify's "approximates", "poorly aligned", "against BPTT")."""
    rule = _rule(finding)
    return (rule is not None and rule.measured and not says.learns_nothing
            and says is not WeightVerdict.NOT_MEASURED)


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
        else:
            # about the weights it names, none of them alone, or about the whole model (its online step raises)
            # and so about each weight whose claim it replaced: each is drawn with it
            replaced = (e.weight for e in finding.static_evidence if e.weight)
            for name in dict.fromkeys((*finding.subject.weights, *replaced)):
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
    # a step that raises, or a model braintrace refuses, as a whole: no weight of it learns online, whatever
    # else is said of the weight's uses (it is drawn with the weights whose claims it replaced, as above)
    whole_model = [f for f in findings if _about_the_whole_model(f)]
    nodes = []
    for node_id, entry in build.nodes.items():
        verdict = (_verdict(by_weight.get(entry["label"], []) + whole_model) if entry["kind"] == "weight"
                   else None)
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
    rule = _rule(finding)
    blocker = rule.blocker if rule is not None else None
    if blocker is not None and not blocker.at:  # the finding's own line is the plain op
        return build.node(f"block:{finding.path}:{finding.line}:{finding.rule_id}", "op",
                          f"{blocker.shown} (line {finding.line})", index, plain=True)
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
        if blocker is not None and label == blocker.at:
            return build.node(f"block:{related.path}:{related.line}:{label}", "op",
                              f"{blocker.shown} (line {related.line})", index, plain=True)
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
    rule = _rule(finding)
    if rule is not None and rule.output_only:
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


__all__ = ["Edge", "LearningGraph", "Node", "Region", "graphs_by_target", "learning_graph"]
