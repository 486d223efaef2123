"""The documentation site: it builds with ``mkdocs build --strict``, every rule has its page where SARIF's
``helpUri`` and the language server's links point, and a reader who searches a rule id in a real browser
reaches that rule's page and its fix."""

from __future__ import annotations

import functools
import http.server
import importlib.util
import json
import os
import re
import subprocess
import sys
import threading
import tomllib

import pytest
from browser import DevTools, elements, find_browser
from helpers import REPO
from in_process import run_cli

from etrace_lint.core.registry import all_rules
from etrace_lint.core.rule import rule_page_path

SKIP_MKDOCS = "mkdocs is not installed (the test extra installs it)"


def _hook_module(name: str):
    """A module of the site's hook folder, as the hook loads it."""
    if importlib.util.find_spec("mkdocs") is None:
        pytest.skip(SKIP_MKDOCS)
    spec = importlib.util.spec_from_file_location(f"etrace_lint_docs_{name}",
                                                  os.path.join(REPO, "docs", "hooks", f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module

needs_browser = pytest.mark.skipif(find_browser() is None, reason=(
    "no headless browser: install Debian's chromium (apt-get install -y chromium) to search the docs site"))


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The site, built as .ci/run builds it, into a folder of its own."""
    if importlib.util.find_spec("mkdocs") is None:
        pytest.skip(SKIP_MKDOCS)
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file",
                           os.path.join(REPO, "mkdocs.yml"), "--site-dir", str(out)],
                          cwd=REPO, capture_output=True, text=True, timeout=600,
                          env=dict(os.environ, NO_MKDOCS_2_WARNING="1"))
    assert done.returncode == 0, done.stderr[-4000:]
    assert "WARNING" not in done.stderr, done.stderr[-4000:]
    return str(out)


def _page(site: str, path: str) -> str:
    with open(os.path.join(site, path, "index.html"), encoding="utf-8") as handle:
        return handle.read()


def _words(text: str) -> str:
    """Only the words, one space apart: Markdown's marks and HTML's tags and entities put nothing between."""
    return " ".join(re.findall(r"[A-Za-z0-9_]+", text))


def _text(html: str) -> str:
    return _words(re.sub(r"&\w+;|&#\d+;", " ", re.sub(r"<[^>]+>", " ", html)))


def _first_sentence(markdown: str) -> str:
    """The first eight words of a section, to find it in a page's text."""
    return " ".join(_words(markdown.split("\n\n")[0]).split()[:8])


def test_every_rule_has_a_page_where_its_links_point(site):
    index = _page(site, "rules")
    for rule in all_rules().values():
        page = _text(_page(site, rule_page_path(rule.id)))
        assert _words(f"{rule.id} {rule.name}") in page and rule.level.value in page, rule.id
        for section in ("What it does", "Why it matters", "Example", "How to fix"):
            assert section in page, f"{rule.id}'s page has no {section!r}"
        assert _first_sentence(rule.section("How to fix")) in page, rule.id
        assert f'href="{rule.id.lower()}/"' in index, f"the rules index does not link to {rule.id}"


# the rules no model triggers, each for its reason; their pages say it in full (docs/hooks/examples.py)
NO_MODEL = {
    "ETL418": "its measurement is folded into the finding of the rule that denies the use",
    "ETL421": "its measurement is folded into the finding of the rule that denies the use, which becomes a note",
    "ETL021": "braintrace 0.2.6 and 0.2.8 inline every jit call before the pass that records it",
    "ETL024": "recorded after a walk misses what an identical walk has just found: a safeguard",
    "ETL027": "a record kind braintrace 0.2.6 and 0.2.8 declare and never record",
    "ETL099": "a record kind this etrace-lint does not know: only a newer braintrace makes one",
    "ETL105": "braintrace 0.2.6 and 0.2.8 record the refusal first, and ETL016 or ETL030 reports it",
    "ETL109": "a second line of defence behind the compiler's grouping of states by shape",
    "ETL199": "a crash of braintrace's compiler: each one is a bug of braintrace",
}


def test_each_rules_page_shows_the_model_that_triggers_it_or_says_why_none_does(site):
    examples = _hook_module("examples")
    assert set(examples.NO_MODEL) == set(NO_MODEL)
    fixtures = examples.fixture_files(REPO)
    for rule in all_rules().values():
        model = examples.example_model(rule, REPO, fixtures)
        page = _page(site, rule_page_path(rule.id))
        text = _text(page)
        if rule.retired or rule.id in NO_MODEL:
            assert model is None, rule.id
            # the page's text: a link shows its words, not where it points
            assert rule.retired or _words(re.sub(r"\]\([^)]*\)", "]", examples.NO_MODEL[rule.id])) in text, rule.id
            continue
        assert model is not None, f"{rule.id}: no fixture line is marked for it"
        assert "A model that triggers it" in page and _words(model.source) in text, rule.id
        if model.flags:  # the flag the rule runs with, where it is not on by default
            assert _words(f"Linting this file with {' '.join(model.flags)}") in text, rule.id
        assert not model.settings or _words(model.settings) in text, rule.id


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", text)[:3])


def _on_this_line(versions: tuple[str, str | None] | None, installed: str) -> bool:
    """Whether braintrace ``installed`` reports a rule of examples.ONE_LINE (any other rule: True)."""
    if versions is None:
        return True
    first, until = versions
    return _version(first) <= _version(installed) and (until is None or _version(installed) < _version(until))


def _merged_settings(snippets: list[str]) -> str:
    """One pyproject.toml with each model's settings: lists joined, any other value the same in each."""
    tables: dict[str, dict] = {}

    def merge(table: str, values: dict) -> None:
        for key, value in values.items():
            if isinstance(value, dict):
                merge(f"{table}.{key}" if table else key, value)
                continue
            into = tables.setdefault(table, {})
            if isinstance(value, list):
                into[key] = list(dict.fromkeys([*into.get(key, []), *value]))
            else:
                assert into.setdefault(key, value) == value, f"two models need other values of {table}.{key}"

    for snippet in snippets:
        merge("", tomllib.loads(snippet))
    return "".join(f"[{table}]\n" + "".join(f"{key} = {json.dumps(value)}\n" for key, value in values.items())
                   for table, values in tables.items())


def _lint(folder, *args: str, env: dict | None = None) -> set[tuple[str, int, str]]:
    """(file, line, rule) of every finding a run of the command line over ``folder`` reports."""
    done = run_cli(".", "--no-cache", "--show-info", "--output-format", "json", "-o", "out.json", *args,
                   cwd=str(folder), env=env)
    assert done.returncode in (0, 1), done.stderr[-4000:]
    report = json.loads((folder / "out.json").read_text(encoding="utf-8"))
    assert not report["toolErrors"], [e["message"] for e in report["toolErrors"]]
    return {(f["location"]["path"], f["location"]["line"], f["rule"]) for f in report["findings"]}


def _run_of(model) -> str:
    """The run of the command line a page's model is linted in: the models that need no flag together, those
    that need --advise together (it builds and runs each algorithm it lists on every model of the run), the
    others (--verify, --check-online-grad) together."""
    return "plain" if not model.flags else "advise" if "--advise" in model.flags else "flagged"


def test_every_pages_model_triggers_its_rule_where_it_says(tmp_path):
    """Each model a rule's page shows, linted as a file of its own (as a reader who copies it would), with
    the flag and the pyproject.toml its page names, reports its rule on the line marked ``# ETLxxx``, on
    the braintrace line its page names and on no other: ruff's documentation examples are tested the same
    way. A model two rules share (its marks aside) is linted once; the models of a run (``_run_of``) are
    linted together, with every flag and setting they need."""
    # JAX and braintrace for this test alone: the site's other tests build and read pages without them
    import braintrace

    from etrace_lint.analysis import braintrace_adapter

    examples = _hook_module("examples")
    installed = {kind.value for kind in braintrace.DiagnosticKind}
    # braintrace 0.2.6 adds no same-step gradient: a readout the page shows learning from it (ETL003) gets
    # none there, and ETL209 says so on the same line
    instead = {} if braintrace_adapter.adds_same_step_gradients() else {"ETL003": "ETL209"}
    fixtures = examples.fixture_files(REPO)
    files: dict[tuple[str, str], str] = {}  # (run, source without its mark) -> file
    flags: dict[str, set[str]] = {}
    settings: dict[str, list[str]] = {}
    expected, absent = [], []
    for rule in all_rules().values():
        model = examples.example_model(rule, REPO, fixtures)
        if model is None or not set(rule.record_kinds) <= installed:  # a record this braintrace never makes
            continue
        lines = {n for n, line in enumerate(model.source.splitlines(), 1) if line.endswith(f"  # {rule.id}")}
        assert lines, f"{rule.id}'s model marks no line"
        run = _run_of(model)
        source = model.source.replace(f"  # {rule.id}\n", "\n")
        name = files.setdefault((run, source), f"{run}/{rule.id.lower()}_example.py")
        (tmp_path / run).mkdir(exist_ok=True)
        (tmp_path / name).write_text(source, encoding="utf-8")
        (expected if _on_this_line(model.braintrace, braintrace.__version__) else absent).append(
            (name, instead.get(rule.id, rule.id), lines))
        flags.setdefault(run, set()).update(model.flags)
        settings.setdefault(run, []).extend([model.settings] if model.settings else [])
    reported = set()
    for run in flags:
        folder = tmp_path / run
        if run == "plain":
            found = _lint(folder, "--isolated")
        else:
            (folder / "pyproject.toml").write_text(_merged_settings(settings[run]) or "[tool.etrace-lint]\n",
                                                   encoding="utf-8")
            # --verify's steps compiled unoptimised, as tests/real_models_check.py does: never another verdict
            found = _lint(folder, "--config", "pyproject.toml", *sorted(flags[run]),
                          env={"JAX_DISABLE_MOST_OPTIMIZATIONS": "1"})
        reported |= {(f"{run}/{path}", line, rule) for path, line, rule in found}
    missing = [f"{name}: {rule_id} on line {sorted(lines)}" for name, rule_id, lines in expected
               if not any((name, line, rule_id) in reported for line in lines)]
    assert not missing, f"models that do not trigger their rule where their page says: {missing}"
    stray = [f"{name}: {rule_id}" for name, rule_id, lines in absent if any((name, line, rule_id) in reported
                                                                             for line in lines)]
    assert not stray, f"braintrace {braintrace.__version__} reports rules its pages say it does not: {stray}"


def test_the_configuration_page_lists_every_option(site):
    from etrace_lint.config.options import OPTIONS

    page = _page(site, "configuration")
    for option in OPTIONS:
        for flag in option.flags:
            if flag.startswith("-"):
                assert f"<code>{flag}" in page, flag
        if option.key:
            assert f"<code>{option.key}</code>" in page, option.key


def test_github_code_scanning_is_one_click_from_the_home_page(site):
    links = [e.attrs.get("href", "") for e in elements(_page(site, "")) if e.tag == "a"]
    assert "integrations/github/" in links
    assert "github/codeql-action/upload-sarif" in _page(site, "integrations/github")


@pytest.fixture
def served(site):
    """The site over HTTP on a free local port: the search runs in a web worker, which a file:// page
    may not start."""
    handler = functools.partial(_QuietHandler, directory=site)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()
    thread.join()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


@needs_browser
def test_searching_a_rule_id_leads_to_its_page_and_its_fix(served, tmp_path):
    rule = all_rules()["ETL208"]
    fix = _first_sentence(rule.section("How to fix"))
    with DevTools(str(tmp_path)) as tab:
        tab.go(served + "?q=ETL208")  # what typing the id into the search box does (Material's ?q=)
        first = "document.querySelector('.md-search-result__list a')"
        href = tab.wait_for(f"{first} && {first}.href")
        assert href, "the search for ETL208 showed no result"
        tab.evaluate(f"setTimeout(() => {first}.click(), 0)")  # the click's navigation ends after the call
        # a page read while the browser still parses it ends part-way (under load, in the example's code)
        text = tab.wait_for("location.pathname.endsWith('/rules/etl208/') && document.readyState === 'complete'"
                            " && document.querySelector('article') && document.querySelector('article').innerText")
    assert text, f"following the first result ({href}) did not reach ETL208's page"
    assert text.startswith("ETL208 hidden-update-unread")
    assert fix in _words(text)


def test_the_readme_is_a_front_door_whose_links_lead_into_the_docs():
    with open(os.path.join(REPO, "README.md"), encoding="utf-8") as handle:
        readme = handle.read()
    assert len(readme.splitlines()) <= 250
    for command in ("python -m venv .venv && . .venv/bin/activate && pip install . && "
                    "etrace-lint examples/models --sarif out.sarif",
                    'pip install ".[test]" && python -m pytest'):
        assert f"```sh\n{command}\n```" in readme, command
    section = readme[readme.index("## Lint what your code compiles"):]
    assert "(docs/guide/run.md)" in section.split("\n## ")[0]
    links = re.findall(r"\]\((docs/[^)#]+)", readme)
    assert "docs/integrations/github.md" in links
    missing = [link for link in links if not os.path.exists(os.path.join(REPO, link))]
    assert not missing, missing
