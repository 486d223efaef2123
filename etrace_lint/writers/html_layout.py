"""Positions for a learning graph, left to right: grandalf's Sugiyama layout, one connected part at a time.

grandalf is pure Python (no Graphviz binary to install on a CI runner) and
lays out layered graphs, which is what weights -> ops -> states -> groups is.
Its layers run top to bottom; the graph is laid out with width and height
exchanged and then turned, so weights form a column on the left.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..learning_graph import LearningGraph

NODE_HEIGHT = 26
CHAR_WIDTH = 7.0  # of the report's 12px monospace font
GAP = 28  # between the connected parts, stacked top to bottom
MARGIN = 12


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


@dataclass(frozen=True)
class Layout:
    nodes: dict[str, PlacedNode]
    edges: tuple[PlacedEdge, ...]
    width: float
    height: float


class _View:
    """What grandalf reads and writes on a vertex: its size and centre."""

    def __init__(self, w: float, h: float) -> None:
        self.w, self.h, self.xy = w, h, (0.0, 0.0)


class _EdgeView:
    def __init__(self) -> None:
        self.points: list = []

    def setpath(self, points: list) -> None:
        self.points = points


def node_width(label: str) -> float:
    return max(60.0, len(label) * CHAR_WIDTH + 18)


def layout(graph: LearningGraph) -> Layout:
    """Where each node and edge of ``graph`` is drawn, in SVG pixels."""
    from grandalf.graphs import Edge, Graph, Vertex
    from grandalf.layouts import SugiyamaLayout

    vertices = {}
    for node in graph.nodes:
        vertex = Vertex(node.id)
        # turned: grandalf's width is our height, its height our width
        vertex.view = _View(NODE_HEIGHT + 14, node_width(node.label))
        vertices[node.id] = vertex
    edges = []
    for edge in graph.edges:
        if edge.source in vertices and edge.target in vertices and edge.source != edge.target:
            link = Edge(vertices[edge.source], vertices[edge.target], data=edge)
            link.view = _EdgeView()
            edges.append(link)
    whole = Graph(list(vertices.values()), edges)
    placed: dict[str, PlacedNode] = {}
    routed: list[PlacedEdge] = []
    top = MARGIN
    width = 0.0
    for part in whole.C:
        members = list(part.sV)
        if len(members) > 1:
            sugiyama = SugiyamaLayout(part)
            sugiyama.init_all()
            sugiyama.draw()
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
            routed.append(PlacedEdge(source.id, target.id, link.data.kind, (start, *inner, end)))
        top += max_gx - min_gx + GAP
    return Layout(placed, tuple(routed), max(width, 200.0), max(top - GAP + MARGIN, 40.0))


__all__ = ["Layout", "PlacedEdge", "PlacedNode", "layout", "node_width"]
