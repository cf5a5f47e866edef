"""``--format json``: one JSON array of diagnostics in the stable SPEC schema.

The text is exactly ``json.dumps(items, indent=2, ensure_ascii=False)``, built by
a small specialised writer: the standard library's pretty-printer runs in pure
Python and was the slowest part of a warm-cache run over a large tree.
"""

from __future__ import annotations

import json
from typing import Any

from shaderlint.result import FileResult

_string = json.encoder.encode_basestring  # the C version when available, as json.dumps uses


def _float(x: float) -> str:
    if x != x:
        return "NaN"
    if x in (float("inf"), float("-inf")):
        return "Infinity" if x > 0 else "-Infinity"
    return float.__repr__(x)


def _write(o: Any, pad: str, out: list[str]) -> None:
    if isinstance(o, str):
        out.append(_string(o))
    elif o is None:
        out.append("null")
    elif o is True:
        out.append("true")
    elif o is False:
        out.append("false")
    elif isinstance(o, int):
        out.append(int.__repr__(o))
    elif isinstance(o, float):
        out.append(_float(o))
    elif isinstance(o, dict):
        if not o:
            out.append("{}")
            return
        inner = pad + "  "
        first = True
        for k, v in o.items():
            out.append(("{\n" if first else ",\n") + inner + _string(k) + ": ")
            first = False
            _write(v, inner, out)
        out.append("\n" + pad + "}")
    elif isinstance(o, (list, tuple)):
        if not o:
            out.append("[]")
            return
        inner = pad + "  "
        first = True
        for v in o:
            out.append(("[\n" if first else ",\n") + inner)
            first = False
            _write(v, inner, out)
        out.append("\n" + pad + "]")
    else:  # anything else: exactly what json.dumps does (or its TypeError)
        out.append(json.dumps(o, ensure_ascii=False))


def dumps(o: Any) -> str:
    """``json.dumps(o, indent=2, ensure_ascii=False)`` for JSON-native values, faster."""
    out: list[str] = []
    _write(o, "", out)
    return "".join(out)


def format_json(results: list[FileResult], options: dict) -> str:
    items = [d.to_json() for r in results for d in r.diagnostics]
    return dumps(items) + "\n"
