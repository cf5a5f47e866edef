"""How far an estimated register count may be from the compiler's: intervals measured on real code.

An estimate of registers per thread is shown with the range the compiler's count fell in for
kernels we did not write: ``~40 (28–55)``. The range comes from ``intervals.json`` next to this
module, written by ``python bench/calibrate.py --realcode --write-intervals`` (see
docs/register-model.md): per target architecture and band of the estimate, the 10 % and 90 %
quantiles of ln(ptxas / estimate) over the real-code corpus's kernels, and how often such an
interval, built from the other packages' kernels only, held the held-out package's count
(leave-one-project-out coverage). So the interval says "for 8 kernels in 10 like these, ptxas
gave a count in this range", measured, not assumed.

Only what was measured is shown: CUDA on the architectures the corpus was compiled for, in bands
with enough kernels (``MIN_KERNELS``). Elsewhere (Metal, GLSL, other NVIDIA architectures, bands
with too few kernels) :func:`register_interval` returns None and the estimate stands alone with
its ``~``; the report says the uncertainty is not measured there.
"""

from __future__ import annotations

import functools
import json
import math
import os
from dataclasses import dataclass

#: Bands with fewer held-out kernels than this give no interval (their quantiles are noise).
MIN_KERNELS = 30

_PATH = os.path.join(os.path.dirname(__file__), "intervals.json")


@dataclass(frozen=True)
class Interval:
    low: int
    high: int
    #: Share of held-out kernels (leave-one-project-out) whose compiler count fell in such an interval.
    coverage: float | None
    kernels: int

    def text(self) -> str:
        return f"{self.low}–{self.high}"


@functools.lru_cache(maxsize=1)
def _table() -> dict:
    try:
        with open(_PATH, encoding="utf-8") as fh:
            doc = json.load(fh)
        return doc if isinstance(doc, dict) else {}
    except (OSError, ValueError):
        return {}


def measured_for(language: str, target_name: str) -> bool:
    """Whether intervals were measured for this language and target."""
    return bool(_archs(language).get(target_name))


def _archs(language: str) -> dict:
    per_language = _table().get("languages", {})
    got = per_language.get(language, {}) if isinstance(per_language, dict) else {}
    return got.get("archs", {}) if isinstance(got, dict) else {}


def _band(bands: list, regs: float) -> str | None:
    for label, lo, hi in bands:
        if lo <= regs <= hi:
            return label
    return None


def register_interval(language: str, target_name: str, registers: float | None) -> Interval | None:
    """The measured 10–90 % range around an estimate of ``registers`` on ``target_name``, or None
    where none was measured (see the module). Bounds are whole registers (rounded outward, the
    lower bound at least 1)."""
    if registers is None or registers <= 0:
        return None
    arch = _archs(language).get(target_name)
    if not isinstance(arch, dict):
        return None
    bands = _table().get("bands") or []
    label = _band(bands, registers)
    q = arch.get("quantiles", {}).get(label) if label is not None else None
    if not isinstance(q, dict) or q.get("kernels", 0) < MIN_KERNELS:
        return None
    try:
        low = max(1, math.floor(registers * math.exp(float(q["q10"]))))
        high = max(low, math.ceil(registers * math.exp(float(q["q90"]))))
    except (KeyError, TypeError, ValueError, OverflowError):
        return None
    cov = arch.get("coverage_lopo")
    return Interval(low, high, float(cov) if isinstance(cov, (int, float)) else None, int(q["kernels"]))


def measured(language: str, target_name: str) -> bool:
    """Whether intervals were measured for ``target_name`` in ``language`` at all (where not,
    :func:`register_interval` is None for every register count)."""
    return isinstance(_archs(language).get(target_name), dict)


def coverage(language: str, target_name: str) -> float | None:
    """How often such intervals held for projects left out of the measurement (leave-one-project-out)."""
    arch = _archs(language).get(target_name)
    cov = arch.get("coverage_lopo") if isinstance(arch, dict) else None
    return float(cov) if isinstance(cov, (int, float)) else None


def source_note() -> str:
    """Where the intervals come from, for a footer."""
    t = _table()
    return str(t.get("measured_on", "the real-code corpus"))
