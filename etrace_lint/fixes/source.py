"""One file's concrete syntax tree (libcst) with positions, read once for every fix in it."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Mapping

from ..core.findings import Edit
from .edits import import_edit

if TYPE_CHECKING:  # libcst loads only when a fix is asked for; annotations only
    import libcst as cst
    from libcst.metadata import CodeRange


def load_parser_in_background() -> None:
    """Import libcst on a thread while the workers lint: the fixes need it once the findings are in,
    and the import (about half a second) would otherwise come after the last result."""

    def load() -> None:
        try:
            import libcst.metadata  # noqa: F401
        except Exception:  # noqa: BLE001 - the fix that needs it says why
            pass

    threading.Thread(target=load, name="etrace-lint-load-libcst", daemon=True).start()


class ParsedSource:
    """A file's text, its libcst module, and where each node starts and ends."""

    def __init__(self, path: str, text: str):
        import libcst as cst  # libcst loads only when a fix is asked for
        from libcst.metadata import MetadataWrapper, PositionProvider  # libcst loads only when a fix is asked for

        self.path = path
        self.text = text
        wrapper = MetadataWrapper(cst.parse_module(text), unsafe_skip_copy=True)
        self.module: cst.Module = wrapper.module
        self.positions: Mapping[cst.CSTNode, CodeRange] = wrapper.resolve(PositionProvider)
        self._by_line: dict[int, list[cst.CSTNode]] = {}
        for node, where in self.positions.items():
            self._by_line.setdefault(where.start.line, []).append(node)
        self._aliases = self._import_aliases()

    def nodes_starting_on(self, line: int) -> list[cst.CSTNode]:
        return self._by_line.get(line, [])

    def start(self, node: cst.CSTNode) -> tuple[int, int]:
        where = self.positions[node].start
        return where.line, where.column + 1

    def code(self, node: cst.CSTNode) -> str:
        return self.module.code_for_node(node)

    def replace(self, node: cst.CSTNode, text: str) -> Edit:
        where = self.positions[node]
        return Edit(self.path, where.start.line, where.start.column + 1, where.end.line, where.end.column + 1, text)

    def dotted(self, node: cst.CSTNode) -> str:
        """``jnp.dot`` for a chain of names and attributes, else ``""``."""
        import libcst as cst  # libcst loads only when a fix is asked for

        if isinstance(node, cst.Name):
            return node.value
        if isinstance(node, cst.Attribute):
            head = self.dotted(node.value)
            return f"{head}.{node.attr.value}" if head else ""
        return ""

    def _import_aliases(self) -> dict[str, str]:
        """Local name -> what it is bound to (``bst`` -> ``brainstate``, ``Linear`` -> ``brainstate.nn.Linear``)."""
        import libcst as cst  # libcst loads only when a fix is asked for

        aliases: dict[str, str] = {}
        for node in self.positions:
            if isinstance(node, cst.Import):
                for alias in node.names:
                    full = self.dotted(alias.name)
                    local = self.dotted(alias.asname.name) if alias.asname else full.split(".")[0]
                    aliases[local] = full if alias.asname else local
            elif isinstance(node, cst.ImportFrom) and node.module is not None and not node.relative \
                    and not isinstance(node.names, cst.ImportStar):
                module = self.dotted(node.module)
                for alias in node.names:
                    name = self.dotted(alias.name)
                    local = self.dotted(alias.asname.name) if alias.asname else name
                    aliases[local] = f"{module}.{name}"
        return aliases

    def resolve(self, dotted: str) -> str:
        """``bst.nn.Linear`` -> ``brainstate.nn.Linear`` through the file's imports."""
        head, _, rest = dotted.partition(".")
        bound = self._aliases.get(head)
        if bound is None:
            return dotted
        return f"{bound}.{rest}" if rest else bound

    def braintrace_alias(self) -> str | None:
        """The name this file binds braintrace to, or None when it does not import it."""
        return next((local for local, full in sorted(self._aliases.items()) if full == "braintrace"), None)

    def is_brainstate_linear(self, func: cst.BaseExpression) -> bool:
        return self.resolve(self.dotted(func)) == "brainstate.nn.Linear"

    def import_braintrace(self) -> Edit:
        return import_edit(self.path, self.module, self.positions)


class Sources:
    """Parsed files by path, each read and parsed once; None for a file that cannot be."""

    def __init__(self, overrides: dict[str, str] | None = None):
        self._parsed: dict[str, ParsedSource | None] = {}
        self._overrides = dict(overrides or {})

    def text(self, path: str) -> str | None:
        if path in self._overrides:
            return self._overrides[path]
        try:
            with open(path, encoding="utf-8") as handle:
                return handle.read()
        except (OSError, UnicodeDecodeError):
            return None

    def get(self, path: str) -> ParsedSource | None:
        if path not in self._parsed:
            text = self.text(path)
            parsed = None
            if text is not None:
                try:
                    parsed = ParsedSource(path, text)
                except Exception:  # libcst's ParserSyntaxError, or a file it cannot read
                    parsed = None
            self._parsed[path] = parsed
        return self._parsed[path]
