"""A raw client for the language server: ``python -m shaderlint lsp`` as a subprocess, fed any bytes
(framing attacks included), its framed output collected by a reader thread.

Used by the framing tests (``tests/server/test_framing.py``, ``tests/robustness/``) and by
``bench/fuzz.py --server``.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def frame(obj: Any = None, body: bytes | None = None) -> bytes:
    """A well-framed message: ``obj`` as JSON, or ``body`` as is."""
    if body is None:
        body = json.dumps(obj).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def request(msg_id: Any, method: str, params: Any = None) -> bytes:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
    if params is not None:
        msg["params"] = params
    return frame(msg)


def notification(method: str, params: Any = None) -> bytes:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        msg["params"] = params
    return frame(msg)


def did_open(uri: str, text: str, language_id: str = "cuda-cpp", version: int = 1) -> bytes:
    return notification("textDocument/didOpen", {"textDocument": {
        "uri": uri, "languageId": language_id, "version": version, "text": text}})


def hover(msg_id: Any, uri: str, line: int = 0, character: int = 0) -> bytes:
    return request(msg_id, "textDocument/hover", {"textDocument": {"uri": uri},
                                                  "position": {"line": line, "character": character}})


#: The rules these tests read (both opt-in): SL201 on the kernels they open, SL001 on broken text.
SENTINEL_SELECT = ("SL001", "SL201")


class RawServer:
    """The server as a subprocess. ``send`` writes bytes; ``response(id)`` waits for the answer to a
    request; ``next_error()`` for the next error response with id null; every message received is
    kept in ``received`` (in order)."""

    def __init__(self, root: str = ROOT, args: tuple[str, ...] = (), initialize: bool = True,
                 init_options: dict | None = None, capabilities: dict | None = None) -> None:
        env = {**os.environ, "PYTHONPATH": root + os.pathsep + os.environ.get("PYTHONPATH", "")}
        self.p = subprocess.Popen([sys.executable, "-m", "shaderlint", "lsp", *args], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=root)
        self.q: queue.Queue = queue.Queue()
        self.received: list[dict] = []
        self.stderr = b""
        self.closed = False
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._drain_stderr, daemon=True).start()
        if initialize:
            options = {"select": list(SENTINEL_SELECT), **(init_options or {})}
            self.send(request("init", "initialize", {"capabilities": capabilities or {}, "processId": None,
                                                     "initializationOptions": options}))
            assert "result" in self.response("init")
            self.send(notification("initialized", {}))

    def _read(self) -> None:
        f = self.p.stdout
        assert f is not None
        try:
            while True:
                line = f.readline()
                if not line:
                    break
                if line.lower().startswith(b"content-length:"):
                    n = int(line.split(b":", 1)[1])
                    while f.readline() not in (b"\r\n", b""):
                        pass
                    self.q.put(json.loads(f.read(n)))
        except (OSError, ValueError) as exc:  # output that is not framed JSON: a failure the waiters report
            self.stderr += f"\n[raw client: unreadable output: {exc!r}]".encode()
        self.closed = True
        self.q.put(None)

    def _drain_stderr(self) -> None:
        f = self.p.stderr
        assert f is not None
        for line in f:
            self.stderr = (self.stderr + line)[-200_000:]

    def send(self, data: bytes) -> None:
        assert self.p.stdin is not None
        self.p.stdin.write(data)
        self.p.stdin.flush()

    def wait_for(self, predicate, timeout: float = 20.0, what: str = "a message") -> dict:
        """The first message received (from now on, or kept from before and not yet taken) that satisfies ``predicate``."""
        for i, m in enumerate(self.received):
            if predicate(m):
                return self.received.pop(i)
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            try:
                m = self.q.get(timeout=min(0.2, max(0.01, end - time.monotonic())))
            except queue.Empty:
                continue
            if m is None:
                self.q.put(None)
                raise AssertionError(f"the server closed its output while waiting for {what} "
                                     f"(exit code {self.p.poll()}); stderr: {self.stderr[-2000:]!r}")
            if predicate(m):
                return m
            self.received.append(m)
        raise AssertionError(f"no {what} within {timeout:g} s; stderr: {self.stderr[-2000:]!r}")

    def response(self, msg_id: Any, timeout: float = 20.0) -> dict:
        return self.wait_for(lambda m: m.get("id") == msg_id and "method" not in m, timeout, f"response to {msg_id!r}")

    def next_error(self, timeout: float = 20.0) -> dict:
        """The next error response with id null (a Parse error or an unidentifiable Invalid Request)."""
        return self.wait_for(lambda m: "error" in m and m.get("id") is None and "method" not in m, timeout,
                             "an error response with id null")

    def diagnostics(self, uri: str, timeout: float = 20.0) -> dict:
        return self.wait_for(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                             and m["params"]["uri"] == uri, timeout, f"diagnostics of {uri}")

    def stop(self, timeout: float = 20.0) -> int:
        """shutdown + exit; the exit code."""
        try:
            self.send(request("bye", "shutdown"))
            self.response("bye", timeout)
            self.send(notification("exit"))
            return self.p.wait(timeout)
        finally:
            self.kill()

    def kill(self) -> None:
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait()
        try:
            if self.p.stdin is not None:
                self.p.stdin.close()
        except OSError:
            pass

    def __enter__(self) -> "RawServer":
        return self

    def __exit__(self, *exc) -> None:
        self.kill()
