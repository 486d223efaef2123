"""``%load_ext etrace_lint`` in a real kernel: each compile a later cell makes is linted and shown below it,
every place in a cell named as IPython's tracebacks name it (``Cell In[2], line 1``)."""

from __future__ import annotations

import pytest
from browser import SKIP_REASON, elements, find_browser, open_page, with_class

nbformat = pytest.importorskip("nbformat", reason="the notebook test needs nbformat, nbclient and ipykernel")
nbclient = pytest.importorskip("nbclient", reason="the notebook test needs nbformat, nbclient and ipykernel")
pytest.importorskip("ipykernel", reason="the notebook test needs nbformat, nbclient and ipykernel")

GRU = "gru = braintrace.nn.GRUCell(3, 8)\nbrainstate.nn.init_all_states(gru)\n"
CELLS = (
    # the cell that loads the extension is not linted, only later ones
    "%load_ext etrace_lint\nimport brainstate, braintrace, jax.numpy as jnp\n" + GRU
    + "learner = braintrace.compile(gru, 'D_RTRL', jnp.ones((3,)))",
    # compiled twice in one cell, shown once
    GRU + "for epoch in range(2):\n    learner = braintrace.compile(gru, 'D_RTRL', jnp.ones((3,)))",
    # compiled, then linting turned off in the same cell: the compile is still shown
    "learner = braintrace.compile(gru, 'D_RTRL', jnp.ones((3,)))\n%etrace_lint off",
    "lstm = braintrace.nn.LSTMCell(3, 8)\nbrainstate.nn.init_all_states(lstm)\n"
    "learner = braintrace.compile(lstm, 'D_RTRL', jnp.ones((3,)))",
    "%etrace_lint on",
    "learner = braintrace.compile(lstm, 'D_RTRL', jnp.ones((3,)))",
)


def _shown(cell) -> list[dict]:
    return [output["data"] for output in cell.outputs if output["output_type"] == "display_data"]


def test_later_cells_compiles_are_linted_and_shown(tmp_path):
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in CELLS]
    nbclient.NotebookClient(notebook, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}}).execute()
    shown = [_shown(cell) for cell in notebook.cells]
    assert [len(outputs) for outputs in shown] == [0, 1, 1, 0, 0, 1], notebook.cells
    (gru,), (again,), (lstm,) = shown[1], shown[2], shown[5]
    assert gru["text/plain"].startswith("CheckResult(1 model, 0 errors, 1 warnings")
    # the finding sits on the cell's line that built the GRU; the model is named by its cell, as a traceback does
    etl005 = "  Cell In[2], line 1: ETL005 Wr.weight reaches a hidden state only through Wh.weight's op (line 1)"
    assert etl005 in gru["text/plain"] and "[Cell In[2], line 4 (D_RTRL)]" in gru["text/plain"]
    # the GRU of cell 2 compiled by cell 3: its places are still cell 2's
    assert etl005 in again["text/plain"] and "[Cell In[3], line 1 (D_RTRL)]" in again["text/plain"]
    assert [o["text"].strip() for o in notebook.cells[2].outputs if o["output_type"] == "stream"] == [
        "etrace-lint: not linting the models later cells compile"]
    # no place reads as the kernel's file for a cell
    assert not [text for outputs in shown for data in outputs for text in data.values() if "ipykernel" in text]
    # the probe measures braintrace's LSTMCell's input, candidate and forget gates at 2.00x BPTT's at one step
    assert lstm["text/plain"].startswith("CheckResult(1 model, 0 errors, 0 warnings"), lstm["text/plain"]
    # on the line of cell 4 that built the LSTM, compiled again by cell 6 once linting was on
    assert lstm["text/plain"].count("\n  Cell In[4], line 1: ETL412 ") == 3, lstm["text/plain"]
    assert gru["text/html"].startswith('<div class="etl-report" id="r')
    page = tmp_path / "notebook.html"
    page.write_text(f"<!DOCTYPE html><html><body>{gru['text/html']}{lstm['text/html']}</body></html>",
                    encoding="utf-8")
    dom = elements(page.read_text(encoding="utf-8"))
    assert [s.attrs["data-target"] for s in with_class(dom, "target")] == [
        "Cell In[2], line 4 (D_RTRL)", "Cell In[6], line 1 (D_RTRL)"]
    # each finding's place and its related places in the report, as in the text, with the cell's lines
    finding = next(e for e in with_class(dom, "finding") if e.attrs["data-rule"] == "ETL005")
    assert "Wr.weight is created here: Cell In[2], line 1" in finding.text, finding.text
    assert "compiled here: Cell In[2], line 4" in finding.text, finding.text
    hit = next(e for e in dom if e.tag == "span" and e.attrs.get("class") == "hit")
    assert hit.text.split() == ["1", "gru", "=", "braintrace.nn.GRUCell(3,", "8)"], hit.text
    weights = {e.attrs["data-label"]: e.attrs["data-verdict"] for e in with_class(dom, "weight")}
    # the LSTM's input gate learns at 2.00x BPTT's step at one step (ETL412): a whole multiple of BPTT's
    # gradient, not a partial one; its output gate learns as BPTT does
    assert weights["Wr.weight"] == "does not learn" and weights["Wi.weight"] == "learns a whole multiple"
    assert weights["Wo.weight"] == "learns"
    if find_browser() is None:
        pytest.skip(SKIP_REASON)
    page_shown = open_page(str(page), str(tmp_path), screenshot=str(tmp_path / "notebook.png"))
    assert page_shown.console == () and page_shown.requests == ()
