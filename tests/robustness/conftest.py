"""Shared helpers for the robustness tests: an isolated project directory and the CLI in-process."""

from __future__ import annotations

import importlib.util
import json
import os
import sys

import pytest

from shaderlint.cli import main

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

#: A kernel with exactly one finding (SL201 at GOOD_AT, 3:21) that must be reported next to any hostile file
#: (a load divided in every iteration of a grid-stride loop: SL201 reports divisions a thread repeats).
GOOD = (
    "__global__ void scale(int* a, int n) {\n"
    "    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)\n"
    "        a[i] = a[i] / n;\n"
    "}\n"
)
GOOD_AT = (3, 21)  # line, column (1-based) of its `/`

#: Both are opt-in; these tests select them: SL201 reports GOOD's division, SL001 what a hostile file cuts.
SENTINEL_RULES = ("SL001", "SL201")
SENTINEL_CONFIG = "extend-select = [%s]\n" % ", ".join(f'"{c}"' for c in SENTINEL_RULES)


@pytest.fixture
def project(tmp_path, monkeypatch):
    """An isolated project: a config that selects SENTINEL_RULES stops the upward search; a private cache."""
    (tmp_path / "shaderlint.toml").write_text(SENTINEL_CONFIG)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SHADERLINT_CACHE_DIR", str(tmp_path / ".cache"))
    return tmp_path


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys, *argv: str) -> tuple[int, list[dict], str]:
    code, out, err = run(capsys, "--format", "json", *argv)
    return code, json.loads(out), err


def load_fuzz():
    """``bench/fuzz.py`` as a module (the fuzzing library the tests share with the campaign)."""
    name = "shaderlint_bench_fuzz"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, os.path.join(ROOT, "bench", "fuzz.py"))
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod
