"""Incremental (per-function) linting gives exactly the diagnostics of a full lint.

Differential test: every example and fixture is linted in full, then edited at
random places inside function bodies (typing, deleting, new lines, new calls to
other functions of the file, unbalancing braces) and linted both ways.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from shaderlint.config import Settings
from shaderlint.engine import lint_source
from shaderlint.incremental import build_outline, component, partial_lint
from shaderlint.languages import FRONT_ENDS, language_for_path
from shaderlint.model.source import Source

ROOT = Path(__file__).resolve().parents[1]
FILES = sorted(p for p in [*ROOT.joinpath("examples").rglob("*"), *ROOT.joinpath("tests", "fixtures").rglob("*")]
               if p.is_file() and language_for_path(str(p)) and not p.name.endswith(".fixed"))
ALL_RULES = Settings(select=("ALL",), ignore=("SL002",))
#: The default rules, SL001 (opt-in: the mid-edit paths keep it in the edited function) and SL201 (opt-in).
EDITOR = Settings(extend_select=("SL001", "SL201"))


def whole(path, data: bytes, language: str):
    return lambda patches: FRONT_ENDS[language].parse(Source(str(path), data)).tree


#: A kernel with a guard block, repeated (renamed) to make multi-function files.
GUARDED_UNIT = ("__global__ void k{i}(int* p, int n, int d) {{\n"
                "    int x = blockIdx.x * blockDim.x + threadIdx.x;\n"
                "    if (x < n) {{\n"
                "        p[x] = x / d;\n"
                "    }}\n"
                "}}\n\n")


def assert_same_as_full(partial, path: str, data: bytes, settings: Settings, language: str) -> None:
    from shaderlint import incremental

    assert partial is not None, incremental.last_fallback
    full = lint_source(path, data, settings, language)
    assert [key(d) for d in partial.result.diagnostics] == [key(d) for d in full.diagnostics]


def key(d):
    return (d.code, d.start, d.end, d.line, d.column, d.end_line, d.end_column, d.message, d.kernel,
            d.fingerprint, d.related, d.fix, d.fix_ranges, d.impact, d.severity)


def edits_for(data: bytes, span, names: list[str], rnd: random.Random) -> list[tuple[int, int, bytes]]:
    """Candidate one-step edits strictly inside a body: (start, end, text)."""
    a, b = span.body_start + 1, span.body_end - 1
    if b <= a:
        return [(a, a, b" ")]
    pos = rnd.randrange(a, b + 1)
    semis = [i + 1 for i in range(a, b) if data[i:i + 1] == b";"]
    at = rnd.choice(semis) if semis else pos
    other = rnd.choice(names) if names else "f"
    return [
        (at, at, b" "),
        (at, at, b"\n"),
        (at, at, b"\n  int probe_t = 1;"),
        (at, at, f"\n  {other}(0);".encode()),
        (pos, min(b, pos + 1), b""),
        (at, at, b" }"),
        (at, at, b" flo"),  # typing: the body does not parse for a moment
        (pos, pos, b"("),
        (at, at, b"x"),
        (at, at, b"/*"),
        (at, at, b"\n#define Q 1\n"),
        (at, at, b" // shaderlint: ignore-file\n"),
    ]


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_partial_lint_equals_full_lint(path: Path) -> None:
    rnd = random.Random(path.name)
    data0 = path.read_bytes()
    language = language_for_path(str(path))
    full0 = lint_source(str(path), data0, ALL_RULES, language)
    outline0 = build_outline(full0, ALL_RULES)
    if outline0 is None or not outline0.spans:
        pytest.skip("no outline (parse errors or no functions)")
    names = [s.name for s in outline0.spans]
    used = 0
    for span_index in rnd.sample(range(len(outline0.spans)), min(2, len(outline0.spans))):
        for start, end, text in edits_for(data0, outline0.spans[span_index], names, rnd):
            outline = build_outline(full0, ALL_RULES)
            outline.edit(start, end, len(text))
            data = data0[:start] + text + data0[end:]
            partial = partial_lint(str(path), data, ALL_RULES, language, outline, max_share=1.0,
                                   whole_parse=whole(path, data, language))
            if partial is None:
                continue
            used += 1
            full = lint_source(str(path), data, ALL_RULES, language)
            assert [key(d) for d in partial.result.diagnostics] == [key(d) for d in full.diagnostics], \
                f"edit {text!r} at {start}"
            # The next outline describes the edited text: one more edit there lints incrementally too.
            again = partial.outline
            s = again.spans[span_index]
            again.edit(s.body_start + 1, s.body_start + 1, 1)
            data2 = data[:s.body_start + 1] + b" " + data[s.body_start + 1:]
            second = partial_lint(str(path), data2, ALL_RULES, language, again, max_share=1.0,
                                  whole_parse=whole(path, data2, language))
            if second is not None:
                full2 = lint_source(str(path), data2, ALL_RULES, language)
                assert [key(d) for d in second.result.diagnostics] == [key(d) for d in full2.diagnostics]
    if len(outline0.spans) > 1 and not any(s.fixed for s in outline0.spans):
        assert used > 0, "the incremental path was never taken"


def test_edits_outside_bodies_and_special_bodies_fall_back() -> None:
    src = b"__global__ void k(float* a) { a[threadIdx.x] = 1.0f; }\n__device__ int g(int x) { return x / 3; }\n"
    r = lint_source("k.cu", src, EDITOR, "cuda")
    outline = build_outline(r, EDITOR)
    assert [s.name for s in outline.spans] == ["k", "g"]
    outline.edit(0, 0, 1)  # before the first function: not inside a body
    assert not outline.valid
    assert partial_lint("k.cu", b" " + src, EDITOR, "cuda", outline) is None
    outline = build_outline(r, EDITOR)
    at = src.index(b"return")
    outline.edit(at, at, len(b"// shaderlint: ignore-file\n"))
    new = src[:at] + b"// shaderlint: ignore-file\n" + src[at:]
    assert partial_lint("k.cu", new, EDITOR, "cuda", outline) is None
    with_sl002 = Settings(extend_select=("SL002",))
    outline = build_outline(lint_source("k.cu", src, with_sl002, "cuda"), with_sl002)
    outline.edit(at, at, 1)
    assert partial_lint("k.cu", src[:at] + b" " + src[at:], with_sl002, "cuda", outline) is None


def test_component_follows_references_both_ways_and_through_macros() -> None:
    src = (b"#define CALL_H(x) h(x)\n"
           b"__device__ int h(int x) { return x + 1; }\n"
           b"__device__ int g(int x) { return CALL_H(x); }\n"
           b"__global__ void k(int* a) { a[0] = g(1); }\n"
           b"__global__ void lone(int* a) { a[0] = 2; }\n"
           b"void host(int* a) { k<<<1, 32>>>(a); }\n")
    outline = build_outline(lint_source("m.cu", src, EDITOR, "cuda"), EDITOR)
    names = [s.name for s in outline.spans]
    comp = {names[i] for i in component(outline, [names.index("h")])}
    assert comp == {"h", "g", "k", "host"}
    assert {names[i] for i in component(outline, [names.index("lone")])} == {"lone"}
    overloads = (b"__global__ void f(int* a) { a[0] = 1; }\n__global__ void f(float* a) { a[0] = 2.0f; }\n"
                 b"__global__ void g(int* a) { a[0] = 3; }\n")
    outline = build_outline(lint_source("o.cu", overloads, EDITOR, "cuda"), EDITOR)
    assert component(outline, [0]) == {0, 1}  # overloads share their reports (SL506)


def test_partial_lint_lints_only_the_component() -> None:
    units = "".join(f"__global__ void k{i}(int* a, int n, int d) {{ for (int i = threadIdx.x; i < n; i += 32) a[i] = a[i] / d; }}\n"
                    for i in range(20))
    src = units.encode()
    r = lint_source("u.cu", src, EDITOR, "cuda")
    outline = build_outline(r, EDITOR)
    s = outline.spans[7]
    at = s.body_start + 1
    outline.edit(at, at, 1)
    new = src[:at] + b" " + src[at:]
    partial = partial_lint("u.cu", new, EDITOR, "cuda", outline)
    assert partial is not None and partial.linted == 1 and partial.total == 20
    full = lint_source("u.cu", new, EDITOR, "cuda")
    assert [key(d) for d in partial.result.diagnostics] == [key(d) for d in full.diagnostics]
    assert len(full.diagnostics) >= 20


def test_a_half_typed_declaration_that_closes_the_function_early_stays_per_function() -> None:
    """`int t` typed above an `if` block: tree-sitter's error recovery ends the function at the if's
    `}` and leaves the last `}` at file scope. The errors stay in the function's region, the whole
    file reads that region the same way, so it is still linted per function, and equals a full lint."""
    src = "".join(GUARDED_UNIT.format(i=i) for i in range(6)).encode()
    settings = EDITOR
    outline = build_outline(lint_source("t.cu", src, settings, "cuda"), settings)
    at = src.index(b"    if", outline.spans[3].body_start)
    data = src
    for text in (b"int t\n", b"int t = 0;\n"):
        outline.edit(at, at + (0 if data is src else len(b"int t\n")), len(text))
        data = src[:at] + text + src[at:]
        partial = partial_lint("t.cu", data, settings, "cuda", outline, whole_parse=whole("t.cu", data, "cuda"))
        assert_same_as_full(partial, "t.cu", data, settings, "cuda")
        assert partial.linted == 1
        outline = partial.outline
        assert outline.spans[3].broken == (text == b"int t\n")  # parses again once the statement is complete


def test_a_missing_semicolon_right_after_a_body_belongs_to_that_function() -> None:
    """`x = a.b c()}`: the error recovery reads the whole kernel as a declaration and puts a zero-width
    MISSING `;` just after its `}` -- the first byte of the next function's region. That SL001 is the
    edited function's (found by bench/fuzz.py's edit chains: it was dropped as the next function's)."""
    src = b"".join(b"kernel void k%d(device float* out [[buffer(0)]], uint gid [[thread_position_in_grid]]) {\n"
                   b"    out[gid] = out[gid] + 1.0;\n}\n\n" % i for i in range(4))
    settings = EDITOR
    outline = build_outline(lint_source("t.metal", src, settings, "metal"), settings)
    at = src.index(b" + 1.0;", outline.spans[1].body_start)
    text = b" memoryBarrierShared()"
    data = src[:at] + text + src[at + len(b" + 1.0;\n"):]
    outline.edit(at, at + len(b" + 1.0;\n"), len(text))
    partial = partial_lint("t.metal", data, settings, "metal", outline, whole_parse=whole("t.metal", data, "metal"))
    assert_same_as_full(partial, "t.metal", data, settings, "metal")
    assert any(d.code == "SL001" and d.start == d.end == outline.spans[1].body_end for d in partial.result.diagnostics)


def test_an_error_that_runs_on_into_the_next_functions_relints_them_too() -> None:
    """A half-typed `for (int i = 0;` makes the error recovery swallow the functions after it. In the
    copy they are cut out, so the copy reads differently from the whole file; the whole file's error
    nodes show which functions they cover, and these are linted with the edited one."""
    unit = ("__global__ void k{i}(int* p, int n, int d) {{\n"
            "    __shared__ int s[64];\n"
            "    int x = blockIdx.x * blockDim.x + threadIdx.x;\n"
            "    s[threadIdx.x] = x;\n"
            "    __syncthreads();\n"
            "    if (x < n) {{\n"
            "        p[x] = s[x % 64] / d;\n"
            "    }}\n"
            "}}\n\n")
    src = "".join(unit.format(i=i) for i in range(6)).encode()
    settings = EDITOR
    outline = build_outline(lint_source("s.cu", src, settings, "cuda"), settings)
    at = src.index(b"    __syncthreads();", outline.spans[3].body_start)
    text = b"    for (int i = 0;\n"
    outline.edit(at, at, len(text))
    data = src[:at] + text + src[at:]
    partial = partial_lint("s.cu", data, settings, "cuda", outline, whole_parse=whole("s.cu", data, "cuda"))
    assert_same_as_full(partial, "s.cu", data, settings, "cuda")
    assert partial.linted == 3  # k3 and the two it swallows
    assert [s.broken for s in partial.outline.spans] == [False, False, False, True, True, True]


def test_a_whole_file_lint_of_broken_text_keeps_the_outline() -> None:
    """When a keystroke was linted as a whole file while the text does not parse (here: forced), the
    outline carries over with the broken function marked, and the next keystroke is per function."""
    from shaderlint.incremental import carry_outline

    src = "".join(GUARDED_UNIT.format(i=i) for i in range(5)).encode()
    settings = EDITOR
    outline = build_outline(lint_source("c.cu", src, settings, "cuda"), settings)
    at = src.index(b"    if", outline.spans[2].body_start)
    outline.edit(at, at, len(b"int t\n"))
    data = src[:at] + b"int t\n" + src[at:]
    full = lint_source("c.cu", data, settings, "cuda")
    assert build_outline(full, settings) is None  # errors at file scope: no fresh outline
    carried = carry_outline(outline, full, settings)
    assert carried is not None and [s.broken for s in carried.spans] == [False, False, True, False, False]
    at2 = at + len(b"int t")
    carried.edit(at2, at2, len(b" = 1;"))
    data2 = data[:at2] + b" = 1;" + data[at2:]
    partial = partial_lint("c.cu", data2, settings, "cuda", carried, whole_parse=whole("c.cu", data2, "cuda"))
    assert_same_as_full(partial, "c.cu", data2, settings, "cuda")
    assert partial.linted == 1


def test_a_broken_declaration_does_not_shadow_the_globals_of_later_functions() -> None:
    """Found by bench/fuzz.py's edit chains on examples/elementwise_macros.cu: `}` typed over a launch
    closes the function early and the error recovery reads `}grid_for(n), kBlock, 0>>>(...)` as a
    declaration of `kBlock`, which then shadowed the real constant in a later function (its SL503 was
    lost in the whole file only). Declarations with errors declare no globals."""
    src = (b"constexpr int kBlock = 256;\n"
           b"__global__ void k(float* p, int n) { int i = blockIdx.x * kBlock + threadIdx.x; if (i < n) p[i] = 0.0f; }\n"
           b"int grid_for(int n) { return (n + kBlock - 1) / kBlock; }\n"
           b"void launch_a(float* p, int n) {\n    k<<<grid_for(n), kBlock, 0>>>(p, n);\n}\n"
           b"void launch_b(float* p, int seq) {\n    const dim3 grid(seq / kBlock);\n    k<<<grid, kBlock>>>(p, seq);\n}\n")
    settings = EDITOR
    outline = build_outline(lint_source("b.cu", src, settings, "cuda"), settings)
    at = src.index(b"k<<<grid_for")
    data = src[:at] + b"}" + src[at + 4:]
    outline.edit(at, at + 4, 1)
    full = lint_source("b.cu", data, settings, "cuda")
    assert any(d.code == "SL503" for d in full.diagnostics)
    partial = partial_lint("b.cu", data, settings, "cuda", outline, whole_parse=whole("b.cu", data, "cuda"))
    if partial is not None:
        assert_same_as_full(partial, "b.cu", data, settings, "cuda")


def test_the_annotation_of_a_broken_function_is_not_file_wide() -> None:
    """Found by bench/fuzz.py's edit chains: `// shaderlint: threadgroup-size=32` above the first kernel
    became a file-level fact while that kernel did not parse (no first function below it any more), so
    every other kernel got 32 threads and an SL401 in the whole-file lint only."""
    unit = ("kernel void {n}(device float* out [[buffer(0)]], threadgroup float* t [[threadgroup(0)]],\n"
            "    uint lid [[thread_index_in_threadgroup]]) {{\n"
            "    t[lid] = out[lid];\n    threadgroup_barrier(mem_flags::mem_threadgroup);\n    out[lid] = t[lid ^ 1];\n}}\n")
    src = ("#include <metal_stdlib>\nusing namespace metal;\n\n// shaderlint: threadgroup-size=32\n"
           + unit.format(n="small") + "\n" + unit.format(n="unknown")).encode()
    settings = Settings(select=("SL401",))
    assert [d.code for d in lint_source("a.metal", src, settings, "metal").diagnostics] == ["SL401"]
    outline = build_outline(lint_source("a.metal", src, settings, "metal"), settings)
    at = src.index(b"t[lid] = out[lid];") + 1  # `t([lid] = ...`
    data = src[:at] + b"(" + src[at:]
    outline.edit(at, at, 1)
    full = lint_source("a.metal", data, settings, "metal")
    assert not [d for d in full.diagnostics if d.code == "SL401"]
    partial = partial_lint("a.metal", data, settings, "metal", outline, whole_parse=whole("a.metal", data, "metal"))
    if partial is not None:
        assert_same_as_full(partial, "a.metal", data, settings, "metal")


def test_no_outline_is_carried_over_an_open_comment() -> None:
    """Found by bench/fuzz.py's edit chains: `/*` typed in one body comments out the functions after
    it until some later `*/`. Cutting that body out of a copy (for an edit elsewhere) would end the
    comment, so the copy read the next functions and the whole file did not: no outline then."""
    from shaderlint.incremental import carry_outline

    src = "".join(GUARDED_UNIT.format(i=i) for i in range(4)).encode()
    settings = EDITOR
    outline = build_outline(lint_source("c.cu", src, settings, "cuda"), settings)
    at = src.index(b"    if", outline.spans[2].body_start)  # the comment runs from k2 to the end of the file
    outline.edit(at, at, 2)
    data = src[:at] + b"/*" + src[at:]
    full = lint_source("c.cu", data, settings, "cuda")
    assert any(d.code == "SL001" for d in full.diagnostics)
    assert carry_outline(outline, full, settings) is None


def test_a_function_the_edit_stops_calling_is_linted_again() -> None:
    """Found by bench/fuzz.py: a kernel stopped calling a helper (a typo in the call); the helper's
    findings lose their impact (no kernel calls it any more), so it belongs to the edit's component
    through the names the body held before the edit, too."""
    src = (b"#include <metal_stdlib>\nusing namespace metal;\n\n"
           b"half far_depth() {\n    return 70000.0;\n}\n\n"
           b"kernel void fill(device half* out [[buffer(0)]], uint gid [[thread_position_in_grid]]) {\n"
           b"    out[gid] = far_depth();\n}\n\n"
           b"kernel void other(device half* out [[buffer(0)]], uint gid [[thread_position_in_grid]]) {\n"
           b"    out[gid] = 1.0h;\n}\n")
    settings = EDITOR
    before = lint_source("f.metal", src, settings, "metal")
    outline = build_outline(before, settings)
    at = src.index(b"far_depth();")
    outline.edit(at, at + 1, 1)
    data = src[:at] + b"g" + src[at + 1:]
    full = lint_source("f.metal", data, settings, "metal")
    impact = {d.code: d.impact for d in before.diagnostics if d.kernel == "far_depth"}
    assert impact["SL203"] != {d.code: d.impact for d in full.diagnostics if d.kernel == "far_depth"}["SL203"]
    partial = partial_lint("f.metal", data, settings, "metal", outline, max_share=1.0)
    assert partial is not None and partial.linted == 2
    assert [key(d) for d in partial.result.diagnostics] == [key(d) for d in full.diagnostics]


def _chain(path: str, data: bytes, settings: Settings, language: str, edits):
    """Lint each edit of a chain per function on the outline the previous lint left (as the server and
    bench/fuzz.py's check_edit_chain do); asserts each per-function answer equals a whole-file lint and
    returns the answers (None: a whole-file lint)."""
    from shaderlint.incremental import carry_outline

    result = lint_source(path, data, settings, language)
    outline = build_outline(result, settings)
    answers = []
    for start, length, text in edits:
        new = data[:start] + text + data[start + length:]
        outline.edit(start, start + length, len(text))
        part = partial_lint(path, new, settings, language, outline, max_share=1.0, whole_parse=whole(path, new, language))
        full = lint_source(path, new, settings, language)
        if part is not None:
            assert [key(d) for d in part.result.diagnostics] == [key(d) for d in full.diagnostics], (start, text)
            outline = part.outline
        else:
            outline = build_outline(full, settings) or carry_outline(outline, full, settings)
        answers.append(part)
        data = new
    return answers


def test_a_file_that_is_one_error_from_its_first_byte_is_linted_whole() -> None:
    """Found by bench/fuzz.py's edit chains: after `threadIdx.x;` became `(` in odd_kernel, the error
    recovery could not make a translation unit of the file: the root node itself is the ERROR, and SL001
    reports it from the root's first byte -- the file's first comment in the whole file, the first kept
    template in the copy (the comments above the first function are cut out with it). The copy cannot
    say where the whole file's root starts: such a lint is a whole-file one."""
    path = str(ROOT / "tests/fixtures/cuda/sl001/macro_statement_argument.cu")
    data = Path(path).read_bytes()
    answers = _chain(path, data, EDITOR, "cuda",
                     [(747, 0, b";"), (707, 12, b"\n"), (1466, 0, b"#define Z 1\n"), (1229, 12, b"(")])
    assert [a is not None for a in answers] == [True, True, True, False]


def test_the_copy_is_read_in_the_shader_stage_the_whole_file_shows() -> None:
    """A `.glsl` file's stage comes from its text (gl_FragCoord: fragment). Here only a function the edit
    does not reach shows it; the copy without that function used to be read with no stage, so main was
    not a fragment entry point and its SL701 was lost."""
    data = (b"#version 450\nlayout(binding = 0, r32ui) uniform uimage2D counts;\n\n"
            b"float unused_helper(float x) {\n    return x * gl_FragCoord.x;\n}\n\n"
            b"void main() {\n    imageStore(counts, ivec2(0, 0), uvec4(1u));\n}\n")
    at = data.index(b"imageStore")
    [part] = _chain("t.glsl", data, ALL_RULES, "glsl", [(at, 0, b" ")])
    assert part is not None and part.linted == 1
    assert [d.code for d in part.result.diagnostics] == ["SL701"]


def test_a_mask_of_the_copy_that_reaches_into_cut_out_text_is_replaced_by_the_whole_files() -> None:
    """`__align__(` typed into k1 and `)` into k3: the balanced-parentheses pattern runs past k1's closing
    brace. In the whole file it gives up in `deep` (parentheses nested too deep for it); in the copy,
    `deep` is cut out and it ran on to k3's `)`, blanking everything in between, so the copy read k1 and
    k3 unlike the whole file (the lint fell back to the whole file). Now the copy takes the whole file's
    masks over the text it keeps; a mask that reaches into cut-out text makes it a whole-file lint."""
    from shaderlint.incremental import _Copy
    from shaderlint.languages.base import Mask

    src = (b"__global__ void k1(int* p, int n) {\n    int x = threadIdx.x;\n    if (x < n) {\n        p[x] = x;\n    }\n}\n\n"
           b"__device__ int deep(int v) {\n    return min(max(min(max(v, 0), 1), 2), 3);\n}\n\n"
           b"__global__ void k3(int* q, int n) {\n    int y = threadIdx.x;\n    if (y < n) {\n        q[y] = y / n;\n    }\n}\n")
    settings = EDITOR
    outline = build_outline(lint_source("m.cu", src, settings, "cuda"), settings)
    spans = outline.spans
    copy = _Copy(src, spans, {0, 2})
    assert copy.data.count(b"\n") == src.count(b"\n") and b"deep" not in copy.data
    inside = Mask(spans[2].body_start + 5, spans[2].body_start + 9, "x", "")
    assert copy.context(src, [inside])[1] == [Mask(copy.to_copy(inside.start), copy.to_copy(inside.end), "x", "")]
    assert copy.context(src, [Mask(spans[1].body_start, spans[1].body_start + 3, "x", "")])[1] == []  # cut out
    assert copy.context(src, [Mask(spans[0].body_end - 2, spans[0].body_end + 3, "x", "")]) is None  # into `deep`
    assert copy.context(src, [Mask(spans[1].body_end - 2, spans[2].start + 3, "x", "")]) is None  # out of it
    assert not copy.within_kept(copy.to_copy(spans[0].body_end - 2), copy.to_copy(spans[2].body_start))
    a = src.index(b"    if", spans[0].body_start)
    data = src[:a] + b"__align__(" + src[a:]
    outline.edit(a, a, len(b"__align__("))
    b = data.index(b"q[y]")
    data = data[:b] + b")" + data[b:]
    outline.edit(b, b, 1)
    used = []
    real = FRONT_ENDS["cuda"].masked
    FRONT_ENDS["cuda"].masked = lambda source, predefined=None, extra_macros=None: (
        used.append(len(source.data)) or real(source, predefined, extra_macros))
    try:
        partial = partial_lint("m.cu", data, settings, "cuda", outline, max_share=1.0, whole_parse=whole("m.cu", data, "cuda"))
    finally:
        del FRONT_ENDS["cuda"].masked
    assert len(data) in used  # the whole file was masked for the copy
    assert_same_as_full(partial, "m.cu", data, settings, "cuda")
    assert partial.linted == 2


#: A histogram kernel: ``int t =`` typed after its first ``__syncthreads();`` makes tree-sitter's error
#: recovery read a file of several of them as one ERROR from the first byte (one SL001 at line 1).
HIST_UNIT = ("__global__ void hist{i}(const float *v, int n, int *counts)\n{{\n"
             "    extern __shared__ int local[];\n"
             "    for (int b = threadIdx.x; b < 64; b += blockDim.x) {{\n        local[b] = 0;\n    }}\n"
             "    __syncthreads();\n"
             "    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {{\n"
             "        atomicAdd(&local[(int)v[i] & 63], 1);\n    }}\n"
             "    __syncthreads();\n"
             "    for (int b = threadIdx.x; b < 64; b += blockDim.x) {{\n"
             "        atomicAdd(&counts[b], local[b] / n);\n    }}\n}}\n\n")


def _typing_chain(src: bytes, at: int, stmt: bytes, whole_parse_for, settings: Settings = EDITOR):
    """Type ``stmt`` at ``at`` one byte at a time, then delete it, each keystroke linted per function
    (mid-edit answers allowed) on the outline the last lint left; yields (text, answer, whole-file lint)."""
    from shaderlint.incremental import carry_outline

    outline = build_outline(lint_source("h.cu", src, settings, "cuda"), settings)
    data = src
    steps = [(at + k, 0, stmt[k:k + 1]) for k in range(len(stmt))]
    steps += [(at + k, 1, b"") for k in reversed(range(len(stmt)))]
    for start, length, text in steps:
        data = data[:start] + text + data[start + length:]
        outline.edit(start, start + length, len(text))
        part = partial_lint("h.cu", data, settings, "cuda", outline, max_share=1.0,
                            whole_parse=whole_parse_for(data), mid_edit=True)
        full = lint_source("h.cu", data, settings, "cuda")
        outline = part.outline if part is not None else \
            build_outline(full, settings) or carry_outline(outline, full, settings)
        yield data, part, full


@pytest.mark.parametrize("whole_parse_for", [lambda data: whole("h.cu", data, "cuda"), lambda data: lambda patches: None],
                         ids=["whole parse", "whole parse too slow"])
def test_a_statement_typed_mid_edit_keeps_the_error_in_the_function_and_the_rest_stable(whole_parse_for) -> None:
    """`int t =` in front of a `for` loop: the whole file's error recovery reads the file as one ERROR
    (one SL001 at line 1, every other finding gone), so no per-function answer equals a whole-file lint.
    The language server answers mid-edit instead (no whole-file lint per keystroke): the edited function
    read on its own, its parse error inside it, the other findings the last lint's. Whenever the text
    parses as the whole file does (and once the statement is complete), the answer equals a whole-file
    lint. Also when the check's parse of the whole file takes too long (no tree): then the copy shows
    the error is not the text cut off."""
    src = "".join(HIST_UNIT.format(i=i) for i in range(4)).encode()
    before = lint_source("h.cu", src, EDITOR, "cuda")
    assert [d.code for d in before.diagnostics] == ["SL201"] * 4
    outline = build_outline(before, EDITOR)
    span = outline.spans[1]
    at = src.index(b"__syncthreads();", span.body_start) + len(b"__syncthreads();")
    mid = 0
    for data, part, full in _typing_chain(src, at, b" int t = 0;", whole_parse_for):
        assert part is not None
        if not part.mid_edit:
            assert [key(d) for d in part.result.diagnostics] == [key(d) for d in full.diagnostics], data[at:at + 12]
            continue
        mid += 1
        assert full.parsed.tree.root_node.has_error
        end = span.body_end + len(data) - len(src)
        inside = [d for d in part.result.diagnostics if span.start <= d.start and d.end <= end]
        assert inside and all(d.code == "SL001" for d in inside)
        # The others as before (hist1's lines did not move: only the offsets after the edit did).
        stable = lambda d, moved=0: (d.code, d.line, d.column, d.end_line, d.end_column, d.message, d.kernel,  # noqa: E731
                                     d.fingerprint, d.impact, d.start + (moved if d.start > at else 0))
        assert [stable(d) for d in part.result.diagnostics if d not in inside] == \
            [stable(d, len(data) - len(src)) for d in before.diagnostics if d.kernel != "hist1"]
        assert part.outline.spans[1].broken
    assert mid >= 2  # `int t =` and `int t = `, typed and deleted
    assert [key(d) for d in part.result.diagnostics] == [key(d) for d in before.diagnostics]


def test_no_mid_edit_answer_when_the_edited_function_parses_on_its_own() -> None:
    """The mid-edit answer is only for functions that do not parse: an edited function that parses must
    be analysed with its component, and an answer that cannot be shown equal is a whole-file lint."""
    from shaderlint import incremental

    src = "".join(HIST_UNIT.format(i=i) for i in range(4)).encode()
    outline = build_outline(lint_source("h.cu", src, EDITOR, "cuda"), EDITOR)
    at = src.index(b"__syncthreads();", outline.spans[1].body_start) + len(b"__syncthreads();")
    data = src[:at] + b" int t =" + src[at:]
    outline.edit(at, at, len(b" int t ="))
    calls = []
    real = incremental._mid_edit
    incremental._mid_edit = lambda *a: calls.append(a) or real(*a)
    try:
        assert partial_lint("h.cu", data, EDITOR, "cuda", outline, max_share=1.0,
                            whole_parse=whole("h.cu", data, "cuda")) is None  # not asked for mid-edit answers
        assert not calls
        # A function that parses in the copy: no mid-edit answer, even with a whole-file tree that has
        # errors there (here a stale one).
        broken_tree = whole("h.cu", data, "cuda")([])
        good = src[:at] + b" int t = 0;" + src[at:]
        outline = build_outline(lint_source("h.cu", src, EDITOR, "cuda"), EDITOR)
        outline.edit(at, at, len(b" int t = 0;"))
        assert incremental._mid_edit("h.cu", good, EDITOR, "cuda", outline, Source("h.cu", good), None,
                                     broken_tree) is None
    finally:
        incremental._mid_edit = real


def test_a_function_with_a_comment_left_open_stays_in_every_copy() -> None:
    """Found by bench/fuzz.py's edit chains on missing_bounds_check.cu: `/*` typed into saxpy_unchecked (no
    `*/` after it in the file) is `/` `*` to tree-sitter, so the file still parses and gets a fresh outline,
    but a comment to the end of the file to the suppression scanner: the `// shaderlint: ignore` typed into
    block_partials suppresses nothing in the whole file. A copy without saxpy_unchecked read that
    suppression and lost block_partials' SL001 ("missing ';'"). Such a function is kept in every copy."""
    path = str(ROOT / "tests/fixtures/cuda/sl105/missing_bounds_check.cu")
    answers = _chain(path, Path(path).read_bytes(), EDITOR, "cuda",
                     [(1841, 2, b"// shaderlint: ignore\n"), (163, 12, b"/*"), (822, 1, b"#version 450\n")])
    assert answers[2] is not None  # per function, and equal to the whole-file lint (_chain asserts it)
    assert sum(d.code == "SL001" for d in answers[2].result.diagnostics) == 2
