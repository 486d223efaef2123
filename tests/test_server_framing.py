"""The server's frame reader: every well-formed message comes out, in order, whatever junk lies between
them and however the bytes are split across reads (the protocol tests drive the same through a server)."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from etrace_lint.server.framing import BadFrame, FrameReader, Message


def _frame(message: dict, delta: int = 0) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % (len(body) + delta) + body


junk = st.binary(min_size=1, max_size=40).filter(lambda b: b"length" not in b.lower())
messages = st.dictionaries(st.sampled_from(["id", "method", "params", "text"]),
                           st.one_of(st.integers(), st.text(max_size=20)), min_size=1)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(messages, st.one_of(st.none(), junk)), min_size=1, max_size=6),
       st.lists(st.integers(min_value=1, max_value=50), min_size=1, max_size=20))
def test_messages_survive_junk_between_them_and_any_split(items, cuts):
    stream = b"".join((j or b"") + _frame(m) for m, j in items)
    reader, events, start = FrameReader(), [], 0
    for cut in cuts * (len(stream) // max(1, sum(cuts)) + 1):
        events += reader.feed(stream[start:start + cut])
        start += cut
        if start >= len(stream):
            break
    assert [e.data for e in events if isinstance(e, Message)] == [m for m, _ in items]
    assert sum(isinstance(e, BadFrame) for e in events) <= sum(j is not None for _, j in items)


@given(st.integers(min_value=-30, max_value=300).filter(lambda d: d != 0), st.integers(min_value=1, max_value=64))
def test_a_wrong_length_costs_its_own_frame_and_no_other(delta, chunk):
    bad = {"jsonrpc": "2.0", "id": 1, "method": "textDocument/hover", "params": {"x": "y" * 20}}
    good = [{"jsonrpc": "2.0", "id": n, "method": "shutdown"} for n in (2, 3)]
    stream = _frame(bad, delta) + b"".join(_frame(m) for m in good)
    reader, events = FrameReader(), []
    for start in range(0, len(stream), chunk):
        events += reader.feed(stream[start:start + chunk])
    assert [e.data for e in events if isinstance(e, Message)] == good
    assert sum(isinstance(e, BadFrame) for e in events) == 1
