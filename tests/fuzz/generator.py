"""Valid brainstate/braintrace models as data, hypothesis strategies over them, and the ``.py`` files they become.

A :class:`ModelSpec` is a stack of :class:`Layer` records and a few model-wide choices (readout, batch,
algorithm, ...); :func:`render` writes it as a module with one model class and one ``@etrace_lint.target``
factory, as a user writes a model, so the linter's locations are real lines. Every choice's first value is
its simplest: hypothesis shrinks a spec towards it (fewer layers, plain cells, no wrapper, no norm).

A spec only describes: whether the model it renders builds and runs is checked by running it
(:func:`check_runs`, in the oracle's process), and a model that does not run is rejected, never judged.
"""

from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

# how a layer applies its weight to its input
OPS = ("matmul", "linear", "plain", "lora", "factored", "element_wise", "mul")
# how a stateful layer keeps its own state from one step to the next (the leak)
LEAKS = ("const", "element_wise", "mul", "environ")
# what the layer keeps: nothing, one state, a spiking membrane, a synapse feeding a membrane, ...
CELLS = ("leak", "ff", "lif", "rnn", "syn", "pair", "short_term")
STATEFUL = ("leak", "lif", "rnn", "syn", "pair")
DRAWN_CELLS = ("leak", "lif", "rnn", "syn", "pair", "short_term", "ff", "leak", "lif", "syn")
SPIKES = ("surrogate", "bool")
ACTIVATIONS = ("none", "tanh", "relu")
NORMS = ("none", "layer", "rms")
# the control flow around the layer's weight op
WRAPS = ("none", "cond", "fori", "scan", "long_scan", "while")
# as drawn: most layers unwrapped, and a while loop (which every learner refuses) rarely
DRAWN_WRAPS = ("none", "none", "none", "cond", "fori", "none", "none", "cond", "fori", "scan", "long_scan", "while")
# as drawn: a stack of feed-forward layers alone is a model braintrace refuses, so fewer of them
READOUTS = ("none", "matmul", "linear", "plain", "leaky")
ALGORITHMS = ("d_rtrl", "es_d_rtrl", "pp_prop")
# the options every algorithm is given, on both sides (pp_prop and ES-D-RTRL have no default decay)
ALGORITHM_OPTIONS: dict[str, dict[str, Any]] = {"d_rtrl": {}, "es_d_rtrl": {"decay_or_rank": 0.9},
                                                "pp_prop": {"decay_or_rank": 0.9}}
VJP_METHODS = ("single-step", "multi-step")
SCAN_LENGTH = {"scan": 3, "long_scan": 40}


@dataclass(frozen=True)
class Layer:
    cell: str = "leak"
    op: str = "matmul"
    size: int = 3
    leak: str = "const"
    spike: str = "surrogate"  # lif and syn only
    activation: str = "none"
    norm: str = "none"
    dropout: bool = False
    wrap: str = "none"


@dataclass(frozen=True)
class ModelSpec:
    layers: tuple[Layer, ...]
    n_in: int = 3
    readout: str = "none"
    n_out: int = 2
    batch: int = 0  # 0: unbatched
    after_output: bool = False  # the last layer's state is updated again after the output is computed
    param_write: bool = False  # an input gain, a ParamState the step writes
    algorithm: str = "d_rtrl"
    vjp_method: str = "single-step"

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @staticmethod
    def from_json(data: dict[str, Any]) -> ModelSpec:
        layers = tuple(Layer(**layer) for layer in data["layers"])
        return ModelSpec(**{**data, "layers": layers})

    def key(self) -> str:
        return json.dumps(self.to_json(), sort_keys=True)

    def constructs(self) -> list[str]:
        """The constructs the model uses, by name: the campaign's table counts them."""
        seen = [f"op:{layer.op}" for layer in self.layers] + [f"cell:{layer.cell}" for layer in self.layers]
        seen += [f"wrap:{layer.wrap}" for layer in self.layers if layer.wrap != "none"]
        seen += [f"norm:{layer.norm}" for layer in self.layers if layer.norm != "none"]
        seen += [f"leak:{layer.leak}" for layer in self.layers if layer.cell in STATEFUL and layer.leak != "const"]
        seen += ["dropout" for layer in self.layers if layer.dropout]
        seen += ["bool spikes" for layer in self.layers if layer.cell in ("lif", "syn") and layer.spike == "bool"]
        seen += [f"readout:{self.readout}", f"algorithm:{self.algorithm}", f"vjp:{self.vjp_method}"]
        seen += ["batch"] * bool(self.batch) + ["after output"] * self.after_output + ["param write"] * self.param_write
        return sorted(set(seen))


# ------------------------------------------------------------------ strategies (simplest value first)


def _rarely(one_in: int = 4) -> st.SearchStrategy[bool]:
    """True one time in ``one_in`` (a ParamState written in the step makes every learner refuse the model)."""
    return st.sampled_from((False,) * (one_in - 1) + (True,))


def layers() -> st.SearchStrategy[Layer]:
    return st.builds(Layer, cell=st.sampled_from(DRAWN_CELLS), op=st.sampled_from(OPS), size=st.integers(2, 5),
                     leak=st.sampled_from(LEAKS), spike=st.sampled_from(SPIKES),
                     activation=st.sampled_from(ACTIVATIONS), norm=st.sampled_from(NORMS), dropout=_rarely(),
                     wrap=st.sampled_from(DRAWN_WRAPS))


def model_specs() -> st.SearchStrategy[ModelSpec]:
    return st.builds(ModelSpec, layers=st.lists(layers(), min_size=1, max_size=3).map(tuple),
                     n_in=st.integers(2, 5), readout=st.sampled_from(READOUTS), n_out=st.integers(1, 3),
                     batch=st.sampled_from((0, 2)), after_output=_rarely(), param_write=_rarely(8),
                     algorithm=st.sampled_from(ALGORITHMS), vjp_method=st.sampled_from(VJP_METHODS))


def simpler_specs(spec: ModelSpec) -> st.SearchStrategy[ModelSpec]:
    """Specs made of ``spec``'s own parts, each choice either kept or set back to its simplest value, each layer
    kept or dropped: what a disagreement shrinks over. A draw keeps each part three times in four (so that one
    which still disagrees is found in a few draws); hypothesis shrinks towards the simplest value and the
    fewest layers."""

    def choice(value: Any, simplest: Any) -> st.SearchStrategy[Any]:
        return st.sampled_from((simplest, value, value, value)) if value != simplest else st.just(value)

    def layer(original: Layer) -> st.SearchStrategy[Layer]:
        default = Layer()
        fields = {f.name: choice(getattr(original, f.name), getattr(default, f.name))
                  for f in dataclasses.fields(Layer) if f.name != "size"}
        return st.builds(Layer, size=choice(original.size, 2), **fields)

    def kept(flags: tuple[bool, ...], drawn: tuple[Layer, ...]) -> tuple[Layer, ...]:
        return tuple(one for one, keep in zip(drawn, flags) if keep) or drawn[-1:]

    count = len(spec.layers)
    chosen = st.builds(kept, st.tuples(*(st.sampled_from((False, True, True, True)) for _ in range(count))),
                       st.tuples(*(layer(original) for original in spec.layers)))
    base = ModelSpec(layers=())
    fields = {f.name: choice(getattr(spec, f.name), getattr(base, f.name))
              for f in dataclasses.fields(ModelSpec) if f.name != "layers"}
    return st.builds(ModelSpec, layers=chosen, **fields)


# ------------------------------------------------------------------ rendering


class _Writer:
    def __init__(self, spec: ModelSpec):
        self.spec = spec
        self.init: list[str] = []
        self.step: list[str] = []
        self.seeds = iter(range(1, 1000))
        self.uses_dt = False
        self.uses_dropout = False

    def shape(self, n: int) -> str:
        return f"({self.spec.batch}, {n})" if self.spec.batch else f"({n},)"

    def param(self, attr: str, shape: tuple[int, ...], scale: float) -> None:
        self.init.append(f"self.{attr} = brainstate.ParamState(_init({shape}, {next(self.seeds)}, {scale}))")

    def op(self, prefix: str, op: str, n_in: int, n: int) -> str:
        """Declare the layer's weight; a template of its op applied to ``{x}``."""
        scale = round(1.5 / n_in ** 0.5, 3)
        if op == "linear":
            self.init.append(f"self.{prefix}_fc = braintrace.nn.Linear({n_in}, {n})")
            return f"self.{prefix}_fc({{x}})"
        if op == "lora":
            self.init.append(f"self.{prefix}_lora = braintrace.nn.LoRA({n_in}, 2, {n})")
            return f"self.{prefix}_lora({{x}})"
        if op == "factored":
            self.param(f"{prefix}_wa", (n_in, 2), scale)
            self.param(f"{prefix}_wb", (2, n), 0.7)
            return f"braintrace.matmul({{x}}, self.{prefix}_wa.value @ self.{prefix}_wb.value)"
        if op in ("element_wise", "mul"):  # a weight per unit, on the input's mean
            self.param(f"{prefix}_w", (n,), 1.0)
            weight = f"braintrace.element_wise(self.{prefix}_w.value)" if op == "element_wise" else \
                f"self.{prefix}_w.value"
            return f"({weight} * jnp.mean({{x}}, axis=-1, keepdims=True))"
        self.param(f"{prefix}_w", (n_in, n), scale)
        if op == "matmul":
            return f"braintrace.matmul({{x}}, self.{prefix}_w.value)"
        return f"({{x}} @ self.{prefix}_w.value)"

    def wrapped(self, prefix: str, layer: Layer, term: str, n: int) -> str:
        """The op's term, computed inside the layer's control flow; returns the name holding it."""
        name, step = f"{prefix}_in", self.step
        zeros = f"jnp.zeros({self.shape(n)})"
        if layer.wrap == "none":
            step.append(f"{name} = {term}")
        elif layer.wrap == "cond":
            step.append(f"{name} = jax.lax.cond(jnp.sum(x) > 0, lambda: {term}, lambda: 0.5 * {term})")
        elif layer.wrap == "fori":
            step.append(f"{name} = jax.lax.fori_loop(0, 2, lambda i, c: c + {term}, {zeros})")
        elif layer.wrap == "while":
            step.append(f"{name} = jax.lax.while_loop(lambda c: c[0] < 2, lambda c: (c[0] + 1, c[1] + {term}),"
                        f" (0, {zeros}))[1]")
        else:
            length = SCAN_LENGTH[layer.wrap]
            step.append(f"{name} = jax.lax.scan(lambda c, _: (0.5 * c + {term}, None), {zeros}, None,"
                        f" length={length})[0]")
        if layer.norm != "none":
            norm = "LayerNorm" if layer.norm == "layer" else "RMSNorm"
            self.init.append(f"self.{prefix}_norm = braintrace.nn.{norm}({n})")
            step.append(f"{name} = self.{prefix}_norm({name})")
        return name

    def leak(self, prefix: str, layer: Layer, state: str, n: int) -> str:
        if layer.leak == "element_wise":
            self.init.append(f"self.{prefix}_tau = brainstate.ParamState(jnp.full(({n},), 0.9))")
            return f"braintrace.element_wise(self.{prefix}_tau.value) * {state}"
        if layer.leak == "mul":
            self.init.append(f"self.{prefix}_tau = brainstate.ParamState(jnp.full(({n},), 0.9))")
            return f"self.{prefix}_tau.value * {state}"
        if layer.leak == "environ":
            self.uses_dt = True
            return f"brainstate.environ.get('decay') * {state}"
        return f"0.9 * {state}"

    def hidden(self, attr: str, n: int, kind: str = "HiddenState") -> str:
        self.init.append(f"self.{attr} = brainstate.{kind}(jnp.zeros({self.shape(n)}))")
        return f"self.{attr}"

    def spike(self, layer: Layer, v: str) -> list[str]:
        """Lines that spike from membrane ``v`` into ``s`` and reset it; the layer's output is ``x``."""
        if layer.spike == "bool":
            return ["s = v >= 1.0", f"{v}.value = jnp.where(s, 0.0, v)", "x = s"]
        return ["s = surrogate.sigmoid(v - 1.0)", f"{v}.value = v - s", "x = s"]

    def act(self, layer: Layer, value: str) -> str:
        return {"none": value, "tanh": f"jnp.tanh({value})", "relu": f"jax.nn.relu({value})"}[layer.activation]

    def layer(self, index: int, layer: Layer, n_prev: int) -> int:
        prefix, n, step = f"l{index}", layer.size, self.step
        if layer.dropout:
            self.uses_dropout = True
            self.init.append(f"self.{prefix}_drop = brainstate.nn.Dropout(0.8)")
            step.append(f"x = self.{prefix}_drop(x)")
        if layer.cell == "rnn":
            h = self.hidden(f"{prefix}_h", n)
            template = self.op(prefix, layer.op, n_prev + n, n)
            source = f"jnp.concatenate([x, {h}.value], axis=-1)"
            term = self.wrapped(prefix, layer, template.format(x=source), n)
            step.append(f"{h}.value = {self.act(layer, term) if layer.activation != 'none' else f'jnp.tanh({term})'}")
            step.append(f"x = {h}.value")
            return n
        template = self.op(prefix, layer.op, n_prev, n)
        term = self.wrapped(prefix, layer, template.format(x="x"), n)
        if layer.cell == "ff":
            step.append(f"x = {self.act(layer, term)}")
        elif layer.cell == "leak":
            h = self.hidden(f"{prefix}_h", n)
            step.append(f"{h}.value = {self.leak(prefix, layer, f'{h}.value', n)} + {term}")
            step.append(f"x = {self.act(layer, f'{h}.value')}")
        elif layer.cell == "short_term":
            kept = self.hidden(f"{prefix}_st", n, "ShortTermState")
            step.append(f"{prefix}_prev = {kept}.value")
            step.append(f"{kept}.value = {term}")
            step.append(f"x = {self.act(layer, f'{term} + 0.5 * {prefix}_prev')}")
        elif layer.cell == "pair":
            a, b = self.hidden(f"{prefix}_a", n), self.hidden(f"{prefix}_b", n)
            step.append(f"{a}.value = {self.leak(prefix, layer, f'{a}.value', n)} + {term} - 0.3 * {b}.value")
            step.append(f"{b}.value = 0.8 * {b}.value + 0.2 * {a}.value")
            step.append(f"x = {self.act(layer, f'{a}.value')}")
        else:  # lif / syn: a membrane that spikes, fed directly or through a synapse
            v = self.hidden(f"{prefix}_v", n)
            current = term
            if layer.cell == "syn":
                g = self.hidden(f"{prefix}_g", n)
                step.append(f"{g}.value = 0.8 * {g}.value + {term}")
                current = f"{g}.value"
            step.append(f"v = {self.leak(prefix, layer, f'{v}.value', n)} + {current}")
            step.extend(self.spike(layer, v))
        return n

    def last_state(self, index: int, layer: Layer) -> str | None:
        names = {"leak": "h", "rnn": "h", "lif": "v", "syn": "v", "pair": "a"}
        return f"self.l{index}_{names[layer.cell]}" if layer.cell in names else None


def render(spec: ModelSpec, name: str) -> str:
    """The module's source: a model class and a factory ``@etrace_lint.target(name=name, ...)``."""
    writer = _Writer(spec)
    n = spec.n_in
    if spec.param_write:
        writer.init.append(f"self.gain = brainstate.ParamState(jnp.ones(({spec.n_in},)))")
        writer.step.append("x = x * self.gain.value")
    for index, layer in enumerate(spec.layers):
        n = writer.layer(index, layer, n)
    if spec.readout == "none":
        writer.step.append("out = x")
    elif spec.readout == "leaky":
        writer.init.append(f"self.readout = braintrace.nn.LeakyRateReadout({n}, {spec.n_out})")
        writer.step.append("out = self.readout(x)")
    else:
        template = writer.op("ro", spec.readout, n, spec.n_out)
        writer.step.append(f"out = {template.format(x='x')}")
    last = writer.last_state(len(spec.layers) - 1, spec.layers[-1])
    if spec.after_output and last is not None:
        writer.step.append(f"{last}.value = 0.95 * {last}.value")
    if spec.param_write:
        writer.step.append("self.gain.value = self.gain.value * 0.999")
    writer.step.append("return out")
    environ = []  # brainstate.environ keys, as source text
    if writer.uses_dt:
        environ.append("'decay': 0.85")
    if writer.uses_dropout:
        environ.append("'fit': True")
    if spec.readout == "leaky":
        environ.append("'dt': 1.0 * u.ms")
    options: dict[str, Any] = {"algorithms": [spec.algorithm]}
    chosen = dict(ALGORITHM_OPTIONS[spec.algorithm])
    if spec.vjp_method != "single-step":
        chosen["vjp_method"] = spec.vjp_method
    if chosen:
        options["algorithm_options"] = {spec.algorithm: chosen}
    decorator = [f"name={name!r}"]
    if environ:
        decorator.append(f"environ={{{', '.join(environ)}}}")
    if spec.batch:
        decorator.append(f"batch_size={spec.batch}")
    decorator.append(f"verify={options!r}")
    inputs = f"({spec.batch}, {spec.n_in})" if spec.batch else f"({spec.n_in},)"
    init = f"brainstate.nn.init_all_states(model, {spec.batch})" if spec.batch else \
        "brainstate.nn.init_all_states(model)"
    lines = [
        f'"""Generated by tests/fuzz/generator.py: {json.dumps(spec.to_json(), sort_keys=True)}"""',
        "import brainstate",
        "import braintrace",
        "import brainunit as u",
        "import jax",
        "import jax.numpy as jnp",
        "import numpy as np",
        "from braintools import surrogate",
        "",
        "import etrace_lint",
        "",
        "",
        "def _init(shape, seed, scale):",
        "    return jnp.asarray(np.random.RandomState(seed).standard_normal(shape) * scale, dtype=jnp.float32)",
        "",
        "",
        "class Generated(brainstate.nn.Module):",
        "    def __init__(self):",
        "        super().__init__()",
        *("        " + line for line in writer.init),
        "",
        "    def update(self, x):",
        *("        " + line for line in writer.step),
        "",
        "",
        f"@etrace_lint.target({', '.join(decorator)})",
        "def etrace_target():",
        "    model = Generated()",
        f"    {init}",
        f"    return model, (jnp.ones({inputs}),)",
        "",
    ]
    return "\n".join(lines)


def write(spec: ModelSpec, folder: str, name: str) -> str:
    """Write the spec's module as ``folder/name.py``; its path."""
    path = os.path.join(os.path.abspath(folder), f"{name}.py")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(render(spec, name))
    return path


def spec_of(path: str) -> ModelSpec:
    """The spec a generated file was written from (its docstring's first line)."""
    with open(path, encoding="utf-8") as handle:
        head = handle.readline()
    return ModelSpec.from_json(json.loads(head.split(": ", 1)[1].rstrip().removesuffix('"""')))
