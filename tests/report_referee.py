"""Run a program until its first online-learning compile and print braintrace's own report of it.

The compile is ``braintrace.compile(...)`` or a ``compile_graph(...)`` the program calls on a learner it
built itself.

    python tests/report_referee.py SCRIPT [ARGS...]

Only braintrace's and brainstate's public API is used (``braintrace.compile``'s result, its
``report`` and its ``etrace_grad``; the gradients as tests/online_referee.py measures them), never
etrace-lint's code, so it cannot share a mistake with the linter it judges. Prints one JSON object:
every ParamState path of the compiled model, the weights the report lists as eligibility-trace
weights, those it excludes with the record's kind, and for each weight whether the program's own
learner gives it an online gradient over a few steps of noise where BPTT gives one; then the process
ends, before the program trains.
"""

from __future__ import annotations

import json
import os
import runpy
import sys

import brainstate
import braintrace

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import online_referee as referee  # noqa: E402

STEPS = 4


def _gradients(model, learner, inputs: tuple) -> dict[str, dict]:
    """Each weight's online gradient from the program's learner against BPTT's, over noise like its inputs."""
    import jax

    if any(isinstance(leaf, (jax.core.Tracer, jax.ShapeDtypeStruct)) for leaf in jax.tree.leaves(inputs)):
        return {}  # compiled inside a jax transformation, or from shapes: no values to run the learner on
    loss = referee.mean_squared_output
    bptt = referee.bptt_program(model, loss)
    start, learner_start = referee._snapshot(model), referee._snapshot(learner)
    xs = referee._noise(inputs, STEPS, 0)
    try:
        exact, xs = referee._bptt_with_signal(bptt, xs, start, False)
        measured = referee._leaves(referee.online_program(learner, loss)(xs))
    except Exception as exc:  # the learner does not run on noise: no figure
        return {"error": {"why": referee._short(exc)}}
    finally:
        referee._restore(learner_start)
        referee._restore(start)
    truths = [referee._compare(path, measured.get(path), exact[path]) for path in sorted(exact)]
    return {".".join(t.path): {"learns": t.learns, "silent": t.silent, "figures": t.describe()} for t in truths}


def _report(model, learner, inputs: tuple) -> None:
    inner = getattr(learner, "module", learner)  # braintrace.compile(..., vmap=True) wraps the learner
    report = inner.report
    params = sorted(list(path) for path in model.states(brainstate.ParamState).keys())
    print(json.dumps({"params": params,
                      "etrace": sorted({tuple(path) for path, _ in report.etrace_weights}),
                      "excluded": sorted([list(path), kind] for path, kind in report.excluded_weights),
                      "online": _gradients(model, learner, inputs)}),
          flush=True)
    os._exit(0)


def _subclasses(cls: type):
    for sub in cls.__subclasses__():
        yield sub
        yield from _subclasses(sub)


def _capture_compiles() -> None:
    """``braintrace.compile`` and every ``compile_graph`` the program calls itself (not the one inside compile)."""
    original = braintrace.compile
    inside = []

    def compile(model, algorithm, *inputs, **keywords):
        inside.append(True)
        learner = original(model, algorithm, *inputs, **keywords)
        _report(model, learner, inputs)

    def wrap(compile_graph):
        def wrapped(self, *inputs):
            result = compile_graph(self, *inputs)
            probe = getattr(brainstate.transform, "in_new_state_probe", None)
            if probe is not None and probe():  # vmap_new_states' first pass: braintrace compiles in the next
                return result
            if not inside:  # the learner the program built itself: its model is the one it was given
                _report(self.model4compile, self, inputs)
            return result
        return wrapped

    braintrace.compile = compile
    for cls in (braintrace.ETraceAlgorithm, *_subclasses(braintrace.ETraceAlgorithm)):
        if "compile_graph" in cls.__dict__:
            cls.compile_graph = wrap(cls.__dict__["compile_graph"])


def main() -> None:
    _capture_compiles()
    script = sys.argv[1]
    sys.argv = sys.argv[1:]
    sys.path[0] = os.path.dirname(os.path.abspath(script))
    runpy.run_path(script, run_name="__main__")

if __name__ == "__main__":
    main()
