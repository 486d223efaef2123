"""A factory builds the same model, and fails the same way, when brainstate's checks are answered on the host."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

brainstate = pytest.importorskip("brainstate")
from brainstate.transform import _error_if  # noqa: E402

from etrace_lint.analysis.braintrace_adapter import host_error_checks  # noqa: E402

MESSAGE = "mean is more than 2 std from [lower, upper] in truncated_normal"


def _weights(seed: int) -> np.ndarray:
    brainstate.random.seed(seed)
    layer = brainstate.nn.Linear(8, 16)  # its weight comes from a truncated normal, whose bounds are checked
    return np.asarray(layer.weight.value["weight"])


def _raised(call) -> tuple[type, str]:
    """The exception's type and its message's last line (XLA's message carries the stack it was raised on)."""
    with pytest.raises(Exception) as caught:
        call()
    return type(caught.value), str(caught.value).strip().splitlines()[-1]


def _bad_bounds():
    brainstate.random.truncated_normal(0.0, 1.0, (4,), loc=10.0, scale=0.1)


def test_a_model_gets_the_same_weights():
    outside = _weights(3)
    with host_error_checks():
        inside = _weights(3)
    np.testing.assert_array_equal(inside, outside)


def test_a_check_that_holds_raises_what_brainstate_raises():
    kind, message = _raised(_bad_bounds)
    assert MESSAGE in message
    with host_error_checks():
        assert _raised(_bad_bounds) == (kind, message)


def test_a_traced_check_is_brainstate_own():
    @jax.jit
    def checked(x):
        _error_if.jit_error_if(x > 1.0, "x is {x}", x=x)
        return x * 2

    with host_error_checks():
        assert float(checked(jnp.asarray(0.5))) == 1.0
        kind, message = _raised(lambda: checked(jnp.asarray(3.0)).block_until_ready())
    assert "x is 3.0" in message and kind is not ValueError  # raised by XLA's callback, as outside


def test_brainstate_own_check_is_back_after_the_block_even_when_it_raises():
    original = _error_if.jit_error_if
    with pytest.raises(Exception, match="truncated_normal"), host_error_checks():
        assert _error_if.jit_error_if is not original
        _bad_bounds()
    assert _error_if.jit_error_if is original
