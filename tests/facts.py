"""Print one model's traced step and the facts a check reads of it, as a lint builds them.

While writing a check, see what the context holds for your fixture's model, from the repository's root::

    python -m tests.facts tests/fixtures/own/plain_leak.py::etrace_target_plain_leak
    python -m tests.facts tests/fixtures/own/plain_leak.py first_plain_uses weight_dtypes

The first form prints every fact of ``AnalysisContext``, the step's ``jaxpr`` among them (the compiler's rewrites
made, every jit call inlined, always whole); name facts after the file to print only those, and ``--full``
prints each whole rather than its first characters. A
file with several targets prints each; ``FILE::factory`` picks one.
"""

from __future__ import annotations

import argparse
import functools
import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WIDTH = 400  # characters of a fact's value shown


def facts() -> list[str]:
    """The context's facts: its public properties, by name, in the order the class declares them (the facts
    table of docs/development/context.md lists the same, with its methods)."""
    from etrace_lint.analysis.context import AnalysisContext

    return [name for name, value in vars(AnalysisContext).items()
            if isinstance(value, (property, functools.cached_property)) and not name.startswith("_")
            and "not for a rule to read" not in (value.__doc__ or "")]  # braintrace's own objects: the adapter's


def _shown(value: object, full: bool) -> str:
    text = str(value) if full else repr(value)
    return text if full or len(text) <= WIDTH else text[:WIDTH] + f" ... ({len(text)} characters; --full)"


def show(path: str, names: list[str], full: bool = False) -> int:
    from etrace_lint.config.environ import environ_context
    from etrace_lint.discovery.discover import discover
    from etrace_lint.engine.lint import analysis_context
    from etrace_lint.engine.targets import TargetLoadError, load_target

    file, _, factory = path.partition("::")
    targets = [t for t in discover([file], REPO).targets if not factory or t.factory == factory]
    if not targets:
        print(f"{path}: no target", file=sys.stderr)
        return 2
    known = facts()
    unknown = [name for name in names if name not in known]
    if unknown:
        print(f"not facts of the context: {', '.join(unknown)} (they are: {', '.join(known)})", file=sys.stderr)
        return 2
    for spec in targets:
        print(f"== {spec.key}")
        try:
            loaded = load_target(spec, REPO)
        except TargetLoadError as exc:
            print(exc.tool_error.message)
            continue
        with environ_context(loaded.environ):
            context = analysis_context(loaded)
            if context is None:
                print("braintrace's compile gives no graph: no check runs on this model")
                continue
            for name in names or known:
                try:
                    # the step itself is always shown whole: a check is written against its equations
                    print(f"{name}: {_shown(getattr(context, name), full or name == 'jaxpr')}")
                except Exception as exc:  # noqa: BLE001 - a fact this model cannot give: said, the others shown
                    print(f"{name}: raised {type(exc).__name__}: {exc}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.facts", description=__doc__.split("\n")[0])
    parser.add_argument("target", help="FILE or FILE::factory")
    parser.add_argument("facts", nargs="*", help="only these facts (default: the step's jaxpr and every fact)")
    parser.add_argument("--full", action="store_true", help=f"every fact whole, not its first {WIDTH} characters")
    args = parser.parse_args(argv)
    return show(args.target, args.facts, args.full)


if __name__ == "__main__":
    sys.exit(main())
