"""Write random-but-valid brainstate/braintrace models to real ``.py`` files.

A :class:`ModelSpec` describes a stack of layers; :func:`write_model` renders it
as a module with one model class and an ``etrace_target`` factory, so the
equations of the traced step carry real file/line information, exactly as a
user's model would. Beside the source it returns what the generator knows for
sure about every weight (which op consumes it, whether its output feeds a
hidden state directly, and the lines that mention it), the ground truth the
property tests compare the linter against.
"""

from __future__ import annotations

import importlib.util
import itertools
import os
import re
from dataclasses import dataclass, field

LAYER_KINDS = ("linear", "leak", "lif", "rnn", "gru")
# how a layer applies its weight: braintrace.nn.Linear, braintrace.matmul, plain `@`
OPS = ("nn_linear", "etp_matmul", "plain")
# what surrounds the layer's weight op inside the step
WRAPS = ("none", "cond", "scan_short", "scan_long")
SHORT_SCAN, LONG_SCAN = 3, 40
RECURRENT = ("leak", "lif", "rnn", "gru")


@dataclass(frozen=True)
class Layer:
    kind: str
    op: str = "etp_matmul"  # not used by "gru"
    size: int = 4
    wrap: str = "none"  # not used by "gru"


@dataclass(frozen=True)
class ModelSpec:
    n_in: int
    layers: tuple[Layer, ...]
    readout: str | None = None  # an op from OPS, or no readout
    n_out: int = 2


@dataclass(frozen=True)
class WeightTruth:
    """What the generator knows about the weights held by one attribute of the model."""

    attr: str  # first component of the ParamState path(s)
    op: str  # "nn_linear" | "etp_matmul" | "plain" | "gru"
    feeds_hidden_directly: bool  # the op's output is a term of a hidden state's update
    lines: frozenset[int] = frozenset()  # lines that create or use the attribute
    enclosing: frozenset[int] = frozenset()  # the jax.lax.scan call around its use, if any

    @property
    def etp(self) -> bool:
        return self.op != "plain"


@dataclass
class GeneratedModel:
    path: str
    source: str
    factory_line: int
    weights: dict[str, WeightTruth] = field(default_factory=dict)
    scans: dict[int, int] = field(default_factory=dict)  # line of a jax.lax.scan -> its length
    conds: frozenset[int] = frozenset()  # lines of jax.lax.cond calls
    _module: object = None

    @property
    def n_lines(self) -> int:
        return self.source.count("\n") + 1

    def build(self):
        """A fresh ``(model, inputs)`` from the written file."""
        if self._module is None:
            name = "etl_generated_" + os.path.splitext(os.path.basename(self.path))[0]
            spec = importlib.util.spec_from_file_location(name, self.path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            self._module = module
        return self._module.etrace_target()

    def truth_for_path(self, dotted: str) -> WeightTruth | None:
        return self.weights.get(dotted.split(".", 1)[0])


class _Writer:
    def __init__(self):
        self.init_lines: list[str] = []
        self.step_lines: list[str] = []
        self.truth: list[tuple[str, str, bool]] = []
        self._ids = itertools.count()

    def weight(self, prefix: str, n_in: int, n_out: int, op: str) -> str:
        """Declare the layer's weight; returns a template of its op applied to ``{x}``."""
        if op == "nn_linear":
            attr = f"{prefix}_fc"
            self.init_lines.append(f"self.{attr} = braintrace.nn.Linear({n_in}, {n_out})")
            return f"self.{attr}({{x}})"
        attr = f"{prefix}_w"
        self.init_lines.append(f"self.{attr} = brainstate.ParamState(jnp.ones(({n_in}, {n_out})) * 0.1)")
        if op == "etp_matmul":
            return f"braintrace.matmul({{x}}, self.{attr}.value)"
        return f"({{x}} @ self.{attr}.value)"

    def layer(self, index: int, layer: Layer, n_prev: int) -> int:
        prefix, n = f"l{index}", layer.size
        step = self.step_lines
        if layer.kind == "gru":
            attr = f"{prefix}_cell"
            self.init_lines.append(f"self.{attr} = braintrace.nn.GRUCell({n_prev}, {n})")
            step.append(f"x = self.{attr}(x)")
            self.truth.append((attr, "gru", True))
            return n
        width_in = n_prev + n if layer.kind == "rnn" else n_prev
        op = self.weight(prefix, width_in, n, layer.op)
        attr = re.search(r"self\.(\w+)", op).group(1)
        direct = layer.kind in RECURRENT and layer.wrap == "none"
        self.truth.append((attr, layer.op, direct))
        if layer.kind != "linear":
            hidden = f"self.{prefix}_h"
            self.init_lines.append(f"{hidden} = brainstate.HiddenState(jnp.zeros(({n},)))")
        if layer.wrap.startswith("scan"):
            self._scanned(prefix, layer, op, n)
            return n
        source = "jnp.concatenate([x, self.%s_h.value])" % prefix if layer.kind == "rnn" else "x"
        term = op.format(x=source)
        if layer.wrap == "cond":
            term = f"jax.lax.cond(x.sum() > 0, lambda: {term}, lambda: 0.5 * {term})"
        if layer.kind == "linear":
            step.append(f"x = jnp.tanh({term})")
        elif layer.kind == "leak":
            step.append(f"{hidden}.value = 0.9 * {hidden}.value + {term}")
            step.append(f"x = {hidden}.value")
        elif layer.kind == "rnn":
            step.append(f"{hidden}.value = jnp.tanh({term})")
            step.append(f"x = {hidden}.value")
        else:  # lif: leak, spike through a surrogate, soft reset
            step.append(f"v = 0.9 * {hidden}.value + {term}")
            step.append("s = surrogate.sigmoid(v - 1.0)")
            step.append(f"{hidden}.value = v - s")
            step.append("x = s")
        return n

    def _scanned(self, prefix: str, layer: Layer, op: str, n: int) -> None:
        """The layer's update repeated inside a ``jax.lax.scan`` (short: unrolled; long: kept)."""
        length = SHORT_SCAN if layer.wrap == "scan_short" else LONG_SCAN
        body, step = f"body_{prefix}", self.step_lines
        step.append(f"def {body}(c, _):")
        if layer.kind == "linear":
            step.append(f"    return c + jnp.tanh({op.format(x='x')}), None")
            step.append(f"x = jax.lax.scan({body}, jnp.zeros(({n},)), None, length={length})[0]")
            return
        hidden = f"self.{prefix}_h"
        if layer.kind == "rnn":
            step.append(f"    return jnp.tanh({op.format(x='jnp.concatenate([x, c])')}), None")
        elif layer.kind == "leak":
            step.append(f"    return 0.9 * c + {op.format(x='x')}, None")
        else:
            step.append(f"    v = 0.9 * c + {op.format(x='x')}")
            step.append("    return v - surrogate.sigmoid(v - 1.0), None")
        step.append(f"{hidden}.value = jax.lax.scan({body}, {hidden}.value, None, length={length})[0]")
        step.append(f"x = {hidden}.value" if layer.kind != "lif" else f"x = surrogate.sigmoid({hidden}.value - 1.0)")


def render(spec: ModelSpec) -> tuple[str, list[tuple[str, str, bool]]]:
    writer = _Writer()
    n = spec.n_in
    for index, layer in enumerate(spec.layers):
        n = writer.layer(index, layer, n)
    if spec.readout is not None:
        op = writer.weight("ro", n, spec.n_out, spec.readout)
        writer.truth.append((re.search(r"self\.(\w+)", op).group(1), spec.readout, False))
        writer.step_lines.append(f"return {op.format(x='x')}")
    else:
        writer.step_lines.append("return x")
    lines = [
        '"""Generated by tests/model_factory.py."""',
        "import brainstate",
        "import braintrace",
        "import jax",
        "import jax.numpy as jnp",
        "from braintools import surrogate",
        "",
        "",
        "class Generated(brainstate.nn.Module):",
        "    def __init__(self):",
        "        super().__init__()",
        *("        " + line for line in writer.init_lines),
        "",
        "    def update(self, x):",
        *("        " + line for line in writer.step_lines),
        "",
        "",
        "def etrace_target():",
        "    model = Generated()",
        "    brainstate.nn.init_all_states(model)",
        f"    return model, (jnp.ones(({spec.n_in},)),)",
        "",
    ]
    return "\n".join(lines), writer.truth


def write_model(spec: ModelSpec, directory: str, stem: str) -> GeneratedModel:
    source, truth = render(spec)
    path = os.path.join(os.path.abspath(directory), f"{stem}.py")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(source)
    source_lines = source.split("\n")
    factory_line = source_lines.index("def etrace_target():") + 1
    model = GeneratedModel(path, source, factory_line)
    for number, text in enumerate(source_lines, start=1):
        scan = re.search(r"jax\.lax\.scan\(.*length=(\d+)\)", text)
        if scan:
            model.scans[number] = int(scan.group(1))
    model.conds = frozenset(i for i, text in enumerate(source_lines, start=1) if "jax.lax.cond(" in text)
    for attr, op, direct in truth:
        mention = re.compile(rf"self\.{attr}\b")
        lines = frozenset(i for i, text in enumerate(source_lines, start=1) if mention.search(text))
        # a scan body is a nested def: its call is the first scan line after the use
        enclosing = set()
        for line in lines:
            if source_lines[line - 1].startswith(" " * 12):
                enclosing.add(min(n for n in model.scans if n > line))
        model.weights[attr] = WeightTruth(attr, op, direct, lines, frozenset(enclosing))
    return model
