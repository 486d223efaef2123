"""Open a page in headless Chromium (Debian's ``chromium``): its DOM after scripts ran, its console, its requests.

The console comes from Chromium's own log (``--enable-logging=stderr``:
``CONSOLE`` lines), the requests from its network log (``--log-net-log``):
only requests the page started count, not the browser's own (updates,
accounts), which are keyed to google.com, not to the ``file://`` page.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from html.parser import HTMLParser

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "chrome")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-default-apps",
         "--hide-scrollbars", "--virtual-time-budget=5000")
CONSOLE = re.compile(r":CONSOLE[:(]\d*\)?\]? (.*)")


def find_browser() -> str | None:
    for name in CANDIDATES:
        path = shutil.which(name)
        if path:
            return path
    return None


SKIP_REASON = ("no headless browser: install Debian's chromium (apt-get install -y chromium) "
               "to check the HTML report in a browser")


@dataclass(frozen=True)
class Page:
    dom: str
    console: tuple[str, ...]  # messages the page logged, errors included
    requests: tuple[str, ...]  # URLs the page asked for beyond its own file


def open_page(path: str, workdir: str, screenshot: str | None = None, size: str = "1280,2000") -> Page:
    browser = find_browser()
    netlog = os.path.join(workdir, "netlog.json")
    url = "file://" + os.path.abspath(path)
    done = subprocess.run([browser, *FLAGS, "--enable-logging=stderr", "--v=0", f"--log-net-log={netlog}",
                           f"--user-data-dir={os.path.join(workdir, 'profile')}", "--dump-dom", url],
                          capture_output=True, text=True, timeout=120)
    console = tuple(m.group(1) for line in done.stderr.splitlines() if (m := CONSOLE.search(line)))
    if screenshot:
        subprocess.run([browser, *FLAGS, f"--user-data-dir={os.path.join(workdir, 'profile')}",
                        f"--window-size={size}", f"--screenshot={screenshot}", url],
                       capture_output=True, text=True, timeout=120)
    return Page(done.stdout, console, _page_requests(netlog))


def _page_requests(netlog: str) -> tuple[str, ...]:
    with open(netlog, encoding="utf-8") as handle:
        text = handle.read()
    if not text.rstrip().endswith("}"):  # Chromium may leave the log's closing brackets out
        text = text.rstrip().rstrip(",") + "]}"
    log = json.loads(text)
    start = log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"]
    urls = []
    for event in log["events"]:
        params = event.get("params") or {}
        if event["type"] == start and "file://" in str(params.get("network_isolation_key", "")):
            if not params.get("url", "").startswith(("file:", "data:", "about:")):
                urls.append(params["url"])
    return tuple(urls)


@dataclass(frozen=True)
class Element:
    tag: str
    attrs: dict
    text: str
    rect: dict | None = None  # the attributes of the first <rect> directly inside it (an SVG node or box)

    def box(self) -> tuple[float, float, float, float]:
        """(left, top, right, bottom) of that rect."""
        x, y = float(self.rect["x"]), float(self.rect["y"])
        return x, y, x + float(self.rect["width"]), y + float(self.rect["height"])


class _Collect(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.elements: list[Element] = []
        self.stack: list[tuple[str, dict, list, list]] = []

    def handle_starttag(self, tag, attrs):
        entry = (tag, dict(attrs), [], [])
        if tag == "rect" and self.stack and not self.stack[-1][3]:
            self.stack[-1][3].append(entry[1])
        if tag in ("br", "meta", "input", "img", "link", "rect", "path", "polyline"):
            self.elements.append(Element(tag, entry[1], ""))
            return
        self.stack.append(entry)

    def handle_startendtag(self, tag, attrs):
        if tag == "rect" and self.stack and not self.stack[-1][3]:
            self.stack[-1][3].append(dict(attrs))
        self.elements.append(Element(tag, dict(attrs), ""))

    def handle_endtag(self, tag):
        for index in range(len(self.stack) - 1, -1, -1):
            if self.stack[index][0] == tag:
                name, attrs, text, rect = self.stack[index]
                del self.stack[index:]
                self.elements.append(Element(name, attrs, "".join(text), rect[0] if rect else None))
                if self.stack:
                    self.stack[-1][2].append("".join(text))
                return

    def handle_data(self, data):
        if self.stack:
            self.stack[-1][2].append(data)


def elements(dom: str) -> list[Element]:
    parser = _Collect()
    parser.feed(dom)
    return parser.elements


def with_class(items: list[Element], name: str) -> list[Element]:
    return [e for e in items if name in (e.attrs.get("class") or "").split()]
