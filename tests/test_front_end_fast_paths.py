"""The front end's fast paths answer exactly as the straightforward code they replace (pure speed
changes): each is compared with that code, kept here, on inputs at the edges of the shortcut."""

from __future__ import annotations

import re

import pytest

from shaderlint.languages import base
from shaderlint.model.source import Source

_ARG_STOP = re.compile(rb"[()\[\]{};/\"'\n]")
_ARG_STOP_COMMAS = re.compile(rb"[()\[\]{};,/\"'\n]")


def _argument_list_reference(data, open_paren, directives=False, commas=False):
    """The argument scan as it was: one scan per question, stopping at a directive line unless asked not to."""
    n = min(len(data), open_paren + base._MAX_MACRO_ARGS)
    depth, semis, seps, i = 0, [], [], open_paren
    stop_at = _ARG_STOP_COMMAS if commas else _ARG_STOP
    while i < n:
        c = data[i]
        if c in b"([{":
            depth += 1
        elif c in b")]}":
            depth -= 1
            if depth == 0:
                return (semis, seps, i) if c == 0x29 else None
        elif c == 0x3B and depth == 1:
            semis.append(i)
        elif c == 0x2C and depth == 1:
            seps.append(i)
        elif c == 0x2F and data.startswith(b"//", i):
            nl = data.find(b"\n", i)
            i = n if nl < 0 else nl
            continue
        elif c == 0x2F and data.startswith(b"/*", i):
            close = data.find(b"*/", i + 2)
            i = n if close < 0 else close + 2
            continue
        elif c in b"\"'":
            j = i + 1
            while j < n and data[j] != c and data[j] != 0x0A:
                j += 2 if data[j] == 0x5C else 1
            i = j + 1
            continue
        elif c == 0x0A and data[i + 1:i + 64].lstrip(b" \t").startswith(b"#"):
            if not directives:
                return None
            while True:
                nl = data.find(b"\n", i + 1)
                if nl < 0 or nl >= n:
                    return None
                cont = data[i + 1:nl].rstrip(b"\r").endswith(b"\\")
                i = nl
                if not cont:
                    break
            continue
        stop = stop_at.search(data, i + 1, n)
        if stop is None:
            return None
        i = stop.start()
    return None


_ARGUMENT_TEXTS = [
    b"F(a, b; c)", b"F(a, (b, c); {d, e}, [f; g])", b"F(a,\n#if X\n b,\n#endif\n c);", b"F(a,\n#define Y \\\n 1\n b)",
    b"F(a, \"x,)\" , 'y', /* ,) */ b // ,)\n, c)", b"F(a, b]", b"F(a, b", b"F(", b"F(a,\n  #pragma unroll\n b;)",
    b"F(a,\n#if X", b"F(\"unterminated, x)\n, y)", b"G(x) F(a, b)",
]


@pytest.mark.parametrize("data", _ARGUMENT_TEXTS)
def test_argument_list_answers_as_one_scan_per_question(data):
    opens = [i for i, c in enumerate(data) if c == 0x28]
    questions = [(p, d, c) for p in opens for d in (False, True) for c in (False, True)]
    for order in (questions, questions[::-1]):  # (the kept scans must not depend on which was asked first)
        base._ARGUMENT_LISTS[:] = None, {}
        for p, d, c in order:
            want = _argument_list_reference(data, p, d, c)
            if want is not None and not c:
                # without commas asked for, the old scan reported the odd `,` right after a string or
                # comment it stepped over; its one caller (_macro_argument_semicolons) drops them
                want = want[0], [], want[2]
            assert base._argument_list(data, p, d, c) == want, (p, d, c)
            assert base._argument_list(bytearray(data), p, d, c) == want
    # a caller changing what it got back does not change the next answer
    got = base._call_arguments(data, opens[0])
    if got is not None:
        got[0].append(-1)
        assert base._call_arguments(data, opens[0])[0] == _argument_list_reference(data, opens[0], commas=True)[0]
    # another text with the same length and parens is scanned for itself
    other = data.replace(b";", b",")
    assert base._argument_list(other, opens[0], True, True) == _argument_list_reference(other, opens[0], True, True)


_BRACE_TEXTS = [
    b"", b"{}", b"f() { \"{\" '}' /* { */ // }\n }", b"/* unterminated {", b"\"{\" { '}' }", b"{/**/}{//\n}",
    b"a /* x */ { b \"c\\\"{\" } /* } */", b"'{'\n{\n'\\''}",
]


@pytest.mark.parametrize("data", _BRACE_TEXTS)
def test_code_braces_are_the_braces_outside_comments_and_strings(data):
    src = Source("f.cu", data)
    assert src.code_braces == [m.start() for m in re.finditer(rb"[{}]", data)
                               if not src.in_comment_or_string(m.start())]


@pytest.mark.parametrize("data", _BRACE_TEXTS + [b"#if A\n{\n#else\n{ x; }\n#endif\n}", b"{ #x {\n# y }\n}\n"])
def test_code_braces_between_skip_directive_lines_and_masked_braces(data):
    src = Source("f.cu", data)
    buf = bytearray(data)
    if b"{" in data:
        buf[data.rindex(b"{")] = 0x20  # a brace an earlier pass blanked
    for start in range(0, len(data) + 1, 3):
        for end in range(start, len(data) + 1, 2):
            lines = base._directive_lines_between(src, start, end)  # (the directive lines that open in the range)
            want = [m.start() for m in re.finditer(rb"[{}]", data[:end])
                    if m.start() >= start and not any(a <= m.start() < b for a, b in lines)
                    and buf[m.start()] == data[m.start()] and not src.in_comment_or_string(m.start())]
            assert list(base._code_braces_between(src, buf, start, end)) == want, (start, end)


_BALANCED_REFERENCE = rb"\((?:[^()]|\((?:[^()]|\([^()]*\))*\))*\)"
_PAREN_TEXTS = [b"()", b"(a)", b"(a(b)c)", b"(a(b(c)d)e)", b"(a(b(c(d)e)f)g)", b"(a(b", b"(a))", b"((((x))))",
                b"(a, (b, c), d, {x}", b"X(a, b, {", b"X(a /x, b,\n {", b"X(a//c\n, {", b"X(" + b"a" * 3000 + b",{",
                b"X(a, (b, {c}), d, {\n", b"X(a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p,q,r,s,t)"]


@pytest.mark.parametrize("data", _PAREN_TEXTS)
def test_possessive_balanced_parentheses_match_as_before(data):
    for prefix, suffix in ((b"", b""), (b"F", b"[ \t]*\\{"), (b"[A-Z]+", b"[ \t]*;?")):
        old, new = re.compile(prefix + _BALANCED_REFERENCE + suffix), re.compile(prefix + base._BALANCED + suffix)
        assert [m.span() for m in old.finditer(data)] == [m.span() for m in new.finditer(data)]
    old = re.compile(rb"^[ \t]*([A-Z][A-Z0-9_]*)[ \t]*\((?:[^(){};\"'/]|/(?![/*])|" + _BALANCED_REFERENCE
                     + rb")*,[ \t\r\n]*\{", re.M)
    assert [m.span() for m in old.finditer(data)] == [m.span() for m in base._BODY_ARGUMENT_MACRO.finditer(data)]


_DIRECTIVE_TEXTS = [b"#define A 1\n", b"#define F(x) x \\\n  + 1 \\\\\n#if A \\", b"#if A // c\\\n x\n", b"#define X\\",
                    b"  #  pragma unroll\r\n#pragma x \\\r\n y\n", b"#define F(a, b) \\a\\b\\\n\\"]


@pytest.mark.parametrize("data", _DIRECTIVE_TEXTS)
def test_directive_tails_read_by_runs_match_as_before(data):
    from shaderlint.languages import conditions, cuda

    for pattern in (base._FUNC_MACRO, base._IF_LINE, base._OBJ_MACRO, base._PRAGMA, base._CONDITIONAL,
                    base._DIRECTIVE_LINE, conditions._DIRECTIVE, cuda._FUNC_MACRO_MULTILINE, cuda._DEFINE_DIRECTIVE,
                    cuda._ONE_PARAM_MACRO):
        old = re.compile(pattern.pattern.replace(rb"(?:[^\n\\]+|", rb"(?:[^\n\\]|"), pattern.flags)
        assert old.pattern != pattern.pattern
        assert [m.regs for m in old.finditer(data)] == [m.regs for m in pattern.finditer(data)], pattern.pattern


@pytest.mark.parametrize("data", [b"", b"#x\n", b"\n#a\n  #b\n\t#c\nx#d\n #", b"A\n B\n\tC\nd\n Ee\n", b"\n\n"])
def test_line_start_offsets_match_the_patterns(data):
    src = Source("f.cu", data)
    assert src.directive_starts == base.line_starts_with(data, rb"#")
    assert src.upper_line_starts == base.line_starts_with(data, rb"[A-Z]")


@pytest.mark.parametrize("data", [
    b"#pragma unroll\nfor (;;) {}\n", b"_Pragma(\"unroll\") for (;;) {}\n#pragma once\n", b"x_Pragma(\"a\")\n",
    b"#define P _Pragma(\"unroll\")\n  #  pragma x \\\n y\n_Pragma ( \"a\\\"b\" ) z", b"\"_Pragma(\\\"x\\\")\" // _Pragma(\"y\")",
])
def test_pragmas_found_where_the_whole_search_finds_them(data):
    src = Source("f.cu", data)
    want = [(m.start(), m.end()) for m in base._PRAGMA.finditer(data) if not src.in_comment_or_string(m.start())]
    assert [(mk.start, mk.end) for mk in base.mask_pragmas(src, bytearray(data))] == want


@pytest.mark.parametrize("data", [
    b"#define A 1 /* x */ + 2\n/* y */ #define B\n", b"//*\n#if A /* c \n d */\n", b"\"/*\" #x /* z */",
    b"#define X /* a */ /* b */\n#if /* unterminated", b"/* a *//* b */\n# /**/ define",
])
def test_directive_comments_are_the_block_comments_on_directive_lines(data):
    src = Source("f.cu", data)
    want = [(s, e) for s, e, c in src.lexical if c and data.startswith(b"/*", s) and base.on_directive_line(data, s)]
    assert [(mk.start, mk.end) for mk in base.mask_directive_comments(src, bytearray(data))] == want


def test_statement_macro_names_found_where_the_whole_search_finds_them():
    data = (b"#define SYNC __syncthreads();\n#define SYNC_ALL { a(); }\n#define S_ { }\n"
            b"void k() { SYNC SYNC_ALL; xSYNC S_ SYNC_ALLx #SYNC S_;\n/* SYNC */ }\n")
    src = Source("f.cu", data)
    got = [(mk.start, mk.end) for mk in base.mask_statement_macros(src, bytearray(data))]
    assert got == [(m.start(), m.end()) for m in re.finditer(rb"(?<![\w#])(?:SYNC|SYNC_ALL|S_)\b[ \t]*;?", data)
                   if not base.on_directive_line(data, m.start()) and not src.in_comment_or_string(m.start())]
    assert len(got) == 4


def test_header_macro_answers_follow_the_headers_asked_about():
    from shaderlint.project.macros import MacroDef, using_header_macros

    src = Source("f.cu", b"#define OWN 1\nvoid k() { A; B(1); }\n")
    one = {"A": MacroDef("A", None, "x;", "h.h", 1, 9), "B": MacroDef("B", ("v",), "v;", "h.h", 2, 9),
           "OWN": MacroDef("OWN", None, "2", "h.h", 3, 9)}
    two = {"A": MacroDef("A", None, "y;", "g.h", 1, 9)}
    with using_header_macros(one):
        assert base.header_macros_for(src) == {b"A": b"x;", b"B": b"v;"}
        assert base.header_macros_for(src, False) == {b"A": b"x;"}
        assert base.header_macros_for(src, True) == {b"B": b"v;"}
    with using_header_macros(two):
        assert base.header_macros_for(src, False) == {b"A": b"y;"}
        assert base.header_macros_for(src, True) == {}
    with using_header_macros(None):
        assert base.header_macros_for(src) == {}


def test_kernel_macros_from_kept_body_facts_match_a_fresh_reading():
    from shaderlint.model import expand
    from shaderlint.project.macros import MacroDef

    def fresh(table, language):
        pattern = expand.kernel_pattern(language)
        names = {n for n, d in table.items() if d.params is not None and expand.defines_kernel(pattern, d.body)}
        while True:
            more = {n for n, d in table.items() if n not in names and set(expand._WORD.findall(d.body)) & names}
            if not more:
                return names
            names |= more

    def table(**bodies):
        return {n: MacroDef(n, ("x",) if not n.startswith("O") else None, b, "h.h", 1, 9) for n, b in bodies.items()}

    tables = [table(K="__global__ void x() {}", W="K(a) K(b)", V="W(c)", N="int x", OK="K(z)"),
              table(K="\"__global__\"", W="K(a)"), table(K="x", W="__global__ void k()"),
              table(K="__global__ void x() {}", W="K(a) K(b)", V="W(c)", N="int x", OK="K(z)")]
    for _ in range(2):  # (the second time from the kept facts)
        for t in tables:
            assert expand.kernel_macros(t, "cuda") == fresh(t, "cuda")
    assert expand.kernel_macros(tables[0], "cuda") == {"K", "W", "V", "OK"}
    assert expand.kernel_macros(tables[0], "glsl") == set()
