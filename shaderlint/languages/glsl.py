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
Also masked: mesh/task qualifiers (``taskPayloadSharedEXT``, ``perprimitiveEXT``), the
parameters of cooperative matrix/vector types (``coopvecNV<float32_t, 4>``), array sizes of
``T[N] name`` declarations and array-returning functions (``vec4[2] f()``), GL_EXT_spirv_intrinsics
declarations, ``#undef`` lines, ``#include`` inside a parameter list, a swizzle macro defined as
``.x`` or nothing, and header statement macros the file ``#undef``s; an ``else`` that only one
build compiles after its ``if`` (``} #ifdef X else {...} #endif``) is read with its directives
blanked, recorded as a "conditional" mask.
"""

from __future__ import annotations

import re

import tree_sitter as ts
import tree_sitter_glsl

from shaderlint.languages.base import (
    header_macros_for,
    _BALANCED, _CONDITIONAL, _OBJ_MACRO, FrontEnd, Mask, _blank, _code_only, _condition_text, _flat_conditional_groups,
    _macro_argument_semicolons, _next_code, _prev_code_byte, mask_dangling_else, split_args,
    mask_unbalanced_conditionals,
    _strip_comments, mask_loop_macros, mask_split_headers, match_at, name_asks_unroll,
    on_directive_line, scan_code, scan_directives, code_matches_at,
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
# Mesh and task shader qualifiers the grammar does not know (GL_EXT_mesh_shader's `taskPayloadSharedEXT
# Task payload;`, `perprimitiveEXT out vec4 c[];`, GL_NV_mesh_shader's `taskNV out Task {...}`,
# `perprimitiveNV`, `perviewNV`, and GL_EXT_fragment_shader_barycentric's `pervertexEXT in vec4 v[];`):
# storage and interpolation qualifiers that bear on no rule (the task payload is not workgroup memory
# the sharing rules reason about: it is written by one stage and read by the next).
_MESH_QUALIFIERS = (b"taskPayloadSharedEXT", b"perprimitiveEXT", b"perprimitiveNV", b"perviewNV", b"taskNV",
                    b"pervertexEXT", b"pervertexNV")
_MESH_QUALIFIER = re.compile(rb"(?<![\w#.])(?:" + b"|".join(_MESH_QUALIFIERS) + rb")\b(?=[ \t\r\n]*[A-Za-z_])")
# The parameters of GL_KHR_cooperative_matrix, GL_NV_cooperative_vector and GL_NV_cooperative_matrix2
# types (`coopvecNV<float32_t, 4> v;`, `coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA>`,
# `tensorLayoutNV<2>`): the grammar read `coopvecNV < float32_t, 4 > v` as comparisons (or, in a
# signature or after `const`, not at all). The angle-bracket list is blanked: the declaration reads as
# one of type `coopvecNV` (the mask keeps the parameters), a constructor as a call.
_PARAMETERIZED_TYPES = (b"coopmat", b"coopvecNV", b"tensorLayoutNV", b"tensorViewNV",
                        b"fcoopmatNV", b"icoopmatNV", b"ucoopmatNV")
_TYPE_PARAMETERS = re.compile(rb"(?<![\w#.])(?:" + b"|".join(_PARAMETERIZED_TYPES)
                              + rb")[ \t]*(<[\w \t\r\n,+\-*/().]*>)")
# GL_EXT_spirv_intrinsics: `spirv_instruction(extensions = [...], id = 6916)` before a function
# declaration, `spirv_decorate(...)`, `spirv_execution_mode(...)` lines, `spirv_by_reference`/
# `spirv_literal` parameter qualifiers. Blanked (the declaration they qualify stays).
_SPIRV_CALL = re.compile(rb"(?<![\w#.])spirv_(?:instruction|decorate|decorate_id|decorate_string|execution_mode|"
                         rb"execution_mode_id|storage_class|type)[ \t]*" + _BALANCED + rb"(?:[ \t]*;(?=[ \t]*\r?$))?", re.M)
_SPIRV_WORD = re.compile(rb"(?<![\w#.])spirv_(?:by_reference|literal)\b")
# `T[N] name` declarations (`const uint16_t[4] scales = ...;`, `const uint[1024] grid = {...};`), and
# functions returning arrays (`vec4[2] pair(uint i) {`) or taking them (`f(float[4] w)`): the grammar
# reads only `T name[N]`. The size is blanked (the tokens cannot move: node text is read from the
# source), so the variable or return value reads as a scalar: rules about arrays stay silent on it.
_ARRAY_TYPE_DECL = re.compile(rb"(?<![\w.])(?:const[ \t]+)?[A-Za-z_]\w*[ \t]*(\[[ \t]*\w*[ \t]*\])[ \t]+[A-Za-z_]\w*[ \t]*(?=[=;,\[()])")
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
# `#undef NAME`: tree-sitter-glsl reads no argument after `#undef` (a parse error at file scope and in
# a body alike). The line is blanked; what it undefines is read from the text (conditions.py,
# model/preproc.py), not the tree.
_UNDEF_LINE = re.compile(rb"^[ \t]*#[ \t]*undef[ \t]+([A-Za-z_]\w*)", re.M)
_SUFFIX = re.compile(rb"(?<![\w.])(?:\d+(?:\.\d*)?(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)(hf|HF)\b")


class GlslFrontEnd(FrontEnd):
    name = "glsl"
    extensions = tuple(STAGES) + (".glsl",)

    @classmethod
    def grammar(cls) -> ts.Language:
        return ts.Language(tree_sitter_glsl.language())

    def mask(self, source: Source, buf: bytearray, extra_macros=None) -> list[Mask]:
        """``extra_macros``: macros defined outside the file (its headers': a mapping from name to
        ``shaderlint.project.macros.MacroDef``), used as statements without ``;``."""
        masks: list[Mask] = []
        for m in scan_code(source, _LAYOUT_INOUT, starts=(b"layout",)):
            args = tuple(a.strip() for a in split_args(m.group(1).decode("utf-8", "replace")))
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
        for m in scan_code(source, _CONST_IN, _CONST_IN_NEEDS, (b"const",)):
            masks.append(Mask(m.start(1), m.end(1), "qualifier", "in"))
            _blank(buf, m.start(1), m.end(1))
        for m in scan_code(source, _SCOPE_COHERENT, starts=(
                b"workgroupcoherent", b"queuefamilycoherent", b"subgroupcoherent", b"devicecoherent", b"nonprivate")):
            masks.append(Mask(m.start(), m.end(), "qualifier", m.group(0).decode()))
            _blank(buf, m.start(), m.end())
        for m in scan_code(source, _MESH_QUALIFIER, starts=_MESH_QUALIFIERS):
            masks.append(Mask(m.start(), m.end(), "qualifier", m.group(0).decode()))
            _blank(buf, m.start(), m.end())
        for m in scan_code(source, _TYPE_PARAMETERS, starts=_PARAMETERIZED_TYPES):
            if bytes(buf[m.start(1):m.end(1)]) == m.group(1):
                masks.append(Mask(m.start(1), m.end(1), "type-parameters", m.group(1).decode("utf-8", "replace")))
                _blank(buf, m.start(1), m.end(1))
        for m in scan_code(source, _SPIRV_CALL, b"spirv_"):
            if bytes(buf[m.start():m.end()]) == m.group(0):
                masks.append(Mask(m.start(), m.end(), "spirv-intrinsic", m.group(0).decode("utf-8", "replace")))
                _blank(buf, m.start(), m.end())
        for m in scan_code(source, _SPIRV_WORD, b"spirv_"):
            masks.append(Mask(m.start(), m.end(), "qualifier", m.group(0).decode()))
            _blank(buf, m.start(), m.end())
        # before `T[N] name`: `data_i[0] SWIZZLE)` is no declaration
        masks.extend(_mask_postfix_macros(source, buf))
        for m in code_matches_at(source, _ARRAY_TYPE_DECL, _array_type_starts(source.data)):
            if bytes(buf[m.start():m.end()]) == m.group(0) and _starts_declaration(source, buf, m.start()):
                masks.append(Mask(m.start(1), m.end(1), "array-type", m.group(1).decode("utf-8", "replace")))
                _blank(buf, m.start(1), m.end(1))
        for m in scan_code(source, _SUFFIX, (b"hf", b"HF")):
            masks.append(Mask(m.start(1), m.end(1), "suffix", m.group(1).decode()))
            _blank(buf, m.start(1), m.end(1))
        masks.extend(mask_loop_macros(source, buf))
        masks.extend(_mask_loop_prefix_macros(source, buf))
        masks.extend(_mask_argument_tail_macros(source, buf))
        masks.extend(_mask_list_includes(source, buf))
        masks.extend(_mask_conditional_else(source, buf))
        for m in scan_directives(source, _UNDEF_LINE):
            if not source.in_comment_or_string(m.start(1)) and bytes(buf[m.start():m.end()]) == m.group(0):
                masks.append(Mask(m.start(), m.end(), "undef", m.group(1).decode()))
                _blank(buf, m.start(), m.end())
        for m in scan_code(source, _ERROR_LINE, b"error"):
            masks.append(Mask(m.start(), m.end(), "preproc-error", m.group(0).decode("utf-8", "replace").strip()))
            _blank(buf, m.start(), m.end())
        masks.extend(mask_unbalanced_conditionals(source, buf))
        masks.extend(mask_dangling_else(source, buf))
        masks.extend(mask_split_headers(source, buf))
        # `case X: FA_DEQUANT4(k_packed)` with `#define FA_DEQUANT4(BUF) return ...;` (llama.cpp's
        # flash-attention shaders): the same pass as CUDA's, for macros the file defines as statements
        masks.extend(mask_statement_macro_calls(source, buf, defined_only=True))
        masks.extend(_mask_outside_statement_macros(source, buf, extra_macros))
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


def _array_type_starts(data: bytes) -> list[int]:
    """Where _ARRAY_TYPE_DECL can match, found from each ``] name`` (_BRACKET_NAME, a literal first byte):
    back over the brackets, blanks and the type name (the whole word: not after a word byte), and before
    that over blanks and ``const`` (a pattern opening with a look-behind is tried at every byte)."""
    out = []
    for m in _BRACKET_NAME.finditer(data):
        i = m.start()  # the `]`
        while i > 0 and data[i - 1] in b" \t":
            i -= 1
        while i > 0 and data[i - 1] in _WORD_BYTES:
            i -= 1
        while i > 0 and data[i - 1] in b" \t":
            i -= 1
        if i == 0 or data[i - 1] != 0x5B:  # `[`
            continue
        i -= 1
        while i > 0 and data[i - 1] in b" \t":
            i -= 1
        end = i
        while i > 0 and data[i - 1] in _WORD_BYTES:
            i -= 1
        if i == end:
            continue
        j = i
        while j > 0 and data[j - 1] in b" \t":
            j -= 1
        if j < i and data.endswith(b"const", 0, j):
            out.append(j - 5)  # (tried first: a match there holds the one at the type name)
        out.append(i)
    return out


_WORD_BYTES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
_WORD_BEFORE = re.compile(rb"([A-Za-z_]\w*)[ \t\r\n]*$")


def _starts_declaration(source: Source, buf: bytearray, pos: int) -> bool:
    """``pos`` can start a declaration or parameter: after ``;``, a brace, ``(``, ``,``, a directive
    line, the start of the file or a qualifier word (``in float[4] w``), not inside an expression
    (``x = data[0] SWIZZLE;``, where ``data[0] SWIZZLE`` is no ``T[N] name``)."""
    before, at = _prev_code_byte(source, buf, pos)
    if before in (b";", b"{", b"}", b"(", b",", b""):
        return True
    w = _WORD_BEFORE.search(bytes(buf[max(0, at - 40):at + 1]))
    return w is not None and w.group(1) in _QUALIFIER_WORDS


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
    for m in match_at(data, _DECL_MACRO_LINE, source.upper_line_starts):
        s, e = m.start(1), m.end(0)
        if source.in_comment_or_string(s) or bytes(buf[s:e]) != data[s:e]:
            continue
        define = re.compile(rb"^[ \t]*#[ \t]*define[ \t]+" + re.escape(m.group(1)) + rb"\b", re.M)
        if next(match_at(data, define, source.directive_starts), None) is not None:  # (not kept: one name's)
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


def _mask_postfix_macros(source: Source, buf: bytearray) -> list[Mask]:
    """Blank uses, right after an operand, of object-like macros the file defines as nothing in one
    branch and as a member access in the others (``#if B_SIZE == 64`` ``#define DATA_I_SWIZZLE .x``
    ``#else`` ``#define DATA_I_SWIZZLE`` ``#endif``, used as ``data_i[i] DATA_I_SWIZZLE;``): the
    expression reads as it expands with the empty definition."""
    bodies = _macro_bodies(source)
    names = [n for n, bs in bodies.items()
             if any(not b.strip() for b in bs) and any(b.strip() for b in bs)
             and all(not b.strip() or re.fullmatch(rb"\s*\.[A-Za-z_]\w*\s*", b) for b in bs)]
    if not names:
        return []
    data = source.data
    pattern = re.compile(rb"(?<![\w#])(?:" + b"|".join(re.escape(n) for n in names) + rb")(?!\w)")
    out = []
    for m in scan_code(source, pattern):
        s, e = m.start(), m.end()
        if on_directive_line(data, s) or bytes(buf[s:e]) != m.group(0):
            continue
        before, _ = _prev_code_byte(source, buf, s)
        if not (before in (b"]", b")") or before.isalnum() or before == b"_"):
            continue
        nxt = _next_code(buf, e)
        if buf[nxt:nxt + 1] not in (b";", b")", b",", b"]", b"}") and not re.match(rb"[-+*/%<>=!&|^?:.]", buf[nxt:nxt + 1]):
            continue
        out.append(Mask(s, e, "qualifier", m.group(0).decode()))
        _blank(buf, s, e)
    return out


_INCLUDE_LINE = re.compile(rb"^[ \t]*#[ \t]*include\b[^\n]*", re.M)


def _mask_list_includes(source: Source, buf: bytearray) -> list[Mask]:
    """Blank ``#include`` lines inside a parenthesized list (a parameter list that takes some of its
    parameters from a file: ``float g(`` ``#include "params.glsl"`` ``float c) {``): the grammar has
    no place for a directive there, and the function read as a parse error. The list reads with the
    parameters written in the file (those of the header are unknown, as everything the header
    declares)."""
    data = source.data
    out = []
    for m in scan_directives(source, _INCLUDE_LINE):
        s, e = m.start(), m.end()
        if source.in_comment_or_string(s) or bytes(buf[s:e]) != data[s:e]:
            continue
        before, _ = _prev_code_byte(source, buf, s)
        if before not in (b"(", b",") or _innermost_opener(source, buf, s) != b"(":
            continue  # not in an initializer list `{ 1.0,` `#include "rest.inc"` `}`: its values would be lost
        out.append(Mask(s, e, "include-in-list", m.group(0).decode("utf-8", "replace").strip()))
        _blank(buf, s, e)
    return out


def _innermost_opener(source: Source, buf: bytearray, pos: int, limit: int = 4096) -> bytes:
    """The unclosed ``(``, ``[`` or ``{`` that ``pos`` is in (code only, searched back ``limit``
    bytes; b"" when none is found)."""
    depth = 0
    lo = max(0, pos - limit)
    i = pos
    while i > lo:
        i -= 1
        c = buf[i]
        if c not in b"()[]{}" or source.in_comment_or_string(i) or on_directive_line(source.data, i):
            continue
        if c in b")]}":
            depth += 1
        elif depth:
            depth -= 1
        else:
            return bytes([c])
    return b""


def _mask_conditional_else(source: Source, buf: bytearray) -> list[Mask]:
    """An ``else`` branch that only one build has, after the ``if`` it continues::

        if (aligned != 0) {
            ...
        }
        #ifdef COOPMAT2
        else {
            coopMatPerElementNV(matC, matC, perElemOpStore);
        }
        #endif

    The grammar cannot continue an ``if`` across a directive, and the function read as a parse error
    (llama.cpp's conv2d shaders). The directive lines are blanked, so the code reads as if the
    condition held, recorded as a "conditional" mask as the unbalanced-branch pass records it (the
    model still knows the ``else`` is compiled under its condition only). Only a group without
    ``#else``/``#elif`` whose code starts with ``else`` right after a ``}``."""
    data = source.data
    if b"else" not in data:
        return []
    out: list[Mask] = []
    for group in _flat_conditional_groups(source, buf, _CONDITIONAL):
        if len(group) != 2 or any(buf[d.start()] != data[d.start()] for d in group):
            continue
        code = _code_only(source, group[0].end(), group[1].start()).lstrip()
        if not re.match(rb"else\b", code):
            continue
        before, _ = _prev_code_byte(source, buf, group[0].start())
        if before != b"}":
            continue
        read = ("read", group[0].group(1).decode(), _condition_text(group[0]), "1")
        for d in group:
            out.append(Mask(d.start(), d.end(), "conditional", d.group(0).decode("utf-8", "replace"), "else-branch",
                            read if d is group[0] else ("end",)))
            _blank(buf, d.start(), d.end())
    return out


_UNDEF = re.compile(rb"^[ \t]*#[ \t]*undef[ \t]+([A-Za-z_]\w*)", re.M)


def _mask_outside_statement_macros(source: Source, buf: bytearray, extra_macros=None) -> list[Mask]:
    """Blank invocations of function-like macros defined outside the file, used as statements
    without a ``;`` (``PREFETCH_BLOCK(start_k)`` before ``}``: llama.cpp's mul_mmq_cm1.comp takes
    them from an included file). A name counts as such a macro when the file ``#undef``s it or it is
    among ``extra_macros`` (its headers' macros); the file's own statement macros are
    ``mask_statement_macro_calls``'s. Only upper-case names at the start of a statement (after ``;``,
    ``{``, ``}``), whose closing ``)`` is followed by ``}`` or the start of another statement. The
    invocation is opaque to the analysis (a "macro-invocation" mask: it may touch any memory)."""
    data = source.data
    names = {m.group(1) for m in scan_directives(source, _UNDEF) if not source.in_comment_or_string(m.start(1))}
    if extra_macros:
        names |= {n.encode() for n, d in extra_macros.items() if getattr(d, "params", None) is not None}
    names |= set(header_macros_for(source, True))  # the project context's headers (shaderlint.project)
    names = {n for n in names if re.fullmatch(rb"[A-Z_][A-Z0-9_]*", n) and n.strip(b"_")}
    if not names:
        return []
    defined = set(_function_macro_names(source))
    names -= defined
    if not names:
        return []
    pattern = re.compile(rb"(?<![\w.#])(" + b"|".join(re.escape(n) for n in sorted(names)) + rb")[ \t]*\(")
    out = []
    for m in scan_code(source, pattern):
        s = m.start(1)
        if on_directive_line(data, s) or bytes(buf[s:m.end()]) != data[s:m.end()]:
            continue
        before, _ = _prev_code_byte(source, buf, s)
        if before not in (b";", b"{", b"}"):
            continue
        found = _macro_argument_semicolons(data, m.end() - 1)
        if found is None or found[0]:
            continue
        close = found[1]
        nxt = _next_code(buf, close + 1)
        if not re.match(rb"[A-Za-z_}\[]", buf[nxt:nxt + 1]):
            continue  # `;` (an ordinary call statement), an operator, end of file
        out.append(Mask(s, close + 1, "macro-invocation", data[s:close + 1].decode("utf-8", "replace")))
        _blank(buf, s, close + 1)
    return out


_FUNC_DEFINE = re.compile(rb"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)\(", re.M)


def _function_macro_names(source: Source) -> list[bytes]:
    return [m.group(1) for m in scan_directives(source, _FUNC_DEFINE) if not source.in_comment_or_string(m.start(1))]
