"""CUDA C++ front end (tree-sitter-cuda).

The grammar knows ``__global__``/``__device__``/``__shared__``/``__constant__``,
``__launch_bounds__`` and ``<<<grid, block, smem, stream>>>`` launches; host
code in the same file is parsed too and read only for launch sites. Masked:
``__align__(n)`` (unknown to the grammar) and the execution-space specifiers of
extended lambdas (``[=] __device__ (float x) {...}``), and the template
arguments of an explicit specialization of a call operator
(``template <> __device__ int F::operator()<float>(...)``), which the grammar
cannot read after ``operator()``; the specialization is read as ``F::operator()``.

Header macros standing for qualifiers before a function's return type (cudf's ``CUDF_KERNEL void
f(...)`` with ``#define CUDF_KERNEL __global__ static`` in a header, ``TORCH_API``-style export
macros) are masked too: one or more upper-case names followed by a return type, a name and ``(``.
When the file ``#define``s the name as qualifiers only (``__global__``, ``__device__``, ``__host__``,
``static``, ``inline``, ...), the function gets the qualifiers of the expansion (a kernel, a device
function). When the definition is not in the file, or expands to anything else (``__launch_bounds__``
included), nothing is known about the function: it reads as host code, so no device-code rule looks
at it and no kernel-only rule (launch bounds, bounds checks) reports on it. A guess that the name
means ``__global__`` would invent findings on functions that are really host or ``__host__
__device__`` code, and a macro that brings its own ``__launch_bounds__`` would make SL506 wrong.
The names may stand alone on the line before the header (CUTLASS's ``CUTLASS_DEVICE``), and the
function may be an operator (``FLASHINFER_INLINE T& operator[](size_t i)``).

Modern C++ and vendor extensions found in vLLM's csrc, each rewritten to what the grammar reads,
same length, original text kept for the analysis:

* ``obj.template operator()<T>()`` (a generic lambda with explicit template arguments) reads as
  ``obj()``; ``var.operator __half()`` (explicit conversion) reads as ``var``;
* ``typename T::X{...}`` / ``typename T::X(...)`` in an expression: ``typename`` is blanked;
* a primitive type name as a macro or builtin argument (``CALL(uint8_t, float)``,
  ``__builtin_bit_cast(uint32_t, x)``) reads as an identifier (its first byte becomes ``_``);
* statement macros written without a ``;`` (``AG_CASE(2)`` lines in a switch, a header check
  ``STD_TORCH_CHECK(c, "msg")`` followed by the next statement, links of an if-else chain whose
  in-file bodies open with ``else``) are blanked: their text is lost to the analysis, launches in
  their arguments included (a miss, never an invented finding);
* GNU type attributes (``ext_vector_type``, ``vector_size``, ``address_space``) are blanked, so a
  vector typedef reads as its scalar type; attributes between a lambda's parameters and body,
  ``__cluster_dims__(...)``, ``__device__`` before ``struct`` (ignored by nvcc), ``= {}`` default
  arguments and block comments inside multi-line ``#define`` bodies are blanked too;
* ``#if``/``#endif`` blocks whose braces only pair up across blocks have their directive lines
  blanked (the code reads as if the condition held); of ``#if``/``#else``/``#endif`` with the same
  non-zero brace balance in both branches, the ``#else`` branch is read.

Issue 16 (SL001 only where a compiler would reject the code too), each blanked or renamed in place:

* the toolkit's ``__CUDA_ALIGN__(n)`` and ``__builtin_align__(n)`` read as ``__align__(n)``;
  ``__maxnreg__(n)`` is a "launch-attribute" mask; ``using typename B::t;``, ``typeid(float)``,
  ``__host__ __device__ friend``, ``template class X<float>;`` and ``(unsigned(d) >> 2)`` read
  (:func:`mask_declaration_words`);
* header macros where no code can stand: after a string literal (``"%" PRId64 "\n"``, an inline-PTX
  ``L2_CACHEHINT(128)``), between a return type and a function's name (``size_t XGBOOST_DEVICE f(``),
  before a variable's specifiers (``MANAGED __device__ int x;``), after a list's last name
  (``uint8_t* smem PROFILER_CLOSURE_FUNC_PARAMS)``), as an invocation before an argument's name
  (``ROCM_ONLY((void *)) kernel``); a statement macro without ``;`` before a local declaration;
  qualifier macros before launch bounds in an ``#ifdef`` group (``CUTLASS_GLOBAL``);
* if-else links built from macros whose bodies invoke ``else if`` macros.

When an unreadable region is attributable to one upper-case name the file neither defines nor
declares, SL001 says so (:func:`header_macro_at`): "`X` is a macro defined outside this file; add
its header to include-dirs".
"""

from __future__ import annotations

import bisect
import re

import tree_sitter as ts
import tree_sitter_cuda

from shaderlint.languages.base import (
    _BALANCED, _CONDITIONAL, _OBJ_MACRO, FrontEnd, Mask, _at_namespace_scope, _blank, _call_arguments,
    _code_braces, _is_statement_body, code_matches_at,
    _macro_argument_semicolons, header_macros_for,
    _next_code, _prev_code_byte, _strip_comments, ends_after_blanks, mask_dangling_else,
    mask_unbalanced_conditionals, on_directive_line, match_at, open_paren_of, opens_namespace, scan_code,
    scan_directives, word_starts)
from shaderlint.model.source import Source

# `__align__(n)`, also with parentheses inside (`__align__(alignof(T) * sz)`, `__align__(n * sizeof(T))`), and the
# toolkit's spellings of it (host_defines.h: `__CUDA_ALIGN__(n)`, `__builtin_align__(n)`).
_ALIGN = re.compile(rb"\b(?:__align__|__CUDA_ALIGN__|__builtin_align__)\s*" + _BALANCED)
_ALIGN_STARTS = (b"__align__", b"__CUDA_ALIGN__", b"__builtin_align__")
# `__maxnreg__(n)` on a kernel (CUDA 12.4: the register limit), unknown to the grammar.
_MAXNREG = re.compile(rb"\b__maxnreg__\s*" + _BALANCED)
# `using typename Base::index_t;` (a dependent type brought into a class), which the grammar reads without `typename`.
_USING_TYPENAME = re.compile(rb"\busing\s+(typename)\s+(?=[\w:])")
# `typeid(float)`: a type as typeid's operand (tree-sitter-cpp reads typeid of an expression only).
_TYPEID_TYPE = re.compile(rb"\btypeid\s*\(\s*(bool|char|int|float|double|void|size_t|u?int(?:8|16|32|64)_t)\s*\)")
# `__host__ __device__ friend int operator/(...)`: execution-space specifiers before `friend`.
_SPACE_BEFORE_FRIEND = re.compile(rb"\b(?:(?:__host__|__device__|__forceinline__|inline)\s+)+(?=friend\b)")
# `template class HostDeviceVector<float>;` / `extern template struct X<T, 2>;`: an explicit instantiation
# (or its declaration) of a class template, which the grammar reads without `template` as a class declaration.
_CLASS_INSTANTIATION = re.compile(
    rb"(?<![\w#])((?:extern\s+)?template)\s+(?:class|struct|union)\s+[A-Za-z_][\w:]*\s*<[^;{}]*>\s*;")
# `(unsigned(d) >> 2)`: a functional cast to a multi-word-capable type opening a parenthesized expression,
# which the grammar reads as the start of a C cast `(unsigned ...)`.
_OPEN_PAREN_CAST = re.compile(rb"\(\s*((?:unsigned|signed|long|short))\s*\((?![ \t]*[*&^)])")
# `__cluster_dims__(x, y, z)` on a kernel (thread-block clusters, sm_90), unknown to the grammar.
_CLUSTER_DIMS = re.compile(rb"\b__cluster_dims__\s*\((?:[^()]|\([^()]*\))*\)")
# An empty braced default argument, `Vec w = {}` or `Args a = {}` before `,` or `)`, which the grammar
# cannot read in a parameter list (the parameter keeps its type and name).
_EMPTY_BRACE_DEFAULT = re.compile(rb"(?<=[\w\]])[ \t]*(=[ \t]*\{[ \t]*\})(?=\s*[,)])")
_EMPTY_BRACES = re.compile(rb"=[ \t]*\{[ \t]*\}")  # what every match holds, found fast (its `=`)
_LAMBDA_SPACE = re.compile(rb"\]\s*((?:(?:__device__|__host__)\s*)+)(?=\()")
# `operator()<T>(`: template arguments (one level of nesting) between `operator()` and its parameters.
_OPERATOR_CALL_ARGS = re.compile(rb"\boperator\s*\(\s*\)\s*(<(?:[^<>(){};]|<[^<>(){};]*>)*>)(?=\s*\()")


# `obj.template operator()<T, 2>(...)`: a call of a generic lambda (or functor) with explicit template arguments.
_TEMPLATE_OPERATOR_CALL = re.compile(
    rb"(?:\.|->)\s*template\s+operator\s*\(\s*\)\s*<(?:[^<>(){};]|<(?:[^<>(){};]|<[^<>(){};]*>)*>)*>(?=\s*\()")
_TEMPLATE_OPERATOR_NEEDS = re.compile(rb"template\s+operator\s*\(")  # what every match holds, found fast

# `[&](int i) __attribute__((always_inline)) {`: a GNU attribute between a lambda's parameters and body.
_LAMBDA_ATTRIBUTE = re.compile(
    rb"\)\s*(__attribute__\s*\(\((?:[^()]|\([^()]*\))*\)\))\s*(?=\{|->|mutable\b)")
# `__device__ struct S {...};` (nvcc ignores the specifier with a warning; vLLM's mnnvl_lamport.cuh).
_SPACE_BEFORE_STRUCT = re.compile(rb"\b(?:__device__|__host__)\s+(?=(?:struct|class|union)\b)")

# `var.operator __half()`: an explicit call of a conversion operator (torch_scatter's utils.cuh), which
# the grammar cannot read; blanked from the `.` to the `)`, it reads as the converted value `var`.
_CONVERSION_CALL = re.compile(rb"(?:\.|->)\s*operator\s+(?!new\b|delete\b)[A-Za-z_][\w:]*(?:\s*[*&])*\s*\(\s*\)")

# A macro (upper-case) or compiler builtin called with a type name as an argument.
_TYPE_ARG_CALL = re.compile(rb"(?<![\w.>:#])([A-Z_][A-Z0-9_]*|__builtin_\w+)[ \t]*\(")
# The sized and plain type names tree-sitter-c reads as primitive types (keywords, not identifiers).
_PRIMITIVE_ARG = re.compile(
    rb"\s*(bool|char|int|float|double|void|size_t|ssize_t|ptrdiff_t|intptr_t|uintptr_t|char8_t|char16_t|char32_t"
    rb"|u?int(?:8|16|32|64)_t)\s*")
# What every argument list holding such an argument holds: the name between `(` or `,` and `,` or `)`.
_PRIMITIVE_ARG_SHAPE = re.compile(rb"[(,]" + _PRIMITIVE_ARG.pattern + rb"[,)]")

# An upper-case macro invoked as a statement: `NAME(...)`, the `(` opening its arguments.
_STATEMENT_CALL = re.compile(rb"(?<![\w.>:#])([A-Z_][A-Z0-9_]*)[ \t]*\(")
# Words after which a macro invocation without `;` may be a declaration's prefix (launch bounds,
# export or qualifier macros), not a statement.
_DECLARATION_WORDS = frozenset((b"template", b"__global__", b"__device__", b"__host__", b"__forceinline__",
                                b"__noinline__", b"__launch_bounds__", b"static", b"extern", b"inline", b"constexpr",
                                b"namespace", b"struct", b"class", b"union", b"enum", b"typedef", b"using", b"else",
                                b"void", b"const", b"volatile", b"__attribute__", b"__align__", b"__cluster_dims__"))
# Of those, the words that open a declaration statement in a function body (mmcv's `TORCH_CHECK(c, "msg")`
# before `void *args[] = {&p};`), where no declaration prefix stands.
_LOCAL_DECLARATION_WORDS = frozenset((b"void", b"const", b"volatile", b"static", b"constexpr", b"struct", b"class",
                                      b"union", b"enum", b"typedef", b"using"))


def _in_function_body(source: Source, buf: bytearray, pos: int) -> bool:
    """``pos`` is inside a block that is neither a namespace's nor a class's (a function's body or a block in it)."""
    data = source.data
    braces = _code_braces(source)
    depth, i = 0, bisect.bisect_left(braces, pos) - 1
    while i >= 0:
        b = braces[i]
        if data[b] == 0x7D:
            depth += 1
        elif depth:
            depth -= 1
        else:
            head = bytes(buf[max(0, b - 200):b])
            return not _in_class_body(data, braces, pos) and not opens_namespace(head)
        i -= 1
    return False


# `#define NAME(a, b, \<newline> c) body`: parameter lists may run over continuation lines.
_FUNC_MACRO_MULTILINE = re.compile(
    rb"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)\((?:[^()\n\\]|\\\r?\n)*\)((?:[^\n\\]+|\\\r?\n|\\)*)", re.M)
_CASE_BODY = re.compile(rb"(?:case|default)\b")
_ELSE_BODY = re.compile(rb"else\b")

# `typename T::X{...}` / `typename T::X(...)` in an expression: a value of a dependent type. The grammar
# reads `typename` only in declarations; without it `T::X{...}` is an ordinary braced or call expression.
_TYPENAME_EXPRESSION = re.compile(
    rb"(?<![\w])typename\s+(?:::)?\w+(?:\s*<[^;{}()]*?>)?(?:\s*::\s*(?:template\s+)?\w+(?:\s*<[^;{}()]*?>)?)+\s*[({]")
_EXPRESSION_BEFORE = (b"=", b"?", b":", b"(", b",", b"{", b";", b"}", b"[", b"!", b"&", b"|", b"+", b"-", b"*", b"/")


# GNU type attributes making vector or address-space types (AMD code under USE_ROCM, HIP headers):
# `__attribute__((ext_vector_type(4)))`, `__attribute__((__vector_size__(4 * sizeof(float))))`,
# `__attribute__((address_space(4)))`. The grammar reads none of them inside a type.
_TYPE_ATTRIBUTE = re.compile(
    rb"\b__attribute__\s*\(\(\s*(?:__)?(ext_vector_type|vector_size|address_space)(?:__)?\s*"
    rb"\((?:[^()]|\((?:[^()]|\([^()]*\))*\))*\)\s*\)\)")


def _ends_with_word(data: bytes, end: int, word: bytes) -> bool:
    """``data[:end]`` ends with the whole word ``word``."""
    return data.endswith(word, 0, end) and not (data[end - len(word) - 1:end - len(word)].isalnum()
                                              or data[end - len(word) - 1:end - len(word)] == b"_")


def _next_code_past_directives(data: bytes, pos: int) -> int:
    """Offset of the next byte that is code: not blank, not in a comment, not on a preprocessor line
    (``#ifdef``, ``#endif``, with their continuation lines)."""
    n = len(data)
    while True:
        pos += _next_code(data[pos:pos + 4096], 0)
        if pos >= n or data[pos] != 0x23:  # '#'
            return pos
        while True:  # skip the directive line and its `\` continuations
            nl = data.find(b"\n", pos)
            if nl < 0:
                return n
            if data[pos:nl].rstrip(b"\r").endswith(b"\\"):
                pos = nl + 1
                continue
            pos = nl + 1
            break


_IF_DIRECTIVE = re.compile(rb"^[ \t]*#[ \t]*(if|ifdef|ifndef|endif)\b", re.M)


def _balanced_directives(text: bytes) -> bool:
    """Every ``#if`` in ``text`` has its ``#endif`` in it (blanking the text leaves no branch half open)."""
    depth = 0
    for m in _IF_DIRECTIVE.finditer(text):
        depth += -1 if m.group(1) == b"endif" else 1
        if depth < 0:
            return False
    return depth == 0


def _statement_function_macros(source: Source) -> dict[bytes, bool | str]:
    """Function-like macros of the file -> whether every definition's body is statements (holds a
    ``;``, opens with a block, a statement keyword or a ``case`` label); "else" when every body opens
    with ``else`` (a link of an if-else chain, ``if (false) {} CASE(a) CASE(b) else {...}``)."""
    out: dict[bytes, bool | str] = {}
    calls: dict[bytes, list[bytes]] = {}  # bodies that are not statements by themselves
    for m in scan_directives(source, _FUNC_MACRO_MULTILINE):
        body = _strip_comments(m.group(2))
        ok: bool | str = "else" if _ELSE_BODY.match(body) else (
            _is_statement_body(body) or _CASE_BODY.match(body) is not None)
        prev = out.get(m.group(1), ok)
        out[m.group(1)] = ok if prev == ok else (bool(prev) and bool(ok))
        if not ok:
            calls.setdefault(m.group(1), []).append(body)
    # A body made only of invocations of statement macros is statements too (llama.cpp's
    # `#define FATTN_VEC_CASES_ALL_D(K, V) FATTN_VEC_CASE(64, K, V) FATTN_VEC_CASE(128, K, V) ...`).
    # Likewise a body made only of invocations of if-else links is a run of links (gptq_marlin's
    # `#define COMMON_GET_IF(W, S) COMMON_GET_IF_M1(W, 8, 8, 256, S) ...` over `_GET_IF(...)`, `else if (...)`).
    for _ in range(4):
        changed = False
        for name, bodies in calls.items():
            if out.get(name) in (True, "else"):
                continue
            for kind in (True, "else"):
                if all(_only_statement_calls(b, out, kind) for b in bodies):
                    out[name] = kind
                    changed = True
                    break
        if not changed:
            break
    return out


_CALL_SEQUENCE = re.compile(rb"(?:\s*([A-Za-z_]\w*)[ \t]*" + _BALANCED + rb")+\s*")
_ONE_CALL = re.compile(rb"([A-Za-z_]\w*)[ \t]*" + _BALANCED)


def _only_statement_calls(body: bytes, kinds: dict, kind: bool | str = True) -> bool:
    body = re.sub(rb"\\\r?\n", b" ", body)
    if not body.strip() or _CALL_SEQUENCE.fullmatch(body) is None:
        return False
    return all(kinds.get(c.group(1)) == kind and kinds.get(c.group(1)) is not None for c in _ONE_CALL.finditer(body))


_DEFINE_DIRECTIVE = re.compile(rb"^[ \t]*#[ \t]*define\b(?:[^\n\\]+|\\\r?\n|\\)*", re.M)
_BLOCK_COMMENT = re.compile(rb"/\*.*?\*/", re.S)


def mask_define_comments(source: Source, buf: bytearray) -> list[Mask]:
    """Blank ``/* ... */`` comments inside multi-line ``#define`` bodies (``\\`` continuation lines):
    the grammar ends the macro's text at such a comment, and the rest of the body (``} else {``) was
    read as code. Comments are still read from the original text."""
    data = source.data
    out: list[Mask] = []
    for d in scan_directives(source, _DEFINE_DIRECTIVE):
        if b"/*" not in d.group(0) or b"\\" not in d.group(0) or source.in_comment_or_string(d.start()):
            continue
        for c in _BLOCK_COMMENT.finditer(data, d.start(), d.end()):
            out.append(Mask(c.start(), c.end(), "comment", c.group(0).decode("utf-8", "replace")))
            _blank(buf, c.start(), c.end())
            for k in re.finditer(rb"\\(?=\r?\n)", c.group(0)):  # keep the line continuations
                buf[c.start() + k.start()] = 0x5C
    return out


def _in_directive(data: bytes, pos: int) -> bool:
    """``pos`` is on a preprocessor line or one of its ``\\`` continuation lines (a macro body)."""
    line_start = data.rfind(b"\n", 0, pos) + 1
    while True:
        if data[line_start:pos].lstrip().startswith(b"#"):
            return True
        if line_start == 0:
            return False
        prev_end = line_start - 1  # the '\n' ending the previous line
        j = prev_end
        while j > 0 and data[j - 1] == 0x0D:  # (the previous line without its CRs ends with `\`)
            j -= 1
        if j == 0 or data[j - 1] != 0x5C:
            return False
        pos = prev_end
        line_start = data.rfind(b"\n", 0, prev_end) + 1


def _block_function_macros(source: Source) -> set[bytes]:
    """Function-like macros of the file whose every definition is one braced block ``{ ... }``."""
    out: dict[bytes, bool] = {}
    for m in scan_directives(source, _FUNC_MACRO_MULTILINE):
        body = _strip_comments(m.group(2))
        ok = body.startswith(b"{") and body.endswith(b"}") and _braces_close_at_end(body)
        out[m.group(1)] = out.get(m.group(1), True) and ok
    return {n for n, ok in out.items() if ok}


def _braces_close_at_end(body: bytes) -> bool:
    """The ``{`` opening ``body`` is closed by its last byte (``{ a; } { b; }`` is two blocks)."""
    depth = 0
    for i, c in enumerate(body):
        if c == 0x7B:
            depth += 1
        elif c == 0x7D:
            depth -= 1
            if depth == 0:
                return i == len(body) - 1
    return False


def mask_type_arguments(source: Source, buf: bytearray) -> list[Mask]:
    """Macro and builtin arguments that are type names (``CALL_CONVERT_FP8(uint8_t, float, kAuto);``,
    ``__builtin_bit_cast(uint32_t, x)``): the grammar reads ``float`` and ``uint8_t`` as primitive
    types, which no argument list takes, and the whole statement was a parse error. The name's first
    byte becomes ``_`` in the parsed copy, so it reads as an identifier (node text still comes from the
    original). Not applied to declarations (``int MAX(int, int);``: a name, ``*`` or ``&`` before it)."""
    data = source.data
    out: list[Mask] = []
    # the upper-case names are among Source.upper_call_starts; the builtins begin with `__builtin_`
    starts = source.upper_call_starts if b"__builtin_" not in data else sorted(
        {*source.upper_call_starts, *word_starts(data, (b"__builtin_",))})
    for m in match_at(data, _TYPE_ARG_CALL, starts):
        s = m.start(1)
        if source.in_comment_or_string(s) or bytes(buf[s:m.end()]) != data[s:m.end()]:
            continue
        if _in_directive(data, s):
            continue
        before, at = _prev_code_byte(source, buf, s)
        if before and (before.isalnum() or before in b"_*&") and not any(
                _ends_with_word(data, at + 1, w) for w in (b"else", b"do", b"return")):
            continue  # a declaration `T NAME(float)`
        found = _call_arguments(data, m.end() - 1)
        if found is None or found[0]:
            continue  # the list does not close within 64 KB, holds a preprocessor line or a top-level `;`
        _, args, close = found
        if _PRIMITIVE_ARG_SHAPE.search(data, m.end() - 1, close + 1) is None:
            continue  # no argument can be a type name
        for a, b in args:
            t = _PRIMITIVE_ARG.fullmatch(data, a, b)
            if t is None or buf[t.start(1)] != data[t.start(1)]:
                continue
            out.append(Mask(t.start(1), t.end(1), "macro-argument", t.group(1).decode(), "type"))
            buf[t.start(1)] = 0x5F  # '_'
    return out


def _only_type_arguments_marked(buf: bytearray, data: bytes, start: int, end: int) -> bool:
    """Every difference between the masked text and the file in [start, end) is the type-argument
    pass's `_` over a name's first letter (`GGML_TENSOR_LOCALS(int64_t, ne, dst, ne)` has
    `_nt64_t`): the invocation is still whole, and may be blanked as a statement."""
    return all(b == d or (b == 0x5F and (0x41 <= d <= 0x5A or 0x61 <= d <= 0x7A))
               for b, d in zip(buf[start:end], data[start:end]))


def mask_statement_macro_calls(source: Source, buf: bytearray, defined_only: bool = False) -> list[Mask]:
    """Blank invocations of macros that expand to whole statements written without a ``;`` after them
    (``AG_CASE(2)`` lines in a switch, ``#define AG_CASE(n) case n: launch<n><<<...>>>(...); break;``;
    header checks such as ``STD_TORCH_CHECK(cond, "msg")`` followed by the next statement). C has no
    statement without a terminator, so such a line can only be a macro that brings its own. Only
    upper-case names at the start of a statement (after ``;``, ``{``, ``}`` or ``:``), followed by the
    start of another statement (a name or ``}``, not a declaration word such as ``__global__`` or
    ``template``: launch-bounds and qualifier macros stay), and, when the file defines the macro, only
    if every definition's body is statements. The invocation's text is lost to the analysis, like any
    other masked macro (the estimator sees a "macro-invocation" mask in the body). With
    ``defined_only`` (GLSL, where header macros are rare), only macros the file defines count."""
    data = source.data
    out: list[Mask] = []
    defs = _statement_function_macros(source)
    blocks = _block_function_macros(source)
    # upper-case names, and in-file statement macros whatever their case (vLLM's `WVSPLITKrc(16, 1, 1)`)
    names = [n for n, k in defs.items() if k and not re.fullmatch(rb"[A-Z_][A-Z0-9_]*", n)]
    pattern = _STATEMENT_CALL if not names else re.compile(
        rb"(?<![\w.>:#])([A-Z_][A-Z0-9_]*|" + b"|".join(map(re.escape, names)) + rb")[ \t]*\(")
    # the upper-case names are among Source.upper_call_starts, the others where one of them is
    matches = match_at(data, pattern, source.upper_call_starts if not names else sorted(
        {*source.upper_call_starts, *word_starts(data, tuple(names))}))
    covered = -1
    for m in matches:
        s = m.start(1)
        if s < covered or source.in_comment_or_string(s) or bytes(buf[s:m.end()]) != data[s:m.end()]:
            continue
        if _in_directive(data, s):
            continue  # a #define line or a macro body
        if m.group(1).strip(b"_") == b"":
            continue
        before, at = _prev_code_byte(source, buf, s)
        nested = before == b")" or any(_ends_with_word(data, at + 1, w) for w in (b"else", b"do"))
        if not nested and before not in (b";", b"{", b"}", b":"):
            continue  # not at the start of a statement (tested before the argument scan, which costs more)
        found = _macro_argument_semicolons(data, m.end() - 1, directives=True)
        if found is None:
            continue
        semis, close = found
        if not _balanced_directives(data[m.end():close]):
            continue
        if semis:
            continue  # statements as arguments: base.mask_macro_statement_arguments reads them as a call
        if defined_only and m.group(1) not in defs:
            continue
        kind = defs.get(m.group(1), True)
        if nested:
            # `if (c) BLOCK(a) else BLOCK(b)`: a macro the file defines as one braced block stands for a
            # statement; it becomes an empty block `{}` (a blank would leave `if (c) else`)
            if m.group(1) not in blocks or data[close + 1:close + 8].lstrip().startswith(b";"):
                continue
            nxt = _next_code_past_directives(data, close + 1)
            if not re.match(rb"\w|}", data[nxt:nxt + 1]):
                continue
            out.append(Mask(s, close + 1, "macro-invocation", data[s:close + 1].decode("utf-8", "replace"), "block"))
            _blank(buf, s, close + 1)
            buf[s:s + 2] = b"{}"
            covered = close
            continue
        if before not in (b";", b"{", b"}", b":"):
            continue
        if before == b":" and ends_after_blanks(data, s, b"::"):
            continue
        if kind == "else":
            # `if (a) {...} ELSE_CASE(b) ELSE_CASE(c) else {...}`: without its links the chain is still an if-else
            if before != b"}":
                continue
        else:
            if not kind:
                continue  # the file defines it as an expression: a missing `;` is a real error
            nxt = _next_code_past_directives(data, close + 1)
            c = data[nxt:nxt + 1]
            if not (c == b"}" or (c and (c.isalpha() or c == b"_"))):
                continue
            word = re.match(rb"\w+", data[nxt:nxt + 64])
            if word is not None and word.group(0) in _DECLARATION_WORDS and not (
                    word.group(0) in _LOCAL_DECLARATION_WORDS and _in_function_body(source, buf, s)):
                continue  # a declaration's prefix (launch bounds, export macros), except before a local declaration
        if buf[s:close + 1] != data[s:close + 1] and not _only_type_arguments_marked(buf, data, s, close + 1):
            continue
        out.append(Mask(s, close + 1, "macro-invocation", data[s:close + 1].decode("utf-8", "replace")))
        _blank(buf, s, close + 1)
        covered = close  # calls inside a blanked invocation's arguments are gone with it
    return out


# Upper-case names before a function header: `NAME [NAME...] [specifiers] type [*&] [__launch_bounds__(..)] name(`.
_QUALIFIER_MACROS = re.compile(
    # the names may stand alone on the line before the header (CUTLASS's `CUTLASS_DEVICE` line)
    rb"(?<![\w:.>#])((?:[A-Z][A-Z0-9_]+(?:[ \t]+|[ \t]*\r?\n\s*))+)"
    # launch bounds may stand between the names and the rest (natten's `CUTLASS_GLOBAL` line, then
    # `__launch_bounds__(...)` in an `#ifdef __CUDACC__` group)
    rb"(?=(?:__launch_bounds__\s*\((?:[^()]|\([^()]*\))*\)\s*)?(?:(?:static|inline|extern|constexpr|__forceinline__|__noinline__|__inline__|__host__|__device__|__global__"
    rb"|const|unsigned|signed|long|short|struct)\s+)*"
    # the return type itself is not a specifier: in `REAL __device__ f(` REAL is the (typedef) type
    rb"(?!(?:static|inline|extern|constexpr|__forceinline__|__noinline__|__inline__|__host__|__device__|__global__)\b)"
    # a dependent return type names itself with `typename` (CUTLASS's `CUTLASS_DEVICE typename
    # MM1::SharedStorage& f()`), and `const` may follow the type
    rb"(?:typename\s+)?[A-Za-z_][\w:]*(?:\s*<[^;{}()]*>)?(?:\s+const\b)?[\s*&]+(?:__launch_bounds__\s*\([^()]*\)\s*)?"
    # the name may be a member of a class template specialization (`vec_t<__nv_fp8_e4m3, 1>::fill(`) or a
    # function template's specialization (`act_fn<ActivationType::RELU>(`)
    rb"(?:operator\s*(?:\[\]|\(\)|[^\s\w(]{1,3})|[A-Za-z_~][\w:]*(?:\s*<[^;{}()<>]*>)?(?:\s*::\s*~?[A-Za-z_]\w*)?)\s*\()")
# Where _QUALIFIER_MACROS can match: an upper-case word of two bytes or more, not after a word byte, `:`,
# `.`, `>` or `#`, then a blank or a line break. The look-behind stands after the first byte, so the regex
# engine skips to upper-case bytes instead of trying the look-behind at every byte.
_QUALIFIER_MACRO_START = re.compile(rb"[A-Z](?<![\w:.>#][A-Z])[A-Z0-9_]+[ \t\r\n]")
# What an in-file definition may expand to for the function to take its qualifiers.
_QUALIFIER_TOKENS = frozenset((b"__global__", b"__device__", b"__host__", b"__forceinline__", b"__noinline__",
                               b"__inline__", b"static", b"inline", b"extern", b"constexpr"))


def _qualifier_macro_starts(source: Source) -> list[int]:
    """Where _QUALIFIER_MACROS can match, except in block comments (license headers in capitals, where
    trying it cost most of its time): a match starting in one holds only upper-case words and blanks, so
    it ends before the ``*/``, and it is dropped as in a comment anyway."""
    data = source.data
    # (each block comment, then one past the file's end; a candidate's blank cannot be a comment's `/`)
    bounds = [(s, e) for s, e, is_comment in source.lexical if is_comment and data.startswith(b"/*", s)]
    bounds.append((len(data) + 1, len(data) + 1))
    out, end, k = [], 0, 0
    match = _QUALIFIER_MACRO_START.match
    block_start, block_end = bounds[0]
    # (the match can begin only at Source.caps_word_starts)
    for i in source.caps_word_starts:
        while i >= block_end:
            k += 1
            block_start, block_end = bounds[k]
        if i >= block_start or i < end:
            continue  # in block comment k, or in the last match
        m = match(data, i)
        if m is not None:
            out.append(i)
            end = m.end()
    return out


def _qualifier_definitions(source: Source) -> dict[bytes, tuple[str, ...] | None]:
    """Object-like macros of the file: name -> the qualifier tokens it expands to, or None when some
    definition of it expands to anything else."""
    out: dict[bytes, tuple[str, ...] | None] = {}
    for m in scan_directives(source, _OBJ_MACRO):
        if source.in_comment_or_string(m.start(1)):
            continue
        body = _strip_comments(m.group(2)).split()
        toks = tuple(t.decode() for t in body) if body and set(body) <= _QUALIFIER_TOKENS else None
        prev = out.get(m.group(1), ())
        out[m.group(1)] = None if toks is None or prev is None else tuple(dict.fromkeys(prev + toks))
    # a header's `#define DEVICE_INLINE __device__ __forceinline__` (the file's own definitions first)
    for name, body in header_macros_for(source, False).items():
        toks = body.split()
        out.setdefault(name, tuple(t.decode() for t in toks) if toks and set(toks) <= _QUALIFIER_TOKENS else None)
    return out


# `[=] XGBOOST_DEVICE(std::size_t i) -> T {`: an upper-case macro between a lambda's capture list and
# its parameters (xgboost's `#define XGBOOST_DEVICE __host__ __device__`, from a header), where the
# grammar reads only `__device__`/`__host__`. Found at the `]`; the `[` must open a lambda (not a
# subscript or an attribute) and the parameters be followed by what may follow them in a lambda.
_LAMBDA_MACRO = re.compile(rb"\][ \t]*([A-Z][A-Z0-9_]*[A-Z0-9])[ \t]*(?=\()")
_LAMBDA_MACRO_NEEDS = re.compile(rb"\][ \t]*[A-Z]")  # what every match holds, found fast
_AFTER_LAMBDA_PARAMETERS = re.compile(rb"\s*(?:\{|->|mutable\b|noexcept\b|constexpr\b|__device__\b|__host__\b)")


def _lambda_capture_open(data: bytes, close: int) -> int | None:
    """The ``[`` opening the capture list that ``close`` (a ``]``) ends, when it opens a lambda: its
    code before is not an operand (a name, ``)`` or ``]``: ``a[i]``; ``return`` excepted) and it is not
    an attribute (``[[``). None otherwise, or when no ``[`` is found within 1 KB on the way back."""
    depth, i = 0, close
    lo = max(0, close - 1024)
    while i > lo:
        i -= 1
        c = data[i]
        if c == 0x5D:  # ]
            depth += 1
        elif c == 0x5B:  # [
            if depth == 0:
                break
            depth -= 1
        elif c in b";{}":
            return None
    else:
        return None
    if data[i - 1:i] == b"[" or data[close + 1:close + 2] == b"]" or data[i:i + 2] == b"[[":
        return None  # inside or around an attribute `[[...]]`
    j = i
    while j > 0 and data[j - 1] in b" \t\r\n":
        j -= 1
    prev = data[j - 1:j]
    if prev.isalnum() or prev in (b"_", b")", b"]"):
        return i if data.endswith(b"return", 0, j) and not (data[j - 7:j - 6].isalnum() or data[j - 7:j - 6] == b"_") else None
    return i


def mask_lambda_qualifier_macros(source: Source, buf: bytearray) -> list[Mask]:
    """Blank an upper-case macro standing between a lambda's capture list and its parameters, as
    ``__device__`` stands there in an extended lambda. Recorded as a lambda's "function-qualifier"
    mask whose args are the qualifiers the file defines the name as (empty when it does not). A
    function-like macro of the file (its use would be an invocation) is left alone."""
    data = source.data
    out: list[Mask] = []
    function_like = qualifiers = None
    for m in scan_code(source, _LAMBDA_MACRO, _LAMBDA_MACRO_NEEDS):
        s, e = m.start(1), m.end(1)
        if bytes(buf[s:e]) != data[s:e] or on_directive_line(data, s):
            continue
        found = _call_arguments(data, e + _next_code(data[e:e + 64], 0))
        if found is None or found[0] or _AFTER_LAMBDA_PARAMETERS.match(data, found[2] + 1) is None:
            continue
        if _lambda_capture_open(data, m.start()) is None:
            continue
        if function_like is None:
            function_like = {d.group(1) for d in scan_directives(source, _FUNC_MACRO_MULTILINE)}
            qualifiers = _qualifier_definitions(source)
        if m.group(1) in function_like:
            continue
        out.append(Mask(s, e, "function-qualifier", m.group(1).decode(), "lambda", qualifiers.get(m.group(1)) or ()))
        _blank(buf, s, e)
    return out


# `__global__ FLASHINFER_SAMPLING_LAUNCH_BOUNDS(BLOCK_THREADS) void Kernel(`: an upper-case macro
# invocation between a function's specifiers and its return type, which the grammar cannot read there.
_SPECIFIER_MACRO = re.compile(
    rb"(?<![\w#])(?:__global__|__device__|__host__|__forceinline__|__noinline__|static|inline|constexpr)"
    rb"[ \t]+([A-Z][A-Z0-9_]*[A-Z0-9])[ \t]*\(")
_SPECIFIER_WORDS = (b"__global__", b"__device__", b"__host__", b"__forceinline__", b"__noinline__", b"static",
                    b"inline", b"constexpr")
# After the invocation: more specifiers, a return type and the function's name, then `(` or `<`.
_FUNCTION_HEADER_REST = re.compile(
    rb"\s*(?:(?:static|inline|extern|constexpr|__forceinline__|__noinline__|__inline__|__host__|__device__|__global__"
    rb"|const|unsigned|signed|long|short)\s+)*"
    rb"[A-Za-z_][\w:]*(?:\s*<[^;{}()]*>)?[\s*&]+(?:operator\s*\S{1,3}|[A-Za-z_~][\w:]*)\s*[(<]")
_LAUNCH_BOUNDS_BODY = re.compile(rb"__launch_bounds__\s*\(")
_LAUNCH_BOUNDS = b"__launch_bounds__"


def _specifier_macro_starts(source: Source) -> list[int]:
    """Where _SPECIFIER_MACRO can match: the specifiers before blanks before an upper-case name of two bytes
    or more (found from :attr:`Source.caps_word_starts`; no specifier is the end of another, and
    scanning the text for the specifiers, or for ``__`` as a first test, cost several times this)."""
    data = source.data
    out = []
    for i in source.caps_word_starts:
        if not i or data[i - 1] not in b" \t":
            continue
        j = i - 1
        while j > 0 and data[j - 1] in b" \t":
            j -= 1
        if data[j - 1] in b"_ecn":  # (the last bytes of the specifiers)
            for word in _SPECIFIER_WORDS:
                if data.endswith(word, 0, j):
                    out.append(j - len(word))
                    break
    return out


def mask_specifier_macros(source: Source, buf: bytearray) -> list[Mask]:
    """Such an invocation (the look-alike ``static MAX(a, b)`` in an expression has no function header
    after it and is left alone). When the file defines the name as ``__launch_bounds__(...)`` (in one
    branch of an ``#if`` or all), the name is rewritten as ``__launch_bounds__`` padded with blanks, so
    the grammar reads the launch bounds with their arguments. Otherwise the invocation is blanked and
    recorded as a "launch-bounds-macro" mask: the model reads the kernel's launch bounds as unknown
    (a header macro between the specifiers may well be launch bounds: SL506 stays silent)."""
    data = source.data
    out: list[Mask] = []
    bodies = None
    for m in code_matches_at(source, _SPECIFIER_MACRO, _specifier_macro_starts(source)):
        s, e = m.start(1), m.end(1)
        if bytes(buf[s:e]) != data[s:e] or _in_directive(data, s):
            continue
        found = _call_arguments(data, m.end() - 1)
        if found is None or found[0] or _FUNCTION_HEADER_REST.match(data, found[2] + 1) is None:
            continue
        close = found[2]
        if bodies is None:
            bodies = {}
            for d in scan_directives(source, _FUNC_MACRO_MULTILINE):
                bodies.setdefault(d.group(1), []).append(_strip_comments(d.group(2)))
            for name, body in header_macros_for(source, True).items():  # `#define LB(n) __launch_bounds__(n)` in a header
                bodies.setdefault(name, [body])
        defs = bodies.get(m.group(1), [])
        text = data[s:close + 1].decode("utf-8", "replace")
        if e - s >= len(_LAUNCH_BOUNDS) and any(_LAUNCH_BOUNDS_BODY.match(b) for b in defs):
            out.append(Mask(s, e, "launch-bounds-macro", text, "rewritten"))
            buf[s:e] = _LAUNCH_BOUNDS + b" " * (e - s - len(_LAUNCH_BOUNDS))
            continue
        if defs and not any(_LAUNCH_BOUNDS_BODY.search(b) for b in defs) and all(
                set(b.split()) <= _QUALIFIER_TOKENS for b in defs):
            value = "qualifiers"  # defined here as qualifiers (or nothing): no launch bounds
        else:
            value = "unknown"
        out.append(Mask(s, close + 1, "launch-bounds-macro", text, value))
        _blank(buf, s, close + 1)
    return out


# `CUDA_1D_KERNEL_LOOP(i, n) {`: an upper-case invocation at the start of a statement followed by a
# block (mmcv's and caffe's grid-stride loop from a header, `for (int i = ...; i < n; i += ...)`).
_BLOCK_HEADER_MACRO = re.compile(rb"(?<![\w#.>:])([A-Z][A-Z0-9_]*[A-Z0-9])[ \t]*\(")
_LOOP_WORDS = re.compile(rb"\b(?:for|while)\b")


def mask_block_header_macros(source: Source, buf: bytearray) -> list[Mask]:
    """Read such a header as ``while (args)`` (the name becomes ``while`` padded with blanks): C has no
    statement ``f(x) {``, so the invocation is a loop header (or a scope guard) whose expansion opens
    the block, and the block is read in a loop, as a grid-stride loop runs. The arguments become a
    comma expression the analysis does not evaluate (the loop variable reads as unknown). A name
    shorter than ``while``, or one the file defines with no ``for`` or ``while`` in the body, is left
    alone; so is an invocation not at the start of a statement (a function header ``K(int i) {``)."""
    data = source.data
    if b"{" not in data:
        return []
    found_calls = []
    for m in match_at(data, _BLOCK_HEADER_MACRO, source.upper_call_starts):
        s, e = m.start(1), m.end(1)
        if e - s < 5 or source.in_comment_or_string(s) or bytes(buf[s:e]) != data[s:e] or _in_directive(data, s):
            continue
        found = _call_arguments(data, m.end() - 1)
        if found is None or found[0]:
            continue
        close = found[2]
        nxt = _next_code_past_directives(data, close + 1)
        if data[nxt:nxt + 1] != b"{":  # (not `data[nxt:][:1]`: a copy of the rest of the file per call)
            continue
        if any(buf[i] != data[i] for i in range(m.end() - 1, close + 1) if data[i] in b"(),"):
            continue
        before, at = _prev_code_byte(source, buf, s)
        if before not in (b";", b"{", b"}", b")") and not any(_ends_with_word(data, at + 1, w) for w in (b"else", b"do")):
            continue
        if before == b")" and _prev_is_function_header(source, buf, at):
            continue
        found_calls.append(m)
    if not found_calls:
        return []
    # inside a function only: at namespace scope such a line opens a function (googletest's TEST_F,
    # PYBIND11_MODULE), which mask_header_function_macros reads
    braces = _code_braces(source)
    at_namespace = _at_namespace_scope(data, buf, braces, found_calls)
    out: list[Mask] = []
    bodies = None
    for m, outside in zip(found_calls, at_namespace):
        if outside or _in_class_body(data, braces, m.start(1)):
            continue
        s, e = m.start(1), m.end(1)
        if bodies is None:
            bodies = {}
            for d in scan_directives(source, _FUNC_MACRO_MULTILINE):
                bodies.setdefault(d.group(1), []).append(d.group(2))
        defs = bodies.get(m.group(1))
        if defs is not None and not any(_LOOP_WORDS.search(b) for b in defs):
            continue
        out.append(Mask(s, e, "loop-macro", m.group(1).decode(), ""))
        buf[s:e] = b"while" + b" " * (e - s - 5)
    return out


_CLASS_HEAD = re.compile(rb"\b(?:struct|class|union)\b[^;{}()]*(?:\([^;{}]*\)[^;{}()]*)*$")


def _in_class_body(data: bytes, braces: list[int], pos: int) -> bool:
    """The innermost block around ``pos`` (``braces``: the code braces in order) is a class body."""
    depth = 0
    for i in range(bisect.bisect_left(braces, pos) - 1, -1, -1):
        b = braces[i]
        if data[b] == 0x7D:
            depth += 1
        elif depth:
            depth -= 1
        else:
            return _CLASS_HEAD.search(data, max(0, b - 400), b) is not None
    return False


def _prev_is_function_header(source: Source, buf: bytearray, close: int) -> bool:
    """The ``)`` at ``close`` ends a parameter list at namespace or class scope (before it the
    invocation would be a declaration's suffix), or a control statement's condition (``if (c) M(x)
    {``: a statement). Approximated: the ``)`` closes parentheses opened right after a name that is
    not a control keyword."""
    data = source.data
    i = open_paren_of(data, close)
    if i is None:
        return True
    j = i
    while j > 0 and data[j - 1] in b" \t\r\n":
        j -= 1
    word = re.search(rb"(\w+)$", data[max(0, j - 64):j])
    return word is None or word.group(1) not in (b"if", b"for", b"while", b"switch")


# `CUTLASS_HOST_DEVICE constexpr NA1dDimT(T x_) : x(x_) {}`: an upper-case qualifier macro before a
# constructor (no return type, so _QUALIFIER_MACROS does not see it). The name must be a class or
# struct the file declares before.
_CONSTRUCTOR_MACRO = re.compile(
    rb"(?<![\w:.>#])([A-Z][A-Z0-9_]*[A-Z0-9])[ \t]+(?:(?:constexpr|explicit|inline)\s+)*(~?)([A-Za-z_]\w*)\s*\(")


_CLASS_NAME = re.compile(rb"\b(?:struct|class)\s+(?:alignas\s*\([^()]*\)\s*)?([A-Za-z_]\w*)")


def mask_constructor_qualifier_macros(source: Source, buf: bytearray, starts: list[int] | None = None) -> list[Mask]:
    """Blank such a macro, recorded as a "function-qualifier" macro mask like a qualifier macro
    before a function (with the qualifiers an in-file definition expands to)."""
    data = source.data
    if b"struct" not in data and b"class" not in data:
        return []
    out: list[Mask] = []
    defs = classes = None
    for m in match_at(data, _CONSTRUCTOR_MACRO, starts if starts is not None else _qualifier_macro_starts(source)):
        s, e = m.start(1), m.end(1)
        if source.in_comment_or_string(s):
            continue
        if classes is None:
            classes = {}
            for c in scan_code(source, _CLASS_NAME, starts=(b"struct", b"class")):
                classes.setdefault(c.group(1), []).append(c.start())
        first = classes.get(m.group(3))
        if not first or first[0] > s or bytes(buf[s:e]) != data[s:e] or _in_directive(data, s):
            continue
        if defs is None:
            defs = _qualifier_definitions(source)
        if m.group(1) in defs and defs[m.group(1)] is None:
            continue  # defined here as something else than qualifiers
        out.append(Mask(s, e, "function-qualifier", m.group(1).decode(), "macro", defs.get(m.group(1)) or ()))
        _blank(buf, s, e)
    return out


# `dim3 grid(unsigned((n + 63) / 64), 1, 1)`: a functional cast to a primitive type as the first
# argument of a declaration with parentheses; the grammar reads `unsigned(...)` as an abstract
# declarator (C++'s most vexing parse) and the declaration as a broken function declaration.
_PAREN_CAST = re.compile(
    rb"\([ \t]*((?:unsigned|signed|int|float|double|char|bool|long|short|size_t|u?int(?:8|16|32|64)_t)"
    rb")[ \t]*\((?![ \t]*[*&^)])")
# What stands before that `(`: `Type name` (the declaration), tried backwards from the `(`.
_DECLARATION_BEFORE_PAREN = re.compile(
    rb"(?<![\w:.>])([A-Za-z_][\w:]*)(?:[ \t]*<[^<>;{}()]*>)?[ \t]+[A-Za-z_]\w*[ \t]*$")
_NOT_A_TYPE = frozenset((b"return", b"else", b"case", b"goto", b"throw", b"new", b"delete", b"co_return",
                         b"co_yield", b"sizeof", b"typename", b"using", b"operator"))


def mask_functional_casts(source: Source, buf: bytearray) -> list[Mask]:
    """Such a cast's type name gets ``_`` as its first byte in the parsed copy, so it reads as a call
    (node text still comes from the file: the call's name is ``unsigned``). Only as the first
    argument of ``Type name(``, and not before ``*``, ``&``, ``^`` or ``)`` (``void f(int (*fp)(int))``
    declares a pointer to a function, ``int()`` a function type); elsewhere the grammar reads such a
    cast already. Not on directive lines."""
    data = source.data
    out: list[Mask] = []
    for m in scan_code(source, _PAREN_CAST):
        s, e = m.start(1), m.end(1)
        d = _DECLARATION_BEFORE_PAREN.search(data, max(0, m.start() - 256), m.start())
        if d is None or d.group(1) in _NOT_A_TYPE or bytes(buf[s:e]) != data[s:e] or _in_directive(data, s):
            continue
        out.append(Mask(s, e, "constructor-name", m.group(1).decode()))
        buf[s] = 0x5F  # '_'
    return out


# `decltype(tiled_mma){}`, `typename decltype(tiled_mma)::AtomThrID{}`, `decltype(f(a, b)){}`: a value
# of a decltype type, built with braces (CuTe), which the grammar reads only in declarations.
_DECLTYPE_VALUE = re.compile(rb"(?<![\w.>:])(?:typename[ \t]+)?decltype[ \t]*\(")
# `obj.template name(args)`: `template` before a member that takes no explicit template arguments.
_TEMPLATE_MEMBER_CALL = re.compile(rb"(?:\.|->)[ \t]*(template)[ \t]+[A-Za-z_]\w*[ \t]*(?=\()")
_TEMPLATE_MEMBER_CALL_NEEDS = re.compile(rb"template[ \t]+[A-Za-z_]\w*[ \t]*\(")  # found fast (literal prefix)


def mask_decltype_values(source: Source, buf: bytearray) -> list[Mask]:
    """Blank such a ``decltype(...)`` (and ``typename``, and the ``::`` after it): ``{}`` or
    ``AtomThrID{}`` remains, a braced value the grammar reads. Only where an expression stands (after
    ``(``, ``,``, ``=``, ``return``, ...) and when ``{`` or ``::name{`` follows the parentheses.
    The value's type is lost to the analysis (it could not read the expression before)."""
    data = source.data
    out: list[Mask] = []
    for m in scan_code(source, _DECLTYPE_VALUE, b"decltype", (b"typename", b"decltype")):
        s = m.start()
        if bytes(buf[s:m.end()]) != data[s:m.end()] or _in_directive(data, s):
            continue
        found = _call_arguments(data, m.end() - 1)
        if found is None or found[0]:
            continue
        e = found[2] + 1
        # `{` right after, or `::Name{` (`decltype(a) b{}` declares b: no value)
        rest = re.match(rb"[ \t]*(?:::[ \t]*(?:template[ \t]+)?(?=[A-Za-z_]\w*[ \t]*\{)|(?=\{))", data[e:e + 256])
        if rest is None:
            continue
        e += len(rest.group(0))
        before, at = _prev_code_byte(source, buf, s)
        if (before not in _EXPRESSION_BEFORE or before in (b";", b"{", b"}")) and not _ends_with_word(
                data, at + 1, b"return"):
            continue  # not where an expression stands (a statement's start may be a declaration)
        out.append(Mask(s, e, "decltype-value", data[s:e].decode("utf-8", "replace")))
        _blank(buf, s, e)
    for m in scan_code(source, _TEMPLATE_MEMBER_CALL, _TEMPLATE_MEMBER_CALL_NEEDS):
        s, e = m.start(1), m.end(1)
        if bytes(buf[s:e]) != b"template":
            continue
        out.append(Mask(s, e, "template-args", "template"))
        _blank(buf, s, e)
    return out


# `typedef enum : int { ... } Mode;`: an unnamed enumeration with an underlying type, which the grammar
# reads only for a named one. The `: int` is blanked (the underlying type bears on no rule).
_UNNAMED_ENUM_BASE = re.compile(rb"\benum[ \t]+(:[ \t]*[A-Za-z_][\w:]*(?:[ \t]+(?:int|long|short|char))*)[ \t]*(?=\{|\r?\n[ \t]*\{)")


def mask_unnamed_enum_bases(source: Source, buf: bytearray) -> list[Mask]:
    """Blank the underlying type of an unnamed enumeration (see _UNNAMED_ENUM_BASE)."""
    out: list[Mask] = []
    for m in scan_code(source, _UNNAMED_ENUM_BASE, b"enum", (b"enum",)):
        s, e = m.start(1), m.end(1)
        if bytes(buf[s:e]) != source.data[s:e]:
            continue
        out.append(Mask(s, e, "enum-base", m.group(1).decode()))
        _blank(buf, s, e)
    return out


# `template <typename F, std::enable_if_t<cond>* = nullptr>`: an unnamed non-type template parameter
# of pointer type with a default, which the grammar cannot read (it reads it without the default).
_UNNAMED_POINTER_DEFAULT = re.compile(rb">[ \t]*\*[ \t]*(=)[ \t]*(?://[^\n]*)?\s*(nullptr)(?=\s*[>,])")
_UNNAMED_POINTER_DEFAULT_NEEDS = re.compile(rb"nullptr\s*>")


def mask_unnamed_pointer_defaults(source: Source, buf: bytearray) -> list[Mask]:
    """Blank the ``= nullptr`` of such a parameter (SFINAE's enable_if; the default bears on no rule)."""
    out: list[Mask] = []
    for m in scan_code(source, _UNNAMED_POINTER_DEFAULT, _UNNAMED_POINTER_DEFAULT_NEEDS):
        if buf[m.start(1)] != 0x3D or bytes(buf[m.start(2):m.end(2)]) != b"nullptr":
            continue
        out.append(Mask(m.start(1), m.end(2), "default-argument", "= nullptr"))
        _blank(buf, m.start(1), m.end(1))
        _blank(buf, m.start(2), m.end(2))
    return out


def mask_declaration_words(source: Source, buf: bytearray) -> list[Mask]:
    """Words of valid C++ and CUDA declarations the grammar cannot read, blanked or renamed, same
    length: ``using typename B::t;`` (``typename`` blanked), ``typeid(float)`` (``_loat``),
    ``__host__ __device__ friend`` (the specifiers blanked: a friend declaration bears on no rule),
    ``template class X<float>;`` (``template`` blanked: read as a class declaration) and
    ``(unsigned(d) >> 2)`` (``_nsigned``: read as a call)."""
    data = source.data
    out: list[Mask] = []
    for m in scan_code(source, _USING_TYPENAME, starts=(b"using",)):
        if bytes(buf[m.start(1):m.end(1)]) == b"typename":
            out.append(Mask(m.start(1), m.end(1), "typename", "typename"))
            _blank(buf, m.start(1), m.end(1))
    for m in scan_code(source, _TYPEID_TYPE, starts=(b"typeid",)):
        if buf[m.start(1)] == data[m.start(1)]:
            out.append(Mask(m.start(1), m.end(1), "macro-argument", m.group(1).decode(), "type"))
            buf[m.start(1)] = 0x5F  # '_'
    for m in scan_code(source, _SPACE_BEFORE_FRIEND, b"friend"):
        if bytes(buf[m.start():m.end()]) == data[m.start():m.end()] and not on_directive_line(data, m.start()):
            out.append(Mask(m.start(), m.end(), "ignored-specifier", m.group(0).decode().strip()))
            _blank(buf, m.start(), m.end())
    for m in scan_code(source, _CLASS_INSTANTIATION, b"template", (b"template", b"extern")):
        if bytes(buf[m.start(1):m.end(1)]) == data[m.start(1):m.end(1)] and not _in_directive(data, m.start(1)):
            out.append(Mask(m.start(1), m.end(1), "explicit-instantiation", m.group(1).decode()))
            _blank(buf, m.start(1), m.end(1))
    for m in scan_code(source, _OPEN_PAREN_CAST, (b"unsigned", b"signed", b"long", b"short")):
        s = m.start(1)
        if buf[s] != data[s] or _in_directive(data, s):
            continue
        # the `(` opens a parenthesized expression or a control condition, not a call's or declaration's list
        j = m.start()
        while j > 0 and data[j - 1] in b" \t\r\n":
            j -= 1
        word = re.search(rb"(\w+)$", data[max(0, j - 64):j])
        if word is not None and word.group(1) not in (b"if", b"while", b"switch", b"return"):
            continue
        if data[j - 1:j] == b")":  # `(float)(unsigned(d) >> 2)`: after a cast, not after a call `f(x)(`
            o = open_paren_of(data, j - 1)
            k = o
            while k is not None and k > 0 and data[k - 1] in b" \t\r\n":
                k -= 1
            if o is None or (k > 0 and (data[k - 1:k].isalnum() or data[k - 1:k] in (b"_", b")", b"]", b">"))):
                continue
        elif data[j - 1:j] in (b"]", b">"):
            continue
        out.append(Mask(s, m.end(1), "constructor-name", m.group(1).decode()))
        buf[s] = 0x5F  # '_'
    return out


# After a string literal: a name (with an argument list or not), then another string literal or the end of the
# argument (`"  @p cp.async.cg.shared.global" L2_CACHEHINT(128) " [%1], [%2], %3;"`, `"found " GGML_CUDA_NAME
# " devices"`, `"ne=%" PRId64 " type=%d"`, `"%" PRId64)`): a macro expanding to a string literal (or nothing).
_STRING_MACRO = re.compile(rb"[ \t]*(?:\r?\n[ \t]*)*([A-Za-z_]\w*)[ \t]*")
_NOT_STRING_MACROS = frozenset((b"sizeof", b"return", b"case", b"throw", b"co_return", b"co_yield", b"delete",
                                b"new", b"else", b"do", b"and", b"or", b"not", b"xor", b"bitand", b"bitor"))


def mask_string_macros(source: Source, buf: bytearray) -> list[Mask]:
    """Blank such a macro: adjacent string literals are concatenated, and a name after a string literal
    can be nothing but a macro (C++ takes a literal suffix only without a blank, and then only ``_x``
    or a lower-case standard one). The string's text is lost to the analysis, which reads inline
    assembly from the literals it sees."""
    data = source.data
    if b'"' not in data:
        return []
    out: list[Mask] = []
    lexical = source.lexical
    starts = {s for s, _, is_comment in lexical if not is_comment}
    for s, e, is_comment in lexical:
        if is_comment or data[e - 1:e] != b'"' or on_directive_line(data, s):
            continue
        m = _STRING_MACRO.match(data, e)
        if m is None or m.group(1) in _NOT_STRING_MACROS or (m.start(1) == e and not m.group(1)[:1].isupper()):
            continue
        a, b = m.start(1), m.end(1)
        if data[m.end():m.end() + 1] == b"(":
            found = _call_arguments(data, m.end())
            if found is None or found[0]:
                continue
            b = found[2] + 1
        nxt = _next_code(data, b)
        c = data[nxt:nxt + 1]
        if not (nxt in starts and c in (b'"', b"u", b"U", b"L", b"R")) and c not in (b")", b",", b":", b";"):
            continue
        if bytes(buf[a:b]) != data[a:b]:
            continue
        out.append(Mask(a, b, "macro-invocation", data[a:b].decode("utf-8", "replace"), "string"))
        _blank(buf, a, b)
    return out


# `size_t XGBOOST_DEVICE SegmentId(` / `Tup XGBOOST_DEVICE operator()(`: an upper-case macro between a function's
# return type and its name (xgboost's `#define XGBOOST_DEVICE __host__ __device__`, from a header); nvcc takes
# execution-space specifiers there. Found at the name; the word before must be a type (not `return`, `new`, ...).
_RETURN_TYPE_MACRO = re.compile(
    rb"([A-Z](?<![\w:.>#][A-Z])[A-Z0-9_]*_[A-Z0-9_]*[A-Z0-9])[ \t]+"
    rb"(?=(?:operator\s*(?:\(\s*\)|\[\s*\]|[^\s\w(]{1,3})|[A-Za-z_~]\w*)\s*\()")
_TYPE_BEFORE = re.compile(rb"(?:(?<![\w:])[A-Za-z_][\w:]*|[*&])[ \t]*$")
# Words before the name that make it the return type itself (`__device__ inline T_OUT cuda_cast(`).
_NOT_TYPES = frozenset((b"return", b"new", b"delete", b"else", b"case", b"goto", b"throw", b"co_return", b"co_yield",
                        b"sizeof", b"typename", b"using", b"operator", b"do", b"const", b"volatile", b"struct",
                        b"class", b"enum", b"union", b"namespace", b"template", b"public", b"private", b"protected",
                        b"inline", b"static", b"extern", b"constexpr", b"virtual", b"friend", b"explicit",
                        b"__device__", b"__host__", b"__global__", b"__forceinline__", b"__noinline__", b"__inline__",
                        b"mutable", b"register", b"thread_local", b"consteval", b"constinit"))
# `f(M((void *)) kernel, ...)`: an upper-case macro invocation right before a name that ends an argument
# (causal-conv1d's `ROCM_ONLY((void *)) kernel`, a cast only on ROCm): two operands in a row are no expression.
_PREFIX_MACRO_ARGUMENT = re.compile(rb"(?<![\w.>:#])([A-Z][A-Z0-9_]*_[A-Z0-9_]*[A-Z0-9])[ \t]*\(")
# `uint8_t* smem PROFILER_CLOSURE_FUNC_PARAMS)`: an upper-case object-like macro after a parameter's name, closing
# the list (flashinfer's `#define PROFILER_CLOSURE_FUNC_PARAMS , ProfilerClosure& profiler_closure`).
_TRAILING_LIST_MACRO = re.compile(rb"([A-Z](?<![\w][A-Z])[A-Z0-9_]*_[A-Z0-9_]*[A-Z0-9])(?=[ \t]*(?:\r?\n\s*)?\))")
_BEFORE_TRAILING_MACRO = re.compile(rb"[\w\]][ \t]*(?:\r?\n[ \t]*)?$")
_NOT_NAMES = frozenset((b"const", b"volatile", b"return", b"else", b"unsigned", b"signed", b"long", b"short",
                        b"int", b"char", b"float", b"double", b"void", b"bool", b"auto", b"struct", b"class"))


# `MANAGED __device__ int x;`, `MAYBE_HOST_DEVICE static constexpr T v = ...;`: upper-case object-like macros
# before a variable's specifiers (a function's are _QUALIFIER_MACROS'), at the start of a declaration.
_VARIABLE_QUALIFIER_MACRO = re.compile(
    rb"([A-Z](?<![\w:.>#][A-Z])[A-Z0-9_]*[A-Z0-9][ \t]+(?:[A-Z][A-Z0-9_]*[A-Z0-9][ \t]+)*)(?=(?:static|constexpr|inline|extern|thread_local|__device__"
    rb"|__constant__|__shared__|__managed__|__host__)\b)")


_UPPER_WORD = re.compile(rb"[A-Z](?<![\w:.>#][A-Z])[A-Z0-9_]*[A-Z0-9](?=[ \t\r\n)])")


_ONE_PARAM_MACRO = re.compile(rb"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)\([ \t]*([A-Za-z_]\w*)[ \t]*\)((?:[^\n\\]+|\\\r?\n|\\)*)", re.M)


def mask_identity_macro_statements(source: Source, buf: bytearray) -> list[Mask]:
    """``CUDA_INTRINSIC_FUNC(float16 r; r.y = __shfl_sync(...); return r;);`` where the file defines the
    macro as its argument (``#define CUDA_INTRINSIC_FUNC(Expr) Expr``), in some branches as nothing: the
    name and the parentheses are blanked, so the statements read as written (as in the build where the
    macro expands to them). Only invocations whose argument holds a top-level ``;`` (statements, which
    no call can take), of macros every definition of which is the parameter or nothing."""
    data = source.data
    kinds: dict[bytes, bool] = {}
    for d in scan_directives(source, _ONE_PARAM_MACRO):
        body = _strip_comments(d.group(3))
        kinds[d.group(1)] = kinds.get(d.group(1), True) and body in (b"", d.group(2), b"(" + d.group(2) + b")")
    names = [n for n, ok in kinds.items() if ok]
    if not names:
        return []
    out: list[Mask] = []
    pattern = re.compile(rb"(?<![\w.>:#])(" + b"|".join(re.escape(n) for n in names) + rb")[ \t]*\(")
    for m in scan_code(source, pattern):
        s, paren = m.start(1), m.end() - 1
        if bytes(buf[s:m.end()]) != data[s:m.end()] or _in_directive(data, s):
            continue
        found = _macro_argument_semicolons(data, paren)
        if found is None or not found[0] or buf[found[1]] != data[found[1]]:
            continue
        close = found[1]
        out.append(Mask(s, m.end(), "macro-invocation", m.group(1).decode(), "identity"))
        _blank(buf, s, m.end())
        out.append(Mask(close, close + 1, "macro-invocation", ")", "identity"))
        buf[close] = 0x20
    return out


def mask_misplaced_macros(source: Source, buf: bytearray) -> list[Mask]:
    """Header macros where no code can stand (see _RETURN_TYPE_MACRO, _PREFIX_MACRO_ARGUMENT and
    _TRAILING_LIST_MACRO), blanked. A name the file defines as a function-like macro is left alone (its use
    would have parentheses), and so is one on a directive line. The return-type macro is recorded as a
    "function-qualifier" mask with the qualifiers an in-file definition expands to (else the function
    reads as host code, as for any qualifier macro whose definition is not seen); the prefix macro's
    text is lost (a cast, for the ROCm build only); the trailing macro's parameters are unknown."""
    data = source.data
    out: list[Mask] = []
    function_like = defs = None
    # every pattern but the invocation's opens with an upper-case word followed by a blank or `)`: tried there only
    words = [w.start() for w in match_at(data, _UPPER_WORD, source.caps_word_starts)]
    if not words:
        return out
    for m in code_matches_at(source, _RETURN_TYPE_MACRO, words):
        s, e = m.start(1), m.end(1)
        if bytes(buf[s:e]) != data[s:e] or on_directive_line(data, s):
            continue
        t = _TYPE_BEFORE.search(data, max(0, s - 200), s)
        if t is None or t.group(0).strip() in _NOT_TYPES:
            continue
        if function_like is None:
            function_like = {d.group(1) for d in scan_directives(source, _FUNC_MACRO_MULTILINE)}
            defs = _qualifier_definitions(source)
        if m.group(1) in function_like or (m.group(1) in defs and defs[m.group(1)] is None):
            continue
        if re.search(rb"\b(?:typename|class|struct|using)\s+" + m.group(1) + rb"\b", data):
            continue  # a type of the file (a template parameter `typename T_OUT`): the return type itself
        out.append(Mask(s, e, "function-qualifier", m.group(1).decode(), "macro", defs.get(m.group(1)) or ()))
        _blank(buf, s, e)
    for m in code_matches_at(source, _VARIABLE_QUALIFIER_MACRO, words):
        s, e = m.start(1), m.start(1) + len(m.group(1).rstrip())
        if bytes(buf[s:e]) != data[s:e] or _in_directive(data, s):
            continue
        if _prev_code_byte(source, buf, s)[0] not in (b";", b"{", b"}", b">", b""):
            continue  # not at a declaration's start
        decl = re.match(rb"[^;{}()=]*", data[m.end():m.end() + 512])
        if data[m.end() + decl.end():m.end() + decl.end() + 1] == b"(":
            continue  # a function (the qualifier-macro pass before a function header reads those)
        if function_like is None:
            function_like = {d.group(1) for d in scan_directives(source, _FUNC_MACRO_MULTILINE)}
            defs = _qualifier_definitions(source)
        for w in re.finditer(rb"[A-Z][A-Z0-9_]*[A-Z0-9]", m.group(1)):
            if w.group(0) in function_like:
                break
        else:
            out.append(Mask(s, e, "qualifier-macro", m.group(1).decode().strip()))
            _blank(buf, s, e)
    for m in match_at(data, _PREFIX_MACRO_ARGUMENT, source.upper_call_starts):
        s = m.start(1)
        if source.in_comment_or_string(s) or bytes(buf[s:m.end()]) != data[s:m.end()] or _in_directive(data, s):
            continue
        if _prev_code_byte(source, buf, s)[0] not in (b"(", b","):
            continue
        found = _call_arguments(data, m.end() - 1)
        if found is None or found[0]:
            continue
        after = re.match(rb"\s*[A-Za-z_][\w:]*\s*[,)]", data[found[2] + 1:found[2] + 256])
        if after is None or after.group(0).strip()[:-1].strip() in _NOT_NAMES:
            continue
        out.append(Mask(s, found[2] + 1, "macro-invocation", data[s:found[2] + 1].decode("utf-8", "replace"), "prefix"))
        _blank(buf, s, found[2] + 1)
    for m in code_matches_at(source, _TRAILING_LIST_MACRO, words):
        s, e = m.start(1), m.end(1)
        if bytes(buf[s:e]) != data[s:e] or _in_directive(data, s) or not _BEFORE_TRAILING_MACRO.search(
                data, max(0, s - 64), s):
            continue
        word = re.search(rb"(\w+)[ \t\r\n]*$", data[max(0, s - 64):s])
        if word is None or word.group(1) in _NOT_NAMES or word.group(1).isdigit():
            continue
        if function_like is None:
            function_like = {d.group(1) for d in scan_directives(source, _FUNC_MACRO_MULTILINE)}
            defs = _qualifier_definitions(source)
        if m.group(1) in function_like:
            continue
        out.append(Mask(s, e, "macro-invocation", m.group(1).decode(), "list-tail"))
        _blank(buf, s, e)
    return out


# An upper-case name the way macros are spelled (`DEFINE_HAS_MEMBER`, `MANAGED`, `CUTE_HOST_DEVICE`).
_MACRO_NAME = re.compile(rb"(?<![\w.>:#])[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*(?![\w])")
_NOT_MACRO_NAMES = frozenset((b"NULL", b"EOF", b"TRUE", b"FALSE"))


def header_macro_at(source: Source, start: int, end: int) -> str | None:
    """The upper-case name an unreadable region [start, end) is attributable to, when the file does not
    define or declare it (a macro from a header used as syntax): the region's first token, or the code
    token right before it, on the region's first line. None when there is no such name, or more than one
    (the failure is then not attributable to one of them)."""
    data = source.data
    line_end = data.find(b"\n", start)
    line_end = len(data) if line_end < 0 else line_end
    lo = data.rfind(b"\n", 0, start) + 1
    names = []
    for m in _MACRO_NAME.finditer(data, lo, max(min(end, line_end), start + 1)):
        if len(m.group(0)) < 3 or m.group(0) in _NOT_MACRO_NAMES or source.in_comment_or_string(m.start()):
            continue
        if m.end() <= start:
            rest = m.end() + len(data[m.end():start]) - len(data[m.end():start].lstrip(b" \t"))
            if data[rest:rest + 1] == b"(":  # `NAME(args)` right before the region
                found = _call_arguments(data, rest)
                rest = found[2] + 1 if found is not None and not found[0] else rest
            if data[rest:start].strip():
                continue  # not right before the region
        names.append(m.group(0))
    if len(set(names)) != 1:
        return None
    name = names[0]
    esc = re.escape(name)
    if re.search(rb"^[ \t]*#[ \t]*define[ \t]+" + esc + rb"\b", data, re.M) or re.search(
            rb"\b(?:struct|class|union|enum|typedef|using|typename|namespace)\b[^;{}()]*?\b" + esc + rb"\b", data):
        return None  # defined or declared in the file: the failure is something else
    return name.decode()


def _empty_brace_starts(data: bytes) -> list[int]:
    """Where _EMPTY_BRACE_DEFAULT can match: before the blanks before each ``= {}`` (a pattern opening with a
    look-behind is tried at every byte)."""
    out = []
    for m in _EMPTY_BRACES.finditer(data):
        p = m.start()
        while p > 0 and data[p - 1] in b" \t":
            p -= 1
        out.append(p)
    return out


def _member_operator_starts(data: bytes) -> list[int]:
    """Where _CONVERSION_CALL can match: the ``.`` or ``->`` before blanks before each ``operator`` (a scan
    for ``.`` and ``-`` stops at every member access)."""
    out = []
    i = data.find(b"operator")
    while i >= 0:
        j = i
        while j > 0 and data[j - 1] in b" \t\n\r\f\v":
            j -= 1
        if data.endswith(b".", 0, j):
            out.append(j - 1)
        elif data.endswith(b"->", 0, j):
            out.append(j - 2)
        i = data.find(b"operator", i + 8)
    return out


class CudaFrontEnd(FrontEnd):
    name = "cuda"
    extensions = (".cu", ".cuh")

    @classmethod
    def grammar(cls) -> ts.Language:
        return ts.Language(tree_sitter_cuda.language())

    def mask(self, source: Source, buf: bytearray) -> list[Mask]:
        masks: list[Mask] = []
        for m in scan_code(source, _ALIGN, starts=_ALIGN_STARTS):
            masks.append(Mask(m.start(), m.end(), "attribute", m.group(0).decode("utf-8", "replace"), "align"))
            _blank(buf, m.start(), m.end())
        for m in scan_code(source, _MAXNREG, starts=(b"__maxnreg__",)):
            text = m.group(0).decode("utf-8", "replace")
            masks.append(Mask(m.start(), m.end(), "launch-attribute", text, "maxnreg"))
            _blank(buf, m.start(), m.end())
        masks.extend(mask_declaration_words(source, buf))
        masks.extend(mask_string_macros(source, buf))
        masks.extend(mask_misplaced_macros(source, buf))
        masks.extend(mask_identity_macro_statements(source, buf))
        for m in scan_code(source, _CLUSTER_DIMS, starts=(b"__cluster_dims__",)):
            text = m.group(0).decode("utf-8", "replace")
            masks.append(Mask(m.start(), m.end(), "launch-attribute", text, "cluster_dims"))
            _blank(buf, m.start(), m.end())
        for m in code_matches_at(source, _EMPTY_BRACE_DEFAULT, _empty_brace_starts(source.data)):
            masks.append(Mask(m.start(1), m.end(1), "default-argument", m.group(1).decode()))
            _blank(buf, m.start(1), m.end(1))
        for m in scan_code(source, _LAMBDA_SPACE):
            masks.append(Mask(m.start(1), m.end(1), "function-qualifier", m.group(1).decode().strip(), "lambda"))
            _blank(buf, m.start(1), m.end(1))
        masks.extend(mask_lambda_qualifier_macros(source, buf))
        masks.extend(mask_specifier_macros(source, buf))
        qualifier_starts = _qualifier_macro_starts(source)
        masks.extend(mask_constructor_qualifier_macros(source, buf, qualifier_starts))
        defs = None
        # on the text masked so far, comments blanked: directive lines of a decided group between the names and
        # the header (`CUTLASS_GLOBAL` / `#ifdef __CUDACC__` / `__launch_bounds__(...)` / `#endif` / `void k(`)
        # are blanks there
        text = bytearray(buf)
        for cs, ce, is_comment in source.lexical:
            if is_comment:
                _blank(text, cs, ce)
        for m in match_at(bytes(text), _QUALIFIER_MACROS, qualifier_starts):
            if source.in_comment_or_string(m.start()):
                continue
            if on_directive_line(source.data, m.start()):
                continue  # a directive (`#define NAME void f(`)
            if defs is None:
                defs = _qualifier_definitions(source)
            for w in re.finditer(rb"[A-Z][A-Z0-9_]+", m.group(1)):
                s, e = m.start(1) + w.start(), m.start(1) + w.end()
                if bytes(buf[s:e]) != w.group(0):
                    continue
                # args: the expansion's qualifiers when the file defines the name as qualifiers only
                masks.append(Mask(s, e, "function-qualifier", w.group(0).decode(), "macro", defs.get(w.group(0)) or ()))
                _blank(buf, s, e)
        for m in scan_code(source, _TEMPLATE_OPERATOR_CALL, _TEMPLATE_OPERATOR_NEEDS):
            # `launch.template operator()<true>()` reads as `launch()`
            masks.append(Mask(m.start(), m.end(), "template-args", m.group(0).decode("utf-8", "replace")))
            _blank(buf, m.start(), m.end())
        for m in scan_code(source, _LAMBDA_ATTRIBUTE, b"__attribute__"):
            masks.append(Mask(m.start(1), m.end(1), "type-attribute", m.group(1).decode("utf-8", "replace"), "lambda"))
            _blank(buf, m.start(1), m.end(1))
        for m in scan_code(source, _SPACE_BEFORE_STRUCT, (b"struct", b"class", b"union"),
                               (b"__device__", b"__host__")):
            masks.append(Mask(m.start(), m.end(), "ignored-specifier", m.group(0).decode().strip()))
            _blank(buf, m.start(), m.end())
        for m in code_matches_at(source, _CONVERSION_CALL, _member_operator_starts(source.data)):
            masks.append(Mask(m.start(), m.end(), "conversion-call", m.group(0).decode("utf-8", "replace")))
            _blank(buf, m.start(), m.end())
        for m in scan_code(source, _TYPE_ATTRIBUTE, starts=(b"__attribute__",)):
            text = m.group(0).decode("utf-8", "replace")
            masks.append(Mask(m.start(), m.end(), "type-attribute", text, m.group(1).decode()))
            _blank(buf, m.start(), m.end())
        for m in scan_code(source, _TYPENAME_EXPRESSION, starts=(b"typename",)):
            s, e = m.start(), m.start() + len(b"typename")
            before, at = _prev_code_byte(source, buf, s)
            if before not in _EXPRESSION_BEFORE and not _ends_with_word(source.data, at + 1, b"return"):
                continue
            if before == b":" and source.data[at - 1:at] == b":":
                continue
            masks.append(Mask(s, e, "typename", "typename"))
            _blank(buf, s, e)
        masks.extend(mask_define_comments(source, buf))
        masks.extend(mask_unbalanced_conditionals(source, buf))
        masks.extend(mask_dangling_else(source, buf))
        masks.extend(mask_type_arguments(source, buf))
        masks.extend(mask_functional_casts(source, buf))
        masks.extend(mask_decltype_values(source, buf))
        masks.extend(mask_unnamed_enum_bases(source, buf))
        masks.extend(mask_unnamed_pointer_defaults(source, buf))
        masks.extend(mask_statement_macro_calls(source, buf))
        masks.extend(mask_block_header_macros(source, buf))
        for m in scan_code(source, _OPERATOR_CALL_ARGS, starts=(b"operator",)):
            masks.append(Mask(m.start(1), m.end(1), "template-args", m.group(1).decode("utf-8", "replace")))
            _blank(buf, m.start(1), m.end(1))
        return masks
