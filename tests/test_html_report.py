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


def _inside(inner: tuple, outer: tuple) -> bool:
    return outer[0] <= inner[0] and outer[1] <= inner[1] and inner[2] <= outer[2] and inner[3] <= outer[3]


def _overlap(one: tuple, other: tuple) -> bool:
    return one[0] < other[2] and other[0] < one[2] and one[1] < other[3] and other[1] < one[3]


@needs_browser
def test_ops_inside_control_flow_are_boxed_with_their_boundary(tmp_path):
    out = tmp_path / "regions.html"
    done = run_cli("report", "examples/models/scan_in_step.py::etrace_target_substepped",
                   "tests/fixtures/own/vmapped_weights.py::etrace_target_data_vmap",
                   "tests/fixtures/compiler/map_batched.py", "-o", str(out), "--cache-dir", str(tmp_path / "cache"))
    assert done.returncode == 1, done.stderr
    page = open_page(str(out), str(tmp_path), screenshot=str(tmp_path / "regions.png"))
    assert page.console == () and page.requests == ()
    dom = elements(page.dom)
    by_id = {e.attrs["id"]: e for e in dom if "id" in e.attrs}
    boxes = {}
    for section in (s for s in with_class(dom, "target") if s.tag == "section"):
        prefix = section.attrs["id"] + "-"
        boxes[section.attrs["data-target"]] = [e for e in with_class(dom, "region")
                                              if e.attrs["id"].startswith(prefix)]
    # the matmul written in the scan body, the one in a vmapped lambda, the GRU's inside brainstate's Map
    assert [b.attrs["data-label"] for b in boxes["etrace_target_substepped"]] == ["scan (line 27)"]
    assert [b.attrs["data-label"] for b in boxes["etrace_target_data_vmap"]] == ["vmap (line 28)"]
    assert [b.attrs["data-label"] for b in boxes["etrace_target_map_gru"]] == ["Map (line 19)"]
    for target, regions in boxes.items():
        for region in regions:
            members = region.attrs["data-members"].split()
            assert members, target
            for member in members:  # each op drawn inside its box, and says which box holds it
                node = by_id[member]
                assert node.attrs["data-kind"] == "op" and region.attrs["id"] in node.attrs["data-regions"]
                assert _inside(node.box(), region.box()), (target, node.attrs["data-label"])
            # and no node outside the region is covered by its box
            prefix = region.attrs["id"].split("-b")[0] + "-n"
            strangers = [e for e in with_class(dom, "node") if e.attrs["id"].startswith(prefix)
                         and e.attrs["id"] not in members]
            assert not [s.attrs["data-label"] for s in strangers if _overlap(s.box(), region.box())]
    # the GRU's three gate ops are in the Map; its readout, applied outside the Map, is not
    section = next(s.attrs["id"] for s in with_class(dom, "target") if s.attrs.get("data-target") == "etrace_target_map_gru")
    ops = [e.attrs for e in with_class(dom, "op") if e.attrs["id"].startswith(section + "-")]
    inside = [attrs["data-label"] for attrs in ops if attrs["data-regions"]]
    outside = [attrs["data-label"] for attrs in ops if not attrs["data-regions"]]
    assert len(inside) == 3 and all("(line 19)" in label for label in inside), ops
    assert all("(line 20)" in label for label in outside), ops
    # 0.2.8 reports the readout's op (ETL003); 0.2.6's ETL209 names the weight, not an op
    assert bool(outside) == braintrace_adapter.adds_same_step_gradients()


@needs_browser
def test_a_weight_that_does_not_learn_points_at_what_blocks_it(tmp_path):
    out = tmp_path / "why-not.html"
    done = run_cli("report", "examples/models/gru.py", "examples/models/plain_matmul_rnn.py",
                   "examples/models/static_readout.py", "tests/fixtures/own/mean_subtracted.py::etrace_target_centered",
                   "tests/fixtures/own/opaque_transforms.py::etrace_target_checkpointed",
                   "-o", str(out), "--cache-dir", str(tmp_path / "cache"))
    assert done.returncode == 1, done.stderr
    page = open_page(str(out), str(tmp_path))
    assert page.console == () and page.requests == ()
    dom = elements(page.dom)
    by_id = {e.attrs["id"]: e for e in dom if "id" in e.attrs}
    sections = {s.attrs["data-target"]: s.attrs["id"] for s in with_class(dom, "target") if s.tag == "section"}

    def why_not(target: str, weight: str) -> list[tuple[str, set]]:
        """(the node a weight's blocked edge points at, the rules of the findings the edge links to)."""
        prefix = sections[target] + "-"
        node = next(e for e in with_class(dom, "weight") if e.attrs["id"].startswith(prefix)
                    and e.attrs["data-label"] == weight)
        edges = [e.attrs for e in dom if e.tag == "polyline" and "blocked" in e.attrs["class"].split()
                 and e.attrs["data-from"] == node.attrs["id"]]
        return [(by_id[e["data-to"]].attrs["data-label"],
                 {by_id[f].attrs["data-rule"] for f in e["data-findings"].split()}) for e in edges]

    # the plain `@`, the GRU's reset gate behind Wh's op, the layer norm's mean, jax.checkpoint
    assert why_not("etrace_target_rate_rnn", "w_rec") == [("dot_general (line 23)", {"ETL201"})]
    [(blocker, rules)] = why_not("etrace_target_gru", "Wr.weight")
    assert rules == {"ETL005"}
    wh_ops = [by_id[e.attrs["data-to"]].attrs["data-label"] for e in dom if e.tag == "polyline"
              and by_id[e.attrs["data-from"]].attrs.get("data-label") == "Wh.weight"
              and e.attrs["data-from"].startswith(sections["etrace_target_gru"] + "-")]
    assert wh_ops == [blocker]  # the op Wh drives is the one that blocks Wr
    assert why_not("etrace_target_centered", "w_in.weight") == [("mean subtracted (line 48)", {"ETL207"})]
    [(blocker, rules)] = why_not("etrace_target_checkpointed", "w")
    assert rules == {"ETL202"} and "(line 46)" in blocker
    # weights that learn have no such edge
    assert why_not("etrace_target_rate_rnn", "w_in") == [] and why_not("etrace_target_gru", "Wh.weight") == []
    # each such edge is a link to its finding's card
    links = [e for e in dom if e.tag == "a" and "edge-link" in (e.attrs.get("class") or "")]
    assert links and all(by_id[link.attrs["href"][1:]].attrs["class"].startswith("finding") for link in links)
    # the readout's value reaches the step output around the hidden states, linked to the finding that says so
    prefix = sections["etrace_target_lstm_classifier"] + "-"
    bypass = [e.attrs for e in dom if e.tag == "polyline" and "bypass" in e.attrs["class"].split()
              and e.attrs["data-from"].startswith(prefix)]
    assert bypass and all(by_id[e["data-to"]].attrs["data-kind"] == "output" for e in bypass)
    rules = {by_id[f].attrs["data-rule"] for e in bypass for f in e.get("data-findings", "").split()}
    # 0.2.8: the readout's op bypasses the states (ETL003 draws it, ETL019 says so); 0.2.6: ETL209 on the weight
    assert rules == ({"ETL019"} if braintrace_adapter.adds_same_step_gradients() else {"ETL209"}), rules
