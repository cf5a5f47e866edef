"""GLSL front end (tree-sitter-glsl, which extends tree-sitter-c).

tree-sitter-glsl was chosen over tree-sitter-glsl-spec because its node
vocabulary is the C one shared with the C++/CUDA grammars, so a single kernel
model serves all three languages; the constructs it cannot read are masked:
``layout(...) in;``/``out;`` (workgroup size, geometry/tessellation layouts),
``precision`` statements, the ``hf`` literal suffix of float16 literals, the
``restrict`` qualifier, Godot's ``#[compute]`` section lines and the uses of
macros the file defines as qualifiers or nothing (``#define COMPAT_PRECISION
mediump``). Loop-header macros (``UNROLL_FOR (int i = 0; i < n; ++i)``) are
read as ``for``; an ``else`` that ends a preprocessor branch is blanked.
"""

from __future__ import annotations

import re

import tree_sitter as ts
import tree_sitter_glsl

from shaderlint.languages.base import (
    _OBJ_MACRO, FrontEnd, Mask, _blank, _next_code, _prev_code_byte, _split_args, mask_dangling_else,
    mask_unbalanced_conditionals,
    _strip_comments, line_starts_with, mask_loop_macros, mask_split_headers, match_at, name_asks_unroll,
    on_directive_line, scan_code, scan_directives,
)
from shaderlint.languages.cuda import mask_statement_macro_calls
from shaderlint.model.source import Source

STAGES = {
    ".comp": "compute", ".vert": "vertex", ".frag": "fragment", ".geom": "geometry",
    ".tesc": "tess_control", ".tese": "tess_evaluation", ".mesh": "mesh", ".task": "task",
    ".rgen": "raygen", ".rchit": "closest_hit", ".rmiss": "miss", ".rahit": "any_hit",
    ".rint": "intersection", ".rcall": "callable",
}

_LAYOUT_INOUT = re.compile(rb"\blayout\s*\(([^()]*(?:\([^()]*\)[^()]*)*)\)\s*(in|out)\s*;")
_PRECISION = re.compile(rb"\bprecision\s+(lowp|mediump|highp)\s+\w+\s*;")
# Array constructors `float[](...)`, `vec2[3](...)`: the brackets are masked so the grammar sees a call.
_ARRAY_CTOR = re.compile(rb"\b[A-Za-z_]\w*\s*(\[[^\]\[;{}]*\])\s*\(")
_BRACKET_CALL = re.compile(rb"\]\s*\(")  # what every match holds, found fast
# `\d+(?:\.\d*)?`, not `\d+\.?\d*`: the latter splits a digit run two ways and takes quadratic time on long ones.
# `restrict` next to GLSL's memory qualifiers (`uniform restrict readonly image2D`,
# `restrict buffer B {`) confuses the grammar; it is an aliasing hint with no bearing on the analysis.
_RESTRICT = re.compile(rb"(?<![\w#])restrict\b")
# Godot's `.glsl` files open each stage with a section line (`#[compute]`, `#[vertex]`).
_SECTION = re.compile(rb"^[ \t]*#\[[A-Za-z_]\w*\][ \t]*$", re.M)
# Object-like macros of the file that stand for qualifiers or for nothing, whichever branch defines
# them: RetroArch's `#define COMPAT_PRECISION mediump` / `#define COMPAT_PRECISION` (GLSL ES or not),
# `#define COMPAT_VARYING varying` / `out` / `in` (per stage) before declarations.
_QUALIFIER_WORDS = frozenset((
    b"lowp", b"mediump", b"highp", b"precise", b"invariant", b"flat", b"smooth", b"noperspective",
    b"centroid", b"sample", b"in", b"out", b"inout", b"varying", b"attribute", b"uniform", b"const",
    b"readonly", b"writeonly", b"coherent", b"volatile", b"restrict", b"shared", b"buffer",
))
# A file-scope line holding one upper-case macro invocation and no semicolon, defined elsewhere:
# Blender's `COMPUTE_SHADER_CREATE_INFO(eevee_depth_of_field_reduce)` (expands to nothing when the
# shader is compiled, to its resource declarations for C++ tooling).
_DECL_MACRO_LINE = re.compile(rb"^[ \t]*([A-Z][A-Z0-9_]*)[ \t]*\([\w, \t]*\)[ \t]*(?://[^\n]*)?\r?$", re.M)
_COMMENT_OR_STRING = re.compile(rb"//[^\n]*|/\*.*?\*/|\"(?:[^\"\\\n]|\\.)*\"", re.S)
# A constructor of a type that C also has, right after '(' (`(float(bits & 3u) - 1.0)`, `(int(a) / 2)`,
# `(uint32_t(x) << 16)`): tree-sitter-c reads `(float(x)` as the start of a cast to a function type.
# The name is rewritten in the parse buffer only (same length, not a type name): the model reads node
# text from the source, so the call's name is still `float`, as it is without the parenthesis.
_PAREN_CTOR = re.compile(rb"\((?=[ \t]*(bool|char|int|float|double|u?int(?:8|16|32|64)_t)[ \t]*\()")
# `const in T x` parameters: the grammar reads `const in` as two type words. `in` is the default
# direction, so `const in` means `const`; the `in` is blanked.
_CONST_IN = re.compile(rb"(?<![\w#])const[ \t]+(in)(?!\w)")
_CONST_IN_NEEDS = re.compile(rb"const[ \t]+in")  # what every match holds, found fast
# GL_KHR_memory_scope_semantics qualifiers the grammar does not know (`workgroupcoherent buffer B`);
# like `coherent`, they bear on no rule.
_SCOPE_COHERENT = re.compile(rb"(?<![\w#])(?:workgroupcoherent|queuefamilycoherent|subgroupcoherent|devicecoherent|nonprivate)\b")
# `T[N] name` declarations (`const uint16_t[4] scales = ...;`, `const uint[1024] grid = {...};`): the
# grammar reads only `T name[N]`. The size is blanked (the tokens cannot move: node text is read from
# the source), so the variable reads as a scalar: rules about arrays stay silent on it.
_ARRAY_TYPE_DECL = re.compile(rb"(?<![\w.])(?:const[ \t]+)?[A-Za-z_]\w*[ \t]*(\[[ \t]*\w*[ \t]*\])[ \t]+[A-Za-z_]\w*[ \t]*(?=[=;,\[])")
_BRACKET_NAME = re.compile(rb"\][ \t]+[A-Za-z_]")  # what every match holds, found fast
# `UNROLL for (...)`: an upper-case word the file does not define (llama.cpp passes
# `-DUNROLL=[[unroll]]` or `-DUNROLL=` when compiling), or defines as nothing or an attribute,
# right before a loop keyword at the start of a statement. Blanked; a name asking for unrolling
# reads like `#pragma unroll` (the model's "unroll-macro" mask).
# (The look-behind `(?<![\w#.])` stands after the name's first byte: the same matches, and the regex engine
# skips to upper-case bytes instead of trying the look-behind at every byte.)
_LOOP_PREFIX_MACRO = re.compile(rb"([A-Z](?<![\w#.][A-Z])[A-Z0-9_]*)[ \t]+(?=(?:for|while|do)\b)")
# `#error` lines: the grammar rejects them in an `#else` branch (`#else` / `#error unsupported` /
# `#endif`); they hold no code.
_ERROR_LINE = re.compile(rb"^[ \t]*#[ \t]*error\b[^\n]*", re.M)
_SUFFIX = re.compile(rb"(?<![\w.])(?:\d+(?:\.\d*)?(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)(hf|HF)\b")


class GlslFrontEnd(FrontEnd):
    name = "glsl"
    extensions = tuple(STAGES) + (".glsl",)

    @classmethod
    def grammar(cls) -> ts.Language:
        return ts.Language(tree_sitter_glsl.language())

    def mask(self, source: Source, buf: bytearray) -> list[Mask]:
        masks: list[Mask] = []
        for m in scan_code(source, _LAYOUT_INOUT, starts=(b"layout",)):
            args = tuple(a.strip() for a in _split_args(m.group(1).decode("utf-8", "replace")))
            masks.append(Mask(m.start(), m.end(), "layout", m.group(0).decode("utf-8", "replace"), m.group(2).decode(), args))
            _blank(buf, m.start(), m.end())
        for m in scan_code(source, _PRECISION, starts=(b"precision",)):
            masks.append(Mask(m.start(), m.end(), "precision", m.group(0).decode()))
            _blank(buf, m.start(), m.end())
        for m in scan_code(source, _ARRAY_CTOR, _BRACKET_CALL):
            masks.append(Mask(m.start(1), m.end(1), "array-constructor", m.group(1).decode("utf-8", "replace")))
            _blank(buf, m.start(1), m.end(1))
        for m in scan_code(source, _RESTRICT, starts=(b"restrict",)):
            masks.append(Mask(m.start(), m.end(), "qualifier", "restrict"))
            _blank(buf, m.start(), m.end())
        for m in scan_code(source, _SECTION, b"#["):
            masks.append(Mask(m.start(), m.end(), "section", m.group(0).decode("utf-8", "replace").strip()))
            _blank(buf, m.start(), m.end())
        for m in scan_code(source, _PAREN_CTOR):
            s, e = m.start(1), m.end(1)
            if bytes(buf[s:e]) == m.group(1):
                masks.append(Mask(s, e, "constructor-name", m.group(1).decode()))
                buf[s + 1:e] = b"_" * (e - s - 1)
        for m in scan_code(source, _CONST_IN, _CONST_IN_NEEDS):
            masks.append(Mask(m.start(1), m.end(1), "qualifier", "in"))
            _blank(buf, m.start(1), m.end(1))
        for m in scan_code(source, _SCOPE_COHERENT, starts=(
                b"workgroupcoherent", b"queuefamilycoherent", b"subgroupcoherent", b"devicecoherent", b"nonprivate")):
            masks.append(Mask(m.start(), m.end(), "qualifier", m.group(0).decode()))
            _blank(buf, m.start(), m.end())
        for m in scan_code(source, _ARRAY_TYPE_DECL, _BRACKET_NAME):
            if bytes(buf[m.start(1):m.end(1)]) == m.group(1):
                masks.append(Mask(m.start(1), m.end(1), "array-type", m.group(1).decode("utf-8", "replace")))
                _blank(buf, m.start(1), m.end(1))
        for m in scan_code(source, _SUFFIX, (b"hf", b"HF")):
            masks.append(Mask(m.start(1), m.end(1), "suffix", m.group(1).decode()))
            _blank(buf, m.start(1), m.end(1))
        masks.extend(mask_loop_macros(source, buf))
        masks.extend(_mask_loop_prefix_macros(source, buf))
        masks.extend(_mask_argument_tail_macros(source, buf))
        for m in scan_code(source, _ERROR_LINE, b"error"):
            masks.append(Mask(m.start(), m.end(), "preproc-error", m.group(0).decode("utf-8", "replace").strip()))
            _blank(buf, m.start(), m.end())
        masks.extend(mask_unbalanced_conditionals(source, buf))
        masks.extend(mask_dangling_else(source, buf))
        masks.extend(mask_split_headers(source, buf))
        # `case X: FA_DEQUANT4(k_packed)` with `#define FA_DEQUANT4(BUF) return ...;` (llama.cpp's
        # flash-attention shaders): the same pass as CUDA's, for macros the file defines as statements
        masks.extend(mask_statement_macro_calls(source, buf, defined_only=True))
        masks.extend(_mask_qualifier_macros(source, buf))
        masks.extend(_mask_declaration_macro_lines(source, buf))
        masks.sort(key=lambda k: k.start)
        return masks

    def stage_for(self, path: str, source: Source) -> str | None:
        for ext, stage in STAGES.items():
            if path.endswith(ext):
                return stage
        # `.glsl`: decide by content.
        data = source.data
        if re.search(rb"\blayout\s*\([^)]*local_size_[xyz]", data) or b"gl_GlobalInvocationID" in data or b"gl_LocalInvocation" in data:
            return "compute"
        if b"gl_FragCoord" in data or b"gl_FragDepth" in data or re.search(rb"\bdiscard\s*;", data):
            return "fragment"
        if b"gl_Position" in data or b"gl_VertexIndex" in data or b"gl_VertexID" in data:
            return "vertex"
        return None


def _macro_bodies(source: Source) -> dict[bytes, list[bytes]]:
    """The bodies of the file's object-like macros, comments and line continuations removed."""
    bodies: dict[bytes, list[bytes]] = {}
    for m in scan_directives(source, _OBJ_MACRO):
        if not source.in_comment_or_string(m.start(1)):
            body = _strip_comments(m.group(2))
            bodies.setdefault(m.group(1), []).append(body)
    return bodies


def _mask_loop_prefix_macros(source: Source, buf: bytearray) -> list[Mask]:
    """Blank an upper-case word standing before a loop keyword at the start of a statement
    (``UNROLL for (...)``) when the file does not define it, or defines it only as nothing or an
    attribute (``[[unroll]]``). A name asking for unrolling is recorded as an "unroll-macro" mask,
    which the model reads like ``#pragma unroll``."""
    data = source.data
    bodies = _macro_bodies(source)
    out = []
    for m in scan_code(source, _LOOP_PREFIX_MACRO):
        s, e = m.start(1), m.end(1)
        name = m.group(1)
        if bytes(buf[s:e]) != name:
            continue
        if any(b and not re.fullmatch(rb"\[\[[^\[\]]*\]\]", b) for b in bodies.get(name, [])):
            continue  # defined here as something else
        if on_directive_line(data, s):
            continue
        before, _ = _prev_code_byte(source, buf, s)
        if before not in (b";", b"{", b"}", b")", b":", b""):
            continue  # not at the start of a statement
        unroll = name_asks_unroll(name)
        if any(b"unroll" in b and b"dont_unroll" not in b for b in bodies.get(name, [])):
            unroll = True
        out.append(Mask(s, e, "unroll-macro" if unroll else "qualifier", name.decode()))
        _blank(buf, s, e)
    return out


def _mask_argument_tail_macros(source: Source, buf: bytearray) -> list[Mask]:
    """Blank uses, right before a ``)``, of object-like macros the file defines only as nothing or
    as further arguments (``#define DECODEFUNCA , dequantFuncA`` / ``#define DECODEFUNCA``, used as
    ``coopMatLoadTensorNV(m, buf, off, layout DECODEFUNCA)``): the call keeps its written arguments."""
    data = source.data
    bodies = _macro_bodies(source)
    names = [n for n, bs in bodies.items() if any(bs) and all(not b or b.startswith(b",") for b in bs)]
    if not names:
        return []
    pattern = re.compile(rb"(?<![\w#])(?:" + b"|".join(re.escape(n) for n in names) + rb")(?!\w)")
    out = []
    for m in scan_code(source, pattern):
        s, e = m.start(), m.end()
        if on_directive_line(data, s) or bytes(buf[s:e]) != m.group(0):
            continue
        nxt = _next_code(buf, e)
        if buf[nxt:nxt + 1] != b")":
            continue
        out.append(Mask(s, e, "qualifier", m.group(0).decode()))
        _blank(buf, s, e)
    return out


def _mask_qualifier_macros(source: Source, buf: bytearray) -> list[Mask]:
    """Blank the uses of object-like macros whose every ``#define`` in the file is empty or a run of
    qualifier keywords (``#define COMPAT_PRECISION mediump``, ``#define COMPAT_PRECISION``): the
    grammar cannot read an unknown word in front of a declaration's type."""
    data = source.data
    bodies: dict[bytes, list[bytes]] = {}
    for m in scan_directives(source, _OBJ_MACRO):
        if not source.in_comment_or_string(m.start(1)):
            body = re.sub(rb"//[^\n]*|/\*.*?\*/", b" ", m.group(2), flags=re.S)
            bodies.setdefault(m.group(1), []).append(body)
    names = [n for n, bs in bodies.items()
             if n not in _QUALIFIER_WORDS and any(b.split() for b in bs)
             and all(set(b.split()) <= _QUALIFIER_WORDS for b in bs)]
    if not names:
        return []
    pattern = re.compile(rb"(?<![\w#])(?:" + b"|".join(re.escape(n) for n in names) + rb")(?!\w)")
    out = []
    for m in scan_code(source, pattern):
        if on_directive_line(data, m.start()):
            continue  # the #define itself, #ifdef NAME
        if bytes(buf[m.start():m.end()]) != m.group(0):
            continue
        out.append(Mask(m.start(), m.end(), "qualifier", m.group(0).decode()))
        _blank(buf, m.start(), m.end())
    return out


def _mask_declaration_macro_lines(source: Source, buf: bytearray) -> list[Mask]:
    """Blank file-scope lines that hold nothing but an invocation of an upper-case function-like
    macro this file does not define, with no semicolon, between declarations (not before a ``{`` or
    a ``;``, which would make it part of a declaration)."""
    data = source.data
    out = []
    for m in match_at(data, _DECL_MACRO_LINE, line_starts_with(data, rb"[A-Z]")):
        s, e = m.start(1), m.end(0)
        if source.in_comment_or_string(s) or bytes(buf[s:e]) != data[s:e]:
            continue
        define = re.compile(rb"^[ \t]*#[ \t]*define[ \t]+" + re.escape(m.group(1)) + rb"\b", re.M)
        if next(scan_directives(source, define), None) is not None:
            continue  # defined here: the other macro masks decide
        before, _ = _prev_code_byte(source, buf, s)
        if before not in (b";", b"}", b""):
            continue
        nxt = _next_code(buf, e)
        if nxt < len(buf) and buf[nxt:nxt + 1] in (b"{", b";", b"(", b"="):
            continue
        depth = 0
        for piece in re.split(_COMMENT_OR_STRING, bytes(buf[:s])):
            depth += piece.count(b"{") - piece.count(b"}")
        if depth != 0:
            continue  # inside a function or block: not a declaration-level line
        out.append(Mask(s, e, "macro-invocation", m.group(0).decode("utf-8", "replace").strip()))
        _blank(buf, s, e)
    return out
