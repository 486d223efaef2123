"""What the server does with input no well-behaved editor sends: frames with a wrong length, junk,
requests whose params do not fit. It keeps reading, answers every request, and logs what it skipped.

The workspace is not trusted, so no model runs: these are about the protocol alone.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("pygls")

from helpers import fixture  # noqa: E402

sys.path.insert(0, fixture("server"))
from raw_client import RawClient, frame, uri  # noqa: E402

SUPPRESSED = "x = 1  # etrace-lint: ignore[ETL201]\n"


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    root = tmp_path_factory.mktemp("protocol")
    raw = RawClient(root)
    path = root / "suppressed.py"
    raw.open(path, SUPPRESSED)
    raw.document = path
    yield raw
    raw.close()


def _hover(client) -> dict:
    """A request the server answers with content: the rule documentation under the cursor."""
    return client.request("textDocument/hover", {"textDocument": {"uri": uri(client.document)},
                                                 "position": {"line": 0, "character": SUPPRESSED.index("ETL201")}})


def test_a_well_formed_hover_is_answered(client):
    response = _hover(client)
    assert "ETL201" in response["result"]["contents"]["value"]


HOVER = json.dumps({"jsonrpc": "2.0", "id": "lost", "method": "textDocument/hover",
                    "params": {"textDocument": {"uri": "file:///x.py"},
                               "position": {"line": 0, "character": 0}}}).encode()

BAD_INPUT = {
    "length too small": frame(HOVER, length_delta=-7),
    "length too large": frame(HOVER, length_delta=+400),
    "length too large, by one": frame(HOVER, length_delta=+1),
    "junk with no header": b"\x00junk that is no frame\r\n\r\n",
    "junk with no line break": b"garbage",
    "a body that is not JSON": frame(b"{this is not json}"),
    "a JSON body that is no object": frame(b"[1, 2, 3]"),
    "a header that is not a number": b"Content-Length: many\r\n\r\n{}",
    "a header without its blank line": b"Content-Length: 2\r\n{}",
}


@pytest.mark.parametrize("bad", list(BAD_INPUT), ids=list(BAD_INPUT))
def test_after_a_malformed_frame_the_next_request_is_answered_and_the_frame_logged_once(client, bad):
    logged = len(client.log_messages())
    client.send(BAD_INPUT[bad])
    response = _hover(client)
    assert "ETL201" in response["result"]["contents"]["value"], response
    new = client.log_messages()[logged:]
    assert len(new) == 1 and "unreadable input" in new[0], new
    assert "lost" not in client.responses, "a cut frame is never handled as a request"


def test_a_malformed_frame_split_across_writes_is_recovered_from(client):
    logged = len(client.log_messages())
    data = BAD_INPUT["length too large"] + frame({"jsonrpc": "2.0", "id": "split", "method": "textDocument/hover",
                                                  "params": {"textDocument": {"uri": uri(client.document)},
                                                             "position": {"line": 0, "character": 30}}})
    for start in range(0, len(data), 5):
        client.send(data[start:start + 5])
    response = client.wait_for(lambda c: c.responses.pop("split", None), 30, "the response to the split hover")
    assert "ETL201" in response["result"]["contents"]["value"]
    assert len(client.log_messages()) == logged + 1


def _position(line=0, character=0):
    return {"line": line, "character": character}


INVALID_PARAMS = {
    "hover, textDocument a number": ("textDocument/hover", {"textDocument": 5, "position": _position()}),
    "hover, no params": ("textDocument/hover", None),
    "hover, a negative line": ("textDocument/hover", {"textDocument": {"uri": "DOC"}, "position": _position(-1)}),
    "hover, a document that does not exist": (
        "textDocument/hover", {"textDocument": {"uri": "file:///nonexistent/model.py"}, "position": _position()}),
    "code action, no range": ("textDocument/codeAction",
                              {"textDocument": {"uri": "DOC"}, "context": {"diagnostics": []}}),
    "code action, params a list": ("textDocument/codeAction", [1, 2]),
    "verify, no argument": ("workspace/executeCommand", {"command": "etrace-lint.verify"}),
    "verify, a number": ("workspace/executeCommand", {"command": "etrace-lint.verify", "arguments": [5]}),
    "verify, a file outside the workspace": ("workspace/executeCommand",
                                            {"command": "etrace-lint.verify", "arguments": ["file:///elsewhere.py"]}),
    "an unknown command": ("workspace/executeCommand", {"command": "etrace-lint.nothing"}),
}


@pytest.mark.parametrize("case", list(INVALID_PARAMS), ids=list(INVALID_PARAMS))
def test_a_request_with_invalid_params_gets_an_invalid_params_error(client, case):
    method, params = INVALID_PARAMS[case]
    params = json.loads(json.dumps(params).replace('"DOC"', json.dumps(uri(client.document))))
    response = client.request(method, params)
    assert response["error"]["code"] == -32602, response
    assert "result" not in response
    assert "ETL201" in _hover(client)["result"]["contents"]["value"], "the server goes on"


def test_an_unknown_method_and_a_message_that_is_not_json_rpc_2_get_their_errors(client):
    assert client.request("etrace-lint/nothing", {})["error"]["code"] == -32601
    assert client.request("textDocument/hover", {}, jsonrpc="1.0")["error"]["code"] == -32600
    client.send(frame({"jsonrpc": "2.0", "id": {"an": "object"}, "method": "textDocument/hover"}))
    response = client.wait_for(lambda c: c.responses.pop(None, None), 30, "the response with a null id")
    assert response["error"]["code"] == -32600


def test_a_notification_with_invalid_params_is_logged_and_nothing_answers_it(client):
    logged = len(client.log_messages())
    client.notify("textDocument/didSave", {"textDocument": 7})
    assert "ETL201" in _hover(client)["result"]["contents"]["value"]
    new = client.log_messages()[logged:]
    assert len(new) == 1 and "textDocument/didSave" in new[0], new


def test_requests_after_shutdown_are_refused_and_exit_ends_the_server(tmp_path):
    raw = RawClient(tmp_path)
    try:
        assert raw.request("shutdown")["result"] is None
        response = raw.request("textDocument/hover", {"textDocument": {"uri": uri(tmp_path / "a.py")},
                                                      "position": _position()})
        assert response["error"]["code"] == -32600
        # an editor closing its buffers after shutdown is usual: dropped without a warning in the log
        raw.notify("textDocument/didClose", {"textDocument": {"uri": uri(tmp_path / "a.py")}})
        raw.notify("exit", None)
        assert raw.process.wait(timeout=30) == 0
    finally:
        raw.close()
    warnings = [line for line in raw.stderr.decode().splitlines() if "WARNING" in line]
    assert len(warnings) == 1 and "textDocument/hover" in warnings[0], warnings


def test_the_command_lines_help_lists_the_server():
    env = dict(os.environ, COLUMNS="400")
    help_text = subprocess.run([sys.executable, "-m", "etrace_lint", "--help"], capture_output=True, text=True,
                               env=env, check=True).stdout
    assert "`etrace-lint server` runs the language server" in help_text
    server_help = subprocess.run([sys.executable, "-m", "etrace_lint", "server", "--help"], capture_output=True,
                                 text=True, env=env, check=True).stdout
    assert "language server on stdin/stdout" in server_help


def test_a_request_before_initialize_gets_server_not_initialized(tmp_path):
    raw = RawClient(tmp_path, initialize=False)
    try:
        hover = {"textDocument": {"uri": uri(tmp_path / "a.py")}, "position": _position()}
        assert raw.request("textDocument/hover", hover)["error"]["code"] == -32002
        assert "capabilities" in raw.request("initialize", {"processId": None, "rootUri": uri(tmp_path),
                                                            "capabilities": {}})["result"]
        (tmp_path / "a.py").write_text("")
        assert raw.request("textDocument/hover", hover) == {"jsonrpc": "2.0", "id": 3, "result": None}
    finally:
        raw.close()
