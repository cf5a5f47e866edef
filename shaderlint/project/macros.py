"""The macros a file defines: ``#define`` / ``#undef`` lines in the branches the build reads.

:func:`scan_macros` walks a file's ``#define`` and ``#undef`` directives in file order, skipping the
branches :func:`shaderlint.languages.conditions.dead_regions` finds dead for the given predefined
macros (``-D`` flags, ``__CUDA_ARCH__``). A branch whose condition is unknown is read, as the rest
of the analysis does: a name defined in both arms of an undecided ``#if … #else`` keeps the last
definition in file order. Directives inside comments and string literals, and lines continuing a
previous line's backslash splice, are not directives.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from types import MappingProxyType

from shaderlint.model.source import Source


@dataclass(frozen=True)
class MacroDef:
    """One ``#define``: ``params`` None for an object-like macro, the parameter names otherwise
    (``"..."`` for ``__VA_ARGS__``; GNU's ``args...`` is kept as written); ``body`` with line splices
    removed and each comment replaced by one space, stripped; ``line`` / ``column`` 1-based, of the
    macro's name (columns in characters)."""

    name: str
    params: tuple[str, ...] | None
    body: str
    path: str
    line: int
    column: int

    @property
    def object_like(self) -> bool:
        return self.params is None


_DEFINE_OR_UNDEF = re.compile(rb"^[ \t]*#[ \t]*(define|undef)\b[ \t]*([A-Za-z_]\w*)?", re.M)
_PARAMS = re.compile(r"\(([^()]*)\)")
_LINE_REST = re.compile(rb"(?:[^\n\\]|\\\r?\n|\\)*")


def scan_macros(path: str, data: bytes, predefined=(), source: Source | None = None,
                dead: list[tuple[int, int]] | None = None) -> dict[str, MacroDef]:
    """The macros ``data`` (the file at ``path``) defines in its live branches: name -> its last
    :class:`MacroDef`; an ``#undef`` removes the name. ``predefined``: (name, body | None | OPAQUE)
    pairs, as :func:`shaderlint.languages.conditions.predefined` returns, that decide ``#if``
    branches (they are not in the result). ``source`` and ``dead``: the :class:`Source` of ``data``
    and its dead regions for ``predefined``, when the caller has them already."""
    if b"#" not in data:
        return {}
    from shaderlint.languages.base import _continues_line, scan_directives
    from shaderlint.languages.conditions import dead_regions

    if source is None:
        source = Source(path, data)
    if dead is None:
        dead = dead_regions(source, tuple(predefined))
    dead_starts = [s for s, _ in dead]
    out: dict[str, MacroDef] = {}
    for m in scan_directives(source, _DEFINE_OR_UNDEF):
        at = m.start(1)
        if source.in_comment_or_string(at) or _continues_line(data, m.start()):
            continue
        i = bisect.bisect_right(dead_starts, at) - 1
        if i >= 0 and dead[i][0] <= at < dead[i][1]:
            continue
        if m.group(2) is None:
            continue  # `#define` with no name: the compiler rejects it
        name = m.group(2).decode("ascii")
        if m.group(1) == b"undef":
            out.pop(name, None)
            continue
        pos = m.end()
        params: tuple[str, ...] | None = None
        if data[pos:pos + 1] == b"(":  # function-like only when `(` follows the name directly
            rest = _LINE_REST.match(data, pos).end()
            text = source.code_text(pos, rest)
            p = _PARAMS.match(text)
            if p is None:
                continue  # unbalanced parameter list: not a definition the compiler accepts
            params = tuple(w.strip() for w in p.group(1).split(",")) if p.group(1).strip() else ()
            body = text[p.end():].strip()
        else:
            rest = _LINE_REST.match(data, pos).end()
            body = source.code_text(pos, rest)
        line, column = source.position(m.start(2))
        out[name] = MacroDef(name, params, body, path, line, column)
    return out


# ---- the header macros of the file being masked ---------------------------------------------------------

_NONE: Mapping[str, MacroDef] = MappingProxyType({})
_HEADER_MACROS: ContextVar[Mapping[str, MacroDef]] = ContextVar("shaderlint_header_macros", default=_NONE)


def header_macros() -> Mapping[str, MacroDef]:
    """The macros the included headers define, for the file the front end is masking now (empty when
    no context was given): the masking passes that ask "is this name a macro the file defines?" ask
    this too, after the file's own definitions (a name the file defines or undefines keeps its own)."""
    return _HEADER_MACROS.get()


@contextmanager
def using_header_macros(macros: Mapping[str, MacroDef] | None) -> Iterator[None]:
    """Make ``macros`` what :func:`header_macros` returns inside the block (this thread or task only)."""
    token = _HEADER_MACROS.set(macros if macros else _NONE)
    try:
        yield
    finally:
        _HEADER_MACROS.reset(token)


__all__ = ["MacroDef", "header_macros", "scan_macros", "using_header_macros"]
