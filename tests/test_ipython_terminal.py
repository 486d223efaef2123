"""``%load_ext etrace_lint`` in IPython in a terminal, not a kernel: a later input compiles a model, and the
lint is printed on the inputs' own lines, each place and the model named as IPython names the input in a
traceback (``Cell In[3], line 1``); so is every compile of a file of inputs, ``ipython train.ipy``."""

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
    # on the input that built the GRU (In [3]), the model named by the input that compiled it (In [5]), both
    # as IPython's own tracebacks name an input's line
    assert any(line.startswith("Cell In[3], line 1: ETL005 Wr.weight ") for line in findings), findings
    assert all(line.endswith("[Cell In[5], line 1 (D_RTRL)]") for line in findings), findings
    assert "ipython-input" not in output, output[-3000:]
    assert not any("site-packages" in line or "etrace_lint" in line for line in findings), findings
    assert "trained on" in output  # the session goes on after the lint


# a file of inputs: IPython runs it whole as one cell, In [1], whose lines after %load_ext are the later inputs
SCRIPT = """\
%load_ext etrace_lint
import brainstate, braintrace, jax.numpy as jnp
gru = braintrace.nn.GRUCell(3, 8)
brainstate.nn.init_all_states(gru)
learner = braintrace.compile(gru, 'D_RTRL', jnp.ones((3,)))
rnn = braintrace.nn.ValinaRNNCell(3, 8)
brainstate.nn.init_all_states(rnn)
learner = braintrace.compile(rnn, 'D_RTRL', jnp.ones((3,)))
%etrace_lint off
learner = braintrace.compile(gru, 'D_RTRL', jnp.ones((3,)))
print("trained on")
"""


def test_every_compile_of_a_file_of_inputs_is_linted_until_linting_is_off(tmp_path):
    (tmp_path / "train.ipy").write_text(SCRIPT, encoding="utf-8")
    env = dict(os.environ, IPYTHONDIR=str(tmp_path / "ipython"))
    done = subprocess.run([sys.executable, "-m", "IPython", "--no-banner", "--colors=NoColor", "train.ipy"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-3000:]
    assert "Traceback" not in output and "etrace-lint: error" not in output, output[-3000:]
    # the GRU and the RNN, each once; the GRU compiled again after %etrace_lint off is not linted
    assert output.count("CheckResult(1 model, ") == 2, output[-3000:]
    findings = [line.strip() for line in output.splitlines() if re.search(r": ETL\d{3} ", line)]
    assert any(line.startswith("Cell In[1], line 3: ETL005 Wr.weight ") and line.endswith(
        "[Cell In[1], line 5 (D_RTRL)]") for line in findings), findings
    assert any(line.endswith("[Cell In[1], line 8 (D_RTRL)]") for line in findings), findings
    assert not any(line.endswith("[Cell In[1], line 10 (D_RTRL)]") for line in findings), findings
    assert "ipython-input" not in output, output[-3000:]
    assert output.index("etrace-lint: not linting") < output.index("trained on")
