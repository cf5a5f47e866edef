"""``--statistics``: how many diagnostics each rule produced.

:func:`statistics` gives the rows (most frequent first, then by code);
:func:`format_statistics_text` renders them as a table with a total line. The
CLI prints the table for ``text`` and ``concise`` (instead of the diagnostics) and after the
annotations for ``github``, a JSON array of the rows for ``json``, and stores
the rows in ``runs[0].properties.statistics`` for ``sarif``, so that every
machine-readable output stays valid.
"""

from __future__ import annotations

import json
from collections import Counter

from shaderlint.result import FileResult


def statistics(results: list[FileResult], unsafe: bool = False) -> list[dict]:
    """Rows per code; ``fixable`` counts what ``--fix`` would fix (safe fixes, and unsafe ones too
    when ``unsafe``, i.e. with ``--unsafe-fixes``)."""
    from shaderlint.formatters.text import is_fixable

    counts: Counter = Counter()
    fixable: Counter = Counter()
    meta: dict[str, tuple[str, str]] = {}
    for r in results:
        for d in r.diagnostics:
            counts[d.code] += 1
            meta.setdefault(d.code, (d.name, d.severity.value))
            if is_fixable(d, unsafe):
                fixable[d.code] += 1
    return [
        {"code": code, "name": meta[code][0], "severity": meta[code][1], "count": n, "fixable": fixable[code]}
        for code, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    ]


def format_statistics_text(rows: list[dict]) -> str:
    if not rows:
        return "No problems found.\n"
    width = max(len(r["name"]) for r in rows)
    lines = []
    marks = any(r["fixable"] for r in rows)  # the [*] column only when something is fixable
    for r in rows:
        mark = ("[*] " if r["fixable"] else "    ") if marks else ""
        fix = f"  ({r['fixable']} fixable)" if 0 < r["fixable"] < r["count"] else ""
        lines.append(f"{r['count']:6d}  {r['code']}  {mark}{r['name']:<{width}}  [{r['severity']}]{fix}")
    total = sum(r["count"] for r in rows)
    lines.append(f"{total:6d}  total")
    return "\n".join(lines) + "\n"


def format_statistics_json(rows: list[dict]) -> str:
    return json.dumps(rows, indent=2) + "\n"
