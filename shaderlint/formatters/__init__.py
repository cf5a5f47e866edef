"""Output formats. Each formatter turns file results into text; none of them checks anything."""

from __future__ import annotations

from collections.abc import Callable

from shaderlint.result import FileResult

Formatter = Callable[[list[FileResult], dict], str]


def get_formatter(name: str) -> Formatter:
    if name == "text":
        from shaderlint.formatters.text import format_text
        return format_text
    if name == "concise":
        from shaderlint.formatters.text import format_concise
        return format_concise
    if name == "json":
        from shaderlint.formatters.json import format_json
        return format_json
    if name == "sarif":
        from shaderlint.formatters.sarif import format_sarif
        return format_sarif
    if name == "github":
        from shaderlint.formatters.github import format_github
        return format_github
    raise KeyError(name)


FORMATS = ("text", "concise", "json", "sarif", "github")
