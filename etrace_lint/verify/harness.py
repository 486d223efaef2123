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
  (``layout.py`` decides, and falls back to the other layout only on failure);
- where JAX cannot take BPTT in reverse mode (a ``while_loop`` in the step),
  it is taken in forward mode, the same derivative, for a model small enough
  (``FORWARD_MODE_LIMIT`` parameters): without it, nothing could be said
  about the weights whose learning signal the loop cuts.
"""

from __future__ import annotations

import contextlib
import math
import re
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, ParamSpec, Protocol, TypeAlias, TypeVar

import brainstate
import braintrace
import jax
import jax.numpy as jnp
import numpy as np
import saiunit
from jax.typing import ArrayLike

from ..analysis import braintrace_adapter as bt
from ..core.naming import StatePath, display_name
from . import verdict as judge
from .interpret import interpreted
from .layout import Layout, leading_axes, plan_layouts
from .leaves import Leaf, is_quantity, mantissa
from .settings import Loss, VerifySettings

INPUT_SCALES = (1.0, 4.0, 16.0, 64.0)
# forward mode costs one pass per parameter: above this many, a BPTT reverse mode refuses is not taken
FORWARD_MODE_LIMIT = 4096
# the forward steps that move the states away from rest before the warmed draw (``Harness.warmed``) measures
WARMUP_STEPS = 2
# the draws of the inputs tried, each at every scale, until one moves some weight (``_bptt_with_signal``)
SEARCHED_DRAWS = 6
# the further draws past those on which the model's random initial weights are drawn again too (the factory built
# on another seed), where a claim of every input still stands (``Harness.further_draws``)
RESEEDED_DRAWS = 3
# what JAX says when reverse mode meets a while loop (a fori_loop with traced bounds is one)
_REVERSE_REFUSED = re.compile(r"Reverse-mode differentiation does not work for lax\.while_loop")

LeafKey = tuple[StatePath, str]  # one gradient leaf: (weight path, leaf path as ``jax.tree_util.keystr`` writes it)
StateValues = list[tuple[brainstate.State[Any], object]]  # states and the values to put back in them
# a compiled learner: braintrace.compile gives an ETraceVmap for ``vmap=True``
Learner: TypeAlias = "braintrace.ETraceAlgorithm | braintrace.ETraceVmap"
Inputs: TypeAlias = tuple[object, ...]  # a model's inputs: one pytree per argument of its step
# BPTT's runs and the online runs on one draw of the inputs, each by sequence length
DrawRuns: TypeAlias = 'tuple[dict[int, "GradientRun"], dict[int, "GradientRun"]]'
# the weights BPTT differentiates: their paths -> their ParamStates
Weights: TypeAlias = Mapping[StatePath, brainstate.State[Any]]
Grads: TypeAlias = Mapping[StatePath, object]  # weight path -> its gradient (a pytree)
Program: TypeAlias = Callable[[Inputs], tuple[Grads, Leaf]]  # inputs -> (gradients, loss)

_P = ParamSpec("_P")
_R = TypeVar("_R")
_Claims = TypeVar("_Claims")


class Stage(Protocol):
    """How a program is staged: ``brainstate.transform.jit``, or evaluated with NumPy (``interpreted``)."""

    def __call__(self, function: Callable[_P, _R], /) -> Callable[_P, _R]: ...


class JittedStep(Protocol):
    """An online step staged by ``brainstate.transform.jit``: run, or lowered again for XLA's analysis."""

    def __call__(self, xs: Inputs, /) -> tuple[Grads, Leaf]: ...

    def lower(self, *args: object) -> jax.stages.Lowered: ...


def jitted(function: Callable[_P, _R]) -> Callable[_P, _R]:
    """``brainstate.transform.jit(function)``."""
    staged: Callable[_P, _R] = brainstate.transform.jit(function)
    return staged


def reverse_mode_refused(exc: BaseException) -> bool:
    """Whether ``exc`` is JAX refusing to reverse a ``while`` loop."""
    return isinstance(exc, ValueError) and bool(_REVERSE_REFUSED.search(str(exc)))


class HarnessError(Exception):
    """The check could not run for a reason of the model or its options."""


class LayoutError(HarnessError):
    """BPTT ran under none of the layouts tried."""

    def __init__(self, failures: list[tuple[Layout, str, bool]], layouts: list[Layout],
                 leading: tuple[int | None, int | None]):
        self.failures = failures  # (layout, why, whether the layout is to blame)
        self.layouts = layouts
        self.leading = leading  # the leading axis of the hidden states and of the example inputs
        super().__init__("; ".join(f"{layout.describe()}: {why}" for layout, why, _ in failures))


def describe(exc: BaseException, limit: int = 400) -> str:
    """An exception in one line: its type and its first whole sentence.

    Library messages break lines anywhere (brainstate's ``The module \n<name> ...``), so the
    text is joined before the sentence is taken; a sentence longer than ``limit`` ends at a
    word with an ellipsis, never inside a word or a name."""
    text = " ".join(str(exc).split())
    if not text:
        return type(exc).__name__
    sentence = re.match(r"(.{20,}?[.!?])(?=\s+[A-Z(\[`'\"]|$)", text)
    text = sentence.group(1) if sentence else text
    if len(text) > limit:
        cut = text.rfind(" ", 0, limit)
        text = text[: cut if cut > limit // 2 else limit].rstrip(",;:") + " ..."
    return f"{type(exc).__name__}: {text}"


@dataclass
class GradientRun:
    """One algorithm (or BPTT) over one sequence length."""

    steps: int
    loss: float
    grads: dict[LeafKey, np.ndarray] = field(default_factory=dict)  # (weight path, leaf) -> float64 mantissa array
    dtypes: dict[LeafKey, str] = field(default_factory=dict)  # (weight path, leaf) -> dtype name
    seconds: float = 0.0


def same_forward(online: GradientRun, reference: GradientRun, settings: VerifySettings) -> bool:
    """The online run and BPTT's computed one forward loss from the same states and inputs, as a pure step does: where
    they did not (Python-side state a trace bakes in, randomness outside brainstate.random), their gradients are of
    two different functions and comparing them says nothing of the online rule."""
    dtypes = reference.dtypes
    dtype = "float64" if dtypes and all(d == "float64" for d in dtypes.values()) else "float32"
    rtol = math.sqrt(settings.tolerance(dtype))
    return (math.isclose(online.loss, reference.loss, rel_tol=rtol, abs_tol=1e-30)
            or (math.isnan(online.loss) and math.isnan(reference.loss)))


def mean_squared_output(output: object) -> jax.Array:
    """The default loss of one step: the mean squared value of every output leaf, summed."""
    leaves = [jnp.asarray(mantissa(leaf)) for leaf in jax.tree.leaves(output, is_leaf=is_quantity)]
    leaves = [leaf for leaf in leaves if jnp.issubdtype(leaf.dtype, jnp.inexact)]
    if not leaves:
        return jnp.zeros(())
    total = 0 + jnp.mean(leaves[0] ** 2)  # as ``sum`` adds them, from 0
    for leaf in leaves[1:]:
        total = total + jnp.mean(leaf ** 2)
    return total


def flat_leaves(grads: Grads) -> tuple[dict[LeafKey, np.ndarray], dict[LeafKey, str]]:
    """``{path: pytree}`` -> ``{(path, leaf): float64 array}`` and the leaves' dtypes."""
    values: dict[LeafKey, np.ndarray] = {}
    dtypes: dict[LeafKey, str] = {}
    for path, tree in grads.items():
        for leaf_path, leaf in jax.tree_util.tree_flatten_with_path(tree, is_leaf=is_quantity)[0]:
            key = (tuple(path), jax.tree_util.keystr(leaf_path))
            array = np.asarray(mantissa(leaf))
            dtypes[key] = array.dtype.name
            values[key] = array.astype(np.float64)
    return values, dtypes


def select_device(platform: str) -> jax.Device | None:
    """``jax.devices(platform)[0]``, or None for JAX's default device."""
    if not platform:
        return None
    try:
        return jax.devices(platform)[0]
    except RuntimeError as exc:
        raise HarnessError(f"no JAX device for platform {platform!r}: {exc}") from None


def device_label(device: jax.Device | None) -> str:
    device = device if device is not None else jax.devices()[0]
    kind = getattr(device, "device_kind", "")
    label = f"{device.platform}:{device.id}"
    return f"{label} ({kind})" if kind and kind.lower() != device.platform else label


def _snapshot(owner: brainstate.graph.Node) -> dict[StatePath, object]:
    return {tuple(path): st.value for path, st in brainstate.graph.states(owner).items()}


def _restore(owner: brainstate.graph.Node, snapshot: dict[StatePath, object]) -> None:
    for path, st in brainstate.graph.states(owner).items():
        if tuple(path) in snapshot:
            st.value = snapshot[tuple(path)]


def _same_layout(new: object, old: object) -> bool:
    """Two values of one state with the same tree and leaf shapes: one may stand for the other in a program."""
    (news, new_tree), (olds, old_tree) = (jax.tree.flatten(new, is_leaf=is_quantity),
                                          jax.tree.flatten(old, is_leaf=is_quantity))
    # a PyTreeDef's == is untyped: its text names the same nodes
    return str(new_tree) == str(old_tree) and all(np.shape(mantissa(a)) == np.shape(mantissa(b))
                                                  for a, b in zip(news, olds))


def _same_values(new: object, old: object) -> bool:
    """The same values up to float rounding: a factory that draws no weight at random builds them again a unit in
    the last place apart where the process compiled something in between (measured: ``0.3 * randn`` under a fixed
    seed, 3e-8 apart after other models were linted in the process)."""
    news, olds = jax.tree.leaves(new, is_leaf=is_quantity), jax.tree.leaves(old, is_leaf=is_quantity)
    return all(np.allclose(np.asarray(mantissa(a)), np.asarray(mantissa(b)), rtol=1e-5, atol=1e-7)
               for a, b in zip(news, olds))


def _state_values(owner: brainstate.graph.Node) -> StateValues:
    """Every state reachable from ``owner`` with its value, by object: a learner's
    graph paths change once it splits its states lazily on first use."""
    return [(st, st.value) for st in brainstate.graph.states(owner).values()]


def _restore_values(pairs: StateValues) -> None:
    for st, value in pairs:
        st.value = value


class Harness:
    """Runs BPTT and online gradients of one model; leaves the model as it found it."""

    def __init__(self, model: brainstate.nn.Module, example_inputs: Inputs, batch_size: int | None,
                 weights: Weights, settings: VerifySettings, loss: Loss | None = None, interpret: bool = False,
                 rebuilt: Callable[[int], brainstate.nn.Module] | None = None):
        self.model = model
        # the model's factory on another seed (LoadedTarget.rebuilt): the further draws' other initial weights
        self.rebuilt = rebuilt
        # the programs evaluated with NumPy instead of compiled by XLA: the probe's few steps cost less so
        self.stage: Stage = interpreted if interpret else jitted
        self.settings = settings
        self.loss: Loss = loss or mean_squared_output
        self.weights = weights
        self.example_inputs = example_inputs
        self._original = _snapshot(model)
        self.leading = leading_axes(model, example_inputs, is_quantity)
        self.layouts = plan_layouts(model, example_inputs, batch_size, settings.batch, settings.seed,
                                    is_quantity, self.close)
        self.layout: Layout | None = None
        self.batch: int | None = None
        self._initial: dict[StatePath, object] = {}
        self._learners: dict[str, Learner | HarnessError] = {}
        self._learner_values: dict[int, StateValues] = {}
        # forward mode or not -> the staged BPTT: (inputs, steps mask) -> (gradients, loss)
        self._bptt_programs: dict[bool, Callable[[Inputs, ArrayLike], tuple[Grads, Leaf]]] = {}
        self._online_programs: dict[int, Program] = {}  # id(learner) -> its staged online step
        self._forward_program: Callable[..., None] | None = None  # the staged forward step (``warmed``)
        # id(learner) -> its jitted online step, compiled by ``online``
        self.jitted_steps: dict[int, JittedStep] = {}
        # the runs on other draws (``on_draw``, ``warmed_on_draw``), by learner, layout, the kept draw and scale, the
        # draw, the scale asked for and whether from moved states: the probe's first-step search and its checks on
        # other draws ask for the same runs, which are measured once
        self._draw_runs: dict[tuple[int, int, int, float, int, float | None, bool], DrawRuns] = {}
        self.sequence: Inputs = ()
        self.input_scale = 1.0  # drawn float inputs are multiplied by it (see ``settle``)
        self.draw = 0  # which draw of the inputs the sequence is: its seed is the settings' seed plus it
        self.forward_mode = False  # BPTT is taken in forward mode: reverse mode cannot go through the step

    def close(self) -> None:
        _restore(self.model, self._original)

    # ------------------------------------------------------------------ setup

    def use(self, layout: Layout) -> None:
        """Lay the states and the input sequence out as ``layout`` says."""
        self.close()
        self.layout, self.batch = layout, layout.batch
        self._learners, self._learner_values, self._draw_runs = {}, {}, {}
        self._bptt_programs, self._online_programs = {}, {}  # a layout's states may be new objects: traced again
        self._forward_program = None
        self.input_scale = 1.0
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
                runs = self._bptt_with_signal(lengths)
            except Exception as exc:  # the model does not run this way, or the loss raised
                steps = max(lengths)
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

    def _bptt_with_signal(self, lengths: list[int]) -> dict[int, "GradientRun"]:
        """BPTT on inputs scaled up (x1, x4, x16, x64) until it moves every weight at every length: a spiking
        network that does not spike within the sequence has an all-zero gradient, against which nothing can be
        compared.
        The scale that moves the most weights over the whole sequence is kept, and among those the one that moves
        the most at the shorter lengths (a weight moved by no more than round-off of the run's largest gradient is
        not moved); inputs the target gives itself are used as they are.
        Where no scale of the first draw moves any weight, the next draws are tried (up to :data:`SEARCHED_DRAWS`):
        a ReLU or a threshold that the first draw's signs keep shut at every scale opens on another draw, and
        that draw is the first the probe and ``--verify`` measure on."""
        best: tuple[tuple[int, int], float, int, dict[int, GradientRun]] | None = None
        layout = self.layout
        assert layout is not None  # ``use`` has laid the states out
        for draw in range(SEARCHED_DRAWS):
            for scale in (1.0,) if self.settings.inputs is not None else INPUT_SCALES:
                if (scale, draw) != (self.input_scale, self.draw):
                    self.input_scale, self.draw = scale, draw
                    self.sequence = self._sequence(self.example_inputs, layout.inputs_batched)
                runs = self.bptt(lengths)
                # the longest sequence first: whether a weight learns is measured over it; then the shorter
                # lengths, the first step among them (a first step no scale drives is measured from moved states)
                driven = {steps: len(self._driven(run)) for steps, run in runs.items()}
                live = (driven[max(lengths)], sum(driven.values()))
                if best is None or live > best[0]:
                    best = (live, scale, draw, runs)
                if live[1] == sum(len(run.grads) for run in runs.values()):
                    break
            if best is not None and best[0][0] > 0:
                break
        assert best is not None  # there is always a first scale
        _, scale, draw, runs = best
        if (scale, draw) != (self.input_scale, self.draw):
            self.input_scale, self.draw = scale, draw
            self.sequence = self._sequence(self.example_inputs, layout.inputs_batched)
        return runs

    def _driven(self, run: GradientRun) -> list[LeafKey]:
        """The leaves whose BPTT gradient over ``run`` is more than round-off of its largest (the zero scale the
        probe and ``--verify`` measure with): a gradient under it compares nothing. Larger inputs can saturate
        what smaller ones drive (a surrogate spike under a sigmoid, seed 103's model 77: an element-wise leak whose
        gradient is 5e-9 of the readout's at x16 and driven at x1), so a scale that leaves a leaf only round-off
        does not count it."""
        zero = judge.largest_norm(run.grads.values())
        return [key for key, g in run.grads.items()
                if float(np.linalg.norm(g)) > self.settings.tolerance(run.dtypes.get(key, "float32")) * zero]

    def first_step(self) -> Inputs:
        """The sequence's first step: the inputs one step of the model takes."""
        first: Inputs = jax.tree.map(lambda a: a[0], self.sequence, is_leaf=is_quantity)
        return first

    def _step_shapes(self) -> str:
        shapes = [str(np.shape(mantissa(leaf))) for leaf in jax.tree.leaves(self.first_step(), is_leaf=is_quantity)]
        return " and ".join(shapes) if shapes else "()"

    def _step_changes_shapes(self) -> str | None:
        """Why one step does not keep every hidden state's shape, in the user's words; None when it does.

        A scan over the sequence would fail on it with a message about carry
        types; this names the state and both shapes instead. A state that the
        first step only broadcasts (a scalar initial value that becomes one per
        neuron) starts broadcast, as it is from the second step of training on.
        """
        hidden = {tuple(path): st for path, st in brainstate.graph.states(self.model).items()
                  if not isinstance(st, brainstate.ParamState)}  # every state a scan carries
        before = {path: [tuple(np.shape(mantissa(leaf))) for leaf in jax.tree.leaves(st.value, is_leaf=is_quantity)]
                  for path, st in hidden.items()}

        # traced, not run: an eager step dispatches every op on its own
        def one_step(*xs: object) -> dict[StatePath, object]:
            self.model(*xs)
            return {path: st.value for path, st in hidden.items()}

        try:
            with bt.quiet([]):
                values = brainstate.transform.eval_shape(one_step, *self.first_step())
            after = {path: [tuple(getattr(mantissa(leaf), "shape", np.shape(leaf)))
                            for leaf in jax.tree.leaves(value, is_leaf=is_quantity)]
                     for path, value in values.items()}
        finally:
            _restore(self.model, self._initial)
        changed = {path: (shapes, after[path]) for path, shapes in before.items()
                   if after.get(path, shapes) != shapes}
        if changed and all(_broadcasts(old, new) for old, new in changed.values()):
            for path, (_, new) in changed.items():
                leaf_shapes = iter(new)
                hidden[path].value = jax.tree.map(lambda v: _broadcast(v, next(leaf_shapes)), hidden[path].value,
                                                  is_leaf=is_quantity)
            self._initial = _snapshot(self.model)
            return None
        for path, (shapes, new_shapes) in changed.items():
            old_text, new_text = (", ".join(map(str, s)) for s in (shapes, new_shapes))
            kind = "hidden state" if isinstance(hidden[path], brainstate.HiddenState) else "state"
            return (f"one step on inputs of shape {self._step_shapes()} turns {kind} "
                    f"{display_name(path)} of shape {old_text} into {new_text}")
        return None

    def other_draws(self, learner: Learner, lengths: list[int], draws: int,
                    warmed: DrawRuns | None = None) -> list[DrawRuns]:
        """(BPTT runs, online runs) on ``draws`` - 1 other draws of the inputs (the first of draws 0, 1, ... that
        are not the one ``settle`` measured on), at the input scale it kept, then on that draw from the states
        :data:`WARMUP_STEPS` steps of it leave (``warmed``, or the runs given, measured there over ``lengths`` at
        least); the sequence is the first draw's again afterwards."""
        measured = [self.on_draw(learner, lengths, draw) for draw in self.draws_besides(draws)]
        measured.append(warmed if warmed is not None else self.warmed(learner, lengths))
        return measured

    def draws_besides(self, draws: int, start: int = 0) -> list[int]:
        """The numbers of the draws ``start`` .. ``draws`` - 1 of the first ``draws`` that are not the one ``settle``
        measured on: the other draws, in the order ``other_draws`` measures them."""
        return [d for d in range(draws) if d != self.draw][:draws - 1][start:]

    def further_draws(self, learner: Learner, lengths: list[int], after: int) -> Iterator[DrawRuns]:
        """(BPTT runs, online runs) on the draws past the first ``after`` other draws, up to :data:`SEARCHED_DRAWS`,
        each from rest and then from the states its first steps leave, one at a time; then on
        :data:`RESEEDED_DRAWS` more, each with the model's random initial weights drawn again (its factory on
        another seed), where they are random: a claim every draw so far shows is searched for the draw that refutes
        it, and the search stops where none is left to refute. A training run starts from the weights its own seed
        draws, and seed 97's model 174 (a factored weight in a leak cell, with a random readout) learns against
        BPTT on every input draw of one initialisation, cosine -0.94, and in BPTT's direction, +0.33, on one of
        the next four. No draw is left running on other weights between two of these runs."""
        for draw in self.draws_besides(SEARCHED_DRAWS, start=after):
            yield self.on_draw(learner, lengths, draw)
            yield self.warmed_on_draw(learner, lengths, draw)
        for draw in range(SEARCHED_DRAWS, SEARCHED_DRAWS + RESEEDED_DRAWS):
            weights = self._initial_weights_on_seed(self.settings.seed + draw)
            if weights is None:
                return
            with self._starting_from(weights):
                runs = self.on_draw(learner, lengths, draw)
            yield runs
            with self._starting_from(weights):
                runs = self.warmed_on_draw(learner, lengths, draw)
            yield runs

    def _initial_weights_on_seed(self, seed: int) -> dict[StatePath, object] | None:
        """The initial value of each weight (ParamState) the model's factory gives on ``seed``, by path; None where
        there is no factory, it raises, it builds other states, or it gives the weights the model has now (weights
        the seed does not draw: nothing new to measure)."""
        if self.rebuilt is None:
            return None
        try:
            with bt.quiet([]):
                fresh = brainstate.graph.states(self.rebuilt(seed))
        except Exception:  # noqa: BLE001 - a factory that does not build twice leaves the draws measured so far
            return None
        ours = {tuple(path): st for path, st in brainstate.graph.states(self.model).items()
                if isinstance(st, brainstate.ParamState)}
        theirs = {tuple(path): st.value for path, st in fresh.items()}
        if not ours or any(path not in theirs or not _same_layout(theirs[path], st.value) for path, st in ours.items()):
            return None
        weights = {path: theirs[path] for path in ours}
        if all(_same_values(value, self._initial.get(path, ours[path].value)) for path, value in weights.items()):
            return None
        return weights

    @contextlib.contextmanager
    def _starting_from(self, values: Mapping[StatePath, object]) -> Iterator[None]:
        """Every run inside starts from the model's states (by path) set to ``values``, the others as they start
        now, in the learners' runs too: moved hidden states (:meth:`warmed`), other initial weights
        (:meth:`further_draws`). Every state is as it was afterwards."""
        states = {tuple(path): st for path, st in brainstate.graph.states(self.model).items()}
        initial, learner_values = self._initial, self._learner_values
        by_state = {id(states[path]): value for path, value in values.items() if path in states}
        try:
            self._initial = {**initial, **{path: value for path, value in values.items() if path in initial}}
            self._learner_values = {key: [(st, by_state.get(id(st), value)) for st, value in pairs]
                                    for key, pairs in learner_values.items()}
            _restore(self.model, self._initial)
            yield
        finally:
            self._initial, self._learner_values = initial, learner_values
            for pairs in learner_values.values():
                _restore_values(pairs)
            _restore(self.model, initial)

    @contextlib.contextmanager
    def _drawn(self, draw: int, scale: float | None = None) -> Iterator[None]:
        """Draw ``draw`` of the inputs, at the input scale ``settle`` kept (or ``scale``), while inside; the first
        draw's again afterwards."""
        kept = self.sequence, self.draw, self.input_scale
        layout = self.layout
        assert layout is not None  # ``settle`` has chosen the layout
        try:
            self.draw = draw
            self.input_scale = self.input_scale if scale is None else scale
            self.sequence = self._sequence(self.example_inputs, layout.inputs_batched)
            yield
        finally:
            self.sequence, self.draw, self.input_scale = kept

    def on_draw(self, learner: Learner, lengths: list[int], draw: int) -> DrawRuns:
        """(BPTT runs, online runs) on draw ``draw`` of the inputs, from rest, at the input scale ``settle`` kept;
        the sequence is the first draw's again afterwards."""
        return self._on_draw(learner, lengths, draw, None, moved=False)

    def warmed_on_draw(self, learner: Learner, lengths: list[int], draw: int, scale: float | None = None) -> DrawRuns:
        """:meth:`warmed` on draw ``draw`` of the inputs, at the input scale ``settle`` kept (or ``scale``: drawn
        float inputs times it); the sequence is the first draw's again afterwards."""
        return self._on_draw(learner, lengths, draw, scale, moved=True)

    def _on_draw(self, learner: Learner, lengths: list[int], draw: int, scale: float | None, moved: bool) -> DrawRuns:
        """The runs of :meth:`on_draw` or :meth:`warmed_on_draw`, measured once for each length: a second request
        for lengths already measured on the same draw, scale and states gets the same runs."""
        key = (id(learner), id(self.layout), self.draw, self.input_scale, draw, scale, moved)
        known = self._draw_runs.get(key)
        if known is None or not set(lengths) <= set(known[0]):
            with self._drawn(draw, scale):
                known = self.warmed(learner, lengths) if moved else (self.bptt(lengths), self.online(learner, lengths))
            self._draw_runs[key] = known
        return {n: known[0][n] for n in lengths}, {n: known[1][n] for n in lengths}

    def larger_scales(self) -> list[float]:
        """The input scales above the one ``settle`` kept, smallest first; none where the target gives its own
        inputs."""
        if self.settings.inputs is not None:
            return []
        return [scale for scale in INPUT_SCALES if scale > self.input_scale]

    def warmed(self, learner: Learner, lengths: list[int]) -> DrawRuns:
        """(BPTT runs, online runs) on the sequence from the states that :data:`WARMUP_STEPS` forward steps of it
        leave, not from rest, with the learner's traces from zero (as a run that carries the states over from
        one sequence to the next and resets the traces). A direction or a zero measured from rest only, where a
        recurrent weight's gradient starts from zero states, is not what the weight does once the states move.
        Every state is as it was afterwards."""
        _restore(self.model, self._initial)
        if id(learner) not in self._learner_values:
            self._learner_values[id(learner)] = _state_values(learner)
        try:
            forward = self._forward()
            with bt.quiet([]), self.same_random_draws():
                for index in range(WARMUP_STEPS):
                    forward(*jax.tree.map(lambda a: a[index], self.sequence, is_leaf=is_quantity))
            moved = _snapshot(self.model)
        finally:
            _restore(self.model, self._initial)
        with self._starting_from(moved):
            return self.bptt(lengths), self.online(learner, lengths)

    def _forward(self) -> Callable[..., None]:
        """One forward step of the model, staged as the gradient programs are (built once per layout): run eagerly,
        each of its operations would be compiled by XLA on its own, which costs more than the step's whole
        trace."""
        if self._forward_program is None:
            model = self.model

            @self.stage
            def forward(*xs: object) -> None:
                model(*xs)

            self._forward_program = forward
        return self._forward_program

    def _sequence(self, example_inputs: Inputs, inputs_batched: bool) -> Inputs:
        steps, seed = self.settings.steps, self.settings.seed + self.draw
        if self.settings.inputs is not None:
            produced = self.settings.inputs(steps, self.batch, seed)
            produced = produced if isinstance(produced, tuple) else (produced,)
            for leaf in jax.tree.leaves(produced, is_leaf=is_quantity):
                if np.shape(mantissa(leaf))[:1] != (steps,):
                    raise HarnessError(f"the verify inputs callable returned a leaf of shape "
                                       f"{np.shape(mantissa(leaf))}; its leading axis must be steps={steps}")
            return produced
        leaves, tree = jax.tree.flatten(example_inputs, is_leaf=is_quantity)
        drawn = []
        for index, leaf in enumerate(leaves):
            value = np.asarray(mantissa(leaf))
            if value.ndim == 0:  # a step index or a constant: the training loop gives it no batch axis
                drawn.append(_draw(np.random.default_rng(seed + index), (steps,), value, leaf, self.input_scale))
                continue
            shape = value.shape[1:] if inputs_batched else value.shape
            if self.batch is not None:
                shape = (self.batch, *shape)
            drawn.append(_draw(np.random.default_rng(seed + index), (steps, *shape), value, leaf, self.input_scale))
        return tuple(jax.tree.unflatten(tree, drawn))

    # ------------------------------------------------------------------ runs

    def same_random_draws(self) -> contextlib.AbstractContextManager[None]:
        """brainstate's global random state, where a Dropout layer draws its masks from in the step, set to the same
        key at the start of every run of this draw of the inputs, and put back after it: the online run and BPTT
        then drop the same units at each step, as a training loop that reseeds it before each would. The state is
        not part of the model, so without this each run draws other masks and their gradients are not comparable."""
        return brainstate.random.seed_context(self.settings.seed + self.draw)

    def prefix(self, steps: int) -> Inputs:
        window: Inputs = jax.tree.map(lambda a: a[:steps], self.sequence, is_leaf=is_quantity)
        return window

    def bptt(self, lengths: list[int]) -> dict[int, GradientRun]:
        """BPTT over each prefix length of the sequence, from one compiled function: the longest
        sequence runs every time, and the losses of the steps past a prefix are masked out."""
        pairs = _state_values(self.model)
        if not self.forward_mode:
            try:
                return self._bptt(lengths, pairs, forward=False)
            except Exception as exc:
                if not reverse_mode_refused(exc) or self._parameter_count() > FORWARD_MODE_LIMIT:
                    raise
                _restore_values(pairs)
                self.forward_mode = True
        return self._bptt(lengths, pairs, forward=True)

    def _parameter_count(self) -> int:
        leaves = jax.tree.leaves([state.value for state in self.weights.values()], is_leaf=is_quantity)
        return sum(int(np.size(mantissa(leaf))) for leaf in leaves)

    def _bptt(self, lengths: list[int], pairs: StateValues, forward: bool) -> dict[int, GradientRun]:
        longest = max(lengths)
        run = self._bptt_program(forward)
        runs: dict[int, GradientRun] = {}
        for steps in sorted(lengths):
            _restore(self.model, self._initial)
            mask = np.arange(longest) < steps
            runs[steps] = self._timed(lambda xs: run(xs, mask), longest, pairs, steps)
        return runs

    def _bptt_program(self, forward: bool) -> Callable[[Inputs, ArrayLike], tuple[Grads, Leaf]]:
        """The staged BPTT of the sequence, in forward or reverse mode, built once: each input scale and draw
        runs it again, traced once."""
        if forward not in self._bptt_programs:
            model, loss, weights = self.model, self.loss, self.weights
            differentiate = brainstate.transform.jacfwd if forward else brainstate.transform.grad

            @self.stage
            def run(xs: Inputs, mask: ArrayLike) -> tuple[Grads, Leaf]:
                def total() -> jax.Array:
                    losses = brainstate.transform.for_loop(lambda *x: loss(model(*x)), *xs)
                    summed: jax.Array = jnp.where(mask, losses, jnp.zeros_like(losses)).sum()
                    return summed
                grads, value = differentiate(total, weights, return_value=True)()
                return grads, value

            self._bptt_programs[forward] = run
        return self._bptt_programs[forward]

    def learner(self, algorithm: str) -> Learner:
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

    def _compile(self, algorithm: str) -> Learner:
        """The algorithm built on the model as the layout left it, as a training script does:
        ``braintrace.compile`` would initialise the states again (unbatched, or through an
        ``init_state`` that takes no batch size) and lose a ``brainstate.nn.Map``'s layout."""
        x0 = self.first_step()
        # braintrace types a learner's options as ``**options: Any``: each algorithm takes its own
        options: dict[str, Any] = self.settings.options_for(algorithm)
        algorithm_class = bt.algorithm_class(algorithm)
        try:
            with bt.quiet([]):
                if algorithm_class is None:
                    compiled = braintrace.compile(self.model, algorithm, *x0, batch_size=self.batch, **options)
                    # a plain brainstate.nn.Vmap is never what it returns: ETraceVmap for ``vmap=True``
                    assert isinstance(compiled, (braintrace.ETraceAlgorithm, braintrace.ETraceVmap))
                    return compiled
                learner: braintrace.ETraceAlgorithm = algorithm_class(self.model, **options)
                learner.compile_graph(*x0)
                return learner
        except Exception as exc:  # the learner is the model's problem, reported as not run
            built_by = algorithm_class.__name__ if algorithm_class is not None else "compile"
            raise HarnessError(f"building the {algorithm} learner (braintrace.{built_by}) raised "
                               f"{describe(exc)}") from None

    def online(self, learner: Learner, lengths: list[int]) -> dict[int, GradientRun]:
        """The online gradient over each prefix length: one jitted step of the learner, compiled once and
        called once per step, its gradients and losses summed, as online training applies them."""
        step = self._online_program(learner)
        if id(learner) not in self._learner_values:
            self._learner_values[id(learner)] = _state_values(learner)
        pairs = self._learner_values[id(learner)]
        _restore_values(pairs)
        runs: dict[int, GradientRun] = {}
        total: dict[LeafKey, np.ndarray] = {}
        value, start = 0.0, time.perf_counter()
        try:
            with bt.quiet([]), self.same_random_draws():
                for index in range(max(lengths)):
                    xs = jax.tree.map(lambda a: a[index:index + 1], self.sequence, is_leaf=is_quantity)
                    grads, loss_value = step(xs)
                    values, dtypes = flat_leaves(grads)
                    for key, array in values.items():
                        total[key] = total[key] + array if key in total else array
                    value += float(np.asarray(mantissa(loss_value)))
                    if index + 1 in lengths:
                        runs[index + 1] = GradientRun(index + 1, value, dict(total), dtypes,
                                                      time.perf_counter() - start)
        finally:
            _restore_values(pairs)
        return runs

    def _online_program(self, learner: Learner) -> Program:
        """The learner's staged online step, built once: each draw of the inputs runs it again, traced once."""
        if id(learner) not in self._online_programs:
            loss = self.loss

            def online_step(xs: Inputs) -> tuple[Grads, Leaf]:
                grads, value = learner.etrace_grad(*xs, step_fn=lambda *x: loss(learner(*x)),
                                                   reduction="sum", loss_output="scalar", return_value=True)
                return grads, value

            if self.stage is jitted:
                staged: JittedStep = brainstate.transform.jit(online_step)
                # the advice reads XLA's analysis of it without compiling again
                self.jitted_steps[id(learner)] = staged
                self._online_programs[id(learner)] = staged
            else:
                self._online_programs[id(learner)] = self.stage(online_step)
        return self._online_programs[id(learner)]

    def _timed(self, run: Program, steps: int, pairs: StateValues,
               label: int | None = None) -> GradientRun:
        _restore_values(pairs)
        start = time.perf_counter()
        with bt.quiet([]), self.same_random_draws():
            grads, value = run(self.prefix(steps))
            value = float(np.asarray(mantissa(value)))
        seconds = time.perf_counter() - start
        _restore_values(pairs)
        values, dtypes = flat_leaves(grads)
        return GradientRun(label or steps, value, values, dtypes, seconds)


def _broadcasts(old: list[tuple[int, ...]], new: list[tuple[int, ...]]) -> bool:
    """Whether every leaf of shape ``old`` is an initial value the first step only broadcasts: a scalar, or
    the same axes with 1 where the step puts more. A state that gains a leading axis is laid out wrongly
    (a batch axis the model does not have), not broadcast."""
    if len(old) != len(new):
        return False
    return all(len(a) == 0 or (len(a) == len(b) and all(x in (1, y) for x, y in zip(a, b)))
               for a, b in zip(old, new))


def _broadcast(value: Leaf, shape: tuple[int, ...]) -> Leaf:
    if isinstance(value, saiunit.Quantity):
        return type(value)(jnp.broadcast_to(value.mantissa, shape), unit=value.unit)
    return jnp.broadcast_to(value, shape)


def _draw(rng: np.random.Generator, shape: tuple[int, ...], example: np.ndarray, leaf: Leaf,
          scale: float = 1.0) -> object:
    """Random inputs shaped like ``example`` (a float input times ``scale``), drawn with NumPy: a JAX draw
    compiles once per shape, which costs more than the draw on every model. An integer scalar is a step
    index: it counts the steps from the example's value, as a training loop's ``for i in range(T)`` does."""
    dtype = example.dtype
    if np.issubdtype(dtype, np.integer) and example.ndim == 0:
        drawn = (int(example) + np.arange(shape[0])).astype(dtype)
    elif np.issubdtype(dtype, np.bool_):
        drawn = rng.random(shape) < 0.5
    elif np.issubdtype(dtype, np.integer):
        high = max(2, int(example.max()) + 1) if example.size else 2
        drawn = rng.integers(0, high, shape).astype(dtype)
    else:
        drawn = (rng.standard_normal(shape) * scale).astype(dtype)
    # kept in NumPy: the steps and prefixes cut from it, eagerly, are then views, where JAX would compile
    # a slice for every shape and position
    return drawn * leaf.unit if isinstance(leaf, saiunit.Quantity) else drawn


@contextlib.contextmanager
def on_device(device: jax.Device | None) -> Iterator[None]:
    """Run on ``device`` in full float32: a GPU's default TensorFloat-32 matmuls differ from float32
    by about 1e-4, which would read as an online gradient that is wrong where it must be exact."""
    with jax.default_matmul_precision("highest"):
        if device is None:
            yield
            return
        with jax.default_device(device):
            yield


def leaf_key(grads: Mapping[LeafKey, object], weight: tuple[object, ...], leaf: str) -> LeafKey:
    """The key of ``weight``'s ``leaf`` among a run's gradients, its path's parts compared as strings (a path
    read back from JSON or a finding names ``layers[0]``'s index as text)."""
    path = tuple(map(str, weight))
    return next(key for key in grads if tuple(map(str, key[0])) == path and key[1] == leaf)

def searched(claims: _Claims, pending: Callable[[_Claims], bool], runs: Iterator[DrawRuns],
             measured: Callable[[_Claims, DrawRuns], _Claims]) -> _Claims:
    """``claims`` ``measured`` on one further draw's runs at a time (``runs``: :meth:`Harness.further_draws`) while
    ``pending`` says one is still to be refuted or confirmed; a draw that raises, or the last draw, ends the search,
    and what the draws before measured stands."""
    while pending(claims):
        try:
            drawn = next(runs, None)
        except Exception:  # noqa: BLE001 - the model ran on the draws before: their claims stand
            return claims
        if drawn is None:
            return claims
        claims = measured(claims, drawn)
    return claims
