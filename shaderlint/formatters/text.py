"""``--output-format text`` (the default) and ``concise``.

text: ``path:line:col: CODE [severity] message`` plus a source excerpt, related locations, the
estimated impact when it changes something, the fix; then a summary. concise: the first line of
each diagnostic, then the summary. ``--quiet`` prints the diagnostics without the summary.

A diagnostic ``--fix`` would fix (safe fixes; unsafe ones too with ``--unsafe-fixes``) is marked
``[*]`` after its severity, as ruff marks fixable violations, and the summary says how many there
are: ``[*] 2 fixable with --fix (1 more with --unsafe-fixes).``

Control characters from source lines, messages and paths (an ESC would reach the terminal raw)
are shown as their Unicode control pictures (``\\x1b`` -> ``␛``), as ruff's code frames do; C1
controls become ``�``. Each is one character, so the ``^`` marks stay aligned.
"""

from __future__ import annotations

from shaderlint.diagnostics import Applicability, Diagnostic
from shaderlint.result import FileResult

_PRINTABLE = {c: chr(0x2400 + c) for c in range(0x20) if c != 0x09}
_PRINTABLE[0x7F] = "\u2421"
_PRINTABLE.update({c: "\ufffd" for c in range(0x80, 0xA0)})
_PRINTABLE[0x09] = "    "  # tabs are expanded before this table is applied; a stray one is 4 spaces


def printable(text: str) -> str:
    """``text`` with control characters replaced by visible ones (one character each)."""
    if text.isprintable():
        return text
    return text.translate(_PRINTABLE)


def plural(n: int, word: str, words: str | None = None) -> str:
    return f"{n} {word if n == 1 else (words or word + 's')}"


def percent(x: float) -> str:
    """``0.125`` -> ``12.5%``, ``1.0`` -> ``100%``, ``0.9375`` -> ``93.8%``."""
    text = f"{x * 100:.1f}"
    return (text[:-2] if text.endswith(".0") else text) + "%"


def is_fixable(d: Diagnostic, unsafe: bool) -> bool:
    """Whether ``--fix`` (with ``--unsafe-fixes`` when ``unsafe``) would apply ``d``'s fix."""
    return d.fix is not None and bool(d.fix.edits) and (unsafe or d.fix.applicability == Applicability.SAFE)


def fix_counts(results: list[FileResult], unsafe: bool) -> tuple[int, int]:
    """(fixable with ``--fix``, more with ``--unsafe-fixes``)."""
    fixable = hidden = 0
    for r in results:
        for d in r.diagnostics:
            if is_fixable(d, unsafe):
                fixable += 1
            elif is_fixable(d, True):
                hidden += 1
    return fixable, hidden


def fix_summary(fixable: int, hidden: int) -> str | None:
    more = f" ({hidden} more with --unsafe-fixes)" if hidden else ""
    if fixable:
        return f"[*] {fixable} fixable with --fix{more}."
    if hidden:
        return f"No fixes available with --fix ({hidden} with --unsafe-fixes)."
    return None


def impact_text(d: Diagnostic) -> str | None:
    """The impact line's parts that change something (nothing: None)."""
    imp = d.impact
    if imp is None:
        return None
    parts = []
    if imp.registers:
        parts.append(f"registers {imp.registers:+d}")
    if imp.stack_bytes:
        parts.append(f"stack {imp.stack_bytes:+d} B")
    before, after = imp.occupancy_before, imp.occupancy_after
    if before is not None and after is not None and percent(before) != percent(after):
        parts.append(f"occupancy {percent(before)} → {percent(after)}")
    return ", ".join(parts) or None


def head_line(d: Diagnostic, unsafe: bool, color: bool) -> str:
    mark = " [*]" if is_fixable(d, unsafe) else ""
    path, message = printable(d.path), printable(d.message)
    if color:
        c = {"error": "31", "warning": "33", "info": "36"}[d.severity.value]
        return (f"\x1b[1m{path}:{d.line}:{d.column}:\x1b[0m \x1b[{c}m{d.code}\x1b[0m "
                f"[{d.severity.value}]{mark} {message}")
    return f"{path}:{d.line}:{d.column}: {d.code} [{d.severity.value}]{mark} {message}"


def summary(results: list[FileResult], nfiles: int, unsafe: bool) -> list[str]:
    counts = {"error": 0, "warning": 0, "info": 0}
    for r in results:
        for d in r.diagnostics:
            counts[d.severity.value] += 1
    total = sum(counts.values())
    if not total:
        return [f"No problems found in {plural(nfiles, 'file')}."] + unread_summary(results)
    kinds = ", ".join(plural(n, k, "info" if k == "info" else None) for k, n in counts.items() if n)
    lines = [f"Found {plural(total, 'problem')} ({kinds}) in {plural(nfiles, 'file')}."]
    fixes = fix_summary(*fix_counts(results, unsafe))
    if fixes:
        lines.append(fixes)
    return lines + unread_summary(results)


def unread_summary(results: list[FileResult]) -> list[str]:
    """Code the front end could not read is not analysed; SL001 lists it only when selected (what
    shaderlint cannot read is mostly valid code it lacks the context for, not an error in the
    file), so the summary says how much there is."""
    regions = sum(r.unread for r in results)
    if not regions:
        return []
    nfiles = sum(1 for r in results if r.unread)
    return [f"Not analysed: {plural(regions, 'region')} in {plural(nfiles, 'file')} that shaderlint could not "
            f"read (`--extend-select SL001` lists them)."]


def format_text(results: list[FileResult], options: dict) -> str:
    quiet = options.get("quiet", False)
    concise = quiet or options.get("concise", False)
    color = options.get("color", False)
    unsafe = options.get("unsafe_fixes", False)
    out: list[str] = []
    for r in results:
        for d in r.diagnostics:
            out.append(head_line(d, unsafe, color))
            if concise:
                continue
            raw = r.source.line_text(d.line) if r.source else ""
            if raw.strip():
                gutter = str(d.line).rjust(5)
                prefix = raw[: d.column - 1].expandtabs(4)
                width = (d.end_column - d.column) if d.end_line == d.line else len(raw) - (d.column - 1)
                out.append(f"{gutter} | {printable(raw.expandtabs(4))}")
                out.append(f"{' ' * 5} | {' ' * len(prefix)}{'^' * max(1, width)}")
            for rel in d.related[:5]:
                out.append(f"      = {printable(rel.path)}:{rel.line}:{rel.column}: {printable(rel.message)}")
            if len(d.related) > 5:
                out.append(f"      = … and {len(d.related) - 5} more")
            impact = impact_text(d)
            if impact:
                how = "estimate" if d.impact.source == "estimate" else f"measured by {d.impact.source}"
                out.append(f"      = impact if fixed ({how}, {d.impact.target}): {impact}")
            if d.fix is not None:
                out.append(f"      = fix ({d.fix.applicability.value}): {printable(d.fix.title)}")
    if not quiet and options.get("summary", True):
        out.extend(summary(results, options.get("files", len(results)), unsafe))
    return "\n".join(out) + ("\n" if out else "")


def format_concise(results: list[FileResult], options: dict) -> str:
    return format_text(results, {**options, "concise": True})
