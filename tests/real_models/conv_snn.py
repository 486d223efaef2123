"""Feed-forward convolutional spiking networks: conv + LayerNorm + IF, and a conv with a bias.

Upstream: chaobrain/braintrace examples/004-feedforward-conv-snn.py (ConvSNN:
braintrace.nn.Conv2d -> braintrace.nn.LayerNorm -> brainpy.state.IF -> pooling,
then a LeakyRateReadout, unitless as there) and
examples/drtrl/08-operator-conv.py (a braintrace.nn.Conv2d whose bias, of shape
(1, 1, C), is trained too). One conv block on an 8x8 frame.
"""

import brainpy.state
import brainstate
import braintools
import braintrace
import jax.numpy as jnp

import etrace_lint

IF_PARAMS = dict(V_th=1.0, tau=2.0, R=1.0, spk_fun=braintools.surrogate.Arctan(),
                 V_initializer=braintools.init.ZeroInit())


class ConvSNN(brainstate.nn.Module):
    def __init__(self, in_size, n_out, n_channel=4, norm=True, bias=False):
        super().__init__()
        conv = braintrace.nn.Conv2d(in_size, n_channel, kernel_size=3, padding=1,
                                    w_init=braintools.init.XavierNormal(scale=10.0),
                                    b_init=braintools.init.ZeroInit() if bias else None)
        layers = [conv, braintrace.nn.LayerNorm.desc()] if norm else [conv]
        self.layer1 = brainstate.nn.Sequential(*layers, brainpy.state.IF.desc(**IF_PARAMS),
                                               brainstate.nn.MaxPool2d.desc(kernel_size=2, stride=2))
        self.layer2 = brainstate.nn.Flatten(in_size=self.layer1.out_size)
        self.layer3 = braintrace.nn.LeakyRateReadout(self.layer2.out_size, n_out, tau=10.0)

    def update(self, x):
        return x >> self.layer1 >> self.layer2 >> self.layer3


@etrace_lint.target(name="conv-layernorm-if", environ={"dt": 1.0}, verify={"algorithms": ["d_rtrl"]})
def conv_layernorm_if():
    model = ConvSNN((8, 8, 1), 3)
    brainstate.nn.init_all_states(model)
    return model, (jnp.ones((8, 8, 1)),)


@etrace_lint.target(name="conv-bias-if", environ={"dt": 1.0}, verify={"algorithms": ["d_rtrl"]})
def conv_bias_if():
    model = ConvSNN((8, 8, 1), 3, norm=False, bias=True)
    brainstate.nn.init_all_states(model)
    return model, (jnp.ones((8, 8, 1)),)
