"""A recurrent cell whose update is a frozen base plus a trainable LoRA residual.

Upstream: chaobrain/braintrace examples/drtrl/07-operator-lora.py (LoRACell: a
plain `xh @ frozen_base` and a braintrace.nn.LoRA on the same input, tanh into
a HiddenState, a linear readout), on the sine-prediction task's sizes, smaller.
"""

import brainstate
import braintools
import braintrace
import jax
import jax.numpy as jnp

import etrace_lint


class LoRACell(brainstate.nn.Module):
    def __init__(self, n_in, n_hidden, rank=2):
        super().__init__()
        self.n_hidden = n_hidden
        self.frozen_base = brainstate.ParamState(braintools.init.XavierNormal()((n_in + n_hidden, n_hidden)))
        self.lora = braintrace.nn.LoRA(in_features=n_in + n_hidden, lora_rank=rank, out_features=n_hidden)

    def init_state(self, batch_size=None, **kwargs):
        self.h = brainstate.HiddenState(braintools.init.param(braintools.init.ZeroInit(), self.n_hidden, batch_size))

    def update(self, x):
        xh = jnp.concatenate([x, self.h.value], axis=-1)
        base = xh @ self.frozen_base.value
        self.h.value = jax.nn.tanh(base + self.lora(xh))
        return self.h.value


class LoRANet(brainstate.nn.Module):
    def __init__(self, n_in, n_hidden):
        super().__init__()
        self.cell = LoRACell(n_in, n_hidden)
        self.readout = braintrace.nn.Linear(n_hidden, 1)

    def update(self, x):
        return self.readout(self.cell(x))


@etrace_lint.target(name="lora-sine-rnn", verify={"algorithms": ["d_rtrl"]})
def lora_sine_rnn():
    model = LoRANet(1, 12)
    brainstate.nn.init_all_states(model)
    return model, (jnp.ones((1,)),)
