"""Metal Shading Language front end (tree-sitter-cpp plus masks).

MSL is C++14 with address spaces (``device``, ``constant``, ``threadgroup``,
``thread``, ``threadgroup_imageblock``, ``ray_data``, ``object_data``),
function qualifiers (``kernel``, ``vertex``, ``fragment``, ``visible``) and
``[[...]]`` attributes in places C++ does not allow them. All three are masked
(same-length spaces) and recorded; the model re-attaches them by position. Also
masked: the ``METAL_FUNC`` helper prefix, the address space of a member
function's object (``T() thread = default;``, ``operator[](size_t i) const thread``,
``V(float a) threadgroup : x(a) {}``) and a placeholder line the build replaces by a
header's text in an ``#if``/``#else`` whose other branch ``#include``s it. Loop-header macros
(``FOR_UNROLL (int i = 0; i < n; ++i)``) are read as ``for``; an ``else`` that
ends a preprocessor branch (its statement after ``#endif``) is blanked.
"""

from __future__ import annotations

import re

import tree_sitter as ts
import tree_sitter_cpp

from shaderlint.languages.base import (
    _CONDITIONAL, FrontEnd, Mask, _blank, _code_only, _flat_conditional_groups, mask_dangling_else, mask_loop_macros,
    on_directive_line, scan_code, split_attribute,
)
from shaderlint.model.source import Source

ADDRESS_SPACES = ("device", "constant", "threadgroup", "thread", "threadgroup_imageblock", "ray_data", "object_data")
FUNCTION_QUALIFIERS = ("kernel", "vertex", "fragment", "visible")

# An attribute never holds `[`, `;` or braces: an unclosed `[[` stops there instead of scanning to the end
# of the file from every `[[` (quadratic on `[[[[...`).
_ATTRIBUTE = re.compile(rb"\[\[(?:[^\][;{}]|\](?!\]))*\]\]")
_ADDRESS = re.compile(rb"(?<![\w.:>])(" + b"|".join(a.encode() for a in ADDRESS_SPACES) + rb")(?=\s+[A-Za-z_])")
# A function qualifier is followed by a return type and then a name: `kernel void f(`. The return type
# is bounded: unbounded, `kernel kernel kernel ...` made every occurrence scan to the end of the file.
_QUALIFIER = re.compile(
    rb"(?<![\w.:>])(" + b"|".join(q.encode() for q in FUNCTION_QUALIFIERS)
    + rb")(?=\s+[A-Za-z_][\w:<>, ]{0,256}[\s*&]{1,64}[A-Za-z_]\w*\s*[(<])"
)
# `METAL_FUNC` (metal_stdlib: `inline __attribute__((__always_inline__))`) in front of helpers.
_METAL_FUNC = re.compile(rb"(?<![\w#])METAL_FUNC\b")
# The address space of a member function's implicit object: `T() thread = default;`,
# `float get() device const {`, `T& operator[](size_t i) const thread {` (SPIRV-Cross's
# `spvUnsafeArray` helper), a constructor's `V(float a) threadgroup : x(a) {}`; the grammar reads
# none of them after the parameter list.
_METHOD_SPACE = re.compile(
    rb"\)\s*(?:const\s+)?(" + b"|".join(a.encode() for a in ADDRESS_SPACES)
    + rb")\b(?=\s*(?:=\s*(?:default|delete)\b|\{|;|:(?!:)|const\b|noexcept\b|->))"
)

# A line the build replaces before compiling: one run of name characters with `-`, `.` or `/` that
# no C++ declaration can be (whisper.cpp's `__embed_ggml-common.h__`, where the embedded library
# pastes the header's text).
_PLACEHOLDER_LINE = re.compile(rb"[ \t\r\n]*[A-Za-z_][\w.\-/]*[.\-/][\w.\-/]*[ \t\r\n]*")
_INCLUDES_ONLY = re.compile(rb"(?:[ \t\r\n]*#[ \t]*(?:include|import)\b[^\n]*)+[ \t\r\n]*")


def mask_placeholder_branches(source: Source, buf: bytearray) -> list[Mask]:
    """Blank the branch of an ``#if``/``#else`` pair that holds nothing but a placeholder line when
    the other branch holds only ``#include`` lines::

        #if defined(GGML_METAL_EMBED_LIBRARY)
        __embed_ggml-common.h__
        #else
        #include "ggml-common.h"
        #endif

    The build pastes the header in place of the line; the grammar read it as an expression at file
    scope, a parse error. The ``#include`` branch is read (what the other build compiles)."""
    data = source.data
    if b"#" not in data:
        return []
    out: list[Mask] = []
    for group in _flat_conditional_groups(source, buf, _CONDITIONAL):
        if len(group) != 3 or group[1].group(1) != b"else" or any(buf[d.start()] != data[d.start()] for d in group):
            continue
        branches = [(group[0].end(), group[1].start()), (group[1].end(), group[2].start())]
        codes = [_code_only(source, a, b) for a, b in branches]
        for k in (0, 1):
            if _PLACEHOLDER_LINE.fullmatch(codes[k]) and _INCLUDES_ONLY.fullmatch(codes[1 - k]):
                a, b = branches[k]
                out.append(Mask(a, b, "placeholder", data[a:b].decode("utf-8", "replace").strip()))
                _blank(buf, a, b)
    return out


class MetalFrontEnd(FrontEnd):
    name = "metal"
    extensions = (".metal",)

    @classmethod
    def grammar(cls) -> ts.Language:
        return ts.Language(tree_sitter_cpp.language())

    def mask(self, source: Source, buf: bytearray) -> list[Mask]:
        masks: list[Mask] = []
        for m in scan_code(source, _ATTRIBUTE):
            text = m.group(0).decode("utf-8", "replace")
            for name, args in split_attribute(text):
                masks.append(Mask(m.start(), m.end(), "attribute", text, name, args))
            _blank(buf, m.start(), m.end())
        for kind, pattern, words in (("address-space", _ADDRESS, ADDRESS_SPACES),
                                     ("function-qualifier", _QUALIFIER, FUNCTION_QUALIFIERS)):
            for m in scan_code(source, pattern, starts=tuple(w.encode() for w in words)):
                word = m.group(1).decode()
                masks.append(Mask(m.start(1), m.end(1), kind, word, word))
                _blank(buf, m.start(1), m.end(1))
        for m in scan_code(source, _METAL_FUNC, starts=(b"METAL_FUNC",)):
            if on_directive_line(source.data, m.start()):
                continue  # `#define METAL_FUNC ...`, `#ifdef METAL_FUNC`
            masks.append(Mask(m.start(), m.end(), "macro-qualifier", "METAL_FUNC"))
            _blank(buf, m.start(), m.end())
        for m in scan_code(source, _METHOD_SPACE):
            masks.append(Mask(m.start(1), m.end(1), "method-qualifier", m.group(1).decode()))
            _blank(buf, m.start(1), m.end(1))
        masks.extend(mask_loop_macros(source, buf))
        masks.extend(mask_dangling_else(source, buf))
        masks.extend(mask_placeholder_branches(source, buf))
        masks.sort(key=lambda k: k.start)
        return masks
