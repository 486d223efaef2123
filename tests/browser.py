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
import sys
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


# Becomes the browser (argv[3:]) with the pipe's ends argv[1] and argv[2] on fds 3 and 4, where it looks for
# them. Done by a small program, not in the forked child (``preexec_fn``): forking a process that runs threads
# (the test's web server) is unsafe. Each end is first copied above fd 9, so that placing one cannot close the other.
_ON_FDS_3_AND_4 = """
import fcntl, os, sys
ends = [fcntl.fcntl(int(fd), fcntl.F_DUPFD, 10) for fd in sys.argv[1:3]]
for target, end in zip((3, 4), ends):
    os.dup2(end, target)
os.execv(sys.argv[3], sys.argv[3:])
"""


# DevTools' answers while a navigation replaces the page's document
_BETWEEN_PAGES = ("navigated or closed", "Cannot find context", "Execution context was destroyed")


class DevTools:
    """A headless Chromium driven over the DevTools protocol on a pipe (``--remote-debugging-pipe``: the
    browser reads commands on fd 3 and answers on fd 4, each message JSON ended by a NUL byte), for pages
    that only show what a test looks for after scripts ran for a while (a search that a web worker
    answers), where ``--dump-dom`` would read the page too early.

    ``with DevTools(workdir) as tab: tab.go(url); tab.wait_for("document.title")``
    """

    def __init__(self, workdir: str):
        commands_read, self._commands = os.pipe()
        self._answers, answers_write = os.pipe()

        self._process = subprocess.Popen(
            [sys.executable, "-c", _ON_FDS_3_AND_4, str(commands_read), str(answers_write), find_browser(),
             *FLAGS[:-1], "--remote-debugging-pipe", f"--user-data-dir={os.path.join(workdir, 'devtools-profile')}",
             "about:blank"],
            pass_fds=(commands_read, answers_write), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(commands_read)
        os.close(answers_write)
        self._buffer = b""
        self._next_id = 0
        page = next(t for t in self._call("Target.getTargets")["targetInfos"] if t["type"] == "page")
        self._session = self._call("Target.attachToTarget", targetId=page["targetId"], flatten=True)["sessionId"]

    def _call(self, method: str, session: str | None = None, **params) -> dict:
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        os.write(self._commands, json.dumps(message).encode() + b"\0")
        while True:
            while b"\0" not in self._buffer:
                chunk = os.read(self._answers, 1 << 16)
                if not chunk:
                    raise RuntimeError(f"the browser closed its pipe during {method}")
                self._buffer += chunk
            raw, self._buffer = self._buffer.split(b"\0", 1)
            answer = json.loads(raw)
            if answer.get("id") == self._next_id:  # events and other answers are not waited for
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error']}")
                return answer.get("result", {})

    def go(self, url: str) -> None:
        self._call("Page.navigate", self._session, url=url)

    def evaluate(self, expression: str):
        """The value of a JavaScript expression in the page (JSON-serialisable), or None; a RuntimeError
        when the page went away while it ran (an expression that follows a link may see that)."""
        result = self._call("Runtime.evaluate", self._session, expression=expression, returnByValue=True)
        return result.get("result", {}).get("value")

    def wait_for(self, expression: str, timeout: float = 60.0):
        """Evaluate ``expression`` until it is truthy; its value, or None after ``timeout`` seconds."""
        import time

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                value = self.evaluate(f"(() => {{ try {{ return {expression}; }} catch (e) {{ return null; }} }})()")
            except RuntimeError as error:  # the page was between two documents (a link followed): ask again
                if not any(word in str(error) for word in _BETWEEN_PAGES):
                    raise
                value = None
            if value:
                return value
            time.sleep(0.2)
        return None

    def __enter__(self) -> "DevTools":
        return self

    def __exit__(self, *exc) -> None:
        try:
            self._call("Browser.close")
        except (RuntimeError, OSError):
            pass
        try:
            self._process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        os.close(self._commands)
        os.close(self._answers)
