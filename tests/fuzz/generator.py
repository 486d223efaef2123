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
OPS = ("matmul", "linear", "plain", "lora", "factored", "element_wise", "mul", "conv", "conv_layer", "sparse")
CONVS = ("conv", "conv_layer")
# how a stateful layer keeps its own state from one step to the next (the leak)
LEAKS = ("const", "element_wise", "mul", "environ")
# what the layer keeps: nothing, one state, a spiking membrane, a synapse feeding a membrane, ...
# braintrace.nn's own recurrent cells, as a user takes them off the shelf: gates multiply the state they keep
LIBRARY_CELLS = {"gru": "GRUCell", "lstm": "LSTMCell", "mgu": "MGUCell", "minimal": "MinimalRNNCell"}
CELLS = ("leak", "ff", "lif", "rnn", "syn", "pair", "short_term", *LIBRARY_CELLS)
STATEFUL = ("leak", "lif", "rnn", "syn", "pair")
DRAWN_CELLS = ("leak", "lif", "rnn", "syn", "pair", "short_term", "ff", "leak", "lif", "syn", "gru", "lstm", "mgu",
               "minimal")
SPIKES = ("surrogate", "bool")
ACTIVATIONS = ("none", "tanh", "relu")
NORMS = ("none", "layer", "rms", "dyt", "batch")
# the control flow around the layer's weight op
WRAPS = ("none", "cond", "fori", "scan", "long_scan", "while", "vmap")
# as drawn: most layers unwrapped, and a while loop (which every learner refuses) rarely
DRAWN_WRAPS = ("none", "none", "none", "cond", "fori", "none", "none", "cond", "fori", "scan", "long_scan", "while",
               "vmap", "vmap")
# as drawn: a stack of feed-forward layers alone is a model braintrace refuses, so fewer of them
READOUTS = ("none", "matmul", "linear", "plain", "leaky")
# braintrace's learners both lines export: D_RTRL, ES_D_RTRL (pp_prop's alias), pp_prop, EProp
ALGORITHMS = ("d_rtrl", "es_d_rtrl", "pp_prop", "eprop")
# the options every algorithm is given, on both sides (pp_prop and ES-D-RTRL have no default decay)
ALGORITHM_OPTIONS: dict[str, dict[str, Any]] = {"d_rtrl": {}, "es_d_rtrl": {"decay_or_rank": 0.9},
                                                "pp_prop": {"decay_or_rank": 0.9}, "eprop": {}}
# the cells whose state may carry a unit (saiunit's mV): those whose state is the layer's own sum
UNIT_CELLS = ("leak", "lif", "syn", "pair")
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
    units: bool = False  # the layer's state is in mV (UNIT_CELLS only)


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
    input_unit: bool = False  # the input is in mA

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
        seen += ["state units" for layer in self.layers if layer.units and layer.cell in UNIT_CELLS]
        seen += ["input units"] * self.input_unit
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
                     wrap=st.sampled_from(DRAWN_WRAPS), units=_rarely(3))


def model_specs() -> st.SearchStrategy[ModelSpec]:
    return st.builds(ModelSpec, layers=st.lists(layers(), min_size=1, max_size=3).map(tuple),
                     n_in=st.integers(2, 5), readout=st.sampled_from(READOUTS), n_out=st.integers(1, 3),
                     batch=st.sampled_from((0, 2)), after_output=_rarely(), param_write=_rarely(8),
                     algorithm=st.sampled_from(ALGORITHMS), vjp_method=st.sampled_from(VJP_METHODS),
                     input_unit=_rarely())


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
        self.uses_fit = False  # a Dropout or a BatchNorm: brainstate.environ's fit key
        self.helpers: set[str] = set()  # module-level helpers the model calls (HELPERS' keys)
        self.length = 0  # a convolution's layer: its state is (..., length, n), the input's length by n

    def shape(self, n: int) -> str:
        dims = (self.spec.batch,) * bool(self.spec.batch) + (self.length,) * bool(self.length) + (n,)
        return str(dims)

    def param(self, attr: str, shape: tuple[int, ...], scale: float) -> None:
        self.init.append(f"self.{attr} = brainstate.ParamState(_init({shape}, {next(self.seeds)}, {scale}))")

    def op(self, prefix: str, op: str, n_in: int, n: int) -> str:
        """Declare the layer's weight; a template of its op applied to ``{x}`` (unbatched or batched)."""
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
        # a convolution over the input as one channel, n channels out, channels last: (..., n_in, n), the shape
        # of the layer's state (self.length); averaged over the input's length where a state of n is fed
        mean = "" if self.length else ".mean(-2)"
        if op == "conv":  # braintrace.conv
            self.helpers.add("_conv")
            self.param(f"{prefix}_w", (3, 1, n), round(1.5 / 3 ** 0.5, 3))
            return f"_conv({{x}}, self.{prefix}_w.value){mean}"
        if op == "conv_layer":  # braintrace.nn.Conv1d
            self.init.append(f"self.{prefix}_conv = braintrace.nn.Conv1d(({n_in}, 1), {n}, 3)")
            return f"self.{prefix}_conv(jnp.asarray({{x}}, jnp.float32)[..., None]){mean}"  # spikes may be bool
        if op == "sparse":  # braintrace.nn.SparseLinear on a fixed CSR pattern
            self.helpers.add("_csr")
            self.init.append(f"self.{prefix}_sp = braintrace.nn.SparseLinear(_csr({n_in}, {n}, {next(self.seeds)},"
                             f" {scale}))")
            return f"self.{prefix}_sp({{x}})"
        self.param(f"{prefix}_w", (n_in, n), scale)
        if op == "matmul":
            return f"braintrace.matmul({{x}}, self.{prefix}_w.value)"
        return f"({{x}} @ self.{prefix}_w.value)"

    def wrapped(self, prefix: str, layer: Layer, template: str, source: str, n: int) -> str:
        """The op's template applied to ``source``, inside the layer's control flow; the name holding it."""
        term = template.format(x=source)
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
        elif layer.wrap == "vmap":  # the op mapped over the batch axis (a batch of one, unbatched)
            mapped = f"brainstate.transform.vmap(lambda xi: {template.format(x='xi')})"
            step.append(f"{name} = {mapped}({source})" if self.spec.batch else
                        f"{name} = {mapped}({source}[None])[0]")
        else:
            length = SCAN_LENGTH[layer.wrap]
            step.append(f"{name} = jax.lax.scan(lambda c, _: (0.5 * c + {term}, None), {zeros}, None,"
                        f" length={length})[0]")
        if layer.norm in ("layer", "rms"):
            norm = "LayerNorm" if layer.norm == "layer" else "RMSNorm"
            self.init.append(f"self.{prefix}_norm = braintrace.nn.{norm}({n})")
        elif layer.norm == "dyt":
            self.helpers.add("DyT")
            self.init.append(f"self.{prefix}_norm = DyT({n})")
        elif layer.norm == "batch":
            self.uses_fit = True
            norm = f"BatchNorm1d(({self.length}, {n}))" if self.length else f"BatchNorm0d({n})"
            self.init.append(f"self.{prefix}_norm = brainstate.nn.{norm}")
        if layer.norm != "none":
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

    def hidden(self, attr: str, n: int, kind: str = "HiddenState", unit: str = "") -> str:
        self.init.append(f"self.{attr} = brainstate.{kind}(jnp.zeros({self.shape(n)}){unit})")
        return f"self.{attr}"

    def spike(self, layer: Layer, v: str, unit: str) -> list[str]:
        """Lines that spike from membrane ``v`` into ``s`` and reset it; the layer's output is ``x``."""
        plain = "v / u.mV" if unit else "v"
        if layer.spike == "bool":
            return [f"s = {plain} >= 1.0", f"{v}.value = u.math.where(s, 0.0{unit}, v)", "x = s"]
        return [f"s = surrogate.sigmoid({plain} - 1.0)", f"{v}.value = v - s{unit}", "x = s"]

    def act(self, layer: Layer, value: str) -> str:
        return {"none": value, "tanh": f"jnp.tanh({value})", "relu": f"jax.nn.relu({value})"}[layer.activation]

    def layer(self, index: int, layer: Layer, n_prev: int) -> int:
        prefix, n, step = f"l{index}", layer.size, self.step
        unit = " * u.mV" if layer.units and layer.cell in UNIT_CELLS else ""

        def plain(value: str) -> str:  # a state's value without its unit
            return f"{value} / u.mV" if unit else value

        if layer.dropout:
            self.uses_fit = True
            self.init.append(f"self.{prefix}_drop = brainstate.nn.Dropout(0.8)")
            step.append(f"x = self.{prefix}_drop(x)")
        if layer.cell in LIBRARY_CELLS:  # the cell's own weights and states; the layer's op, wrap and norm unused
            self.init.append(f"self.{prefix}_cell = braintrace.nn.{LIBRARY_CELLS[layer.cell]}({n_prev}, {n})")
            step.append(f"x = self.{prefix}_cell(jnp.asarray(x, jnp.float32))")  # spikes may be bool
            if layer.activation != "none":
                step.append(f"x = {self.act(layer, 'x')}")
            return n
        if layer.cell == "rnn":
            h = self.hidden(f"{prefix}_h", n)
            template = self.op(prefix, layer.op, n_prev + n, n)
            source = f"jnp.concatenate([x, {h}.value], axis=-1)"
            term = self.wrapped(prefix, layer, template, source, n)
            step.append(f"{h}.value = {self.act(layer, term) if layer.activation != 'none' else f'jnp.tanh({term})'}")
            step.append(f"x = {h}.value")
            return n
        self.length = n_prev if layer.op in CONVS else 0
        template = self.op(prefix, layer.op, n_prev, n)
        term = self.wrapped(prefix, layer, template, "x", n)
        if layer.cell == "ff":
            step.append(f"x = {self.act(layer, term)}")
        elif layer.cell == "leak":
            h = self.hidden(f"{prefix}_h", n, unit=unit)
            step.append(f"{h}.value = {self.leak(prefix, layer, f'{h}.value', n)} + {term}{unit}")
            step.append(f"x = {self.act(layer, plain(f'{h}.value'))}")
        elif layer.cell == "short_term":
            kept = self.hidden(f"{prefix}_st", n, "ShortTermState")
            step.append(f"{prefix}_prev = {kept}.value")
            step.append(f"{kept}.value = {term}")
            step.append(f"x = {self.act(layer, f'{term} + 0.5 * {prefix}_prev')}")
        elif layer.cell == "pair":
            a, b = self.hidden(f"{prefix}_a", n, unit=unit), self.hidden(f"{prefix}_b", n, unit=unit)
            step.append(f"{a}.value = {self.leak(prefix, layer, f'{a}.value', n)} + {term}{unit} - 0.3 * {b}.value")
            step.append(f"{b}.value = 0.8 * {b}.value + 0.2 * {a}.value")
            step.append(f"x = {self.act(layer, plain(f'{a}.value'))}")
        else:  # lif / syn: a membrane that spikes, fed directly or through a synapse
            v = self.hidden(f"{prefix}_v", n, unit=unit)
            current = f"{term}{unit}"
            if layer.cell == "syn":
                g = self.hidden(f"{prefix}_g", n, unit=unit)
                step.append(f"{g}.value = 0.8 * {g}.value + {term}{unit}")
                current = f"{g}.value"
            step.append(f"v = {self.leak(prefix, layer, f'{v}.value', n)} + {current}")
            step.extend(self.spike(layer, v, unit))
        if self.length:
            step.append("x = x.mean(-2)")
            self.length = 0
        return n

    def last_state(self, index: int, layer: Layer) -> str | None:
        names = {"leak": "h", "rnn": "h", "lif": "v", "syn": "v", "pair": "a"}
        if layer.cell in LIBRARY_CELLS:
            return f"self.l{index}_cell.h"
        return f"self.l{index}_{names[layer.cell]}" if layer.cell in names else None


# module-level code a generated model calls, written only where it does
HELPERS = {
    "_conv": [
        "def _conv(x, w):",
        "    # braintrace.conv wants a batch axis: the input is one channel, the output's channels come last",
        "    y = braintrace.conv(x.reshape((-1, x.shape[-1], 1)).astype(w.dtype), w,",
        "                        dimension_numbers=('NWC', 'WIO', 'NWC'))",
        "    return y.reshape(x.shape + (w.shape[-1],))",
    ],
    "_csr": [
        "def _csr(n_in, n, seed, scale):",
        "    rng = np.random.RandomState(seed)",
        "    dense = (rng.uniform(size=(n_in, n)) < 0.6) * rng.standard_normal((n_in, n)) * scale",
        "    dense[0] = np.where(dense[0] == 0, scale, dense[0])  # every unit gets an input",
        "    return brainevent.CSR.fromdense(jnp.asarray(dense, dtype=jnp.float32))",
    ],
    "DyT": [
        "class DyT(brainstate.nn.Module):",
        "    # dynamic tanh in place of a norm: tanh(alpha * x) * weight + bias, all learnable",
        "    def __init__(self, n):",
        "        super().__init__()",
        "        self.param = brainstate.ParamState({'alpha': jnp.ones(1) * 0.5, 'weight': jnp.ones(n),",
        "                                            'bias': jnp.zeros(n)})",
        "",
        "    def update(self, x):",
        "        p = self.param.value",
        "        return jnp.tanh(p['alpha'] * x) * p['weight'] + p['bias']",
    ],
}


def render(spec: ModelSpec, name: str) -> str:
    """The module's source: a model class and a factory ``@etrace_lint.target(name=name, ...)``."""
    writer = _Writer(spec)
    n = spec.n_in
    if spec.input_unit:
        writer.step.append("x = x / u.mA")
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
    if writer.uses_fit:
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
    inputs = f"jnp.ones({inputs})" + (" * u.mA" if spec.input_unit else "")
    init = f"brainstate.nn.init_all_states(model, {spec.batch})" if spec.batch else \
        "brainstate.nn.init_all_states(model)"
    helpers = [line for key in sorted(writer.helpers) for line in ("", "", *HELPERS[key])]
    lines = [
        f'"""Generated by tests/fuzz/generator.py: {json.dumps(spec.to_json(), sort_keys=True)}"""',
        *(["import brainevent"] if "_csr" in writer.helpers else []),
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
        *helpers,
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
        f"    return model, ({inputs},)",
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
