"""The language server's framing and JSON-RPC envelope: whatever bytes a client writes, the server
answers what it can (a Parse error, id null, for what it cannot read; Invalid Request for JSON that
is not a message), finds the next message and keeps serving. Each attack on the real server is
followed by a request that must get its normal answer.

Also: a large document does not hold up requests about other documents."""

from __future__ import annotations

import io
import json
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shaderlint.server.server import envelope_problem
from shaderlint.server.transport import FrameReader
from tests.server.raw_client import RawServer, did_open, frame, hover, notification, request

# The division repeats with a changing operand (a load in a block-stride loop): SL201 reports it.
KERNEL = ("__global__ void scale(int* a, int n) {\n    for (int i = threadIdx.x; i < n; i += blockDim.x)\n"
          "        a[i] = a[i] / n;\n}\n")
DIV = (2, KERNEL.splitlines()[2].index("/ n"))  # line, character of the SL201 finding
OK = frame({"jsonrpc": "2.0", "id": 1, "method": "shutdown"})
OK2 = frame({"jsonrpc": "2.0", "id": 2, "method": "shutdown"})

# ---- the frame reader, in-process ------------------------------------------------------------------
#: attack bytes -> the start of the framing error the reader reports. After each, OK must be read intact.
ATTACKS = {
    "huge length": (b"Content-Length: 99999999999\r\n\r\n{}", "a message of 99999999999 bytes, over the limit"),
    "negative length": (b"Content-Length: -5\r\n\r\n{}", "Content-Length is not a non-negative number"),
    "non-numeric length": (b"Content-Length: abc\r\n\r\n{}", "Content-Length is not a non-negative number"),
    "length with a sign": (b"Content-Length: +2\r\n\r\n{}", "Content-Length is not a non-negative number"),
    "missing length": (b"Content-Type: x\r\n\r\n{\"a\": 1}", "a header block without Content-Length"),
    "no header at all": (b"{\"jsonrpc\": \"2.0\"}\r\n\r\n", "not a header line"),
    "text": (b"just text\r\n\r\n", "not a header line"),
    "a header line of 10 kB": (b"X-Pad: " + b"a" * 10_000 + b"\r\n\r\n", "a header line longer than"),
    "a line of 1 MB without a line break": (b"x" * 1_000_000, "a header line longer than"),
    "too many header lines": (b"X: 1\r\n" * 40 + b"\r\n", "more than 32 header lines"),
    "body shorter than its length": (b"Content-Length: 500\r\n\r\n{\"a\": 1}", "the message body ends after 8"),
    "length ending inside the next header": (b"Content-Length: 10\r\n\r\n", "the message body ends after 0"),
    "length ending inside the next header's number": (b"Content-Length: 17\r\n\r\n", "the message body ends after 0"),
}


@pytest.mark.parametrize("name", list(ATTACKS))
def test_frame_reader_reports_and_resynchronises(name):
    attack, error = ATTACKS[name]
    reader = FrameReader(io.BytesIO(attack + OK + OK2), max_message_bytes=1_000_000)
    first = reader.read()
    assert first is not None and first.body is None and first.error.startswith(error), first
    assert reader.read().body == OK.split(b"\r\n\r\n", 1)[1]
    assert reader.read().body == OK2.split(b"\r\n\r\n", 1)[1]
    assert reader.read() is None


def test_frame_reader_reads_good_messages_as_they_are():
    bodies = [json.dumps({"jsonrpc": "2.0", "method": "m", "params": {"t": "Content-Length: 5\\r\\n" * k}}).encode()
              for k in range(5)]
    data = b"".join(b"Content-Length: %d\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n" % len(b) + b
                    for b in bodies)
    data += b"\r\n" + frame(body=b"x" * 200_000)  # a blank line between messages is tolerated
    reader = FrameReader(io.BytesIO(data))
    assert [reader.read().body for _ in bodies] == bodies  # an escaped header in a string is no header
    assert reader.read().body == b"x" * 200_000
    assert reader.read() is None


def test_frame_reader_skips_an_oversized_message_without_buffering_it():
    big = json.dumps({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"text": "y" * 3_000_000}}).encode()
    reader = FrameReader(io.BytesIO(frame(body=big) + OK), max_message_bytes=1_000_000)
    assert reader.read().error.startswith("a message of 3000")
    assert reader.read().body == OK.split(b"\r\n\r\n", 1)[1]
    assert len(reader._buf) < 300_000  # the 3 MB body went by in chunks


def test_frame_reader_end_of_input_mid_message():
    reader = FrameReader(io.BytesIO(OK + b"Content-Length: 100\r\n\r\n{\"jsonrpc\""))
    assert reader.read().body is not None
    assert reader.read() is None


@pytest.mark.parametrize("data, expected", [
    ([], (None,)), (5, (None,)), ("x", (None,)), (None, (None,)), ([{"jsonrpc": "2.0", "method": "m"}], (None,)),
    ({"foo": 1}, (None,)),
    ({"jsonrpc": "1.0", "id": 50, "method": "shutdown"}, (50,)),
    ({"jsonrpc": "2.0", "id": 51, "method": 5}, (51,)),
    ({"jsonrpc": "2.0", "id": [1, 2], "method": "shutdown"}, (None,)),
    ({"jsonrpc": "2.0", "id": True, "method": "shutdown"}, (None,)),
    ({"jsonrpc": "2.0", "id": None, "method": "shutdown"}, (None,)),
    ({"jsonrpc": "2.0", "id": 58}, (58,)),
    ({"jsonrpc": "2.0", "id": 59, "result": 1, "error": {}}, (59,)),
    ({"jsonrpc": "2.0", "method": "initialized", "params": {}}, None),
    ({"jsonrpc": "2.0", "id": "a", "method": "shutdown"}, None),
    ({"jsonrpc": "2.0", "id": 3, "result": None}, None),
    ({"jsonrpc": "2.0", "id": None, "error": {"code": 1, "message": "m"}}, None),
])
def test_envelope_problems(data, expected):
    problem = envelope_problem(data)
    if expected is None:
        assert problem is None
    else:
        assert problem is not None and problem[1] == expected[0]


# ---- the real server -------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def server():
    s = RawServer()
    uri = "file:///tmp/framing.cu"
    s.send(did_open(uri, KERNEL))
    s.uri = uri  # type: ignore[attr-defined]
    yield s
    s.kill()


_ids = iter(range(1000, 100_000))


def assert_still_serving(s: RawServer) -> None:
    """A hover on the open document gets its normal answer."""
    rid = next(_ids)
    s.send(hover(rid, s.uri, *DIV))  # type: ignore[attr-defined]
    answer = s.response(rid)
    assert "SL201" in answer["result"]["contents"]["value"], answer


#: attack on the real server -> the code of the error response (id null) it must get.
SERVER_ATTACKS = {
    "huge length": (b"Content-Length: 99999999999\r\n\r\n{}", -32700),
    "negative length": (b"Content-Length: -1\r\n\r\n{}", -32700),
    "non-numeric length": (b"Content-Length: abc\r\n\r\n", -32700),
    "missing length": (b"X-Header: 1\r\n\r\n{\"jsonrpc\": \"2.0\", \"id\": 9, \"method\": \"shutdown\"}", -32700),
    "body shorter than its length": (b"Content-Length: 1000\r\n\r\n{\"jsonrpc\": \"2.0\", ", -32700),
    "bad JSON": (b"Content-Length: 5\r\n\r\n{{{{{", -32700),
    "not UTF-8": (frame(body=b"\xff\xfe\x00 not UTF-8"), -32700),
    "JSON nested too deeply": (frame(body=b"[" * 100_000 + b"]" * 100_000), -32700),
    "a number with 10,000 digits": (frame(body=b"{\"jsonrpc\": \"2.0\", \"id\": " + b"9" * 10_000 + b"}"), -32700),
    "JSON that is not an object": (b"Content-Length: 2\r\n\r\n[]", -32600),
    "a string": (frame("shutdown"), -32600),
    "not JSON-RPC": (frame({"foo": 1}), -32600),
    "method not a string": (frame({"jsonrpc": "2.0", "id": None, "method": 1, "params": "bar"}), -32600),
    "id not an id": (frame({"jsonrpc": "2.0", "id": [1, 2], "method": "shutdown"}), -32600),
}


@pytest.mark.parametrize("name", list(SERVER_ATTACKS))
def test_each_framing_attack_is_answered_and_the_server_keeps_serving(server, name):
    attack, code = SERVER_ATTACKS[name]
    server.send(attack)
    # The request written right after the attack is the one that must be answered: nothing swallows it.
    assert_still_serving(server)
    error = server.next_error()
    assert error["error"]["code"] == code, error
    assert error["jsonrpc"] == "2.0" and "id" in error and error["id"] is None


def test_invalid_requests_with_an_id_get_invalid_request(server):
    server.send(frame({"jsonrpc": "1.0", "id": 50, "method": "shutdown"}))  # wrong version: not a shutdown
    assert server.response(50)["error"]["code"] == -32600
    server.send(frame({"jsonrpc": "2.0", "id": 58}))  # neither a request nor a response
    assert server.response(58)["error"]["code"] == -32600
    server.send(request(60, "textDocument/hover", "not an object"))  # well-formed, wrong params
    assert server.response(60)["error"]["code"] == -32602
    server.send(request(61, "textDocument/hover", {"textDocument": 5, "position": {}}))
    assert server.response(61)["error"]["code"] == -32602
    server.send(request(62, "no/such/method", {}))
    assert server.response(62)["error"]["code"] == -32601
    # A notification with bad params: nothing to answer, no pop-up (window/showMessage) either.
    server.send(notification("textDocument/didOpen", {"textDocument": 5}))
    assert_still_serving(server)
    assert not [m for m in server.received if m.get("method") == "window/showMessage"]


def test_several_attacks_in_one_write(server):
    server.send(b"".join(attack for attack, _code in SERVER_ATTACKS.values()))
    assert_still_serving(server)


def test_requests_after_shutdown_get_invalid_request_and_exit_exits_0():
    with RawServer() as s:
        s.send(request(1, "shutdown"))
        assert s.response(1)["result"] is None
        s.send(hover(2, "file:///nowhere.cu"))
        error = s.response(2)
        assert error["error"]["code"] == -32600 and "shutdown" in error["error"]["message"]
        s.send(did_open("file:///tmp/late.cu", KERNEL))  # a notification: ignored, no answer
        s.send(request(3, "shutdown"))
        assert s.response(3)["error"]["code"] == -32600
        s.send(notification("exit"))
        assert s.p.wait(20) == 0


def test_exit_without_shutdown_exits_1():
    with RawServer() as s:
        s.send(notification("exit"))
        assert s.p.wait(20) == 1


def test_a_message_over_max_message_bytes_is_skipped():
    with RawServer(args=("--max-message-bytes", "100000")) as s:
        uri = "file:///tmp/over.cu"
        s.send(did_open(uri, KERNEL + "// " + "z" * 200_000 + "\n"))
        s.send(did_open("file:///tmp/under.cu", KERNEL))
        s.send(hover(7, "file:///tmp/under.cu", *DIV))
        assert "SL201" in s.response(7)["result"]["contents"]["value"]
        assert "over the limit of 100000" in s.next_error()["error"]["message"]
        s.send(hover(8, uri, *DIV))
        assert s.response(8)["result"] is None  # never opened
        assert s.stop() == 0


# ---- large documents ---------------------------------------------------------------------------------
def _large_cuda(size: int) -> str:
    """Real-looking CUDA: the examples, again and again, kernels renamed (about 1.3 s of lint per 300 kB)."""
    import glob
    import os

    from tests.server.raw_client import ROOT

    text = "".join(open(f, encoding="utf-8").read() for f in sorted(glob.glob(os.path.join(ROOT, "examples", "*.cu"))))
    out, i = [], 0
    while sum(map(len, out)) < size:
        out.append(text.replace("__global__ void ", f"__global__ void v{i}_"))
        i += 1
    return "".join(out)


def test_a_document_over_max_document_bytes_gets_one_note_and_does_not_block():
    with RawServer() as s:
        big, small = "file:///tmp/huge.cu", "file:///tmp/small.cu"
        t0 = time.monotonic()
        s.send(did_open(big, "// a generated file\n" + "int x;\n" * 3_000_000))  # 21 MB
        s.send(did_open(small, KERNEL))
        s.send(hover(1, small, *DIV))
        assert "SL201" in s.response(1)["result"]["contents"]["value"]
        assert time.monotonic() - t0 < 30  # was 91.5 s (the whole budget of a 20 MB lint, on the event loop)
        (note,) = s.diagnostics(big)["params"]["diagnostics"]
        assert note["code"] == "SL001" and note["severity"] == 3 and "not analysed" in note["message"]
        assert "maxDocumentBytes" in note["message"]
        assert s.stop() == 0


def test_a_large_document_is_linted_in_the_background():
    """A document of 600 kB takes seconds to lint: opened, it is linted when no message waits, and a
    request about another document is answered first (the hover's answer comes before the large
    document's diagnostics; linting it inside didOpen, as before, published them first)."""
    with RawServer() as s:
        big, small = "file:///tmp/large.cu", "file:///tmp/small.cu"
        t0 = time.monotonic()
        s.send(did_open(big, _large_cuda(600_000)) + did_open(small, KERNEL) + hover(1, small, *DIV))
        answer = s.response(1)
        assert "SL201" in answer["result"]["contents"]["value"]
        # The hover did not wait for the large document's lint (about 3.5 s of CPU). Which one is
        # published first is a race between the reader thread and the first lint, so the test bounds
        # the hover's latency instead of asserting the order.
        assert time.monotonic() - t0 < 3.0
        assert s.diagnostics(big, timeout=120)["params"]["diagnostics"]  # then, in the background
        # While it is being linted again (after a change), another request is still answered at once.
        s.send(notification("textDocument/didChange", {
            "textDocument": {"uri": big, "version": 2},
            "contentChanges": [{"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
                                "text": "struct S { int a; };\n"}]}))  # outside any body: a whole-file lint
        time.sleep(0.5)  # the debounce, then the lint (~3.5 s of CPU) starts
        # A request about the large document itself, then one about another: the first gets what there
        # is (nothing yet) instead of holding up the second for the lint.
        where = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}
        t0 = time.monotonic()
        s.send(request(3, "textDocument/codeAction", {"textDocument": {"uri": big}, "range": where,
                                                      "context": {"diagnostics": []}}) + hover(2, small, *DIV))
        assert "SL201" in s.response(2)["result"]["contents"]["value"]
        assert "error" not in s.response(3)
        assert time.monotonic() - t0 < 3.0  # the lint gave way
        assert s.diagnostics(big, timeout=120)["params"]["version"] == 2
        assert s.stop() == 0


def test_a_pull_for_a_large_document_is_cancelled_for_other_messages_and_answered_later():
    """Clients that pull diagnostics pull for every open document by themselves: a pull for a large
    document, with other messages waiting, is cancelled (LSP ServerCancelled, retriggerRequest) instead
    of holding them up; the document is linted in the background and the next pull is answered."""
    with RawServer(capabilities={"textDocument": {"diagnostic": {}}}) as s:
        big, small = "file:///tmp/pulled.cu", "file:///tmp/small.cu"
        pull = {"textDocument": {"uri": big}}
        s.send(did_open(big, _large_cuda(600_000)) + did_open(small, KERNEL) + request(1, "textDocument/diagnostic", pull)
               + hover(2, small, *DIV))
        cancelled = s.response(1)
        assert cancelled["error"]["code"] == -32802 and cancelled["error"]["data"] == {"retriggerRequest": True}
        assert "SL201" in s.response(2)["result"]["contents"]["value"]
        s.send(request(3, "textDocument/diagnostic", pull))
        report = s.response(3, timeout=120)["result"]
        assert report["kind"] == "full" and report["items"]
        assert s.stop() == 0


_PIECES = [b"Content-Length: ", b"Content-Length: 12", b"Content-Length: 99999999999", b"content-length:3", b"\r\n",
           b"\n", b"\r", b"\r\n\r\n", b"{", b"}", b"\"", b"[", b"Content-Type: a", b":", b" ", b"C", b"Content-Le",
           b"{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"x\"}", b"\x00", b"\xff", b"x" * 5000]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(st.sampled_from(_PIECES), st.binary(max_size=40)), max_size=12))
def test_garbage_in_front_of_a_message_leaves_it_intact(pieces):
    """Whatever bytes come before a well-framed message, that message is read intact (and the one after it)."""
    garbage = b"".join(pieces)
    reader = FrameReader(io.BytesIO(garbage + OK + OK2), max_message_bytes=1_000_000)
    bodies = []
    while (f := reader.read()) is not None:
        if f.body is not None:
            bodies.append(f.body)
    assert bodies[-2:] == [OK.split(b"\r\n\r\n", 1)[1], OK2.split(b"\r\n\r\n", 1)[1]], bodies


def test_max_document_bytes_setting():
    from shaderlint.server.settings import DEFAULT_MAX_DOCUMENT_BYTES, ClientSettings

    assert ClientSettings().max_document_bytes == DEFAULT_MAX_DOCUMENT_BYTES
    assert ClientSettings().merged({"maxDocumentBytes": 0}).max_document_bytes == 0  # no limit
    for bad in (-1, "1MB", True, 1.5):
        s = ClientSettings().merged({"maxDocumentBytes": bad})
        assert s.max_document_bytes == DEFAULT_MAX_DOCUMENT_BYTES and "maxDocumentBytes" in s.problems[0]
    with RawServer(init_options={"maxDocumentBytes": 1000}) as s:
        small, larger = "file:///tmp/small.cu", "file:///tmp/larger.cu"
        s.send(did_open(small, KERNEL) + did_open(larger, KERNEL + "// padding\n" * 100))
        assert [d["code"] for d in s.diagnostics(small)["params"]["diagnostics"]] == ["SL201"]
        (note,) = s.diagnostics(larger)["params"]["diagnostics"]
        assert "over the language server's limit of 1,000" in note["message"]
        s.send(hover(1, larger, *DIV))  # a hover on it: no analysis, no crash
        assert "error" not in s.response(1)
        assert s.stop() == 0


def test_malformed_cancel_requests_and_server_cancelled_pulls_log_no_traceback():
    """Found by `bench/fuzz.py --server`: a `$/cancelRequest` whose id is an object made pygls fail
    hashing it (a traceback in the log, the notification lost anyway), and every pull the server
    cancels on purpose (ServerCancelled for a large document while other messages wait) was logged
    by pygls with a traceback. Neither is an error of the server."""
    with RawServer(capabilities={"textDocument": {"diagnostic": {}}}) as s:
        small = "file:///tmp/small.cu"
        s.send(did_open(small, KERNEL) + notification("$/cancelRequest", {"id": {"a": 1}})
               + notification("$/cancelRequest", {"id": [1]}) + hover(1, small, *DIV))
        assert "SL201" in s.response(1)["result"]["contents"]["value"]
        big = "file:///tmp/pulled.cu"
        s.send(did_open(big, _large_cuda(600_000)) + request(2, "textDocument/diagnostic", {"textDocument": {"uri": big}})
               + hover(3, small, *DIV))
        s.response(2)
        assert "SL201" in s.response(3)["result"]["contents"]["value"]
        assert s.stop() == 0
        assert b"Traceback" not in s.stderr, s.stderr[-3000:]
