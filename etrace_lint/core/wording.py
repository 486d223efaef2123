"""How compiler, library and exception texts are shown to a modeller.

Below the engine: rules, verify, target loading and the engine all word
exceptions and compiler texts through these few functions, so one problem
reads the same wherever it is reported.
"""

from __future__ import annotations

import ast
import re
from typing import Hashable, Iterable

from .naming import display_name

_PATH_REPR = re.compile(r"\((?:'[^']*'|\"[^\"]*\"|\d+)(?:,\s*(?:'[^']*'|\"[^\"]*\"|\d+))*,?\)")


def plain_text(text: str, paths: Iterable[Iterable[Hashable]] = (),
               states: Iterable[Iterable[Hashable]] = ()) -> str:
    """A compiler or library text with its paths shown by name and its jargon put plainly.

    ``('cell', 'h')`` becomes ``cell.h`` and ``[('h',), ('c',)]`` becomes
    ``h, c``; ``ETP primitive etp_mv`` becomes ``ETP op `etp_mv```. ``paths``
    are the paths the text may name; ``states`` more of them, looked at only
    when a tuple is still left.
    """
    text = " ".join(str(text).split())
    known = {repr(tuple(p)): display_name(p) for p in paths}
    if "('" in text or '("' in text:
        known.update({repr(tuple(p)): display_name(p) for p in states if repr(tuple(p)) not in known})
    for shown in sorted(known, key=len, reverse=True):
        if shown in text:
            text = text.replace(f"[{shown}]", known[shown]).replace(shown, known[shown])

    def literal(match: re.Match[str]) -> str:  # a path the text names that the record did not list
        try:
            value = ast.literal_eval(match.group(0))
        except (ValueError, SyntaxError):
            return match.group(0)
        if isinstance(value, tuple) and any(isinstance(part, str) for part in value):
            return display_name(value)
        return match.group(0)  # a shape

    text = _PATH_REPR.sub(literal, text)
    text = re.sub(r"\[((?:[\w.\[\]<>]+(?:, )?)+)\]", lambda m: m.group(1) if "," in m.group(1) else m.group(0), text)
    text = re.sub(r"ETP primitive '?(\w+)'?", r"ETP op `\1`", text)
    return text


def exception_line(exc: BaseException, limit: int = 0) -> str:
    """An exception in one line: its class and the first line of its text, cut to ``limit``
    characters (0: not cut)."""
    lines = str(exc).strip().splitlines()
    text = f"{type(exc).__name__}: {lines[0]}" if lines and lines[0] else type(exc).__name__
    if limit and len(text) > limit:
        text = text[: limit - 3] + "..."
    return text


def error_sentence(exc: BaseException, limit: int = 300) -> str:
    """The exception's first sentence (its first line, or two when the first is short), with a
    parenthesis that follows it (saiunit names the units there), prefixed by its class."""
    lines = [line.strip() for line in str(exc).strip().splitlines() if line.strip()]
    text = lines[0] if lines else type(exc).__name__
    if len(lines) > 1 and len(text) < 60:
        text = f"{text} {lines[1]}"
    sentence = re.match(r"(.{40,}?[.!?])(\s*\([^()]*\)\.?)?(\s|$)", text)
    if sentence:
        text = sentence.group(1) + (sentence.group(2) or "")
    if len(text) > limit:
        text = text[: limit - 3].rstrip() + "..."
    return f"{type(exc).__name__}: {text}"


def unmeasured_zero(weight: str) -> str:
    """What a zero online gradient that only the graph shows adds to its message: that no measurement of the
    run backs it, and how to measure it."""
    return (f"; not measured: no online gradient of {weight} was compared with BPTT's in this run (the probe and "
            f"--verify compare a weight only where BPTT's gradient is not zero on their inputs, and a spiking "
            f"model that does not spike on random inputs gives none): run with --verify, and give the target "
            f"inputs that drive the model, @etrace_lint.target(verify={{'inputs': ...}})")


def some_entries(count: int, entries: int, weight: str) -> str:
    """``count`` of a weight's ``entries`` in a message: "all 16 entries of w", "4 of the 16 entries of w"."""
    return f"all {entries} entries of {weight}" if count == entries else f"{count} of the {entries} entries of {weight}"


def slope_left_out_online(weight: str, function: str) -> str:
    """What braintrace's online rule does with a plain function an ETP op reads a weight through (a ReLU, a clip):
    the clause a message adds after saying what BPTT does."""
    return (f"; braintrace's compiler reads {weight} through {function} to the ETP op after it and its online rule "
            f"leaves the slope out, so online it moves those entries as if there were no {function}, and its online "
            f"gradient of {weight} is not BPTT's")


def one_line(text: object, limit: int = 0) -> str:
    """A text with its whitespace runs made single spaces (a compiler's message in a property)."""
    line = " ".join(str(text).split())
    return line[:limit] if limit else line


# what a modeller calls each ETP primitive: the API that emits it
_OP_NAMES = {"etp_mv": "matmul", "etp_mm": "matmul", "etp_elemwise": "element-wise op",
             "etp_conv": "convolution", "etp_einsum": "einsum", "etp_sparse_mv": "sparse matmul",
             "etp_lora": "LoRA op"}


def op_phrase(primitive: str) -> str:
    return _OP_NAMES.get(primitive, f"`{primitive}` op" if primitive else "op")
