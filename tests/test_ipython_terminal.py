"""``%load_ext etrace_lint`` in IPython in a terminal, not a kernel: a later input compiles a model, and the
lint is printed on the inputs' own lines, the model named as IPython names the input in a traceback."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

pytest.importorskip("IPython", reason="the terminal test needs IPython")

# each line one input, as typed at the prompt: In [1] ... In [6]
SESSION = """\
%load_ext etrace_lint
import brainstate, braintrace, jax.numpy as jnp
gru = braintrace.nn.GRUCell(3, 8)
brainstate.nn.init_all_states(gru)
learner = braintrace.compile(gru, 'D_RTRL', jnp.ones((3,)))
print("trained on")
"""


def test_a_later_inputs_compile_is_linted_on_the_inputs_lines(tmp_path):
    env = dict(os.environ, IPYTHONDIR=str(tmp_path / "ipython"))  # the user's profile and history stay as they are
    done = subprocess.run([sys.executable, "-m", "IPython", "--simple-prompt", "--no-banner", "--colors=NoColor"],
                          input=SESSION, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-3000:]
    assert "Traceback" not in output and "etrace-lint: error" not in output, output[-3000:]
    assert "CheckResult(1 model, 0 errors, 1 warnings" in output, output[-3000:]
    findings = [line.strip() for line in output.splitlines() if re.search(r": ETL\d{3} ", line)]
    # on the input that built the GRU (In [3]), the model named by the input that compiled it (In [5])
    assert any(re.match(r"<ipython-input-3-[0-9a-f]+>:1:\d+: ETL005 Wr\.weight ", line) for line in findings), findings
    assert all(line.endswith("[Cell In[5], line 1 (D_RTRL)]") for line in findings), findings
    assert not any("site-packages" in line or "etrace_lint" in line for line in findings), findings
    assert "trained on" in output  # the session goes on after the lint
