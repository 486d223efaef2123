"""braintrace's LSTM cell: every gate's weight drives the cell state directly (clean)."""

import braintrace
import jax.numpy as jnp

import etrace_lint


@etrace_lint.target(name="lstm", batch_size=8)
def lstm():
    return braintrace.nn.LSTMCell(16, 32), (jnp.ones((8, 16)),)
