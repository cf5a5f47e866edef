"""Findings on the real-code corpus, their judgements, and the precision table.

Pure functions only (no linting, no downloads), so tests can feed them synthetic data.

A finding is keyed by ``(package, path, code, kernel, fingerprint, n)``: the
package's name without its version, the path inside the package, the rule code,
the kernel (``-`` when none), the baseline fingerprint of shaderlint
(``engine.fingerprint``: code, kernel and the flagged line's whitespace-normalized
text) and ``n``, the finding's rank (1, 2, ...) among the findings of the file that
share the first five (in line order: three ``__syncthreads();`` flagged in one
kernel are 1, 2 and 3). No line number: a judgement survives edits that only move
the finding, and a version bump of the package that leaves the flagged lines alone.

judged.tsv holds one judgement per row: the key's six columns, then ``verdict``
(true, false or debatable) and a one-line ``reason``. Lines starting with '#'
are comments; the first other line is the header.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace

VERDICTS = ("true", "false", "debatable")
COLUMNS = ("package", "path", "code", "kernel", "fingerprint", "n", "verdict", "reason")

Key = tuple[str, str, str, str, str, str]  # package, path, code, kernel ('-' for none), fingerprint, n


@dataclass(frozen=True)
class Finding:
    package: str
    path: str  # inside the package
    code: str
    kernel: str  # '-' when the finding has no kernel
    fingerprint: str
    line: int = 0
    message: str = ""
    n: int = 1  # rank among the file's findings with the same (package, path, code, kernel, fingerprint)
    column: int = 0

    @property
    def key(self) -> Key:
        return (self.package, self.path, self.code, self.kernel, self.fingerprint, str(self.n))

    @property
    def base_key(self) -> tuple[str, str, str, str, str]:
        return (self.package, self.path, self.code, self.kernel, self.fingerprint)


def rank(findings: list[Finding]) -> list[Finding]:
    """The findings with ``n`` set: 1, 2, ... in (line, column) order among those sharing a base key."""
    seen: Counter = Counter()
    ranked = {}
    for i in sorted(range(len(findings)), key=lambda i: (findings[i].base_key, findings[i].line,
                                                           findings[i].column)):
        f = findings[i]
        seen[f.base_key] += 1
        ranked[i] = replace(f, n=seen[f.base_key])
    return [ranked[i] for i in range(len(findings))]


@dataclass(frozen=True)
class Judgement:
    key: Key
    verdict: str
    reason: str
    lineno: int = 0  # in judged.tsv


class JudgedError(ValueError):
    pass


def parse_judged(text: str, where: str = "judged.tsv") -> dict[Key, Judgement]:
    """Judgements by key; raises JudgedError on a malformed row or a key judged twice."""
    out: dict[Key, Judgement] = {}
    header_seen = False
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.rstrip("\r")
        if not line.strip() or line.startswith("#"):
            continue
        cols = line.split("\t")
        if not header_seen:
            if tuple(c.strip() for c in cols) != COLUMNS:
                raise JudgedError(f"{where}:{n}: header must be {' '.join(COLUMNS)} (tab-separated)")
            header_seen = True
            continue
        if len(cols) != len(COLUMNS):
            raise JudgedError(f"{where}:{n}: {len(cols)} columns, expected {len(COLUMNS)}")
        package, path, code, kernel, fp, rank_, verdict, reason = (c.strip() for c in cols)
        if verdict not in VERDICTS:
            raise JudgedError(f"{where}:{n}: verdict {verdict!r} is not one of {', '.join(VERDICTS)}")
        if not all((package, path, code, kernel, fp, reason)):
            raise JudgedError(f"{where}:{n}: empty column (write '-' for no kernel; a reason is required)")
        if not rank_.isdigit() or int(rank_) < 1:
            raise JudgedError(f"{where}:{n}: n must be a positive integer, not {rank_!r}")
        key = (package, path, code, kernel, fp, str(int(rank_)))
        if key in out:
            raise JudgedError(f"{where}:{n}: judged twice (first at line {out[key].lineno})")
        out[key] = Judgement(key, verdict, reason, n)
    return out


def format_row(f: Finding, verdict: str = "", reason: str = "") -> str:
    return "\t".join((*f.key, verdict, reason))


@dataclass
class RuleRow:
    code: str
    default_on: bool
    findings: int = 0
    true: int = 0
    false: int = 0
    debatable: int = 0

    @property
    def judged(self) -> int:
        return self.true + self.false + self.debatable

    @property
    def unjudged(self) -> int:
        return self.findings - self.judged

    @property
    def precision(self) -> float | None:
        """true / (true + false); debatable findings count in neither."""
        decided = self.true + self.false
        return self.true / decided if decided else None

    @property
    def debatable_share(self) -> float | None:
        return self.debatable / self.judged if self.judged else None

    def add(self, other: "RuleRow") -> None:
        self.findings += other.findings
        self.true += other.true
        self.false += other.false
        self.debatable += other.debatable

    def as_dict(self) -> dict:
        return {"code": self.code, "default": self.default_on, "findings": self.findings, "true": self.true,
                "false": self.false, "debatable": self.debatable, "unjudged": self.unjudged,
                "precision": self.precision, "debatable_share": self.debatable_share}


@dataclass
class Table:
    rows: list[RuleRow]
    default_total: RuleRow
    optin_total: RuleRow
    stale: list[Judgement] = field(default_factory=list)  # judgements no current finding matches

    def as_dict(self) -> dict:
        return {"rules": [r.as_dict() for r in self.rows], "default": self.default_total.as_dict(),
                "opt_in": self.optin_total.as_dict(),
                "stale_judgements": [{"key": list(j.key), "verdict": j.verdict, "line": j.lineno}
                                     for j in self.stale]}


def precision_table(findings: list[Finding], judged: dict[Key, Judgement],
                    default_on: dict[str, bool]) -> Table:
    """Per rule: findings and how many of them are judged true/false/debatable.

    ``default_on`` maps a code to whether the rule runs by default; a code it
    does not know is counted as default (a rule the working tree lacks).
    """
    rows: dict[str, RuleRow] = {}
    for f in findings:
        row = rows.get(f.code)
        if row is None:
            row = rows[f.code] = RuleRow(f.code, default_on.get(f.code, True))
        row.findings += 1
        j = judged.get(f.key)
        if j is not None:
            setattr(row, j.verdict, getattr(row, j.verdict) + 1)
    default_total, optin_total = RuleRow("default", True), RuleRow("opt-in", False)
    for row in rows.values():
        (default_total if row.default_on else optin_total).add(row)
    seen = {f.key for f in findings}
    stale = sorted((j for k, j in judged.items() if k not in seen), key=lambda j: j.lineno)
    ordered = sorted(rows.values(), key=lambda r: (not r.default_on, r.code))
    return Table(ordered, default_total, optin_total, stale)


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def render_table(table: Table) -> str:
    head = f"{'rule':<8} {'findings':>8} {'true':>5} {'false':>5} {'debat.':>6} {'precision':>9} {'unjudged':>8}"
    lines = []
    for title, want, total in (("default rules", True, table.default_total),
                               ("opt-in rules", False, table.optin_total)):
        rows = [r for r in table.rows if r.default_on == want]
        lines.append(f"{title}:")
        lines.append(head)
        for r in rows + [total]:
            name = r.code if r is not total else "total"
            lines.append(f"{name:<8} {r.findings:>8} {r.true:>5} {r.false:>5} {r.debatable:>6} "
                         f"{_pct(r.precision):>9} {r.unjudged:>8}")
        lines.append("")
    d = table.default_total
    lines.append(f"overall precision over default findings: {_pct(d.precision)} "
                 f"({d.true} true / {d.true + d.false} decided; {d.judged} of {d.findings} judged), "
                 f"debatable share {_pct(d.debatable_share)}")
    if table.stale:
        lines.append(f"{len(table.stale)} judgement(s) match no current finding (judged.tsv lines "
                     + ", ".join(str(j.lineno) for j in table.stale[:20]) + (" ..." if len(table.stale) > 20 else "")
                     + ")")
    return "\n".join(lines)


def diff_findings(before: list[Finding], after: list[Finding]) -> tuple[list[Finding], list[Finding]]:
    """(gained, lost): findings in ``after`` and not ``before``, and the reverse.

    Compared by base key (no rank) with multiplicity: when a file gains a second
    finding with the same text, one of the two is reported as gained, not both.
    """
    left = Counter(f.base_key for f in before)
    gained = []
    for f in after:
        if left[f.base_key] > 0:
            left[f.base_key] -= 1
        else:
            gained.append(f)
    right = Counter(f.base_key for f in after)
    lost = []
    for f in before:
        if right[f.base_key] > 0:
            right[f.base_key] -= 1
        else:
            lost.append(f)
    return gained, lost
