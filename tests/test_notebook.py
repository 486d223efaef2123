"""In Jupyter, a result of etrace_lint.check shows the HTML report: a real kernel runs a small notebook."""

from __future__ import annotations

import os

import pytest
from browser import SKIP_REASON, elements, find_browser, open_page, with_class
from helpers import REPO

nbformat = pytest.importorskip("nbformat", reason="the notebook test needs nbformat, nbclient and ipykernel")
nbclient = pytest.importorskip("nbclient", reason="the notebook test needs nbformat, nbclient and ipykernel")
pytest.importorskip("ipykernel", reason="the notebook test needs nbformat, nbclient and ipykernel")


def test_a_notebook_shows_the_report_of_check(tmp_path):
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_code_cell(f"import sys; sys.path.insert(0, {REPO!r})\n"
                                  "import braintrace, jax.numpy as jnp\nimport etrace_lint"),
        nbformat.v4.new_code_cell("etrace_lint.check(braintrace.nn.GRUCell(4, 8), jnp.ones((4,)), name='gru')"),
        nbformat.v4.new_code_cell(f"etrace_lint.check_target({os.path.join(REPO, 'examples', 'models')!r}, "
                                  f"root={REPO!r})"),
    ]
    nbclient.NotebookClient(notebook, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}}).execute()
    gru, examples = (cell.outputs[0]["data"] for cell in notebook.cells[1:])
    assert "CheckResult(1 model" in gru["text/plain"]
    # a model built inside the library is placed on the cell's line that called check, named as IPython names it
    assert "\n  Cell In[2], line 1: ETL005 Wr.weight " in gru["text/plain"], gru["text/plain"]
    assert gru["text/html"].startswith('<div class="etl-report" id="r')
    # both reports on one page, as the notebook shows them
    page = tmp_path / "notebook.html"
    page.write_text(f"<!DOCTYPE html><html><body>{gru['text/html']}{examples['text/html']}</body></html>",
                    encoding="utf-8")
    dom = elements(page.read_text(encoding="utf-8"))
    assert {s.attrs["data-target"] for s in with_class(dom, "target")} >= {
        "gru", "etrace_target_rate_rnn", "lstm", "etrace_target_gru"}
    weights = {e.attrs["data-label"]: e.attrs["data-verdict"] for e in with_class(dom, "weight")}
    assert weights["Wr.weight"] == "does not learn" and weights["w_rec"] == "does not learn"
    # the notebook draws what the report draws: why the reset gates do not learn, the scan body's box
    blocked = [e.attrs for e in dom if e.tag == "polyline" and "blocked" in e.attrs["class"].split()]
    labels = {e.attrs["id"]: e.attrs["data-label"] for e in with_class(dom, "node")}
    assert sum(labels[e["data-from"]] == "Wr.weight" for e in blocked) == 2  # the GRUCell and the example GRU
    assert "scan (line 27)" in [e.attrs["data-label"] for e in with_class(dom, "region")]
    ids = [e.attrs["id"] for e in dom if "id" in e.attrs]
    assert len(ids) == len(set(ids))  # two results on one page keep their links apart
    if find_browser() is None:
        pytest.skip(SKIP_REASON)
    shown = open_page(str(page), str(tmp_path), screenshot=str(tmp_path / "notebook.png"))
    assert shown.console == () and shown.requests == ()
    # each report's script found its own report: both counted their findings
    counts = [e.text for e in with_class(elements(shown.dom), "f-count")]
    assert len(counts) == 2 and all(text.endswith(" shown") for text in counts), counts
