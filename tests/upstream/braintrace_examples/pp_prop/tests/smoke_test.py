"""Smoke tests: each example's main() runs one epoch end-to-end without exceptions."""

import importlib.util
import pathlib

import pytest

EXAMPLES_DIR = pathlib.Path(__file__).resolve().parents[1]

EXAMPLE_FILES = [
    "01-basics-lif-integrator.py",
    "02-neurons-alif-dms.py",
    "03-neurons-gif-working-memory.py",
    "04-neurons-coba-ei-rsnn.py",
    "05-batching-vmap.py",
    "06-batching-batched.py",
    "07-vjp-single-step.py",
    "08-vjp-multi-step.py",
    "09-operator-sparse.py",
    "10-operator-lora.py",
    "11-operator-conv.py",
    "12-classification-neuromorphic.py",
    "13-knob-decay-vs-rank.py",
    "14-knob-vjp-method-contrast.py",
]


def _load(fname: str):
    import sys
    # Clear any stale '_shared' from a previous example suite so each test
    # suite loads its own _shared (drtrl vs pp_prop have different symbols).
    sys.modules.pop("_shared", None)
    spec = importlib.util.spec_from_file_location(f"_pp_prop_{fname}", EXAMPLES_DIR / fname)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("fname", EXAMPLE_FILES)
def test_example_runs(fname):
    mod = _load(fname)
    result = mod.main(n_epochs=1, batch_size=4, plot=False)
    assert "losses" in result
    assert len(result["losses"]) >= 1
