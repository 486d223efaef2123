"""Positions for a learning graph, left to right: grandalf's Sugiyama layout, one connected part at a time.

grandalf is pure Python (no Graphviz binary to install on a CI runner) and
lays out layered graphs, which is what weights -> ops -> states -> groups is.
Its layers run top to bottom; the graph is laid out with width and height
exchanged and then turned, so weights form a column on the left.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence, TypeVar

# grandalf (and the numpy it imports) loads with this module, which only the HTML report and the
# in-process API import: the writers load each format's module on first use, so the command line
# starts without it
from grandalf.graphs import Edge, Graph, Vertex
from grandalf.layouts import SugiyamaLayout

from ..core.learning_graph import LearningGraph

_Item = TypeVar("_Item")

NODE_HEIGHT = 26
CHAR_WIDTH = 7.0  # of the report's 12px monospace font
GAP = 28  # between the connected parts, stacked top to bottom
MARGIN = 12
REGION_PAD = 5  # between a region's box and what it holds
REGION_LABEL = 15  # the band above a region's contents that holds its label


@dataclass(frozen=True)
class PlacedNode:
    id: str
    x: float  # left
    y: float  # top
    width: float
    height: float


@dataclass(frozen=True)
class PlacedEdge:
    source: str
    target: str
    kind: str
    points: tuple[tuple[float, float], ...]
    findings: tuple[int, ...] = ()  # the findings the edge shows (why a weight does not learn, a bypass)


@dataclass(frozen=True)
class PlacedRegion:
    """A box around the ops of one control-flow region; ``members`` are the node ids inside it."""

    id: str
    x: float
    y: float
    width: float
    height: float
    members: tuple[str, ...]


@dataclass(frozen=True)
class Layout:
    nodes: dict[str, PlacedNode]
    edges: tuple[PlacedEdge, ...]
    width: float
    height: float
    regions: tuple[PlacedRegion, ...] = ()
    left: float = 0.0  # the drawing's top-left corner: a region's label may stand above the first node
    top: float = 0.0


class _View:
    """What grandalf reads and writes on a vertex: its size and centre."""

    def __init__(self, w: float, h: float) -> None:
        self.w, self.h, self.xy = w, h, (0.0, 0.0)


class _EdgeView:
    def __init__(self) -> None:
        self.points: list[tuple[float, float]] = []

    def setpath(self, points: list[tuple[float, float]]) -> None:
        self.points = points


def node_width(label: str) -> float:
    return max(60.0, len(label) * CHAR_WIDTH + 18)


def layout(graph: LearningGraph) -> Layout:
    """Where each node and edge of ``graph`` is drawn, in SVG pixels."""
    vertices: dict[str, Vertex] = {}
    for node in graph.nodes:
        vertex = Vertex(node.id)
        # turned: grandalf's width is our height, its height our width
        # room above an op in a region for the label of each box around it
        vertex.view = _View(NODE_HEIGHT + 14 + (REGION_LABEL + REGION_PAD) * len(node.regions),
                            node_width(node.label))
        vertices[node.id] = vertex
    edges = []
    for edge in graph.edges:
        if edge.source in vertices and edge.target in vertices and edge.source != edge.target:
            link = Edge(vertices[edge.source], vertices[edge.target], data=edge)
            link.view = _EdgeView()
            edges.append(link)
    whole = Graph(list(vertices.values()), edges)
    regions_of = {node.id: node.regions for node in graph.nodes if node.regions}
    placed: dict[str, PlacedNode] = {}
    routed: list[PlacedEdge] = []
    top = MARGIN
    width = 0.0
    part_of: dict[str, int] = {}  # node id -> its connected part: a region's box never spans two parts
    for number, part in enumerate(whole.C):
        members = list(part.sV)
        part_of.update((vertex.data, number) for vertex in members)
        if len(members) > 1:
            sugiyama = SugiyamaLayout(part)
            sugiyama.init_all()
            # grandalf's draw(): a full ordering step and a one-way one, then coordinates and edge routes;
            # between the ordering and the coordinates, each region's ops are brought together
            for _ in sugiyama.ordering_step():
                pass
            for _ in sugiyama.ordering_step(oneway=True):
                pass
            _group_regions(sugiyama, regions_of)
            sugiyama.setxy()
            sugiyama.draw_edges()
        # grandalf's (x, y) of a centre, turned: our x is its y, our y its x
        min_gx = min(v.view.xy[0] - v.view.w / 2 for v in members)
        min_gy = min(v.view.xy[1] - v.view.h / 2 for v in members)
        max_gx = max(v.view.xy[0] + v.view.w / 2 for v in members)
        for vertex in members:
            gx, gy = vertex.view.xy
            w, h = vertex.view.h, NODE_HEIGHT
            cx, cy = MARGIN + gy - min_gy, top + gx - min_gx
            placed[vertex.data] = PlacedNode(vertex.data, cx - w / 2, cy - h / 2, w, h)
            width = max(width, cx + w / 2 + MARGIN)
        for link in part.sE:
            source, target = placed[link.v[0].data], placed[link.v[1].data]
            inner = [(MARGIN + py - min_gy, top + px - min_gx) for px, py in link.view.points[1:-1]]
            start = (source.x + source.width, source.y + source.height / 2)
            end = (target.x, target.y + target.height / 2)
            routed.append(PlacedEdge(source.id, target.id, link.data.kind, (start, *inner, end),
                                     link.data.findings))
        top += max_gx - min_gx + GAP
    regions = region_boxes(graph, placed, part_of)
    left = min([0.0] + [r.x - 2 for r in regions])
    upper = min([0.0] + [r.y - 2 for r in regions])
    width = max([width, 200.0] + [r.x + r.width + 2 for r in regions]) - left
    height = max([top - GAP + MARGIN, 40.0] + [r.y + r.height + 2 for r in regions]) - upper
    return Layout(placed, tuple(routed), width, height, regions, left, upper)


def _grouped(items: list[tuple[tuple[str, ...], _Item]], depth: int = 0) -> list[_Item]:
    """A layer's vertices in their order, each region's members moved up to its first member, and so on
    for the regions nested in it."""
    order: list[_Item] = []
    placed_groups: set[str] = set()
    for key, vertex in items:
        if len(key) <= depth:
            order.append(vertex)
        elif key[depth] not in placed_groups:
            placed_groups.add(key[depth])
            order += _grouped([(k, v) for k, v in items if len(k) > depth and k[depth] == key[depth]], depth + 1)
    return order


def _group_regions(sugiyama: SugiyamaLayout, regions: dict[str, tuple[str, ...]]) -> None:
    """grandalf orders a layer to reduce crossings and knows nothing of regions: bring each region's ops
    together, then order the other layers by where their neighbours now stand, so edges stay short."""
    grouped: set[int] = set()
    for number, layer in enumerate(sugiyama.layers):
        keys = [(_regions_around(v, regions), v) for v in layer]
        if not any(key for key, _ in keys):
            continue
        layer[:] = _grouped(keys)
        for position, vertex in enumerate(layer):
            sugiyama.grx[vertex].pos = position
        grouped.add(number)
    if not grouped:
        return
    for number, layer in enumerate(sugiyama.layers):
        if number in grouped:
            continue

        def place(vertex: Vertex, layer: list[Vertex] = layer) -> float:
            seen: list[float] = [sugiyama.grx[n].pos / max(len(sugiyama.layers[sugiyama.grx[n].rank]), 1)
                                 for n in (vertex.N(-1) + vertex.N(+1)) if n in sugiyama.grx]
            return sum(seen) / len(seen) if seen else sugiyama.grx[vertex].pos / max(len(layer), 1)

        layer.sort(key=place)
        for position, vertex in enumerate(layer):
            sugiyama.grx[vertex].pos = position


def _regions_around(vertex: Vertex, regions: dict[str, tuple[str, ...]]) -> tuple[str, ...]:
    """The regions around a vertex of a layer; none around the dummy vertices grandalf adds on long edges."""
    data = getattr(vertex, "data", None)  # grandalf's dummy vertices have no data
    return regions.get(data, ()) if isinstance(data, str) else ()


def _box(items: Sequence[PlacedNode | PlacedRegion]) -> tuple[float, float, float, float]:
    """(x, y, right, bottom) around ``items`` (anything with x, y, width, height), with the label band."""
    pad = REGION_PAD
    return (min(i.x for i in items) - pad, min(i.y for i in items) - pad - REGION_LABEL,
            max(i.x + i.width for i in items) + pad, max(i.y + i.height for i in items) + pad)


def _overlaps(box: tuple[float, float, float, float], node: PlacedNode) -> bool:
    x, y, right, bottom = box
    return node.x < right and node.x + node.width > x and node.y < bottom and node.y + node.height > y


def region_boxes(graph: LearningGraph, placed: dict[str, PlacedNode],
                 part_of: dict[str, int] | None = None) -> tuple[PlacedRegion, ...]:
    """A box per region and connected part around its ops, innermost regions first so an outer box holds
    the inner ones (the parts are stacked apart: one box over two would cover what lies between).

    grandalf orders a layer without knowing of regions: when the box around
    a region's ops would also cover an op outside it, each of its ops gets a
    box of its own (same label) rather than a box that claims a stranger.
    """
    depth = {region.id: 0 for region in graph.regions}
    for region in graph.regions:
        parent = region.parent
        while parent:
            depth[parent] = max(depth.get(parent, 0), depth[region.id] + 1)
            parent = next((r.parent for r in graph.regions if r.id == parent), "")
    boxes: list[PlacedRegion] = []
    part_of = part_of or {}
    for region, members in [(region, [n.id for n in graph.nodes if region.id in n.regions and n.id in placed
                                      and part_of.get(n.id) == part])
                            for region in sorted(graph.regions, key=lambda r: depth[r.id])
                            for part in dict.fromkeys(part_of.get(n.id) for n in graph.nodes
                                                      if region.id in n.regions)]:
        if not members:
            continue
        inner = [b for b in boxes if b.members and set(b.members) <= set(members)]
        box = _box([*(placed[m] for m in members), *inner])
        if any(_overlaps(box, node) for node_id, node in placed.items() if node_id not in members):
            for member in members:
                x, y, right, bottom = _box([placed[member]] + [b for b in inner if member in b.members])
                boxes.append(PlacedRegion(region.id, x, y, right - x, bottom - y, (member,)))
            continue
        x, y, right, bottom = box
        boxes.append(PlacedRegion(region.id, x, y, right - x, bottom - y, tuple(members)))
    return tuple(boxes)


__all__ = ["Layout", "PlacedEdge", "PlacedNode", "PlacedRegion", "layout", "node_width", "region_boxes"]
