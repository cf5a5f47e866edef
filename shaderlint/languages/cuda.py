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
"""

from __future__ import annotations

import re

import tree_sitter as ts
import tree_sitter_cuda

from shaderlint.languages.base import _OBJ_MACRO, FrontEnd, Mask, _blank, scan_code
from shaderlint.model.source import Source

_ALIGN = re.compile(rb"\b__align__\s*\(\s*[^()]*\)")
_LAMBDA_SPACE = re.compile(rb"\]\s*((?:(?:__device__|__host__)\s*)+)(?=\()")
# `operator()<T>(`: template arguments (one level of nesting) between `operator()` and its parameters.
_OPERATOR_CALL_ARGS = re.compile(rb"\boperator\s*\(\s*\)\s*(<(?:[^<>(){};]|<[^<>(){};]*>)*>)(?=\s*\()")


# Upper-case names before a function header: `NAME [NAME...] [specifiers] type [*&] [__launch_bounds__(..)] name(`.
_QUALIFIER_MACROS = re.compile(
    rb"(?<![\w:.>#])((?:[A-Z][A-Z0-9_]+[ \t]+)+)"
    rb"(?=(?:(?:static|inline|extern|constexpr|__forceinline__|__noinline__|__inline__|__host__|__device__|__global__"
    rb"|const|unsigned|signed|long|short|struct)\s+)*"
    # the return type itself is not a specifier: in `REAL __device__ f(` REAL is the (typedef) type
    rb"(?!(?:static|inline|extern|constexpr|__forceinline__|__noinline__|__inline__|__host__|__device__|__global__)\b)"
    rb"[A-Za-z_][\w:]*(?:\s*<[^;{}()]*>)?[\s*&]+(?:__launch_bounds__\s*\([^()]*\)\s*)?[A-Za-z_~][\w:]*\s*\()")
# What an in-file definition may expand to for the function to take its qualifiers.
_QUALIFIER_TOKENS = frozenset((b"__global__", b"__device__", b"__host__", b"__forceinline__", b"__noinline__",
                               b"__inline__", b"static", b"inline", b"extern", b"constexpr"))


def _qualifier_definitions(source: Source) -> dict[bytes, tuple[str, ...] | None]:
    """Object-like macros of the file: name -> the qualifier tokens it expands to, or None when some
    definition of it expands to anything else."""
    out: dict[bytes, tuple[str, ...] | None] = {}
    for m in _OBJ_MACRO.finditer(source.data):
        if source.in_comment_or_string(m.start(1)):
            continue
        body = re.sub(rb"//[^\n]*|/\*.*?\*/|\\\r?\n", b" ", m.group(2), flags=re.S).split()
        toks = tuple(t.decode() for t in body) if body and set(body) <= _QUALIFIER_TOKENS else None
        prev = out.get(m.group(1), ())
        out[m.group(1)] = None if toks is None or prev is None else tuple(dict.fromkeys(prev + toks))
    return out


class CudaFrontEnd(FrontEnd):
    name = "cuda"
    extensions = (".cu", ".cuh")

    @classmethod
    def grammar(cls) -> ts.Language:
        return ts.Language(tree_sitter_cuda.language())

    def mask(self, source: Source, buf: bytearray) -> list[Mask]:
        masks: list[Mask] = []
        for m in scan_code(source, _ALIGN):
            masks.append(Mask(m.start(), m.end(), "attribute", m.group(0).decode("utf-8", "replace"), "align"))
            _blank(buf, m.start(), m.end())
        for m in scan_code(source, _LAMBDA_SPACE):
            masks.append(Mask(m.start(1), m.end(1), "function-qualifier", m.group(1).decode().strip(), "lambda"))
            _blank(buf, m.start(1), m.end(1))
        defs = None
        for m in scan_code(source, _QUALIFIER_MACROS):
            line_start = source.data.rfind(b"\n", 0, m.start()) + 1
            if source.data[line_start:m.start()].lstrip().startswith(b"#"):
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
        for m in scan_code(source, _OPERATOR_CALL_ARGS):
            masks.append(Mask(m.start(1), m.end(1), "template-args", m.group(1).decode("utf-8", "replace")))
            _blank(buf, m.start(1), m.end(1))
        return masks
