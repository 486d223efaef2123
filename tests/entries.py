"""Compare braintrace's online gradient with BPTT's entry by entry, for one model's weights.

``--verify`` and the probe give one figure per weight. A construct that acts on part of a weight (a ReLU that
shuts some units, a mask, a sign constraint) can leave most entries exact and a few wrong, or move entries
that BPTT leaves at zero; this shows which. From the repository's root::

    python -m tests.entries tests/fixtures/own/dead_relu_constraint.py
    python -m tests.entries FILE::factory w_in --steps 1 8 --show 5

Each weight leaf, after ``T`` steps from the states the factory gives, on the tests' referee's inputs
(tests/online_referee.py: drawn from the example inputs, scaled up until every weight's BPTT gradient is
non-zero; ``--no-scale``: as drawn), sorts its entries into:

- ``not finite``: the online entry or BPTT's is NaN or infinite (both figures are shown);
- ``exact``: the online entry is BPTT's (within 1e-3 of the leaf's largest BPTT entry);
- ``still``: both are zero;
- ``silent online``: BPTT moves the entry, the online gradient does not;
- ``online only``: the online gradient moves an entry BPTT leaves at zero;
- ``off``: both move it, by different amounts (the ratio is shown).

Only braintrace's and brainstate's public API computes the figures, as in the referee.
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass

import numpy as np

REPO_FLOOR = 1e-7  # a BPTT entry at most this large (times the leaf's largest) is zero
EXACT = 1e-3  # an online entry this close to BPTT's, relative to the leaf's largest entry, is exact
KINDS = ("not finite", "exact", "still", "silent online", "online only", "off")
SHOWN = ("not finite", "silent online", "online only", "off")  # the kinds a few entries of are printed


@dataclass(frozen=True)
class LeafEntries:
    """One weight leaf's entries after some steps, sorted by how the online gradient treats them."""

    name: str
    shape: tuple[int, ...]
    online: np.ndarray
    bptt: np.ndarray

    def kinds(self) -> np.ndarray:
        finite = np.isfinite(self.online) & np.isfinite(self.bptt)
        online, bptt = np.where(finite, self.online, 0.0), np.where(finite, self.bptt, 0.0)
        largest = float(np.max(np.abs(bptt))) if bptt.size else 0.0
        scale = largest or float(np.max(np.abs(online), initial=0.0)) or 1.0
        zero_b, zero_o = np.abs(bptt) <= REPO_FLOOR * scale, np.abs(online) <= REPO_FLOOR * scale
        exact = np.abs(online - bptt) <= EXACT * scale
        kind = np.full(bptt.shape, "off", dtype=object)
        kind[~zero_b & ~zero_o] = "off"
        kind[zero_b & ~zero_o] = "online only"
        kind[~zero_b & zero_o] = "silent online"
        kind[exact & ~(zero_b & zero_o)] = "exact"
        kind[zero_b & zero_o] = "still"
        kind[~finite] = "not finite"  # the figures of the finite entries above are scaled by finite entries only
        return kind

    def lines(self, show: int) -> list[str]:
        kind = self.kinds()
        counts = {k: int(np.sum(kind == k)) for k in KINDS}
        head = ", ".join(f"{n} {k}" for k, n in counts.items() if n)
        out = [f"  {self.name} {self.shape}: {head}"]
        for k in SHOWN:
            where = np.argwhere(kind == k)[:show]
            for index in where:
                at = tuple(int(i) for i in index)
                o, b = float(self.online[at]), float(self.bptt[at])
                ratio = f"  ({o / b:.3g}x)" if k == "off" else ""
                out.append(f"    {k:13s} {at}: online {o:+.4g}  BPTT {b:+.4g}{ratio}")
        return out


def measure(path: str, factory_name: str, steps: int, algorithm: str, seed: int,
            scale: bool = True) -> list[LeafEntries]:
    """Every weight leaf of the target after ``steps`` steps from the factory's states; ``scale``: the inputs scaled
    up until every weight's BPTT gradient is non-zero (else as drawn, for a rule about how large a gradient is)."""
    import brainstate
    import jax
    from online_referee import (
        DEFAULT_OPTIONS,
        TARGET_ATTRIBUTE,
        _bptt_with_signal,
        _is_quantity,
        _learner,
        _noise,
        _restore,
        _snapshot,
        bptt_program,
        load,
        mean_squared_output,
        named,
        online_program,
    )

    module = load(path, "entries_target")
    factory = getattr(module, factory_name)
    declared = getattr(factory, TARGET_ATTRIBUTE, {}) or {}
    verify = declared.get("verify", {})
    options = {**DEFAULT_OPTIONS.get(algorithm, {}), **verify.get("algorithm_options", {}).get(algorithm, {})}
    loss = verify.get("loss", mean_squared_output)
    with brainstate.environ.context(**declared.get("environ", {})):
        brainstate.random.seed(seed)
        model, example_inputs = factory()[:2]
        inputs_fn = verify.get("inputs")
        xs = inputs_fn(steps, declared.get("batch_size"), seed) if inputs_fn else _noise(tuple(example_inputs),
                                                                                        steps, seed)
        xs = xs if isinstance(xs, tuple) else (xs,)
        x0 = jax.tree.map(lambda a: a[0], xs, is_leaf=_is_quantity)
        learner = _learner(model, algorithm, x0, options)
        start = _snapshot(model)
        differentiate = brainstate.transform.grad
        try:
            _, xs = _bptt_with_signal(bptt_program(model, loss), xs, start, bool(inputs_fn) or not scale)
        except ValueError as exc:  # JAX cannot reverse a while_loop: the same derivative in forward mode
            if "Reverse-mode differentiation does not work for lax.while_loop" not in str(exc):
                raise
            _restore(start)
            differentiate = brainstate.transform.jacfwd
            _, xs = _bptt_with_signal(bptt_program(model, loss, differentiate), xs, start,
                                      bool(inputs_fn) or not scale)
        try:
            bptt = named(bptt_program(model, loss, differentiate)(xs))
        finally:
            _restore(start)
        online = named(online_program(learner, loss)(xs))
    return [LeafEntries(name, exact.shape, np.asarray(online.get(name, np.zeros_like(exact))).reshape(exact.shape),
                        exact) for name, exact in sorted(bptt.items())]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.entries", description=__doc__.split("\n")[0])
    parser.add_argument("target", help="FILE or FILE::factory")
    parser.add_argument("weights", nargs="*", help="only these weights (a layer's name: all its weights)")
    parser.add_argument("--steps", type=int, nargs="+", default=[1, 4], help="sequence lengths (default 1 4)")
    parser.add_argument("--algorithm", default="d_rtrl", help="braintrace.compile's name (default d_rtrl)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-scale", action="store_true",
                        help="the inputs as drawn, not scaled up until every weight's BPTT gradient is non-zero")
    parser.add_argument("--show", type=int, default=3, help="entries shown of each kind but exact and still")
    args = parser.parse_args(argv)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # the referee is a module of tests/
    from helpers import REPO

    from etrace_lint.discovery.discover import discover

    file, _, factory = args.target.partition("::")
    targets = [t for t in discover([file], REPO).targets if not factory or t.factory == factory]
    if not targets:
        print(f"{args.target}: no target", file=sys.stderr)
        return 2
    for spec in targets:
        for steps in args.steps:
            print(f"== {spec.key}, {args.algorithm}, T={steps}")
            try:
                leaves = measure(spec.path, spec.factory, steps, args.algorithm, args.seed, not args.no_scale)
            except Exception as exc:  # noqa: BLE001 - one target that does not run: said, the others measured
                print(f"  raised {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")
                continue
            for leaf in leaves:
                if not args.weights or any(leaf.name == w or leaf.name.startswith((w + "[", w + "."))
                                           for w in args.weights):
                    print("\n".join(leaf.lines(args.show)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
