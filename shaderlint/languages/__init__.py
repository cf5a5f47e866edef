"""Language front ends and the extension registry.

The front ends (and the regular expressions and grammars their modules build on import) are loaded
on first use of :data:`FRONT_ENDS` or the front-end types: a run whose every file's result is cached
only needs the extension table, which is written out here (tests/test_languages_registry.py checks
it against the front ends' own ``extensions``)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from shaderlint.languages.base import FrontEnd, Mask, Parsed

    FRONT_ENDS: dict[str, FrontEnd]

EXTENSIONS: dict[str, str] = {
    ".metal": "metal", ".cu": "cuda", ".cuh": "cuda",
    **{ext: "glsl" for ext in (".comp", ".vert", ".frag", ".geom", ".tesc", ".tese", ".mesh", ".task",
                               ".rgen", ".rchit", ".rmiss", ".rahit", ".rint", ".rcall", ".glsl")},
}
LANGUAGE_IDS = {"metal": "metal", "cuda": "cuda", "cuda-cpp": "cuda", "glsl": "glsl", "hlsl": None}


def language_for_path(path: str) -> str | None:
    ext = os.path.splitext(path)[1].lower()
    return EXTENSIONS.get(ext)


def __getattr__(name: str) -> Any:
    # (PEP 562: the front ends load on the first look-up of one of these names, then are module globals)
    if name == "FRONT_ENDS":
        from shaderlint.languages.cuda import CudaFrontEnd
        from shaderlint.languages.glsl import GlslFrontEnd
        from shaderlint.languages.metal import MetalFrontEnd

        fronts = {fe.name: fe for fe in (MetalFrontEnd(), CudaFrontEnd(), GlslFrontEnd())}
        globals()["FRONT_ENDS"] = fronts
        return fronts
    if name in ("FrontEnd", "Mask", "Parsed"):
        from shaderlint.languages import base

        got = getattr(base, name)
        globals()[name] = got
        return got
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["FRONT_ENDS", "EXTENSIONS", "FrontEnd", "Mask", "Parsed", "language_for_path", "LANGUAGE_IDS"]
