"""Baselines: accept today's findings, gate CI on new ones.

``--write-baseline FILE`` records every current finding as
``{"code", "path", "kernel", "fingerprint", "count"}`` with ``path`` relative to
the baseline file's directory (so the file can be committed and used from any
working directory). ``--baseline FILE`` drops findings that match an entry by
code, path, kernel and fingerprint; an entry absorbs at most ``count``
occurrences, so a second copy of a baselined problem is still reported.

``Diagnostic.fingerprint`` hashes the code, the kernel and the flagged line's
whitespace-normalized text, not its line number: edits that only move a finding
keep it baselined; editing the flagged line itself makes it new.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, replace

from shaderlint import __version__
from shaderlint.diagnostics import Diagnostic
from shaderlint.result import FileResult

FORMAT = 1

Key = tuple[str, str, str | None, str]  # code, path, kernel, fingerprint


class BaselineError(Exception):
    """A baseline file that cannot be read or written (exit code 2)."""


def _rel(path: str, base_dir: str) -> str:
    return os.path.relpath(os.path.abspath(path), base_dir).replace(os.sep, "/")


def key_of(d: Diagnostic, base_dir: str) -> Key:
    return (d.code, _rel(d.path, base_dir), d.kernel, d.fingerprint)


def baseline_entries(diagnostics: Iterable[Diagnostic], base_dir: str) -> list[dict]:
    counts = Counter(key_of(d, base_dir) for d in diagnostics)
    return [
        {"code": code, "path": path, "kernel": kernel, "fingerprint": fp, "count": n}
        for (code, path, kernel, fp), n in sorted(counts.items(), key=lambda kv: (kv[0][1], kv[0][0],
                                                                                  kv[0][2] or "", kv[0][3]))
    ]


def write_baseline(path: str, results: Iterable[FileResult]) -> int:
    """Write every diagnostic in ``results``; returns how many findings were recorded."""
    base_dir = os.path.dirname(os.path.abspath(path))
    diags = [d for r in results for d in r.diagnostics]
    doc = {"shaderlint_baseline": FORMAT, "version": __version__, "findings": baseline_entries(diags, base_dir)}
    try:
        with open(path, "w", encoding="utf-8", newline="\n") as fh:
            json.dump(doc, fh, indent=2, ensure_ascii=False)
            fh.write("\n")
    except OSError as e:
        raise BaselineError(f"cannot write baseline {path}: {e.strerror or e}") from e
    return len(diags)


@dataclass
class Baseline:
    base_dir: str
    counts: Counter

    def filter(self, results: list[FileResult]) -> tuple[list[FileResult], int]:
        """Results without the baselined findings, and how many were dropped."""
        left = Counter(self.counts)
        out: list[FileResult] = []
        dropped = 0
        for r in results:
            kept = []
            for d in r.diagnostics:
                k = key_of(d, self.base_dir)
                if left[k] > 0:
                    left[k] -= 1
                    dropped += 1
                else:
                    kept.append(d)
            out.append(replace(r, diagnostics=kept) if len(kept) != len(r.diagnostics) else r)
        return out, dropped


def load_baseline(path: str) -> Baseline:
    try:
        with open(path, encoding="utf-8") as fh:
            doc = json.load(fh)
    except OSError as e:
        raise BaselineError(f"cannot read baseline {path}: {e.strerror or e}") from e
    except ValueError as e:
        raise BaselineError(f"{path}: not a shaderlint baseline (invalid JSON: {e})") from e
    if not isinstance(doc, dict) or not isinstance(doc.get("findings"), list):
        raise BaselineError(f"{path}: not a shaderlint baseline (no \"findings\" list)")
    if doc.get("shaderlint_baseline", FORMAT) != FORMAT:
        raise BaselineError(f"{path}: baseline format {doc.get('shaderlint_baseline')!r} is not supported "
                            f"(expected {FORMAT}); write it again with --write-baseline")
    counts: Counter = Counter()
    for i, e in enumerate(doc["findings"]):
        try:
            code, rel, kernel, fp = e["code"], e["path"], e.get("kernel"), e["fingerprint"]
            n = int(e.get("count", 1))
            if not all(isinstance(x, str) for x in (code, rel, fp)) or not (kernel is None or isinstance(kernel, str)):
                raise TypeError
        except (KeyError, TypeError, ValueError, AttributeError):
            raise BaselineError(f"{path}: finding #{i + 1} needs string \"code\", \"path\", \"fingerprint\", "
                                f"an optional \"kernel\" and an integer \"count\"") from None
        counts[(code, rel, kernel, fp)] += n
    return Baseline(os.path.dirname(os.path.abspath(path)), counts)
