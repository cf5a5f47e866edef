"""CUDA C++ front end (tree-sitter-cuda).

The grammar knows ``__global__``/``__device__``/``__shared__``/``__constant__``,
``__launch_bounds__`` and ``<<<grid, block, smem, stream>>>`` launches; host
code in the same file is parsed too and read only for launch sites. Masked:
``__align__(n)`` (unknown to the grammar) and the execution-space specifiers of
extended lambdas (``[=] __device__ (float x) {...}``), and the template
arguments of an explicit specialization of a call operator
(``template <> __device__ int F::operator()<float>(...)``), which the grammar
cannot read after ``operator()``; the specialization is read as ``F::operator()``.
"""

from __future__ import annotations

import re

import tree_sitter as ts
import tree_sitter_cuda

from shaderlint.languages.base import FrontEnd, Mask, _blank, scan_code
from shaderlint.model.source import Source

_ALIGN = re.compile(rb"\b__align__\s*\(\s*[^()]*\)")
_LAMBDA_SPACE = re.compile(rb"\]\s*((?:(?:__device__|__host__)\s*)+)(?=\()")
# `operator()<T>(`: template arguments (one level of nesting) between `operator()` and its parameters.
_OPERATOR_CALL_ARGS = re.compile(rb"\boperator\s*\(\s*\)\s*(<(?:[^<>(){};]|<[^<>(){};]*>)*>)(?=\s*\()")


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
        for m in scan_code(source, _OPERATOR_CALL_ARGS):
            masks.append(Mask(m.start(1), m.end(1), "template-args", m.group(1).decode("utf-8", "replace")))
            _blank(buf, m.start(1), m.end(1))
        return masks
