"""Facts the linter cannot see, as the user states them: ``// shaderlint: key=value``.

A fact applies to a kernel when it is written directly above it
(:attr:`Function.facts`), to the whole file when it is written before the first
function, and to a path when configuration says so (``RuleContext.facts``).
The most specific one wins.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from shaderlint.model.build import ANNOTATION

if TYPE_CHECKING:
    from shaderlint.model.build import FileModel
    from shaderlint.model.kernel import Function


def file_facts(model: "FileModel") -> dict[str, str]:
    """``// shaderlint: key=value`` annotations before the first function of the file."""
    cached = getattr(model, "_file_facts", None)
    if cached is not None:
        return cached
    first = min((((f.outer or f.node).start_byte) for f in model.functions), default=len(model.source.data))
    out: dict[str, str] = dict(model.facts)
    for c in model.source.comments:
        if c.end > first:
            continue
        for mm in ANNOTATION.finditer(c.text):
            key, value = mm.group(1), mm.group(2)
            if not key.startswith("ignore"):
                out.setdefault(key, value)
    model._file_facts = out
    return out


def fact(model: "FileModel", function: "Function | None", key: str,
         config: dict[str, str] | None = None) -> str | None:
    """The value of ``key`` for ``function``: its own annotation, else the file's, else configuration."""
    if function is not None and key in function.facts:
        return function.facts[key]
    value = file_facts(model).get(key)
    if value is not None:
        return value
    if config and key in config:
        return str(config[key])
    return None
