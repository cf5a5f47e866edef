"""CUDA C++ front end (tree-sitter-cuda).

The grammar knows ``__global__``/``__device__``/``__shared__``/``__constant__``,
``__launch_bounds__`` and ``<<<grid, block, smem, stream>>>`` launches; host
code in the same file is parsed too and read only for launch sites.
"""

from __future__ import annotations

import tree_sitter as ts
import tree_sitter_cuda

from shaderlint.languages.base import FrontEnd


class CudaFrontEnd(FrontEnd):
    name = "cuda"
    extensions = (".cu", ".cuh")

    @classmethod
    def grammar(cls) -> ts.Language:
        return ts.Language(tree_sitter_cuda.language())
