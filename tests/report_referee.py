"""Run a program until its first online-learning compile and print braintrace's own report of it.

    python tests/report_referee.py SCRIPT [ARGS...]

Only braintrace's and brainstate's public API is used (``braintrace.compile``'s result and its
``report``), never etrace-lint's code, so it cannot share a mistake with the linter it judges. Prints
one JSON object: every ParamState path of the compiled model, the weights the report lists as
eligibility-trace weights, and those it excludes with the record's kind; then the process ends,
before the program trains.
"""

from __future__ import annotations

import json
import os
import runpy
import sys

import brainstate
import braintrace


def _report(model, learner) -> None:
    inner = getattr(learner, "module", learner)  # braintrace.compile(..., vmap=True) wraps the learner
    report = inner.report
    params = sorted(list(path) for path in model.states(brainstate.ParamState).keys())
    print(json.dumps({"params": params,
                      "etrace": sorted({tuple(path) for path, _ in report.etrace_weights}),
                      "excluded": sorted([list(path), kind] for path, kind in report.excluded_weights)}),
          flush=True)
    os._exit(0)


def main() -> None:
    original = braintrace.compile

    def compile(model, algorithm, *inputs, **keywords):
        learner = original(model, algorithm, *inputs, **keywords)
        _report(model, learner)

    braintrace.compile = compile
    script = sys.argv[1]
    sys.argv = sys.argv[1:]
    sys.path[0] = os.path.dirname(os.path.abspath(script))
    runpy.run_path(script, run_name="__main__")


if __name__ == "__main__":
    main()
