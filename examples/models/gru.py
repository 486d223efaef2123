"""braintrace's GRU cell: the reset gate's weight does not learn online.

The reset gate ``r`` multiplies the hidden state *before* the candidate's
matmul, so ``Wr`` reaches the hidden state only through another trainable ETP
op and the compiler excludes it (ETL005). ``Wz`` and ``Wh`` learn.
"""

import braintrace
import jax.numpy as jnp


def etrace_target_gru():
    return braintrace.nn.GRUCell(16, 32), (jnp.ones((16,)),)

