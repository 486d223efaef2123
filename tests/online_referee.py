"""The tests' reference: braintrace's own online gradient against exact BPTT, through braintrace's and
brainstate's public API only.

Only braintrace's and brainstate's public API is used here, never etrace-lint's
code, so the referee cannot share a mistake with the linter it judges (the one
exception names weights: :func:`named` keys the advisor's leaves as its rows
name them, with etrace-lint's ``display_name``). Two users:

- tests/real_models (:func:`judge`), described below;
- the advisor's tests (:func:`unrolled_bptt`, :func:`online`,
  :func:`allocated_bytes`, :func:`online_step`, ...): the learner's state
  allocated for real and its bytes summed, BPTT through the model unrolled
  in Python, the online gradient one step per call, XLA's analysis of
  jitted steps.

For
each lint target and each online algorithm it names (``verify={"algorithms":
[...]}`` on its decorator; D-RTRL, braintrace's ``D_RTRL`` /
``ParamDimVjpAlgorithm``, when it names none), one run of ``steps`` steps:

- the algorithm's class (``braintrace.D_RTRL``, ``braintrace.pp_prop``, ...)
  on the model as its factory initialised it, then ``compile_graph(*x0)``: a
  refusal is recorded as the target's error at stage ``"compile"``;
- ``learner.etrace_grad`` over the sequence, one step per call (no window),
  the per-step losses summed: an exception is recorded at stage ``"step"``;
- exact BPTT through ``brainstate.transform.for_loop`` and
  ``brainstate.transform.grad``, from the same states, with the same loss
  (``brainstate.transform.jacfwd``, the same derivative in forward mode, where
  JAX cannot reverse the step: a ``while_loop`` in it);
- whether ``braintrace.compile`` refuses a fresh copy of the model
  (``CompilationError``: no weight reaches a hidden state through an ETP op).

Each weight (every ``ParamState`` leaf) then gets both gradients: whether the
online one is finite, exactly zero, and how far it is from BPTT (cosine,
relative error). Nothing is cached or written down: every figure is measured
when the test runs.
"""

from __future__ import annotations

import ast
import contextlib
import importlib.util
import os
import sys
from dataclasses import dataclass
from typing import Any, Callable, Iterator

import brainstate
import braintrace
import jax
import jax.numpy as jnp
import numpy as np

DEFAULT_ALGORITHMS = ("d_rtrl",)
# braintrace.compile's registered names, for the classes both 0.2.6 and 0.2.8 export
ALGORITHMS = {"d_rtrl": braintrace.D_RTRL, "pp_prop": braintrace.pp_prop, "es_d_rtrl": braintrace.ES_D_RTRL,
              "esd_rtrl": braintrace.ES_D_RTRL, "eprop": braintrace.EProp, "e_prop": braintrace.EProp}
# pp_prop has no default rank/decay; the value braintrace's pp_prop examples start from
DEFAULT_OPTIONS = {"pp_prop": {"decay_or_rank": 0.9}, "es_d_rtrl": {"decay_or_rank": 0.9}}
TARGET_ATTRIBUTE = "__etrace_lint_target__"  # what @etrace_lint.target stores on the factory
# BPTT must exceed this norm for a zero online gradient to mean anything
BPTT_FLOOR = 1e-7
# an online gradient this many times smaller than BPTT's is zero: a mean subtraction (LayerNorm) that
# cancels a gradient exactly in real arithmetic leaves float32 rounding of about 1e-8 of it
ROUNDING = 1e-5
INPUT_SCALES = (1.0, 4.0, 16.0, 64.0)


@dataclass(frozen=True)
class WeightTruth:
    path: tuple[str, ...]          # the ParamState's path in the model (all its leaves together)
    online_norm: float
    bptt_norm: float
    finite: bool
    cosine: float | None           # None where either side is zero
    rel_error: float | None        # |online - bptt| / |bptt|; None where BPTT is zero

    @property
    def learns(self) -> bool:
        """A finite online gradient that is not zero (nor float32 rounding around zero)."""
        return self.finite and self.online_norm > max(ROUNDING * self.bptt_norm, 0.0)

    @property
    def silent(self) -> bool:
        """Zero online while BPTT is not: the weight keeps its value under online learning."""
        return self.finite and self.bptt_norm > BPTT_FLOOR and not self.learns

    def describe(self) -> str:
        figures = f"|online|={self.online_norm:.3g}, |bptt|={self.bptt_norm:.3g}"
        if self.cosine is not None:
            figures += f", cos={self.cosine:.3f}, rel.err={self.rel_error:.3g}"
        return f"{'.'.join(self.path)}: {figures}{'' if self.finite else ', NOT FINITE'}"


@dataclass(frozen=True)
class TargetTruth:
    file: str                      # relative to the corpus folder
    target: str                    # the name the linter reports as the model
    algorithm: str
    stage: str                     # "" when the online step ran; else "build", "compile", "bptt" or "step"
    error: str
    weights: tuple[WeightTruth, ...]
    refused: str = ""              # why braintrace.compile(model, algorithm, x0) refuses the model, if it does

    def weight(self, path: tuple[str, ...]) -> WeightTruth | None:
        for truth in self.weights:
            if truth.path == path:
                return truth
        return None


@dataclass(frozen=True)
class TargetSpec:
    file: str
    factory: str
    name: str


def declared_targets(folder: str) -> list[TargetSpec]:
    """Every decorated factory of the folder's files, read without importing them."""
    found = []
    for file in sorted(os.listdir(folder)):
        if not file.endswith(".py") or file.startswith("_"):
            continue
        with open(os.path.join(folder, file), encoding="utf-8") as handle:
            tree = ast.parse(handle.read())
        for node in tree.body:
            if isinstance(node, ast.FunctionDef):
                name = _declared_name(node)
                if name is not None:
                    found.append(TargetSpec(file, node.name, name or node.name))
    return found


def _declared_name(node: ast.FunctionDef) -> str | None:
    for decorator in node.decorator_list:
        call = decorator if isinstance(decorator, ast.Call) else None
        func = call.func if call else decorator
        if isinstance(func, ast.Attribute) and func.attr == "target":
            for keyword in call.keywords if call else ():
                if keyword.arg == "name" and isinstance(keyword.value, ast.Constant):
                    return keyword.value.value
            return ""
    return "" if node.name.startswith("etrace_target") else None


def load(path: str, name: str) -> Any:
    """The file as module ``name``, its folder importable while it runs (a model that imports a sibling)."""
    folder = os.path.dirname(os.path.abspath(path))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, folder)
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(folder)
    return module


def _mantissa(value: Any) -> Any:
    return getattr(value, "mantissa", value)


def _is_quantity(value: Any) -> bool:
    return hasattr(value, "mantissa") and hasattr(value, "unit")


def mean_squared_output(output: Any) -> Any:
    leaves = [jnp.asarray(_mantissa(leaf)) for leaf in jax.tree.leaves(output, is_leaf=_is_quantity)]
    leaves = [leaf for leaf in leaves if jnp.issubdtype(leaf.dtype, jnp.inexact)]
    return sum((jnp.mean(leaf ** 2) for leaf in leaves), jnp.zeros(()))


def _noise(example_inputs: tuple, steps: int, seed: int) -> tuple:
    leaves, tree = jax.tree.flatten(example_inputs, is_leaf=_is_quantity)
    drawn = []
    for index, leaf in enumerate(leaves):
        value = np.asarray(_mantissa(leaf))
        key = jax.random.PRNGKey(seed + index)
        shape = (steps, *value.shape)
        if np.issubdtype(value.dtype, np.bool_):
            draw = jax.random.bernoulli(key, 0.5, shape)
        elif np.issubdtype(value.dtype, np.integer):
            draw = jax.random.randint(key, shape, 0, max(2, int(value.max()) + 1), dtype=value.dtype)
        else:
            draw = jax.random.normal(key, shape, dtype=value.dtype)
        drawn.append(draw * leaf.unit if _is_quantity(leaf) else draw)
    return tuple(jax.tree.unflatten(tree, drawn))


def _snapshot(model: Any) -> list:
    return [(st, st.value) for st in brainstate.graph.states(model).values()]


def _restore(pairs: list) -> None:
    for st, value in pairs:
        st.value = value


def _leaves(grads: dict) -> dict[tuple[str, ...], np.ndarray]:
    """One flat vector per ParamState (a Linear's weight and bias together), as the linter names weights."""
    flat = {}
    for path, tree in grads.items():
        leaves = jax.tree.leaves(tree, is_leaf=_is_quantity)
        flat[tuple(str(p) for p in path)] = np.concatenate(
            [np.asarray(_mantissa(leaf), dtype=np.float64).ravel() for leaf in leaves] or [np.zeros(0)])
    return flat


def named(grads: dict) -> dict[str, np.ndarray]:
    """One array per ParamState leaf, named as the advisor's rows name them (``cell.W['weight']``)."""
    from etrace_lint.core.naming import display_name  # naming only: no figure goes through the linter's code

    flat = {}
    for path, tree in grads.items():
        for leaf_path, leaf in jax.tree_util.tree_flatten_with_path(tree, is_leaf=_is_quantity)[0]:
            flat[display_name(tuple(path)) + jax.tree_util.keystr(leaf_path)] = np.asarray(_mantissa(leaf),
                                                                                            np.float64)
    return flat


def _online_gradient(learner: Any, loss: Callable, sequence: tuple, **more: Any) -> Any:
    """``etrace_grad`` over ``sequence`` (inputs with a leading time axis), the per-step losses summed."""
    return learner.etrace_grad(*sequence, step_fn=lambda *x: loss(learner(*x)), reduction="sum",
                               loss_output="scalar", **more)


def online_program(learner: Any, loss: Callable) -> Callable:
    """The learner's online gradient over a sequence, jitted: ``program(sequence)``."""
    return brainstate.transform.jit(lambda sequence: _online_gradient(learner, loss, sequence))


def bptt_program(model: Any, loss: Callable, differentiate: Callable = brainstate.transform.grad) -> Callable:
    """Exact BPTT of the summed loss over a sequence through ``for_loop``, jitted: ``program(sequence)``;
    ``differentiate``: ``brainstate.transform.jacfwd`` where JAX cannot reverse the step."""
    weights = model.states(brainstate.ParamState)

    @brainstate.transform.jit
    def bptt(sequence):
        def total():
            return brainstate.transform.for_loop(lambda *x: loss(model(*x)), *sequence).sum()
        return differentiate(total, weights)()
    return bptt


def _short(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}".strip()
    return text.splitlines()[0][:300] if text else type(exc).__name__


def judge(folder: str, spec: TargetSpec, steps: int = 4, seed: int = 0) -> list[TargetTruth]:
    """One TargetTruth per algorithm of the target."""
    try:
        module = load(os.path.join(folder, spec.file), "real_models_" + spec.file[:-3])
        factory = getattr(module, spec.factory)
        declared = getattr(factory, TARGET_ATTRIBUTE, {}) or {}
        verify = declared.get("verify", {})
        algorithms = tuple(verify.get("algorithms", DEFAULT_ALGORITHMS))
    except Exception as exc:  # the file itself is broken: every algorithm fails to build
        return [TargetTruth(spec.file, spec.name, "d_rtrl", "build", _short(exc), ())]
    return [_judge_one(spec, factory, declared, algorithm, steps, seed) for algorithm in algorithms]


def _judge_one(spec: TargetSpec, factory: Callable, declared: dict, algorithm: str, steps: int,
               seed: int) -> TargetTruth:
    verify = declared.get("verify", {})
    options = dict(DEFAULT_OPTIONS.get(algorithm, {}))
    options.update(verify.get("algorithm_options", {}).get(algorithm, {}))
    loss = verify.get("loss", mean_squared_output)

    def truth(stage: str, error: str, weights: tuple = ()) -> TargetTruth:
        return TargetTruth(spec.file, spec.name, algorithm, stage, error, weights)

    with brainstate.environ.context(**declared.get("environ", {})):
        brainstate.random.seed(seed)
        try:
            built = factory()
            model, example_inputs = built[0], tuple(built[1])
            inputs_fn = verify.get("inputs")
            batch = declared.get("batch_size")
            xs = inputs_fn(steps, batch, seed) if inputs_fn else _noise(example_inputs, steps, seed)
            xs = xs if isinstance(xs, tuple) else (xs,)
        except Exception as exc:
            return truth("build", _short(exc))
        x0 = jax.tree.map(lambda a: a[0], xs, is_leaf=_is_quantity)
        try:
            learner = _learner(model, algorithm, x0, options)
        except Exception as exc:
            return truth("compile", _short(exc))
        start = _snapshot(model)
        learner_start = _snapshot(learner)
        try:
            try:
                exact, xs = _bptt_with_signal(bptt_program(model, loss), xs, start, bool(inputs_fn))
            except ValueError as exc:
                if "Reverse-mode differentiation does not work for lax.while_loop" not in str(exc):
                    raise
                _restore(start)
                exact, xs = _bptt_with_signal(bptt_program(model, loss, brainstate.transform.jacfwd), xs, start,
                                              bool(inputs_fn))
        except Exception as exc:  # the model itself does not run over a sequence: nothing to judge
            return truth("bptt", _short(exc))
        try:
            online_grads = _leaves(online_program(learner, loss)(xs))
        except Exception as exc:
            return truth("step", _short(exc))
        finally:
            _restore(learner_start)
            _restore(start)
    weights = tuple(_compare(path, online_grads.get(path), exact[path]) for path in sorted(exact))
    return TargetTruth(spec.file, spec.name, algorithm, "", "", weights,
                       _refusal(factory, declared, algorithm, options, x0))


def _refusal(factory: Callable, declared: dict, algorithm: str, options: dict, x0: tuple) -> str:
    """braintrace.compile's verdict on a fresh copy of the model: it checks, as the learner's own
    class does not, that some weight is routed through an ETP op to a hidden state."""
    with brainstate.environ.context(**declared.get("environ", {})):
        try:
            model = factory()[0]
            braintrace.compile(model, algorithm, *x0, batch_size=declared.get("batch_size"), **options)
        except braintrace.CompilationError as exc:
            return _short(exc)
        except Exception:  # a layout braintrace.compile cannot re-initialise (a Map): not a refusal
            return ""
    return ""


def _learner(model: Any, algorithm: str, x0: tuple, options: dict) -> Any:
    """The algorithm built on the model as the factory left it, as a training script does
    (``braintrace.compile`` would initialise the states again, unbatched, and so lose a
    ``brainstate.nn.Map``'s or a batched model's layout)."""
    cls = ALGORITHMS.get(algorithm.lower())
    if cls is None:
        return braintrace.compile(model, algorithm, *x0, **options)
    learner = cls(model, **options)
    learner.compile_graph(*x0)
    return learner


def _bptt_with_signal(bptt: Callable, xs: tuple, start: list, given: bool,
                      floor: Callable[[dict], float] = lambda exact: BPTT_FLOOR) -> tuple[dict, tuple]:
    """BPTT's gradients, on inputs scaled up until every weight's is non-zero (a spiking net that
    does not spike within a few steps has an all-zero gradient, which says nothing); inputs the
    target gives itself are used as they are. ``floor``: the norm a weight's gradient must pass, from the
    run's gradients (an absolute one by default)."""
    best = None
    for scale in (1.0,) if given else INPUT_SCALES:
        scaled = xs if scale == 1.0 else jax.tree.map(lambda a: a * scale if _floating(a) else a, xs,
                                                      is_leaf=_is_quantity)
        try:
            exact = _leaves(bptt(scaled))
        finally:
            _restore(start)
        least = floor(exact)
        live = sum(float(np.linalg.norm(g)) > least for g in exact.values())
        if best is None or live > best[0]:
            best = (live, exact, scaled)
        if live == len(exact):
            break
    return best[1], best[2]


def _floating(value: Any) -> bool:
    return jnp.issubdtype(jnp.asarray(_mantissa(value)).dtype, jnp.floating)


def _compare(path: tuple[str, ...], online: np.ndarray | None, exact: np.ndarray) -> WeightTruth:
    online = np.zeros_like(exact) if online is None else online
    finite = bool(np.all(np.isfinite(online)))
    online_norm = float(np.linalg.norm(online)) if finite else float("nan")
    exact_norm = float(np.linalg.norm(exact))
    cosine = rel = None
    if finite and online_norm > 0 and exact_norm > 0:
        cosine = float(np.vdot(online, exact) / (online_norm * exact_norm))
        rel = float(np.linalg.norm(online - exact) / exact_norm)
    return WeightTruth(path, online_norm, exact_norm, finite, cosine, rel)


# ------------------------------------------------------------------ the advisor's reference


def allocated_bytes(model: Any, learner: Any) -> int:
    """Bytes of every state the learner holds that the model does not, allocated for real."""
    own = {id(st) for st in brainstate.graph.states(model).values()}
    total = 0
    for st in brainstate.graph.states(learner).values():
        if id(st) in own:
            continue
        for leaf in jax.tree.leaves(st.value):
            leaf = jnp.asarray(leaf)
            total += jax.random.key_data(leaf).nbytes if jax.dtypes.issubdtype(leaf.dtype, jax.dtypes.prng_key) \
                else leaf.nbytes
    return total


def unrolled_bptt(model: Any, xs: Any, loss: Callable = mean_squared_output) -> dict[str, np.ndarray]:
    """Exact gradient of the summed loss over the sequence, the model unrolled in Python, per named leaf; the
    model's states are as they were afterwards."""
    weights = brainstate.graph.states(model).filter(brainstate.ParamState)
    start = _snapshot(model)

    def total():
        return sum(loss(model(xs[t])) for t in range(len(xs)))

    try:
        return named(brainstate.transform.grad(total, weights)())
    finally:
        _restore(start)


def online(learner: Any, xs: Any, loss: Callable = mean_squared_output) -> dict[str, np.ndarray]:
    """The learner's online gradient, one jitted call per step, summed as training applies it."""
    step = online_program(learner, loss)
    total: dict[str, np.ndarray] = {}
    for t in range(len(xs)):
        for name, value in named(step((xs[t:t + 1],))).items():
            total[name] = total.get(name, 0) + value
    return total


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    a, b = np.ravel(a), np.ravel(b)
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def relative_error(got: np.ndarray, reference: np.ndarray) -> float:
    return float(np.linalg.norm(np.ravel(got) - np.ravel(reference)) / np.linalg.norm(np.ravel(reference)))


def flops(compiled: Any) -> float:
    costs = compiled.cost_analysis()
    return (costs[0] if isinstance(costs, list) else costs)["flops"]


def online_step(learner: Any, x: Any, loss: Callable = mean_squared_output) -> Any:
    """One jitted online step, compiled: what the advisor's XLA columns analyse."""
    step = brainstate.transform.jit(lambda x: _online_gradient(learner, loss, (x,), return_value=True))
    return step.lower(x).compile()


def forward_step(model: Any, x: Any, loss: Callable = mean_squared_output) -> Any:
    return brainstate.transform.jit(lambda x: loss(model(x))).lower(x).compile()


@contextlib.contextmanager
def quick_compiles() -> Iterator[None]:
    """XLA compiles without optimising (JAX's ``jax_disable_most_optimizations``), the setting
    before restored on leaving. Compiling a target's jitted BPTT and online step is most of what the
    referee costs; an optimisation changes float32 rounding (up to 2e-5 of a gradient's norm was
    seen), not a verdict drawn with :data:`ROUNDING`'s or the test's ``EXACT`` margin."""
    before = jax.config.read("jax_disable_most_optimizations")
    jax.config.update("jax_disable_most_optimizations", True)
    try:
        yield
    finally:
        jax.config.update("jax_disable_most_optimizations", before)


def judge_folder(folder: str, steps: int = 4, files: tuple[str, ...] = ()) -> list[TargetTruth]:
    truths = []
    with quick_compiles():
        for spec in declared_targets(folder):
            if not files or spec.file in files:
                truths.extend(judge(folder, spec, steps))
    return truths


if __name__ == "__main__":  # the ground truth as a table, for a person: online_referee.py [FILE.py ...]
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "real_models")
    for result in judge_folder(here, files=tuple(sys.argv[1:])):
        head = f"{result.target} [{result.algorithm}]"
        if result.stage:
            print(f"{head}: {result.stage} raised {result.error}")
            continue
        print(head)
        for weight in result.weights:
            mark = "LEARNS" if weight.learns else ("SILENT" if weight.silent else "zero/zero")
            print(f"    {mark:9} {weight.describe()}")
