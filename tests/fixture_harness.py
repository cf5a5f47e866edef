"""The fixture convention (SPEC "Fixture convention"), shared by the fixture tests.

- ``// expect: SL101`` (or ``SL101, SL201``) at the end of a line: that line must
  produce exactly those codes (a code listed twice must be produced twice).
- ``// todo-expect: SL101``: a known miss; the code must *not* be produced yet
  (when it starts to be, turn it into ``expect``).
- ``// rules: SL101 SL201`` in the first lines scopes the file to those rules
  (SL001 is always checked: fixtures must parse). Without it every rule counts.
- ``// target: sm_75`` in the first lines selects the target profile.
- ``// defines: FUSED N=4`` in the first lines sets the ``defines`` setting (the build's ``-D`` flags).
- ``// compiler: ptxas`` in the first lines sets the ``compiler`` setting; such a fixture is skipped
  where nvcc is not installed (its expectations are the compiler's figures).
- A sibling ``name.fixed.<ext>`` holds the expected text after applying every
  fix (safe and unsafe); applying the fixes again must change nothing.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from shaderlint.config import Settings
from shaderlint.engine import lint_source

FIXTURES = Path(__file__).parent / "fixtures"
_EXPECT = re.compile(r"//\s*(todo-expect|expect):\s*([A-Z0-9, ]+?)\s*(?:\*/)?\s*$")
_RULES = re.compile(r"//\s*rules:\s*([A-Z0-9 ,]+)")
_TARGET = re.compile(r"//\s*target:\s*([\w.-]+)")
_DEFINES = re.compile(r"//\s*defines:\s*(.+?)\s*$")
_COMPILER = re.compile(r"//\s*compiler:\s*(none|ptxas|auto)\b")


def fixture_files() -> list[Path]:
    out = []
    for p in sorted(FIXTURES.rglob("*")):
        if p.is_file() and ".fixed." not in p.name and p.suffix not in (".md", ".toml", ".txt"):
            out.append(p)
    return out


@dataclass
class Expectations:
    expected: dict[int, Counter]
    todo: dict[int, set[str]]
    rules: tuple[str, ...]
    target: str | None
    defines: tuple[str, ...] = ()
    compiler: str = "none"


def read_expectations(text: str) -> Expectations:
    expected: dict[int, Counter] = {}
    todo: dict[int, set[str]] = {}
    rules: tuple[str, ...] = ()
    target = None
    defines: tuple[str, ...] = ()
    compiler = "none"
    for i, line in enumerate(text.splitlines(), start=1):
        if i <= 15:
            m = _RULES.search(line)
            if m and not rules:
                rules = tuple(c for c in re.split(r"[ ,]+", m.group(1).strip()) if c)
            m = _TARGET.search(line)
            if m and target is None:
                target = m.group(1)
            m = _DEFINES.search(line)
            if m and not defines:
                defines = tuple(m.group(1).split())
            m = _COMPILER.search(line)
            if m and compiler == "none":
                compiler = m.group(1)
        m = _EXPECT.search(line)
        if m:
            codes = [c for c in re.split(r"[ ,]+", m.group(2).strip()) if c]
            if m.group(1) == "expect":
                expected[i] = Counter(codes)
            else:
                todo[i] = set(codes)
    return Expectations(expected, todo, rules, target, defines, compiler)


def fixture_settings(exp: Expectations) -> Settings:
    select = tuple(exp.rules) + ("SL001",) if exp.rules else ("ALL",)
    return Settings(select=select, target=exp.target, defines=exp.defines, compiler=exp.compiler)


def needs_missing_compiler(exp: Expectations) -> bool:
    """True when the fixture's expectations come from a compiler this machine does not have."""
    if exp.compiler == "none":
        return False
    from shaderlint.estimate.ptxas import ptxas_available

    return not ptxas_available()


def check_fixture(path: Path) -> list[str]:
    """Return a list of human-readable mismatches (empty = pass)."""
    data = path.read_bytes()
    exp = read_expectations(data.decode("utf-8", "replace"))
    result = lint_source(str(path), data, fixture_settings(exp))
    got: dict[int, Counter] = {}
    for d in result.diagnostics:
        got.setdefault(d.line, Counter())[d.code] += 1
    problems = []
    for line in sorted(set(got) | set(exp.expected)):
        want = exp.expected.get(line, Counter())
        have = got.get(line, Counter())
        if want != have:
            msgs = [f"{d.code}: {d.message}" for d in result.diagnostics if d.line == line]
            problems.append(f"{path.name}:{line}: expected {sorted(want.elements()) or 'nothing'}, "
                            f"got {sorted(have.elements()) or 'nothing'} {msgs}")
    for line, codes in exp.todo.items():
        if codes & set(got.get(line, Counter())):
            problems.append(f"{path.name}:{line}: todo-expect {sorted(codes)} is now reported: make it 'expect'")
    return problems
