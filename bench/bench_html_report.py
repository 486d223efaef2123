"""How long the HTML report of a 200-target tree takes to write and to render in headless Chromium.

    python bench/bench_html_report.py [--targets 200] [--weights 6] [--wide 200] [--keep DIR]

The findings are made up in the shape the engine gives (per target: ETL001
notes for the weights that learn, every other one inside a scan body, one
ETL201 plain op, one ETL005 weight excluded behind another's op, one ETL028
group), with the learning-rule advisor's rows for four algorithms per
target, so only the writer and the browser are measured. Printed side by side:
seconds to write the page, the page's own time from navigation to a
forced layout after ``load`` (``performance.now()``), and Chromium's wall
time for the report against a blank page of the same browser start. Also
one target with ``--wide`` weights, the layout's upper end. Target: the
200-target page renders in under 2 s.
"""

from __future__ import annotations

import argparse
import io
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from etrace_lint.core.findings import Finding, Level, Location  # noqa: E402
from etrace_lint.policy.decide import Outcome  # noqa: E402
from etrace_lint.writers import RunInfo  # noqa: E402
from etrace_lint.writers.html import write_html  # noqa: E402

TIMER = ("<script>window.addEventListener('load', function () { document.body.offsetHeight;"
         " document.body.dataset.rendered = performance.now().toFixed(1); });</script></body>")


def made_up_findings(root: str, targets: int, weights: int) -> list[Finding]:
    path = os.path.join(root, "models.py")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("\n".join(f"w{i} = braintrace.matmul(x, w)  # line {i + 1}" for i in range(weights + 10)))
    findings = []
    for t in range(targets):
        name = f"target_{t:03d}"
        for w in range(weights - 1):
            scan = {"controlFlow": [{"kind": "scan", "line": weights + 2, "column": 5}]} if w % 2 else {}
            findings.append(Finding("ETL001", Level.NOTE, f"w{w} learns online: its matmul here drives h{w % 3}",
                                    name, Location(path, w + 1, 5),
                                    properties={"weight": f"w{w}", "primitive": "etp_mv",
                                                "hiddenStates": [f"h{w % 3}"], **scan}))
        findings.append(Finding("ETL005", Level.WARNING, "w_gate reaches a hidden state only through w0's op",
                                name, Location(path, 1, 5), (Location(path, 1, 5, "blocking weight w0"),),
                                properties={"weight": "w_gate", "primitive": "etp_mv"}))
        findings.append(Finding("ETL201", Level.WARNING, "w_rec reaches h0 through a plain `dot_general`",
                                name, Location(path, weights, 9),
                                properties={"weight": "w_rec", "primitive": "dot_general", "hiddenStates": ["h0"]}))
        findings.append(Finding("ETL028", Level.NOTE, "h0, h1 feed each other", name, Location(path, 1),
                                properties={"braintraceKind": "hidden_group_merged", "hiddenStates": ["h0", "h1"]}))
    return findings


def made_up_advice(targets: int, weights: int) -> tuple[dict, ...]:
    rows = []
    for t in range(targets):
        for number, algorithm in enumerate(("d_rtrl", "pp_prop", "eprop", "uoro")):
            trace = 4096 * (number + 1) ** 2
            rows.append({"target": f"models.py::target_{t:03d}", "algorithm": algorithm, "options": {},
                         "compiles": True, "runs": True, "error": None, "trace_bytes": trace,
                         "trace_bytes_law": {"c0": 0, "c1": trace, "c2": 0}, "xla_temp_bytes": 40 * trace,
                         "flops_ratio": 2.5 * (number + 1), "zero_gradient_weights": [],
                         "weights": [{"weight": f"w{w}", "cosine": 0.99, "relative_error": 0.01,
                                      "verdict": "approximate"} for w in range(weights - 1)]})
    return tuple(rows)


def write_page(folder: str, name: str, findings: list[Finding], targets: int,
               advice: tuple = ()) -> tuple[str, float]:
    stream = io.StringIO()
    start = time.perf_counter()
    write_html(Outcome(findings=findings), RunInfo(root=folder, targets=targets, advice=advice), stream)
    seconds = time.perf_counter() - start
    path = os.path.join(folder, name)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(stream.getvalue().replace("</body>", TIMER))
    return path, seconds


def render(browser: str, path: str, profile: str) -> tuple[float, float | None]:
    start = time.perf_counter()
    done = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                           f"--user-data-dir={profile}", "--window-size=1280,1000", "--dump-dom",
                           "file://" + path], capture_output=True, text=True, timeout=300)
    wall = time.perf_counter() - start
    match = re.search(r'data-rendered="([0-9.]+)"', done.stdout)
    return wall, float(match.group(1)) / 1000 if match else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--targets", type=int, default=200)
    parser.add_argument("--weights", type=int, default=6)
    parser.add_argument("--wide", type=int, default=200)
    parser.add_argument("--keep", help="write the pages into DIR and keep them")
    args = parser.parse_args()
    browser = next((b for b in ("chromium", "chromium-browser", "google-chrome")
                    if subprocess.run(["which", b], capture_output=True).returncode == 0), None)
    folder = args.keep or tempfile.mkdtemp(prefix="etl-bench-html-")
    os.makedirs(folder, exist_ok=True)
    tree, tree_write = write_page(folder, "tree.html", made_up_findings(folder, args.targets, args.weights),
                                  args.targets, made_up_advice(args.targets, args.weights))
    wide, wide_write = write_page(folder, "wide.html", made_up_findings(folder, 1, args.wide), 1)
    blank = os.path.join(folder, "blank.html")
    with open(blank, "w", encoding="utf-8") as handle:
        handle.write("<!DOCTYPE html><html><body>" + TIMER.replace("</body>", "") + "</body></html>")
    print(f"{args.targets} targets x {args.weights} weights: {os.path.getsize(tree) / 1e6:.2f} MB, "
          f"written in {tree_write:.2f} s")
    print(f"1 target x {args.wide} weights: {os.path.getsize(wide) / 1e6:.2f} MB, written in {wide_write:.2f} s")
    if browser is None:
        print("no chromium: render times not measured")
        return
    profile = os.path.join(folder, "profile")
    render(browser, blank, profile)  # the first start of a profile is slower than the rest
    blank_wall, blank_page = render(browser, blank, profile)
    for label, path in (("tree", tree), ("wide", wide)):
        wall, page = render(browser, path, profile)
        shown = f"{page:.2f} s" if page is not None else "n/a (the timer did not run)"
        print(f"{label}: page load to layout {shown}; chromium wall {wall:.2f} s vs blank page {blank_wall:.2f} s "
              f"(ratio {wall / blank_wall:.2f}, blank page's own {blank_page:.3f} s)")


if __name__ == "__main__":
    main()
