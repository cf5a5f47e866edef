"""``--format json``: one JSON array of diagnostics in the stable SPEC schema."""

from __future__ import annotations

import json

from shaderlint.engine import FileResult


def format_json(results: list[FileResult], options: dict) -> str:
    items = [d.to_json() for r in results for d in r.diagnostics]
    return json.dumps(items, indent=2, ensure_ascii=False) + "\n"
