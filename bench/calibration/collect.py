"""Regenerate ptxas_reference.json: ptxas's register, stack and shared-memory
figures for every kernel of the calibration corpus on each architecture.

    python bench/calibration/collect.py            # rewrite the reference
    python bench/calibration/collect.py --check    # exit 1 if it is stale
    python bench/calibration/collect.py --summary  # print register ranges

It compiles each ``*.cu`` file here with ``nvcc -arch=ARCH -Xptxas -v -c``
through :func:`shaderlint.estimate.ptxas.compile_ptxas` and needs nvcc on PATH.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO))

from shaderlint.estimate.ptxas import PtxasKernel, compile_ptxas, nvcc_path  # noqa: E402

ARCHS = ("sm_80", "sm_90")
REFERENCE = HERE / "ptxas_reference.json"


def kernel_line(source: str, name: str) -> int | None:
    """1-based line of the ``__global__`` declaration that names ``name``."""
    pattern = re.compile(r"__global__\b[^;{]*?\b" + re.escape(name) + r"\s*\(", re.S)
    match = pattern.search(source)
    if match is None:
        return None
    return source.count("\n", 0, match.end()) + 1


def template_args(demangled: str, name: str) -> str | None:
    """``"8, 4"`` for ``void tile<8, 4>(...)``; None for a non-template."""
    head = demangled.split("(", 1)[0]
    marker = name + "<"
    at = head.rfind(marker)
    if at < 0:
        return None
    return head[at + len(marker) : head.rfind(">")]


def record(path: Path, source: str, kernel: PtxasKernel) -> dict[str, object]:
    return {
        "file": path.name,
        "kernel": kernel.name,
        "demangled": kernel.demangled,
        "mangled": kernel.mangled,
        "line": kernel_line(source, kernel.name),
        "template_args": template_args(kernel.demangled, kernel.name),
        "registers": kernel.registers,
        "stack_bytes": kernel.stack_bytes,
        "spill_store_bytes": kernel.spill_store_bytes,
        "spill_load_bytes": kernel.spill_load_bytes,
        "shared_bytes": kernel.shared_bytes,
        "barriers": kernel.barriers,
    }


def nvcc_version() -> str:
    nvcc = nvcc_path()
    if nvcc is None:
        return "unknown"
    out = subprocess.run([nvcc, "--version"], capture_output=True, text=True, check=False).stdout
    lines = [line for line in out.splitlines() if "release" in line]
    return lines[-1].strip() if lines else "unknown"


def collect() -> dict[str, object]:
    files = sorted(HERE.glob("*.cu"))
    archs: dict[str, list[dict[str, object]]] = {}
    for arch in ARCHS:
        rows: list[dict[str, object]] = []
        for path in files:
            result = compile_ptxas(path, arch=arch)
            if result.error:
                raise SystemExit(f"{path.name} ({arch}): {result.error}")
            source = path.read_text(encoding="utf-8")
            rows.extend(record(path, source, k) for k in result.values())
        rows.sort(key=lambda r: (str(r["file"]), str(r["demangled"])))
        archs[arch] = rows
    return {
        "generator": "bench/calibration/collect.py",
        "compiler": nvcc_version(),
        "command": "nvcc -arch=ARCH -Xptxas -v -c FILE -o /dev/null",
        "fields": {
            "registers": "ptxas 'Used N registers' (32-bit, per thread)",
            "stack_bytes": "'N bytes stack frame' (local memory per thread)",
            "shared_bytes": "static __shared__ per block ('N bytes smem'); dynamic shared memory is not included",
            "line": "1-based line of the kernel name in its __global__ declaration",
            "template_args": "template arguments of the instance, or null",
        },
        "archs": archs,
    }


def summary(data: dict[str, object]) -> str:
    lines = []
    archs = data["archs"]
    assert isinstance(archs, dict)
    for arch, rows in archs.items():
        regs = [int(r["registers"]) for r in rows]
        stack = sum(1 for r in rows if int(r["stack_bytes"]) > 0)
        files = len({r["file"] for r in rows})
        lines.append(
            f"{arch}: {len(rows)} kernels in {files} files, registers min {min(regs)} "
            f"median {statistics.median(regs):g} max {max(regs)}, {stack} with a stack frame"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if the reference is stale")
    parser.add_argument("--summary", action="store_true", help="print register ranges of the reference")
    args = parser.parse_args(argv)
    if args.summary and not args.check:
        print(summary(json.loads(REFERENCE.read_text())))
        return 0
    data = collect()
    text = json.dumps(data, indent=1) + "\n"
    if args.check:
        current = json.loads(REFERENCE.read_text()) if REFERENCE.exists() else None
        if current is None or current.get("archs") != data["archs"]:
            print("ptxas_reference.json is stale: run bench/calibration/collect.py", file=sys.stderr)
            return 1
        print(summary(data))
        return 0
    REFERENCE.write_text(text, encoding="utf-8")
    print(summary(data))
    return 0


if __name__ == "__main__":
    sys.exit(main())
