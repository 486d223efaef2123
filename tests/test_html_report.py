"""The HTML report opened in a real headless browser: every model, every finding on the graph, no errors, no network."""

from __future__ import annotations

import json
import os

import pytest

from etrace_lint import braintrace_adapter

from browser import SKIP_REASON, elements, find_browser, open_page, with_class
from helpers import REPO, run_cli

needs_browser = pytest.mark.skipif(find_browser() is None, reason=SKIP_REASON)
EXAMPLES = os.path.join(REPO, "examples", "models")


@pytest.fixture(scope="module")
def examples_report(tmp_path_factory):
    """The report of the bundled examples, and what the JSON output and target list say about the same run."""
    folder = tmp_path_factory.mktemp("report")
    cache = str(folder / "cache")
    report = folder / "report.html"
    done = run_cli("report", "examples/models", "-o", str(report), "--cache-dir", cache)
    assert done.returncode == 1, done.stderr  # the examples hold errors on purpose
    as_json = run_cli("examples/models", "--show-info", "--output-format", "json", "--cache-dir", cache)
    targets = run_cli("examples/models", "--list-targets", "--output-format", "json")
    return folder, report, json.loads(as_json.stdout), json.loads(targets.stdout)["targets"]


def test_report_is_one_small_file_that_asks_for_nothing(examples_report):
    _, report, _, _ = examples_report
    text = report.read_text(encoding="utf-8")
    assert report.stat().st_size < 1_000_000
    assert text.startswith("<!DOCTYPE html>")
    for outside in ("http://", "https://", "<link", "src=", "@import"):
        assert outside not in text.replace('xmlns="http://www.w3.org/2000/svg"', ""), outside


@needs_browser
def test_examples_report_in_a_browser(examples_report):
    folder, report, document, targets = examples_report
    screenshot = folder / "examples-report.png"
    page = open_page(str(report), str(folder), screenshot=str(screenshot), size="1280,6000")
    assert page.console == ()
    assert page.requests == ()
    dom = elements(page.dom)
    sections = {e.attrs["data-target"]: e for e in with_class(dom, "target") if e.tag == "section"}
    assert set(sections) == {row["name"] for row in targets}
    cards = with_class(dom, "finding")
    # as many as the JSON output says (24 on braintrace 0.2.6, 25 on 0.2.8)
    assert len(cards) == len(document["findings"]) > 20
    by_id = {e.attrs["id"]: e for e in dom if "id" in e.attrs}
    for card in cards:
        node = by_id[card.attrs["data-node"]]
        assert "node" in node.attrs["class"].split()
        assert card.attrs["id"] in node.attrs["data-findings"].split()
    # the script ran: it counts what the filters show
    assert with_class(dom, "f-count")[0].text == f"{len(cards)} shown"
    # the weight the plain `@` keeps from learning is marked, the one through braintrace.matmul is not
    weights = {e.attrs["data-label"]: e.attrs for e in with_class(dom, "weight")}
    assert "v-not" in weights["w_rec"]["class"] and weights["w_rec"]["data-verdict"] == "does not learn"
    assert "v-learns" in weights["w_in"]["class"]
    assert "v-not" in weights["Wr.weight"]["class"]  # the GRU's excluded reset gate
    if braintrace_adapter.adds_same_step_gradients():
        # the readout reaches the step output around the hidden states: a bypass edge into the output node
        assert "v-same" in weights["readout"]["class"]
        bypass = [e.attrs for e in dom if e.tag == "polyline" and "bypass" in e.attrs["class"].split()]
        outputs = {e.attrs["id"] for e in with_class(dom, "output")}
        assert bypass and all(edge["data-to"] in outputs for edge in bypass)
    else:  # braintrace 0.2.6 gives that stateless readout no online gradient (ETL209)
        assert "v-not" in weights["readout"]["class"] and weights["readout"]["data-verdict"] == "does not learn"
    assert screenshot.stat().st_size > 50_000


@needs_browser
def test_filters_and_search_hide_other_findings(examples_report, tmp_path):
    _, report, _, _ = examples_report
    text = report.read_text(encoding="utf-8")
    steps = ("var r = document.querySelector('.etl-report');"
             "r.querySelector('.f-rule').value = 'ETL201';"
             "r.querySelector('.f-rule').dispatchEvent(new Event('input'));")
    page_path = tmp_path / "filtered.html"
    page_path.write_text(text.replace("</body>", f"<script>{steps}</script></body>"), encoding="utf-8")
    page = open_page(str(page_path), str(tmp_path))
    assert page.console == ()
    dom = elements(page.dom)
    shown = [c for c in with_class(dom, "finding") if "hidden" not in c.attrs]
    assert [c.attrs["data-rule"] for c in shown] == ["ETL201"]
    visible = [s.attrs["data-target"] for s in with_class(dom, "target") if "hidden" not in s.attrs]
    assert visible == ["etrace_target_rate_rnn"]

    steps = ("var r = document.querySelector('.etl-report'); var box = r.querySelector('.f-text');"
             "box.value = 'unit mismatch'; box.dispatchEvent(new Event('input'));")
    page_path.write_text(text.replace("</body>", f"<script>{steps}</script></body>"), encoding="utf-8")
    dom = elements(open_page(str(page_path), str(tmp_path)).dom)
    shown = [c for c in with_class(dom, "finding") if "hidden" not in c.attrs]
    assert [c.attrs["data-rule"] for c in shown] == ["ETL101"]


def test_html_output_format_says_when_notes_were_hidden(tmp_path):
    out = tmp_path / "run.html"
    done = run_cli("examples/models/plain_matmul_rnn.py", "--output-format", "html", "-o", str(out),
                   "--cache-dir", str(tmp_path / "cache"))
    assert done.returncode == 1, done.stderr
    text = out.read_text(encoding="utf-8")
    assert "1 note was hidden by this run" in text
    assert 'data-rule="ETL201"' in text and 'data-rule="ETL001"' not in text


def test_verify_rows_and_measured_verdicts_are_in_the_report(tmp_path):
    out = tmp_path / "verify.html"
    done = run_cli("report", "examples/models/plain_matmul_rnn.py", "--verify", "-o", str(out),
                   "--cache-dir", str(tmp_path / "cache"))
    assert done.returncode == 1, done.stderr
    dom = elements(out.read_text(encoding="utf-8"))
    assert len(with_class(dom, "verify")) == 1
    rows = [e.text for e in dom if e.tag == "tr" and e.text.startswith(("w_in", "w_rec"))]
    # weight, T, algorithm, verdict: the cells run together in a row's text
    # no cosine against a zero gradient: the cell says why, not 0
    assert any(row.startswith("w_rec16d_rtrlnot-learning") and row.endswith("n/a (online gradient zero)")
               for row in rows), rows
    assert any(row.startswith("w_in16d_rtrl") for row in rows), rows
    weights = {e.attrs["data-label"]: e.attrs for e in with_class(dom, "weight")}
    assert weights["w_rec"]["data-verdict"] == "does not learn"
    # the ETL402 the measurement added is drawn on w_rec too
    cards = {c.attrs["id"]: c.attrs for c in with_class(dom, "finding")}
    assert {cards[f]["data-rule"] for f in weights["w_rec"]["data-findings"].split()} == {"ETL201", "ETL402"}


def test_tool_errors_and_findings_about_comments_are_in_the_report(tmp_path):
    out = tmp_path / "mixed.html"
    done = run_cli("report", "tests/fixtures/fixes/unused_suppression.py",
                   "tests/fixtures/bad/broken_factories.py::etrace_target_raises", "-o", str(out),
                   "--cache-dir", str(tmp_path / "cache"))
    assert done.returncode == 2, done.stderr  # a target that could not be built
    dom = elements(out.read_text(encoding="utf-8"))
    sections = {s.attrs["data-target"]: s for s in with_class(dom, "target")}
    assert "etrace_target_raises" in sections and "tool error" in sections["etrace_target_raises"].text
    assert "etrace_target_clean" in sections
    # the unused suppressions belong to no model: they are shown apart, not dropped
    assert "Not about a model" in sections[""].text
    assert {c.attrs["data-rule"] for c in with_class(dom, "finding")} >= {"ETL301", "ETL001"}
