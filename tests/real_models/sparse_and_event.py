"""Recurrent LIF networks with sparse connectivity: braintrace's SparseLinear, and an event projection.

Upstream: chaobrain/braintrace examples/pp_prop/09-operator-sparse.py
(SparseLIFCell: a dense feed-forward braintrace.nn.Linear and a
braintrace.nn.SparseLinear recurrent projection, each through a
brainpy.state.AlignPostProj onto an Expon synapse) and brainpy.state's E/I
examples whose projection is a brainstate.nn.EventFixedProb (a fixed-probability
event-driven matrix-vector product). Small sizes.
"""

import brainevent
import brainpy.state
import brainstate
import braintools
import braintrace
import jax.numpy as jnp
import numpy as np
import saiunit as u

import etrace_lint


def _lif(n):
    return brainpy.state.LIF(n, R=1. * u.ohm, tau=20. * u.ms, V_th=1. * u.mV, V_reset=0. * u.mV,
                             V_rest=0. * u.mV, V_initializer=braintools.init.ZeroInit(unit=u.mV))


def _projection(comm, n_rec, post):
    return brainpy.state.AlignPostProj(
        comm=comm,
        syn=brainpy.state.Expon(n_rec, tau=10. * u.ms, g_initializer=braintools.init.ZeroInit(unit=u.mA)),
        out=brainpy.state.CUBA(scale=1.),
        post=post,
    )


def _fixed_degree_csr(n_rec, density):
    """A recurrent matrix with the same number of targets per row, in compressed sparse rows."""
    rng = np.random.default_rng(1)
    degree = max(1, round(n_rec * density))
    indices = np.sort(np.stack([rng.choice(n_rec, degree, replace=False) for _ in range(n_rec)]), axis=1)
    indptr = np.arange(n_rec + 1, dtype=np.int32) * degree
    values = rng.normal(size=n_rec * degree).astype(np.float32) / np.sqrt(degree)
    return brainevent.CSR(jnp.asarray(values), jnp.asarray(indices.reshape(-1), dtype=jnp.int32),
                          jnp.asarray(indptr), shape=(n_rec, n_rec))


class SparseLIFCell(brainstate.nn.Module):
    def __init__(self, n_in, n_rec, density=0.3, event=False):
        super().__init__()
        self.neu = _lif(n_rec)
        ff = braintrace.nn.Linear(n_in, n_rec, w_init=braintools.init.KaimingNormal(2.0, unit=u.mA),
                                  b_init=braintools.init.ZeroInit(unit=u.mA))
        if event:
            rec = brainstate.nn.EventFixedProb(n_rec, n_rec, conn_num=density, conn_weight=0.5 * u.mA, seed=1)
        else:
            rec = braintrace.nn.SparseLinear(_fixed_degree_csr(n_rec, density), b_init=None)
            params = dict(rec.weight.value)
            params["weight"] = params["weight"] * u.mA
            rec.weight.value = params
        self.ff_syn = _projection(ff, n_rec, self.neu)
        self.rec_syn = _projection(rec, n_rec, self.neu)

    def update(self, x):
        self.ff_syn(x)
        self.rec_syn(self.neu.get_spike())
        self.neu(0. * u.mA)
        return self.neu.get_spike()


class Net(brainstate.nn.Module):
    def __init__(self, n_in, n_rec, n_out, event):
        super().__init__()
        self.cell = SparseLIFCell(n_in, n_rec, event=event)
        self.readout = braintrace.nn.LeakyRateReadout(n_rec, n_out, tau=10. * u.ms)

    def update(self, x):
        return self.readout(self.cell(x))


@etrace_lint.target(name="sparse-lif-pp-prop", environ={"dt": 1. * u.ms},
                    verify={"algorithms": ["pp_prop"], "algorithm_options": {"pp_prop": {"decay_or_rank": 0.95}}})
def sparse_lif_pp_prop():
    model = Net(8, 16, 2, event=False)
    brainstate.nn.init_all_states(model)
    return model, (jnp.ones((8,)),)


@etrace_lint.target(name="event-fixedprob-lif", environ={"dt": 1. * u.ms}, verify={"algorithms": ["d_rtrl"]})
def event_fixedprob_lif():
    model = Net(8, 16, 2, event=True)
    brainstate.nn.init_all_states(model)
    return model, (jnp.ones((8,)),)
