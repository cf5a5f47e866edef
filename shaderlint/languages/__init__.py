"""Language front ends and the extension registry."""

from __future__ import annotations

import os

from shaderlint.languages.base import FrontEnd, Mask, Parsed
from shaderlint.languages.cuda import CudaFrontEnd
from shaderlint.languages.glsl import GlslFrontEnd
from shaderlint.languages.metal import MetalFrontEnd

FRONT_ENDS: dict[str, FrontEnd] = {fe.name: fe for fe in (MetalFrontEnd(), CudaFrontEnd(), GlslFrontEnd())}
EXTENSIONS: dict[str, str] = {ext: fe.name for fe in FRONT_ENDS.values() for ext in fe.extensions}
LANGUAGE_IDS = {"metal": "metal", "cuda": "cuda", "cuda-cpp": "cuda", "glsl": "glsl", "hlsl": None}


def language_for_path(path: str) -> str | None:
    ext = os.path.splitext(path)[1].lower()
    return EXTENSIONS.get(ext)


__all__ = ["FRONT_ENDS", "EXTENSIONS", "FrontEnd", "Mask", "Parsed", "language_for_path", "LANGUAGE_IDS"]
