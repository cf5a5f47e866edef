"""A dependency-free stand-in for `shaderlint lsp`, for checking the e2e harness itself.

It speaks just enough LSP over stdio to publish one SL201 warning on every
line containing an integer division by `n` (`/ n`). The VS Code extension is
pointed at it with `"shaderlint.path": ["python3", ".../stub_server.py"]`;
like the real server it accepts (and ignores) the `lsp` and `--stdio` args.
"""

from __future__ import annotations

import json
import re
import sys

DIVISION = re.compile(r"/\s*n\b")


def read_message(stream) -> dict | None:
    length = None
    while True:
        line = stream.readline()
        if not line:
            return None
        line = line.strip()
        if not line:
            break
        name, _, value = line.decode("ascii").partition(":")
        if name.lower() == "content-length":
            length = int(value)
    if length is None:
        return None
    return json.loads(stream.read(length))


def send(message: dict) -> None:
    body = json.dumps({"jsonrpc": "2.0", **message}).encode()
    sys.stdout.buffer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    sys.stdout.buffer.flush()


def diagnostics(text: str) -> list[dict]:
    out = []
    for line_no, line in enumerate(text.splitlines()):
        m = DIVISION.search(line)
        if m:
            out.append(
                {
                    "range": {
                        "start": {"line": line_no, "character": m.start()},
                        "end": {"line": line_no, "character": m.end()},
                    },
                    "severity": 2,
                    "code": "SL201",
                    "source": "shaderlint",
                    "message": "integer division by a non-constant (stub server)",
                }
            )
    return out


def main() -> int:
    stdin = sys.stdin.buffer
    while True:
        msg = read_message(stdin)
        if msg is None:
            return 0
        method = msg.get("method")
        params = msg.get("params") or {}
        if method == "initialize":
            sys.stderr.write(f"stub: initializationOptions={json.dumps(params.get('initializationOptions'))}\n")
            send({"id": msg["id"], "result": {"capabilities": {"textDocumentSync": 1}, "serverInfo": {"name": "shaderlint-stub"}}})
        elif method == "shutdown":
            send({"id": msg["id"], "result": None})
        elif method == "exit":
            return 0
        elif method in ("textDocument/didOpen", "textDocument/didChange"):
            doc = params["textDocument"]
            text = doc["text"] if method.endswith("didOpen") else params["contentChanges"][-1]["text"]
            send(
                {
                    "method": "textDocument/publishDiagnostics",
                    "params": {"uri": doc["uri"], "version": doc.get("version"), "diagnostics": diagnostics(text)},
                }
            )
        elif "id" in msg and method is not None:
            send({"id": msg["id"], "error": {"code": -32601, "message": f"unsupported: {method}"}})


if __name__ == "__main__":
    sys.exit(main())
