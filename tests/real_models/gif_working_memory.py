"""braintrace's pp_prop GIF working-memory net: GIF neurons behind an AlignPostProj, a leaky readout.

Upstream: chaobrain/braintrace examples/pp_prop/03-neurons-gif-working-memory.py
(``Net``: ``_shared.GIFCell`` then ``_shared.LeakyReadout``, trained with
``braintrace.pp_prop`` at ``decay_or_rank=0.98``) with examples/pp_prop/_shared.py
(``GIFCell``: input and last spikes concatenated into one ``braintrace.nn.Linear``,
a brainpy.state ``AlignPostProj`` onto an ``Expon`` synapse and a ``CUBA`` output
driving examples/snn_models.py's ``GIF``, whose ``tau_I2`` is drawn per neuron
between 80 and 200 ms; ``make_memory_pattern``), Copyright 2026 BrainX Ecosystem
Limited, Apache License 2.0. Small sizes. Not tests/real_models/gif_dms.py's
``GifNet``, which drives the GIF through a bare ``Expon`` with no projection.

Issue 38, item 5: etrace-lint says ETL208 on ``cell.syn.comm.weight`` and BPTT is
zero for every weight on any input. The reason is upstream's own: ``GIF.update``
never reads the current the ``CUBA`` output registers on it
(``sum_current_inputs``, which brainpy.state's LIF and ALIF call), so the
membrane stays at rest whatever the synapse carries, the net never spikes, and
the projection's weight reaches no output. ``reads_synapse=True`` is the same
net with that one call added (the GIF then integrates its synaptic current):
the twin on which the weights' gradients are measured.
"""

import brainpy.state
import brainstate
import braintools
import braintrace
import jax
import jax.numpy as jnp
import saiunit as u

import etrace_lint


class GIF(brainpy.state.Neuron):
    def __init__(self, size, V_rest=0. * u.mV, V_th_inf=1. * u.mV, R=1. * u.ohm, tau=20. * u.ms,
                 tau_I2=50. * u.ms, A2=0. * u.mA, reads_synapse=False):
        super().__init__(size, spk_fun=braintools.surrogate.ReluGrad(), spk_reset="soft")
        self.reads_synapse = reads_synapse
        self.V_rest = braintools.init.param(V_rest, self.varshape)
        self.V_th_inf = braintools.init.param(V_th_inf, self.varshape)
        self.R = braintools.init.param(R, self.varshape)
        self.tau = braintools.init.param(tau, self.varshape)
        self.tau_I2 = braintools.init.param(tau_I2, self.varshape)
        self.A2 = braintools.init.param(A2, self.varshape)

    def init_state(self, batch_size=None, **kwargs):
        self.V = brainstate.HiddenState(braintools.init.param(braintools.init.ZeroInit(unit=u.mV),
                                                              self.varshape, batch_size))
        self.I2 = brainstate.HiddenState(braintools.init.param(braintools.init.ZeroInit(unit=u.mA),
                                                               self.varshape, batch_size))

    def update(self, x=0. * u.mA):
        if self.reads_synapse:
            x = self.sum_current_inputs(x, self.V.value)
        last_spk = jax.lax.stop_gradient(self.get_spike())
        last_V = self.V.value - self.V_th_inf * last_spk
        last_I2 = self.I2.value - self.A2 * last_spk
        I2 = brainstate.nn.exp_euler_step(lambda i2: -i2 / self.tau_I2, last_I2)
        V = brainstate.nn.exp_euler_step(lambda v, i: (-v + self.V_rest + self.R * i) / self.tau, last_V, x + I2)
        self.I2.value = I2
        self.V.value = V
        return self.get_spike()

    def get_spike(self, V=None):
        V = self.V.value if V is None else V
        return self.spk_fun((V - self.V_th_inf) / self.V_th_inf)


class GIFCell(brainstate.nn.Module):
    def __init__(self, n_in, n_rec, A2=-0.5 * u.mA, reads_synapse=False):
        super().__init__()
        self.neu = GIF(n_rec, V_th_inf=1. * u.mV, tau=20. * u.ms,
                       tau_I2=brainstate.random.uniform(80. * u.ms, 200. * u.ms, n_rec), A2=A2,
                       reads_synapse=reads_synapse)
        w = u.math.concatenate([braintools.init.KaimingNormal(2.0, unit=u.mA)((n_in, n_rec)),
                                braintools.init.KaimingNormal(1.0, unit=u.mA)((n_rec, n_rec))], axis=0)
        self.syn = brainpy.state.AlignPostProj(
            comm=braintrace.nn.Linear(n_in + n_rec, n_rec, w_init=w, b_init=braintools.init.ZeroInit(unit=u.mA)),
            syn=brainpy.state.Expon(n_rec, tau=10. * u.ms, g_initializer=braintools.init.ZeroInit(unit=u.mA)),
            out=brainpy.state.CUBA(scale=1.),
            post=self.neu,
        )

    def update(self, x):
        self.syn(u.math.concatenate([x, self.neu.get_spike()], axis=-1))
        self.neu(0. * u.mA)
        return self.neu.get_spike()


class Net(brainstate.nn.Module):
    def __init__(self, n_in, n_rec, n_out, reads_synapse=False):
        super().__init__()
        self.cell = GIFCell(n_in, n_rec, reads_synapse=reads_synapse)
        self.readout = braintrace.nn.LeakyRateReadout(in_size=n_rec, out_size=n_out, tau=10. * u.ms,
                                                      w_init=braintools.init.KaimingNormal())

    def update(self, x):
        return self.readout(self.cell(x))


PP_PROP = {"algorithms": ["pp_prop"], "algorithm_options": {"pp_prop": {"decay_or_rank": 0.98}}}


@etrace_lint.target(name="pp-prop-gif-working-memory", environ={"dt": 1. * u.ms}, verify=PP_PROP)
def pp_prop_gif_working_memory():
    model = Net(8, 12, 8)
    brainstate.nn.init_all_states(model)
    return model, (jnp.ones((8,)),)


@etrace_lint.target(name="pp-prop-gif-working-memory-driven", environ={"dt": 1. * u.ms}, verify=PP_PROP)
def pp_prop_gif_working_memory_driven():
    model = Net(8, 12, 8, reads_synapse=True)
    brainstate.nn.init_all_states(model)
    return model, (jnp.ones((8,)),)
