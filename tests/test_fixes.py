"""Applying fixes (shaderlint.fixes) and the CLI's --fix / --unsafe-fixes / --diff."""

from __future__ import annotations

import os
import stat

import pytest

from shaderlint.cli import main
from shaderlint.config import Settings
from shaderlint.diagnostics import Applicability, Diagnostic, Edit, Fix, Severity
from shaderlint.engine import lint_source
from shaderlint.fixes import apply_fixes, apply_edits, fix_source, select_edits

METAL = b"""#include <metal_stdlib>
using namespace metal;

kernel void tone(device half* px [[buffer(0)]],
                 uint gid [[thread_position_in_grid]],
                 uint lid [[thread_index_in_threadgroup]]) {
    half h = px[gid];
    half a = h * 0.5;  // keep this comment
    half b = h * 0.1;
    px[gid] = a + b + half(lid);  // shaderlint: ignore[SL202]
}
"""
# The one safe fix: SL002 removes the unused suppression. SL202's literal suffixes (half arithmetic)
# and SL301's narrower type are unsafe.
SAFE_FIXED = METAL.replace(b"  // shaderlint: ignore[SL202]", b"")
ALL_FIXED = SAFE_FIXED.replace(b"h * 0.5;", b"h * 0.5h;").replace(b"h * 0.1;", b"h * 0.1h;") \
    .replace(b"uint lid", b"ushort lid")
SELECT = ("SL002", "SL202", "SL301")


def diag(start: int, end: int, edits, code: str = "SL202", safe: bool = True, line: int = 1) -> Diagnostic:
    fix = Fix("t", Applicability.SAFE if safe else Applicability.UNSAFE, tuple(Edit(*e) for e in edits))
    return Diagnostic(path="x.metal", code=code, name="n", severity=Severity.WARNING, message="m", start=start,
                      end=end, line=line, column=1, end_line=line, end_column=1, fix=fix)


def lint(data: bytes, path: str = "x.metal"):
    return lint_source(path, data, Settings(select=SELECT))


# ---- applying edits ------------------------------------------------------------------------------
def test_overlapping_fixes_keep_the_first_and_skip_the_rest():
    data = b"abcdefgh"
    d1 = diag(0, 1, [(1, 4, "X")])
    d2 = diag(2, 3, [(3, 5, "Y")])  # overlaps d1
    d3 = diag(6, 7, [(6, 7, "Z")])
    edits, fixed = select_edits(data, [d2, d3, d1], unsafe=False)
    assert fixed == [d1, d3]
    assert apply_edits(data, edits) == b"aXefZh"


def test_identical_edits_of_two_fixes_are_applied_once():
    data = b"uchar c;"
    d1, d2 = diag(0, 1, [(0, 5, "ushort")]), diag(3, 4, [(0, 5, "ushort")])
    edits, fixed = select_edits(data, [d1, d2], unsafe=True)
    assert apply_edits(data, edits) == b"ushort c;" and len(fixed) == 2


def test_two_insertions_at_one_point_are_not_both_taken():
    d1, d2 = diag(0, 0, [(2, 2, "X")]), diag(1, 1, [(2, 2, "Y")])
    edits, fixed = select_edits(b"abcd", [d1, d2], unsafe=False)
    assert len(fixed) == 1


def test_unsafe_fixes_only_on_request():
    r = lint(METAL)
    assert apply_fixes("x.metal", METAL, r.diagnostics)[0] == SAFE_FIXED
    new, n = apply_fixes("x.metal", METAL, r.diagnostics, unsafe=True)
    assert new == ALL_FIXED and n == 4


def test_applying_twice_changes_nothing():
    new, _ = apply_fixes("x.metal", METAL, lint(METAL).diagnostics, unsafe=True)
    again, n = apply_fixes("x.metal", new, lint(new).diagnostics, unsafe=True)
    assert again == new and n == 0


def test_fixes_keep_comments_and_refuse_to_delete_one():
    new, _ = apply_fixes("x.metal", METAL, lint(METAL).diagnostics)
    assert b"// keep this comment" in new
    start = METAL.index(b"0.5;")
    end = METAL.index(b"\n", start)
    d = diag(start, start + 3, [(start, end, "0.5h;")])
    reasons: list[str] = []
    new, n = apply_fixes("x.metal", METAL, [d], settings=Settings(select=SELECT), reasons=reasons)
    assert n == 0 and new == METAL and "delete a comment" in reasons[0]


def test_fix_introducing_a_parse_error_is_refused_with_a_reason():
    start = METAL.index(b"h * 0.5")
    bad = diag(start, start + 1, [(start, start + 1, "{")])
    good = diag(METAL.index(b"0.1"), METAL.index(b"0.1") + 3, [(METAL.index(b"0.1") + 3, METAL.index(b"0.1") + 3, "h")])
    reasons: list[str] = []
    new, n = apply_fixes("x.metal", METAL, [bad, good], settings=Settings(select=SELECT), reasons=reasons)
    assert new == METAL and n == 0
    assert "parse error" in reasons[0]


def test_existing_parse_errors_do_not_block_fixes_elsewhere():
    broken = METAL + b"\nvoid tail( {\n"
    r = lint(broken)
    out = fix_source("x.metal", broken, Settings(select=SELECT), diagnostics=r.diagnostics)
    assert out.applied == 1 and out.data == SAFE_FIXED + b"\nvoid tail( {\n" and not out.refused


def test_skipped_fixes_are_decided_again_after_re_linting():
    # d2 overlaps d1: the first pass takes d1; the re-lint finds the literal fixed, so d2 never applies.
    s = METAL.index(b"0.5;")
    d1 = diag(s, s + 3, [(s, s + 3, "0.5h")])
    d2 = diag(s, s + 3, [(s, s + 4, "0.5h;")], line=2)
    out = fix_source("x.metal", METAL, Settings(select=("SL202",)), diagnostics=[d1, d2])
    assert out.data == METAL.replace(b"h * 0.5;", b"h * 0.5h;") and out.applied == 1 and out.passes == 1


def test_fixes_left_by_an_overlap_are_applied_in_a_later_pass():
    # Both unsafe fixes of the real rules on one line would be taken together; here an overlapping
    # synthetic fix blocks SL301 in the first pass, and the re-lint brings it back.
    s = METAL.index(b"uint lid")
    blocker = diag(s, s + 4, [(s, s + 4, "uint")], code="SL301", safe=False)
    r = lint(METAL)
    out = fix_source("x.metal", METAL, Settings(select=SELECT), unsafe=True, diagnostics=[blocker, *r.diagnostics])
    assert out.data == ALL_FIXED and out.passes == 2


# ---- the command line ---------------------------------------------------------------------------------
@pytest.fixture
def shader(tmp_path):
    p = tmp_path / "tone.metal"
    p.write_bytes(METAL)
    os.chmod(p, 0o640)
    return p


def run(*argv: str) -> int:
    return main([*argv, "--no-cache", "-q", "--select", ",".join(SELECT)])


def test_fix_writes_atomically_keeps_permissions_and_reports_what_remains(shader, capsys):
    code = run(str(shader), "--fix")
    out, err = capsys.readouterr()
    assert shader.read_bytes() == SAFE_FIXED
    assert stat.S_IMODE(os.stat(shader).st_mode) == 0o640
    assert sorted(os.listdir(shader.parent)) == ["tone.metal"]  # no temporary file left behind
    assert code == 1  # SL202 on 0.5 and 0.1 (unsafe fixes) and SL301 remain
    assert ":8:" in out and ":9:" in out and "SL301" in out and ":10:" not in out
    assert "fixed 1 problem in 1 file" in err and "3 more with --unsafe-fixes" in err


def test_unsafe_fixes(shader, capsys):
    assert run(str(shader), "--fix", "--unsafe-fixes") == 0
    assert shader.read_bytes() == ALL_FIXED
    assert capsys.readouterr().out == ""


def test_read_only_file_is_left_untouched(shader, capsys):
    os.chmod(shader, 0o444)
    try:
        code = run(str(shader), "--fix")
    finally:
        os.chmod(shader, 0o644)
    out, err = capsys.readouterr()
    assert shader.read_bytes() == METAL
    assert "read-only" in err and str(shader) in err
    assert code == 1 and ":8:" in out  # nothing was fixed: everything is still reported


def test_diff_prints_a_unified_diff_and_writes_nothing(shader, capsys):
    code = run(str(shader), "--diff")
    out, err = capsys.readouterr()
    assert code == 1 and shader.read_bytes() == METAL
    path = str(shader)
    assert out == (f"--- a/{path}\n+++ b/{path}\n@@ -7,5 +7,5 @@\n"
                   "     half h = px[gid];\n"
                   "     half a = h * 0.5;  // keep this comment\n"
                   "     half b = h * 0.1;\n"
                   "-    px[gid] = a + b + half(lid);  // shaderlint: ignore[SL202]\n"
                   "+    px[gid] = a + b + half(lid);\n"
                   " }\n")
    assert "would fix 1 problem" in err


def test_diff_with_nothing_to_fix_exits_0(tmp_path, capsys):
    p = tmp_path / "clean.metal"
    p.write_bytes(ALL_FIXED)
    assert run(str(p), "--diff") == 0
    assert capsys.readouterr().out == ""


def test_fix_from_stdin_prints_the_fixed_source(monkeypatch, capsys):
    import io
    import sys

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(METAL)))
    assert run("--stdin-filename", "tone.metal", "--fix") == 0
    assert capsys.readouterr().out == SAFE_FIXED.decode()


# ---- what each rule's fix may claim -----------------------------------------------------------------
HALF_CHAIN = b"""#include <metal_stdlib>
using namespace metal;

kernel void scale(device half* a [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    half x = a[i];
    a[i] = x * 4.0 * 0.25;
}
"""


def test_sl202_fix_is_unsafe_even_for_exact_literals():
    # x = 20000: the float product x * 4.0 * 0.25 is 20000, the half one overflows at x * 4.0h (> 65504).
    r = lint_source("s.metal", HALF_CHAIN, Settings(select=("SL202",)))
    fixes = [d.fix for d in r.diagnostics if d.code == "SL202"]
    assert len(fixes) == 2 and all(f is not None and f.applicability == Applicability.UNSAFE for f in fixes)
    assert apply_fixes("s.metal", HALF_CHAIN, r.diagnostics)[1] == 0
    new, n = apply_fixes("s.metal", HALF_CHAIN, r.diagnostics, unsafe=True)
    assert n == 2 and b"x * 4.0h * 0.25h;" in new


ASYNC_ROTATE = b"""#define CP_ASYNC_CG(d,s) asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\\n"::"r"(d),"l"(s))
#define CP_ASYNC_WAIT_ALL() asm volatile("cp.async.wait_all;\\n"::)
#define LDS32(r,a) asm volatile("ld.shared.b32 {%0}, [%1];\\n":"=r"(r):"r"(a))
__global__ void __launch_bounds__(128) k(const uint4 *g, unsigned *o, int T) {
    __shared__ uint4 s[128];
    unsigned b = __cvta_generic_to_shared(s), r = 0;
    for (int t = 0; t < T; ++t) {
        CP_ASYNC_CG(b + threadIdx.x * 16, &g[(size_t)t * 128 + threadIdx.x]);
        CP_ASYNC_WAIT_ALL();
        __syncthreads();                       // needed: other threads' copies
        unsigned x;
        LDS32(x, b + ((threadIdx.x + 32) % 128) * 16);
        r += x;
        __syncthreads();                       // needed: before the next copy
    }
    o[blockIdx.x * 128 + threadIdx.x] = r;
}
"""


def test_sl402_keeps_barriers_around_inline_ptx_macros_and_offers_no_fix_for_them():
    # Issue 17: the fix removed the second barrier and the kernel raced (250,000 wrong outputs in 13.1 M).
    r = lint_source("k.cu", ASYNC_ROTATE, Settings(select=("SL402",)))
    assert [d.code for d in r.diagnostics] == []
    out = fix_source("k.cu", ASYNC_ROTATE, Settings(select=("SL402",)), unsafe=True)
    assert out.data == ASYNC_ROTATE and out.applied == 0


PLAIN_PAIR = b"""__global__ void k(const float* in, float* out) {
    __shared__ float s[128];
    s[threadIdx.x] = in[blockIdx.x * 128 + threadIdx.x];
    __syncthreads();
    float y = __expf(1.0f) * OFFSET;
    __syncthreads();
    out[blockIdx.x * 128 + threadIdx.x] = s[127 - threadIdx.x] + y;
}
"""


def test_sl402_fix_is_unsafe_and_needs_every_statement_understood():
    known = PLAIN_PAIR.replace(b" * OFFSET", b"")
    r = lint_source("k.cu", known, Settings(select=("SL402",)))
    (d,) = r.diagnostics
    assert d.line == 6 and d.fix is not None and d.fix.applicability == Applicability.UNSAFE
    assert apply_fixes("k.cu", known, r.diagnostics)[1] == 0  # never with --fix alone
    new, n = apply_fixes("k.cu", known, r.diagnostics, unsafe=True)
    assert n == 1 and new.count(b"__syncthreads();") == 1
    # OFFSET comes from a header: it could be a macro reading shared memory. Still a finding, no fix.
    r = lint_source("k.cu", PLAIN_PAIR, Settings(select=("SL402",)))
    (d,) = r.diagnostics
    assert d.line == 6 and d.fix is None
    # The same name inside a same-file helper called there.
    helper = b"__device__ float scaled(float v) { return v * OFFSET; }\n" + PLAIN_PAIR.replace(
        b"__expf(1.0f) * OFFSET", b"scaled(__expf(1.0f))")
    r = lint_source("k.cu", helper, Settings(select=("SL402",)))
    (d,) = r.diagnostics
    assert d.line == 7 and d.fix is None


def test_every_fix_matches_its_rules_declared_safety_and_is_documented():
    from pathlib import Path

    from shaderlint.languages import language_for_path
    from shaderlint.rules.registry import RULES

    by_code = {r.code: r for r in RULES}
    for r in RULES:
        if r.fix in ("safe", "unsafe"):
            assert "Fix safety" in r.sections(), f"{r.code} offers fixes but documents no Fix safety"
    seen = set()
    root = Path(__file__).parent / "fixtures"
    for p in sorted(root.rglob("*")):
        if not p.is_file() or ".fixed." in p.name or language_for_path(str(p)) is None:
            continue
        every_rule = Settings(extend_select=tuple(by_code))  # opt-in rules' fixes too
        for d in lint_source(str(p), p.read_bytes(), every_rule).diagnostics:
            if d.fix is None or d.code not in by_code:
                continue
            seen.add(d.code)
            assert d.fix.applicability.value == by_code[d.code].fix, f"{p.name}:{d.line} {d.code}"
    assert {"SL202", "SL402", "SL301"} <= seen  # the check looked at real fixes
