"""The two gradients of one sequence: online (the compiled learner, step by
step) and exact (BPTT through a ``for_loop``), both jitted, from one snapshot.

What silently changes the answer, and how it is avoided here:

- both sides run on the same model object, every state (hidden states,
  eligibility traces, step counters) restored by path to one snapshot
  before each run, since ``braintrace.compile`` re-creates hidden states;
- the learner is driven one step per call (``etrace_grad`` without a
  window): a window spanning the whole sequence is exact BPTT inside the
  window and would make the check vacuous;
- the per-step losses are summed on both sides (``reduction='sum'``);
- gradients of unit-carrying parameters are Quantities: mantissas are compared;
- inputs that already carry the model's batch are not batched again
  (``layout.py`` decides, and falls back to the other layout only on failure).
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

import brainstate
import braintrace
import jax
import jax.numpy as jnp
import numpy as np

from .. import braintrace_adapter as bt
from ..wording import exception_line
from .layout import Layout, hidden_shapes, leading_axes, plan_layouts


class HarnessError(Exception):
    """The check could not run for a reason of the model or its options."""


class LayoutError(HarnessError):
    """BPTT ran under none of the layouts tried."""

    def __init__(self, failures: list, layouts: list, leading: tuple):
        self.failures = failures  # (layout, why, whether the layout is to blame)
        self.layouts = layouts
        self.leading = leading  # the leading axis of the hidden states and of the example inputs
        super().__init__("; ".join(f"{layout.describe()}: {why}" for layout, why, _ in failures))


def describe(exc: BaseException) -> str:
    """An exception in one line: its type and the first line of its text, kept short."""
    return exception_line(exc, limit=240)


@dataclass
class GradientRun:
    """One algorithm (or BPTT) over one sequence length."""

    steps: int
    loss: float
    grads: dict = field(default_factory=dict)  # (weight path, leaf) -> float64 mantissa array
    dtypes: dict = field(default_factory=dict)  # (weight path, leaf) -> dtype name
    seconds: float = 0.0


def mantissa(value: Any) -> Any:
    return getattr(value, "mantissa", value)


def mean_squared_output(output: Any) -> Any:
    """The default loss of one step: the mean squared value of every output leaf, summed."""
    leaves = [jnp.asarray(mantissa(leaf)) for leaf in jax.tree.leaves(output, is_leaf=_is_quantity)]
    leaves = [leaf for leaf in leaves if jnp.issubdtype(leaf.dtype, jnp.inexact)]
    if not leaves:
        return jnp.zeros(())
    return sum(jnp.mean(leaf ** 2) for leaf in leaves)


def _is_quantity(value: Any) -> bool:
    return hasattr(value, "mantissa") and hasattr(value, "unit")


def flat_leaves(grads: Any) -> tuple[dict, dict]:
    """``{path: pytree}`` -> ``{(path, leaf): float64 array}`` and the leaves' dtypes."""
    values, dtypes = {}, {}
    for path, tree in grads.items():
        for leaf_path, leaf in jax.tree_util.tree_flatten_with_path(tree, is_leaf=_is_quantity)[0]:
            key = (tuple(path), jax.tree_util.keystr(leaf_path))
            array = np.asarray(mantissa(leaf))
            dtypes[key] = array.dtype.name
            values[key] = array.astype(np.float64)
    return values, dtypes


def select_device(platform: str) -> Any:
    """``jax.devices(platform)[0]``, or None for JAX's default device."""
    if not platform:
        return None
    try:
        return jax.devices(platform)[0]
    except RuntimeError as exc:
        raise HarnessError(f"no JAX device for platform {platform!r}: {exc}") from None


def device_label(device: Any) -> str:
    device = device if device is not None else jax.devices()[0]
    kind = getattr(device, "device_kind", "")
    label = f"{device.platform}:{device.id}"
    return f"{label} ({kind})" if kind and kind.lower() != device.platform else label


def _snapshot(owner: Any) -> dict:
    return {tuple(path): st.value for path, st in brainstate.graph.states(owner).items()}


def _restore(owner: Any, snapshot: dict) -> None:
    for path, st in brainstate.graph.states(owner).items():
        if tuple(path) in snapshot:
            st.value = snapshot[tuple(path)]


def _state_values(owner: Any) -> list:
    """Every state reachable from ``owner`` with its value, by object: a learner's
    graph paths change once it splits its states lazily on first use."""
    return [(st, st.value) for st in brainstate.graph.states(owner).values()]


def _restore_values(pairs: list) -> None:
    for st, value in pairs:
        st.value = value


class Harness:
    """Runs BPTT and online gradients of one model; leaves the model as it found it."""

    def __init__(self, model: Any, example_inputs: tuple, batch_size: int | None, weights: Any,
                 settings: Any, loss: Callable | None = None):
        self.model = model
        self.settings = settings
        self.loss = loss or mean_squared_output
        self.weights = weights
        self.example_inputs = example_inputs
        self._original = _snapshot(model)
        self.leading = leading_axes(model, example_inputs, _is_quantity)
        self.layouts = plan_layouts(model, example_inputs, batch_size, settings.batch, settings.seed,
                                    _is_quantity, self.close)
        self.layout: Layout | None = None
        self.batch: int | None = None
        self._initial: dict = {}
        self._learners: dict[str, Any] = {}
        self._learner_values: dict[int, list] = {}
        self.sequence: tuple = ()

    def close(self) -> None:
        _restore(self.model, self._original)

    # ------------------------------------------------------------------ setup

    def use(self, layout: Layout) -> None:
        """Lay the states and the input sequence out as ``layout`` says."""
        self.close()
        self.layout, self.batch = layout, layout.batch
        self._learners, self._learner_values = {}, {}
        if layout.reinit:
            with brainstate.random.seed_context(self.settings.seed), bt.quiet([]):
                if layout.batch is None:
                    brainstate.nn.init_all_states(self.model)
                else:
                    brainstate.nn.init_all_states(self.model, batch_size=layout.batch)
        self._initial = _snapshot(self.model)
        self.sequence = self._sequence(self.example_inputs, layout.inputs_batched)

    def settle(self, lengths: list[int], algorithm: str | None) -> dict[int, "GradientRun"]:
        """The first layout under which BPTT runs and ``algorithm``'s learner builds, with its BPTT runs.

        A learner that builds under no layout is the algorithm's problem: the
        first layout under which BPTT runs is kept, and the learner's error is
        reported for that algorithm. Raises LayoutError when BPTT runs under none.
        """
        failures: list[tuple[Layout, str, bool]] = []  # (layout, why, whether it is surely the layout's fault)
        kept = None
        for layout in self.layouts:
            try:
                self.use(layout)
            except Exception as exc:  # the model's init_state, or the verify inputs callable
                failures.append((layout, f"preparing its states and inputs raised {describe(exc)}", False))
                continue
            try:
                changed = self._step_changes_shapes()
            except Exception as exc:  # the model does not run on inputs laid out this way
                failures.append((layout, f"one step on inputs of shape {self._step_shapes()} raised "
                                         f"{describe(exc)}", False))
                continue
            if changed:
                failures.append((layout, changed, True))
                continue
            try:
                runs = {}
                for steps in lengths:
                    runs[steps] = self.bptt(steps)
            except Exception as exc:  # the model does not run this way, or the loss raised
                failures.append((layout, f"the BPTT gradient over {steps} step{'s' if steps != 1 else ''} "
                                         f"raised {describe(exc)}", False))
                continue
            if algorithm is None:
                return runs
            try:
                self.learner(algorithm)
            except HarnessError:
                kept = kept or (layout, runs)
                continue
            return runs
        if kept is not None:
            self.use(kept[0])
            return kept[1]
        raise LayoutError(failures, self.layouts, self.leading)

    def _first_step(self) -> tuple:
        return jax.tree.map(lambda a: a[0], self.sequence, is_leaf=_is_quantity)

    def _step_shapes(self) -> str:
        shapes = [str(np.shape(mantissa(leaf))) for leaf in jax.tree.leaves(self._first_step(), is_leaf=_is_quantity)]
        return " and ".join(shapes) if shapes else "()"

    def _step_changes_shapes(self) -> str | None:
        """Why one step does not keep every hidden state's shape, in the user's words; None when it does.

        A scan over the sequence would fail on it with a message about carry
        types; this names the state and both shapes instead.
        """
        from ..naming import display_name

        before = hidden_shapes(self.model, _is_quantity)
        try:
            with bt.quiet([]):
                self.model(*self._first_step())
            after = hidden_shapes(self.model, _is_quantity)
        finally:
            _restore(self.model, self._initial)
        for path, shapes in before.items():
            if after.get(path, shapes) != shapes:
                old, new = (", ".join(map(str, s)) for s in (shapes, after[path]))
                return (f"one step on inputs of shape {self._step_shapes()} turns hidden state "
                        f"{display_name(path)} of shape {old} into {new}")
        return None

    def _sequence(self, example_inputs: tuple, inputs_batched: bool) -> tuple:
        steps, seed = self.settings.steps, self.settings.seed
        if self.settings.inputs is not None:
            produced = self.settings.inputs(steps, self.batch, seed)
            produced = produced if isinstance(produced, tuple) else (produced,)
            for leaf in jax.tree.leaves(produced, is_leaf=_is_quantity):
                if np.shape(mantissa(leaf))[:1] != (steps,):
                    raise HarnessError(f"the verify inputs callable returned a leaf of shape "
                                       f"{np.shape(mantissa(leaf))}; its leading axis must be steps={steps}")
            return produced
        leaves, tree = jax.tree.flatten(example_inputs, is_leaf=_is_quantity)
        drawn = []
        for index, leaf in enumerate(leaves):
            value = np.asarray(mantissa(leaf))
            shape = value.shape[1:] if inputs_batched else value.shape
            if self.batch is not None:
                shape = (self.batch, *shape)
            drawn.append(_draw(jax.random.PRNGKey(seed + index), (steps, *shape), value, leaf))
        return tuple(jax.tree.unflatten(tree, drawn))

    # ------------------------------------------------------------------ runs

    def prefix(self, steps: int) -> tuple:
        return jax.tree.map(lambda a: a[:steps], self.sequence, is_leaf=_is_quantity)

    def bptt(self, steps: int) -> GradientRun:
        model, loss, weights = self.model, self.loss, self.weights

        @brainstate.transform.jit
        def run(xs):
            def total():
                return brainstate.transform.for_loop(lambda *x: loss(model(*x)), *xs).sum()
            return brainstate.transform.grad(total, weights, return_value=True)()

        _restore(model, self._initial)
        return self._timed(run, steps, _state_values(model))

    def learner(self, algorithm: str) -> Any:
        """The compiled learner, with every state back at the snapshot; built once per layout."""
        if algorithm not in self._learners:
            try:
                self._learners[algorithm] = self._compile(algorithm)
            except HarnessError as exc:
                self._learners[algorithm] = exc
            _restore(self.model, self._initial)
        built = self._learners[algorithm]
        if isinstance(built, HarnessError):
            raise built
        return built

    def _compile(self, algorithm: str) -> Any:
        x0 = self._first_step()
        try:
            with bt.quiet([]):
                return braintrace.compile(self.model, algorithm, *x0, batch_size=self.batch,
                                          **self.settings.options_for(algorithm))
        except Exception as exc:  # the learner is the model's problem, reported as not run
            raise HarnessError(f"braintrace.compile(model, {algorithm!r}) raised {describe(exc)}") from None

    def online(self, learner: Any, steps: int) -> GradientRun:
        loss = self.loss

        @brainstate.transform.jit
        def run(xs):
            return learner.etrace_grad(*xs, step_fn=lambda *x: loss(learner(*x)),
                                       reduction="sum", loss_output="scalar", return_value=True)

        if id(learner) not in self._learner_values:
            self._learner_values[id(learner)] = _state_values(learner)
        return self._timed(run, steps, self._learner_values[id(learner)])

    def _timed(self, run: Callable, steps: int, pairs: list) -> GradientRun:
        _restore_values(pairs)
        start = time.perf_counter()
        with bt.quiet([]):
            grads, value = run(self.prefix(steps))
            value = float(np.asarray(mantissa(value)))
        seconds = time.perf_counter() - start
        _restore_values(pairs)
        values, dtypes = flat_leaves(grads)
        return GradientRun(steps, value, values, dtypes, seconds)


def _draw(key: Any, shape: tuple, example: np.ndarray, leaf: Any) -> Any:
    dtype = example.dtype
    if np.issubdtype(dtype, np.bool_):
        drawn = jax.random.bernoulli(key, 0.5, shape)
    elif np.issubdtype(dtype, np.integer):
        high = max(2, int(example.max()) + 1) if example.size else 2
        drawn = jax.random.randint(key, shape, 0, high, dtype=dtype)
    else:
        drawn = jax.random.normal(key, shape, dtype=dtype)
    unit = getattr(leaf, "unit", None)
    return drawn * unit if unit is not None and _is_quantity(leaf) else drawn


@contextlib.contextmanager
def on_device(device: Any) -> Iterator[None]:
    """Run on ``device`` in full float32: a GPU's default TensorFloat-32 matmuls differ from float32
    by about 1e-4, which would read as an online gradient that is wrong where it must be exact."""
    with jax.default_matmul_precision("highest"):
        if device is None:
            yield
            return
        with jax.default_device(device):
            yield
