"""The documentation site: it builds with ``mkdocs build --strict``, every rule has its page where SARIF's
``helpUri`` and the language server's links point, and a reader who searches a rule id in a real browser
reaches that rule's page and its fix."""

from __future__ import annotations

import functools
import http.server
import importlib.util
import os
import re
import subprocess
import sys
import threading

import pytest
from browser import DevTools, elements, find_browser
from helpers import REPO

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


def test_each_rules_page_shows_the_model_that_triggers_it(site):
    examples = _hook_module("examples")
    fixtures = examples.fixture_files(REPO)
    shown = 0
    for rule in all_rules().values():
        model = examples.example_model(rule, REPO, fixtures)
        page = _page(site, rule_page_path(rule.id))
        assert ("A model that triggers it" in page) == (model is not None), rule.id
        if model is not None:
            shown += 1
            assert _words(model.source) in _text(page), rule.id
    assert shown >= 40, f"only {shown} rules' pages show a model"


def test_every_pages_model_triggers_its_rule_where_it_says(tmp_path):
    """Each model a rule's page shows, linted as a file of its own (as a reader who copies it would),
    reports its rule on the line marked ``# ETLxxx``: ruff's documentation examples are tested the same way.
    All of them in one run of the command line, on two workers."""
    import json

    import braintrace

    from etrace_lint.analysis import braintrace_adapter

    examples = _hook_module("examples")
    installed = {kind.value for kind in braintrace.DiagnosticKind}
    # braintrace 0.2.6 adds no same-step gradient: a readout the page shows learning from it (ETL003) gets
    # none there, and ETL209 says so on the same line
    instead = {} if braintrace_adapter.adds_same_step_gradients() else {"ETL003": "ETL209"}
    fixtures = examples.fixture_files(REPO)
    expected = {}
    for rule in all_rules().values():
        model = examples.example_model(rule, REPO, fixtures)
        if model is None or not set(rule.kinds) <= installed:  # a record this braintrace never makes
            continue
        name = f"{rule.id.lower()}_example.py"
        (tmp_path / name).write_text(model.source, encoding="utf-8")
        lines = {n for n, line in enumerate(model.source.splitlines(), 1) if line.endswith(f"# {rule.id}")}
        assert lines, f"{rule.id}'s model marks no line"
        expected[name] = (instead.get(rule.id, rule.id), lines)
    done = subprocess.run([sys.executable, "-m", "etrace_lint", ".", "--isolated", "--no-cache", "--show-info",
                           "-j", "2", "--output-format", "json", "-o", "out.json"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=900)
    assert done.returncode in (0, 1), done.stderr[-4000:]
    report = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    assert not report["toolErrors"], [e["message"] for e in report["toolErrors"]]
    reported = {(f["location"]["path"], f["location"]["line"], f["rule"]) for f in report["findings"]}
    missing = [f"{name}: {rule_id} on line {sorted(lines)}" for name, (rule_id, lines) in sorted(expected.items())
               if not any((name, line, rule_id) in reported for line in lines)]
    assert not missing, f"models that do not trigger their rule where their page says: {missing}"


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
        text = tab.wait_for("location.pathname.endsWith('/rules/etl208/') && document.querySelector('article')"
                            " && document.querySelector('article').innerText")
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
