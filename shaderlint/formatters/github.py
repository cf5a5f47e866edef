"""``--format github``: GitHub Actions workflow commands, one annotation per diagnostic.

``::warning file=P,line=L,endLine=L2,col=C,endColumn=C2,title=T::MSG`` with
``error``/``warning``/``notice`` by severity. Messages escape ``%``, CR and LF;
property values also escape ``:`` and ``,``. Columns are given only when the
range is on one line (GitHub ignores them otherwise). Paths are relative to
``options["root"]`` (the current directory, normally the checkout).
"""

from __future__ import annotations

import os

from shaderlint.result import FileResult

COMMANDS = {"error": "error", "warning": "warning", "info": "notice"}


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _path(path: str, root: str) -> str:
    absolute = os.path.abspath(path)
    rel = os.path.relpath(absolute, root)
    return (absolute if rel.startswith("..") else rel).replace(os.sep, "/")


def format_github(results: list[FileResult], options: dict) -> str:
    root = os.path.abspath(options.get("root") or os.getcwd())
    out: list[str] = []
    for r in results:
        for d in r.diagnostics:
            props = [("file", _path(d.path, root)), ("line", str(d.line)), ("endLine", str(d.end_line))]
            if d.line == d.end_line:
                props += [("col", str(d.column)), ("endColumn", str(max(d.end_column, d.column)))]
            props.append(("title", f"{d.code} {d.name}"))
            head = ",".join(f"{k}={escape_property(v)}" for k, v in props)
            out.append(f"::{COMMANDS[d.severity.value]} {head}::{escape_data(d.message)}")
    text = "\n".join(out) + ("\n" if out else "")
    if options.get("statistics_text"):
        text += options["statistics_text"]
    return text
