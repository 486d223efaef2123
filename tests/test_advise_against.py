"""The advisor on a model where some algorithms leave a weight learning against BPTT: its own verdict,
measured over several input draws, named by the recommendation, and a table that fits 120 columns."""

from __future__ import annotations

import json

import pytest
from in_process import run_cli

from etrace_lint.writers.advice_table import WIDTH, format_advice_table

TARGET = "tests/fixtures/verify/against.py::etrace_target_delayed_inhibition"
WEIGHTS = ("w.weight['bias']", "w.weight['weight']")


@pytest.fixture(scope="module")
def advised(tmp_path_factory):
    cache = str(tmp_path_factory.mktemp("advise-against") / "cache")
    args = ("advise", TARGET, "--algorithms", "d_rtrl,pp_prop", "--steps", "8", "--cache-dir", cache, "--no-probe")
    as_json = run_cli(*args, "--output-format", "json")
    as_text = run_cli(*args)  # from the cache: the same rows
    return json.loads(as_json.stdout)["advice"], as_text.stdout


def test_a_weight_against_bptt_on_every_draw_is_its_own_verdict(advised):
    rows, _ = advised
    for row in rows:
        verdicts = {w["weight"]: w for w in row["weights"]}
        assert set(verdicts) == set(WEIGHTS)
        for weight in verdicts.values():
            assert weight["verdict"] == "learns against BPTT", (row["algorithm"], weight)
            # measured on 3 input draws from rest and one from moved states, then on the 3 further draws the
            # probe and --verify search, each from rest and from moved states: against BPTT on every one
            assert len(weight["draws"]) == 4 + 6 and max(weight["draws"]) < 0


def test_a_direction_a_further_draw_refutes_is_misaligned(tmp_path):
    # under pp_prop over 16 steps the input weight points against BPTT's on the first 4 draws and not on the fifth
    done = run_cli("advise", TARGET, "--algorithms", "pp_prop", "--steps", "16", "--cache-dir", str(tmp_path),
                   "--no-probe", "--output-format", "json")
    (row,) = json.loads(done.stdout)["advice"]
    verdicts = {w["weight"]: w for w in row["weights"]}
    weight, bias = verdicts["w.weight['weight']"], verdicts["w.weight['bias']"]
    assert weight["verdict"] == "misaligned" and max(weight["draws"][:4]) < 0 <= weight["draws"][-1]
    assert bias["verdict"] == "learns against BPTT" and len(bias["draws"]) == 10 and max(bias["draws"]) < 0


def test_the_recommendation_names_what_it_leaves_learning_against_bptt(advised):
    _, text = advised
    lines = text.splitlines()
    assert any(line.strip().startswith("* recommended:") for line in lines)
    said = next(line for line in lines if line.strip().startswith("it leaves"))
    assert "2 weights learning against BPTT (w.weight['bias'] and w.weight['weight'])" in said
    assert "still preferred: none of the 2 algorithms that run leaves fewer" in said
    table = lines[lines.index(next(line for line in lines if line.strip().startswith("algorithm"))):]
    table = table[:next(i for i, line in enumerate(table) if not line.startswith("  ") or "recommended" in line)]
    assert all(len(line) <= WIDTH for line in table) and any("2 against" in line for line in table)
    assert "against: learns against BPTT: cosine below 0 on every input draw" in text
    assert "misaligned" not in text


def _row(label, weights, zero=(), recommended=False, flops=2.0, trace=100):
    algorithm, _, variant = label.partition(":")
    return {"target": "net.py::net", "algorithm": algorithm, "options": {"vjp_method": "multi-step"} if variant else {},
            "compiles": True, "runs": True, "error": None, "trace_bytes": trace,
            "trace_bytes_law": {"c0": 12345678, "c1": 23456789, "c2": 34567890}, "xla_temp_bytes": 4096,
            "flops_ratio": flops, "zero_gradient_weights": list(zero), "recommended": recommended, "batch": 4,
            "measured_batch": 4, "steps": 8, "note": "",
            "weights": [{"weight": w, "cosine": c, "relative_error": 0.5, "verdict": v} for w, c, v in weights]}


def test_a_recommendation_that_leaves_weights_out_says_why_it_is_still_preferred():
    names = [f"layer.snn[{i}].norm.param['alpha']" for i in range(9)]
    chosen = _row("d_rtrl:multi-step", [(names[0], -1.0, "learns against BPTT")]
                  + [(n, 0.9, "approximate") for n in names[1:]], recommended=True)
    fewer = _row("pp_prop", [(n, 0.1, "misaligned") for n in names])  # leaves none out, far from BPTT
    silent = _row("d_rtrl", [(n, 0.0, "no online gradient") for n in names], zero=names)
    mixed = _row("eprop", [(n, c, v) for n, (c, v) in zip(names, [(1.0, "exact"), (0.9, "approximate"),
                 (0.3, "misaligned"), (-0.9, "learns against BPTT"), (None, "no online gradient"),
                 (None, "n/a"), (None, "not finite")] + [(1.0, "exact")] * 2)], zero=[names[4]])
    text = format_advice_table([chosen, fewer, silent, mixed])
    lines = text.splitlines()
    assert "it leaves 1 weight learning against BPTT (layer.snn[0].norm.param['alpha']); still preferred: " \
           "pp_prop leaves none, but its gradients are further from BPTT (mean cosine 0.10 against 0.69)" in text
    start = next(i for i, line in enumerate(lines) if line.strip().startswith("algorithm"))
    table = lines[start:start + 6]
    assert all(len(line) <= WIDTH for line in table), "\n".join(table)
    # the 9 weights without a gradient are listed below the table, whole
    assert f"  d_rtrl: no online gradient: {', '.join(names)}" in lines
    assert "  eprop: learning against BPTT: layer.snn[3].norm.param['alpha']" in lines


def test_the_html_report_says_the_same_recommendation(advised):
    from etrace_lint.writers.html_advice import advice_section

    rows, text = advised
    section = advice_section("t0", rows)
    said = next(line.strip() for line in text.splitlines() if line.strip().startswith("it leaves"))
    assert f"<li>{said.replace(chr(39), '&#x27;')}</li>" in section
    assert section.count('class="adv-bad"') >= len(rows) * len(WEIGHTS)
