"""shaderlint: a static-analysis linter for GPU kernels and shaders (Metal, CUDA, GLSL)."""

__version__ = "0.1.0"
