"""The HTML report opened in a real headless browser: every model, every finding on the graph, no errors, no network."""

from __future__ import annotations

import json
import os

import pytest
from browser import SKIP_REASON, elements, find_browser, open_page, with_class
from helpers import REPO
from in_process import run_cli

from etrace_lint.analysis import braintrace_adapter

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
        # the readout reaches the step output around the hidden states: a bypass edge into the output node;
        # it learns exactly from its same-step gradient
        assert "v-learns" in weights["readout"]["class"] and weights["readout"]["data-verdict"] == "learns"
        bypass = [e.attrs for e in dom if e.tag == "polyline" and "bypass" in e.attrs["class"].split()]
        outputs = {e.attrs["id"] for e in with_class(dom, "output")}
        assert bypass and all(edge["data-to"] in outputs for edge in bypass)
    else:  # braintrace 0.2.6 gives that stateless readout no online gradient (ETL209)
        assert "v-not" in weights["readout"]["class"] and weights["readout"]["data-verdict"] == "does not learn"
    # the reset gate points at the op that blocks it; the sub-stepping scan's op sits in the scan's box
    blocked = [e.attrs for e in dom if e.tag == "polyline" and "blocked" in e.attrs["class"].split()]
    assert {by_id[e["data-from"]].attrs["data-label"] for e in blocked} >= {"Wr.weight", "w_rec"}
    assert all(by_id[f].attrs["data-rule"] for e in blocked for f in e["data-findings"].split())
    assert "scan (line 27)" in [e.attrs["data-label"] for e in with_class(dom, "region")]
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


def test_html_output_format_says_when_notes_were_hidden(examples_report, tmp_path):
    out = tmp_path / "run.html"
    # served from the examples' report's cache: which notes a run hides is decided after the cache
    done = run_cli("examples/models/plain_matmul_rnn.py", "--output-format", "html", "-o", str(out),
                   "--cache-dir", str(examples_report[0] / "cache"))
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


# the targets of the tests below that read one report: what blocks a weight, control flow, tool errors
MIXED = ("examples/models/gru.py", "examples/models/plain_matmul_rnn.py", "examples/models/static_readout.py",
         "tests/fixtures/own/mean_subtracted.py::etrace_target_centered",
         "tests/fixtures/own/opaque_transforms.py::etrace_target_checkpointed",
         "examples/models/scan_in_step.py::etrace_target_substepped",
         "tests/fixtures/own/vmapped_weights.py::etrace_target_data_vmap",
         "tests/fixtures/compiler/map_batched.py", "tests/fixtures/report/control_flow.py",
         "tests/real_models/sparse_and_event.py::event_fixedprob_lif",
         "tests/fixtures/fixes/unused_suppression.py", "tests/fixtures/bad/broken_factories.py::etrace_target_raises")


@pytest.fixture(scope="module")
def mixed_report(examples_report):
    """One report of ``MIXED``, its examples served from the cache the examples' report filled."""
    folder = examples_report[0]
    out = folder / "mixed.html"
    done = run_cli("report", *MIXED, "-o", str(out), "--cache-dir", str(folder / "cache"))
    assert done.returncode == 2, done.stderr  # a target that could not be built
    return out


@pytest.fixture(scope="module")
def mixed_page(mixed_report, tmp_path_factory):
    """That report opened in the browser, with a screenshot beside it."""
    folder = tmp_path_factory.mktemp("mixed-page")
    page = open_page(str(mixed_report), str(folder), screenshot=str(folder / "mixed.png"))
    assert page.console == () and page.requests == ()
    return page


def test_tool_errors_and_findings_about_comments_are_in_the_report(mixed_report):
    dom = elements(mixed_report.read_text(encoding="utf-8"))
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
def test_ops_inside_control_flow_are_boxed_with_their_boundary(mixed_page):
    dom = elements(mixed_page.dom)
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
    # a jit-ed function, named, at the line that calls it; a cond branch
    assert [b.attrs["data-label"] for b in boxes["etrace_target_jitted"]] == ["jit drive (line 21)"]
    assert [b.attrs["data-label"] for b in boxes["etrace_target_cond"]] == ["cond (line 32)"]
    # brainevent's jitted kernel, called on the user's line, is the op itself: no box around it
    assert boxes["event-fixedprob-lif"] == [] and with_class(dom, "op")
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
    section = next(s.attrs["id"] for s in with_class(dom, "target")
                   if s.attrs.get("data-target") == "etrace_target_map_gru")
    ops = [e.attrs for e in with_class(dom, "op") if e.attrs["id"].startswith(section + "-")]
    inside = [attrs["data-label"] for attrs in ops if attrs["data-regions"]]
    outside = [attrs["data-label"] for attrs in ops if not attrs["data-regions"]]
    assert len(inside) == 3 and all("(line 19)" in label for label in inside), ops
    assert all("(line 20)" in label for label in outside), ops
    # 0.2.8 reports the readout's op (ETL003); 0.2.6's ETL209 names the weight, not an op
    assert bool(outside) == braintrace_adapter.adds_same_step_gradients()


@needs_browser
def test_a_weight_that_does_not_learn_points_at_what_blocks_it(mixed_report, mixed_page, tmp_path):
    out = mixed_report
    dom = elements(mixed_page.dom)
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
    assert rules == {"ETL202"} and "(line 50)" in blocker
    # weights that learn have no such edge
    assert why_not("etrace_target_rate_rnn", "w_in") == [] and why_not("etrace_target_gru", "Wh.weight") == []
    # each such edge is a link to its finding's card
    links = [e for e in dom if e.tag == "a" and "edge-link" in (e.attrs.get("class") or "")]
    assert links and all(by_id[link.attrs["href"][1:]].attrs["class"].startswith("finding") for link in links)
    # and each such finding's card names what blocks its weight, linked to that node
    for edge in (e for e in dom if e.tag == "polyline" and "blocked" in e.attrs["class"].split()):
        for card in edge.attrs["data-findings"].split():
            links = [e for e in dom if e.tag == "a" and e.attrs.get("class") == "to-blocker"
                     and e.attrs["href"] == "#" + edge.attrs["data-to"]]
            assert links and by_id[edge.attrs["data-to"]].attrs["data-label"] in by_id[card].text
    # clicking that edge marks its finding and both ends
    click = ("var e = document.querySelector('a.edge-link polyline.blocked');"
             "e.parentNode.dispatchEvent(new MouseEvent('click', {bubbles: true, cancelable: true}));"
             "document.body.dataset.clicked = e.dataset.findings + ' ' + e.dataset.from + ' ' + e.dataset.to;")
    clicked_path = tmp_path / "clicked.html"
    clicked_path.write_text(out.read_text(encoding="utf-8").replace("</body>", f"<script>{click}</script></body>"),
                            encoding="utf-8")
    clicked = elements(open_page(str(clicked_path), str(tmp_path)).dom)
    marked = {e.attrs["id"] for e in clicked if "hl" in (e.attrs.get("class") or "").split()}
    body = next(e for e in clicked if e.tag == "body")
    assert marked == set(body.attrs["data-clicked"].split()) and len(marked) == 3
    # the readout's value reaches the step output around the hidden states, linked to the finding that says so
    prefix = sections["etrace_target_lstm_classifier"] + "-"
    bypass = [e.attrs for e in dom if e.tag == "polyline" and "bypass" in e.attrs["class"].split()
              and e.attrs["data-from"].startswith(prefix)]
    assert bypass and all(by_id[e["data-to"]].attrs["data-kind"] == "output" for e in bypass)
    rules = {by_id[f].attrs["data-rule"] for e in bypass for f in e.get("data-findings", "").split()}
    # 0.2.8: the readout's op bypasses the states (ETL003 draws it, ETL019 says so); 0.2.6: ETL209 on the weight
    assert rules == ({"ETL019"} if braintrace_adapter.adds_same_step_gradients() else {"ETL209"}), rules


def _advice_row(algorithm: str, trace_bytes, options=None, weights=(), error=None, **more) -> dict:
    """One row as the learning-rule advisor writes it in JSON."""
    runs = error is None
    row = {"target": "examples/models/gru.py::etrace_target_gru", "algorithm": algorithm, "options": options or {},
           "compiles": runs, "runs": runs, "error": error, "trace_bytes": trace_bytes,
           "trace_bytes_law": {"c0": 0, "c1": trace_bytes, "c2": 0} if trace_bytes else {},
           "xla_temp_bytes": 40 * trace_bytes if trace_bytes else None, "flops_ratio": 3.5 if runs else None,
           "zero_gradient_weights": [], "weights": [{"weight": w, "cosine": c, "relative_error": e, "verdict": v}
                                                    for w, c, e, v in weights]}
    row.update(more)
    return row


ADVICE = (
    _advice_row("d_rtrl", 6144, weights=[("Wh.weight", 0.97, 0.21, "approximate"),
                                         ("Wr.weight", None, 1.0, "no online gradient")],
                zero_gradient_weights=["Wr.weight"]),
    _advice_row("d_rtrl", 6144, options={"vjp_method": "multi-step"},
                weights=[("Wh.weight", 1.0, 1e-6, "exact"), ("Wr.weight", 0.99, 0.05, "approximate")]),
    _advice_row("uoro", None, error="UORO needs a random key"),
    _advice_row("pp_prop", 614400, options={"decay_or_rank": 0.99}, weights=[("Wh.weight", 0.5, 0.9, "misaligned")]),
    dict(_advice_row("eprop", 1024), target="elsewhere.py::etrace_target_other"),
)


@needs_browser
def test_the_advisors_rows_are_a_bar_chart_and_a_fidelity_table(tmp_path):
    import dataclasses

    import etrace_lint
    from etrace_lint.policy.decide import Outcome
    from etrace_lint.writers import RunInfo
    from etrace_lint.writers.html import write_html

    result = etrace_lint.check_target(os.path.join(REPO, "examples", "models", "gru.py"), root=REPO)
    page_path = tmp_path / "advice.html"
    with open(page_path, "w", encoding="utf-8") as stream:
        info = RunInfo(root=REPO, targets=1, advice_rows=list(ADVICE))
        write_html(Outcome(findings=list(result.findings)), info, stream)
    page = open_page(str(page_path), str(tmp_path), screenshot=str(tmp_path / "advice.png"), size="1280,2400")
    assert page.console == () and page.requests == ()
    dom = elements(page.dom)
    sections = {s.attrs["data-target"]: s.attrs["id"] for s in with_class(dom, "target") if s.tag == "section"}
    gru = sections["etrace_target_gru"] + "-"
    bars = {e.attrs["data-algorithm"]: e for e in dom if e.tag == "rect" and "bar" in e.attrs.get("class", "")}
    # one bar per algorithm that measured its trace, on one scale per model; the one that did not compile has none
    assert set(bars) == {"d_rtrl", "d_rtrl (vjp_method=multi-step)", "pp_prop (decay_or_rank=0.99)", "eprop"}
    widths = {name: float(bar.attrs["width"]) for name, bar in bars.items()}
    assert widths["pp_prop (decay_or_rank=0.99)"] == pytest.approx(100 * widths["d_rtrl"], rel=0.01)
    assert {name: int(bar.attrs["data-bytes"]) for name, bar in bars.items()}["d_rtrl"] == 6144
    chart = next(e for e in dom if e.attrs.get("id") == gru + "bars")
    assert "n/a (does not compile)" in chart.text and "600.0 KiB" in chart.text
    costs = {e.attrs["data-algorithm"]: e.text for e in dom if e.tag == "tr" and "data-algorithm" in e.attrs}
    assert "UORO needs a random key" in costs["uoro"] and "0" not in costs["uoro"].replace("n/a", "")
    assert "3.5x" in costs["d_rtrl"] and "Wr.weight" in costs["d_rtrl"]
    cells = {(e.attrs["data-weight"], e.attrs["data-algorithm"]): e for e in dom if e.tag == "td"
             and "data-verdict" in e.attrs}
    assert cells[("Wh.weight", "d_rtrl (vjp_method=multi-step)")].attrs["data-verdict"] == "exact"
    assert cells[("Wr.weight", "d_rtrl")].attrs["data-verdict"] == "no online gradient"
    assert "cos n/a" in cells[("Wr.weight", "d_rtrl")].text  # no cosine was measured: not printed as 0
    assert cells[("Wr.weight", "uoro")].text == "n/a (does not compile)"
    assert "adv-bad" in cells[("Wh.weight", "pp_prop (decay_or_rank=0.99)")].attrs["class"]
    # a row about a model this report did not lint is shown on its own, not dropped
    assert "elsewhere.py::etrace_target_other" in sections
    # the notebook view carries the same table
    fragment = dataclasses.replace(result, advice=ADVICE)._repr_html_()
    assert fragment.count('class="advice-bars"') == 2 and 'data-verdict="misaligned"' in fragment



def test_a_region_box_never_covers_an_op_outside_the_region(tmp_path):
    """Ops inside and outside one scan feeding the same states: the layout brings the scan's ops together
    into one box per connected part (here two: states h0 and h1), and no box covers an op outside it."""
    import io

    from etrace_lint.core.details import Boundary
    from etrace_lint.core.findings import Finding, Level, Location, Subject
    from etrace_lint.policy.decide import Outcome
    from etrace_lint.writers import RunInfo
    from etrace_lint.writers.html import write_html

    path = str(tmp_path / "model.py")
    scan = (Boundary("scan", 40, 9),)
    findings = [Finding("ETL001", Level.NOTE, f"w{n} learns online", "interleaved", Location(path, n + 1, 5),
                        subject=Subject(weight=f"w{n}", primitive="etp_mv", hidden_states=(f"h{n // 2 % 2}",)),
                        control_flow=scan if n % 2 else ()) for n in range(12)]
    stream = io.StringIO()
    write_html(Outcome(findings=findings), RunInfo(root=str(tmp_path), targets=1), stream)
    dom = elements(stream.getvalue())
    boxes = with_class(dom, "region")
    ops = {e.attrs["id"]: e for e in with_class(dom, "op")}
    inside = {op_id for op_id, e in ops.items() if e.attrs["data-regions"]}
    assert len(inside) == 6 and all(b.attrs["data-label"] == "scan (line 40)" for b in boxes)
    assert len(boxes) == 2, [b.attrs["data-members"] for b in boxes]
    for box in boxes:
        members = set(box.attrs["data-members"].split())
        assert members <= inside and all(_inside(ops[m].box(), box.box()) for m in members)
        assert not [o for o in ops if o not in members and _overlap(ops[o].box(), box.box())]
    assert set().union(*(b.attrs["data-members"].split() for b in boxes)) == inside


@needs_browser
def test_a_weight_that_learns_through_some_of_its_uses_learns_partly_everywhere(tmp_path):
    """braintrace's inner-loop cell: the compiler connects the last unrolled iteration's uses of ``w``
    (ETL001) and excludes the earlier ones (ETL005). The table and the graph say so together."""
    report = tmp_path / "report.html"
    done = run_cli("report", "tests/real_models/inner_loop_cell.py", "-o", str(report), "--no-cache")
    assert done.returncode == 1, done.stderr  # ETL005 is a warning
    page = open_page(str(report), str(tmp_path), screenshot=str(tmp_path / "partly.png"), size="1280,2000")
    assert page.console == ()
    dom = elements(page.dom)
    weights = {e.attrs["data-label"]: e.attrs for e in with_class(dom, "weight")}
    assert weights["w"]["data-verdict"] == "learns partly"
    assert "v-partly" in weights["w"]["class"].split() and "v-not" not in weights["w"]["class"].split()
    overview = [e.text for e in dom if e.tag == "table" and "overview" in e.attrs.get("class", "").split()][0]
    assert "1 learns partly" in overview and "does not learn" not in overview
    rules = {e.attrs["data-rule"] for e in with_class(dom, "finding")}
    assert {"ETL001", "ETL005"} <= rules  # both halves of the state are findings on the page


def test_a_run_that_hides_notes_still_shows_a_weight_that_learns_partly(tmp_path):
    """The default run does not even build ETL001's notes, so the inner-loop cell's page holds only the two
    ETL005 warnings about ``w``: the table, the graph and the findings still say it learns partly, and
    nothing but the legend's key for the red dashed border speaks of a weight that does not learn."""
    out = tmp_path / "run.html"
    done = run_cli("tests/real_models/inner_loop_cell.py", "--output-format", "html", "-o", str(out), "--no-cache")
    assert done.returncode == 1, done.stderr
    dom = elements(out.read_text(encoding="utf-8"))
    assert {e.attrs["data-rule"] for e in with_class(dom, "finding")} == {"ETL005"}
    weight = {e.attrs["data-label"]: e for e in with_class(dom, "weight")}["w"]
    assert weight.attrs["data-verdict"] == "learns partly"
    assert "v-partly" in weight.attrs["class"].split() and "v-not" not in weight.attrs["class"].split()
    assert "w: learns partly" in weight.text  # its tooltip
    overview = [e.text for e in dom if e.tag == "table" and "overview" in e.attrs.get("class", "").split()][0]
    assert "1 learns partly" in overview
    legend = with_class(dom, "legend")[0].text
    assert "learns partly" in legend
    page = [e.text for e in dom if e.tag == "body"][0].replace(legend, "")
    assert "not learn" not in page


def _named_only_in_properties(tmp_path) -> str:
    """A report of two findings whose messages name no weight: a readout braintrace lists only in its record
    (ETL019), and a weight a while loop keeps the model from compiling (ETL016)."""
    import io

    from etrace_lint.core.details import CompilerRecord
    from etrace_lint.core.findings import Finding, Level, Location, Subject
    from etrace_lint.policy.decide import Outcome
    from etrace_lint.writers import RunInfo
    from etrace_lint.writers.html import write_html

    path = str(tmp_path / "model.py")
    findings = [
        Finding("ETL019", Level.NOTE, "the readout reaches the step's output around the states", "tutorial",
                Location(path, 9, 5), subject=Subject(weights=("w_out",), weight_paths=(("w_out",),)),
                details=CompilerRecord("output_bypasses_hidden", "info", "Parameters [('w_out',)] ...")),
        Finding("ETL016", Level.ERROR, "a weight is used inside a while loop", "tutorial", Location(path, 12, 9),
                subject=Subject(weights=("w_rec",), weight_paths=(("w_rec",),)),
                details=CompilerRecord("weight_in_while", "error", "Weight state used inside a while loop")),
    ]
    stream = io.StringIO()
    write_html(Outcome(findings=findings), RunInfo(root=str(tmp_path), targets=1), stream)
    return stream.getvalue()


def test_the_report_reads_the_weights_a_finding_is_about_from_its_subject(tmp_path):
    dom = elements(_named_only_in_properties(tmp_path))
    cards = {c.attrs["data-rule"]: c.attrs for c in with_class(dom, "finding")}
    assert cards["ETL019"]["data-weights"] == "w_out" and cards["ETL016"]["data-weights"] == "w_rec"
    verdicts = {e.attrs["data-label"]: e.attrs["data-verdict"] for e in with_class(dom, "weight")}
    # the readout learns from its exact same-step gradient; the weight in the loop not at all
    assert verdicts == {"w_out": "learns", "w_rec": "does not learn"}


@needs_browser
def test_searching_a_weight_finds_the_findings_about_it_that_do_not_name_it(tmp_path):
    steps = ("var r = document.querySelector('.etl-report'); var box = r.querySelector('.f-text');"
             "box.value = 'w_out'; box.dispatchEvent(new Event('input'));")
    page_path = tmp_path / "search.html"
    page_path.write_text(_named_only_in_properties(tmp_path).replace("</body>", f"<script>{steps}</script></body>"),
                         encoding="utf-8")
    page = open_page(str(page_path), str(tmp_path))
    assert page.console == ()
    shown = [c for c in with_class(elements(page.dom), "finding") if "hidden" not in c.attrs]
    assert [c.attrs["data-rule"] for c in shown] == ["ETL019"]
