"""``path:line:col: CODE [severity] message`` plus a source excerpt (``--quiet``: one line each)."""

from __future__ import annotations

from shaderlint.engine import FileResult


def format_text(results: list[FileResult], options: dict) -> str:
    quiet = options.get("quiet", False)
    color = options.get("color", False)
    out: list[str] = []
    counts = {"error": 0, "warning": 0, "info": 0}
    for r in results:
        for d in r.diagnostics:
            counts[d.severity.value] += 1
            head = f"{d.path}:{d.line}:{d.column}: {d.code} [{d.severity.value}] {d.message}"
            if color:
                c = {"error": "31", "warning": "33", "info": "36"}[d.severity.value]
                head = f"\x1b[1m{d.path}:{d.line}:{d.column}:\x1b[0m \x1b[{c}m{d.code}\x1b[0m [{d.severity.value}] {d.message}"
            out.append(head)
            if quiet:
                continue
            text = r.source.line_text(d.line).expandtabs(4) if r.source else ""
            if text.strip():
                gutter = str(d.line).rjust(5)
                raw = r.source.line_text(d.line)
                prefix = raw[: d.column - 1].expandtabs(4)
                width = (d.end_column - d.column) if d.end_line == d.line else len(raw) - (d.column - 1)
                out.append(f"{gutter} | {text}")
                out.append(f"{' ' * 5} | {' ' * len(prefix)}{'^' * max(1, width)}")
            for rel in d.related[:5]:
                out.append(f"      = {rel.path}:{rel.line}:{rel.column}: {rel.message}")
            if len(d.related) > 5:
                out.append(f"      = … and {len(d.related) - 5} more")
            if d.impact is not None:
                parts = []
                if d.impact.registers is not None:
                    parts.append(f"registers {d.impact.registers:+d}")
                if d.impact.stack_bytes is not None:
                    parts.append(f"stack {d.impact.stack_bytes:+d} B")
                if d.impact.occupancy_before is not None and d.impact.occupancy_after is not None:
                    parts.append(f"occupancy {d.impact.occupancy_before:.0%} → {d.impact.occupancy_after:.0%}")
                if parts:
                    out.append(f"      = impact if fixed (estimate, {d.impact.target}): " + ", ".join(parts))
            if d.fix is not None:
                out.append(f"      = fix ({d.fix.applicability.value}): {d.fix.title}")
    total = sum(counts.values())
    if not quiet and options.get("summary", True):
        if total:
            out.append(f"Found {total} problem{'s' if total != 1 else ''} "
                       f"({counts['error']} errors, {counts['warning']} warnings, {counts['info']} info) "
                       f"in {options.get('files', len(results))} files.")
        else:
            out.append(f"No problems found in {options.get('files', len(results))} files.")
    return "\n".join(out) + ("\n" if out else "")
