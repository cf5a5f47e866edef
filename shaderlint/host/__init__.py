"""Host dispatch code: what the code that launches a kernel says about its launch.

Kernels run with the group size, grid and dispatch mode that *host* code picks: a
``<<<grid, block>>>`` or ``cudaLaunchKernel`` in a ``.cpp``/``.cu`` file, a Metal
``dispatchThreads``/``dispatchThreadgroups`` in Swift, Objective-C or metal-cpp, a
``vkCmdDispatch`` in C or C++. A *scanner* per host language reads one host file
and returns the launches it can read as :class:`HostLaunch` records; an index
gathers them for a run and links each to the kernel it launches (by the kernel's
name, or for Vulkan by the shader file the pipeline was built from). Where a link
or a value cannot be established, the record leaves it ``None`` and nothing is
derived from it: host facts are claims, and precision comes first.

Scanners are registered by file extension in :data:`ALL_SCANNERS`; each is a pure
function of ``(path, data)`` (so results can be cached by content) that never
raises on any input.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

Dims = tuple[int, int, int]


@dataclass(frozen=True)
class Span:
    """Where something is written in a host file (bytes, and 1-based line and column)."""

    path: str
    start: int
    end: int
    line: int
    column: int


@dataclass(frozen=True)
class Truncation:
    """A grid dimension the host computes with a division that rounds down: ``n / b``,
    ``ceil(n / b)`` on integers (the division truncates before ``ceil`` sees it), or a round to
    nearest (``(int)((float)n / b + 0.5)``), that the host file does not prove exact. Whether ``b``
    is the group size along the axis is decided when the launch is linked to its kernel (the
    group size may be the shader's)."""

    #: 0, 1, 2: the grid axis.
    axis: int
    #: The expression to report (the division, the ``ceil``/rounding around it).
    at: Span
    #: ``floor`` (``n / b``), ``ceil`` (integer division under ``ceil``), ``round`` (to nearest).
    kind: str
    numerator: str
    divisor: str
    #: The divisor's value when the file makes it constant.
    divisor_value: int | None = None
    #: The divisor is written as the launch's group size along the axis (the same expression).
    as_group: bool = False
    #: The rounded-up grid to suggest (``(n + 255) / 256``).
    round_up: str = ""
    #: The numerator's value when the file makes it constant (then it is surely not a multiple).
    numerator_value: int | None = None


@dataclass(frozen=True)
class HostLaunch:
    """One launch or dispatch read from host code."""

    #: The call (``k<<<…>>>(…)``, ``dispatchThreadgroups(…)``, ``vkCmdDispatch(…)``).
    at: Span
    #: ``cuda`` (``<<<>>>``), ``cudaLaunchKernel``, ``cudaLaunchCooperativeKernel``, ``metal``, ``vulkan``;
    #: ``reference``: the kernel is named as a value where the scanner cannot read the launch (handed
    #: to a function, stored in a table): it may run with any size, so no fact is derived for it.
    api: str
    #: The kernel's function name (the CUDA symbol; the Metal function name given to
    #: ``makeFunction(name:)`` / ``newFunctionWithName:`` / ``newFunction``); None when unknown.
    kernel: str | None = None
    #: Vulkan: the shader source (absolute, normalised path of a ``.comp``/``.glsl`` file) the
    #: pipeline was built from; None elsewhere or when unknown.
    shader: str | None = None
    #: Threads per group (x, y, z) when constant, and where that size is written.
    group: Dims | None = None
    group_at: Span | None = None
    #: ``threads`` (Metal ``dispatchThreads``: the grid counts threads, edge groups may be partial)
    #: or ``threadgroups`` (whole groups: CUDA, Vulkan, Metal ``dispatchThreadgroups``).
    dispatch: str | None = None
    #: The grid when constant: threads for ``dispatch == "threads"``, groups otherwise.
    grid: Dims | None = None
    grid_at: Span | None = None
    #: Template arguments written at the launch (CUDA ``k<float, 4><<<…>>>``), as source text.
    template_args: tuple[str, ...] = ()
    #: Vulkan: the shader path as the host file writes it (``"shaders/blur.comp.spv"``); the index
    #: resolves it to :attr:`shader`.
    shader_literal: str | None = None
    #: Vulkan: the pipeline's specialization constants (``constant_id -> value``, sorted) when read;
    #: ``()`` when the pipeline sets none, None when it sets some that could not be read.
    specialization: tuple[tuple[int, int], ...] | None = ()
    #: Grid dimensions computed by a division that rounds down (SL503 on host code); ``()`` when
    #: none or not read (only whole-group dispatches are read: CUDA, Vulkan, ``dispatchThreadgroups``).
    truncations: tuple[Truncation, ...] = ()


#: A scanner: ``(path, data) -> launches``. Never raises.
Scanner = Callable[[str, bytes], list[HostLaunch]]

#: Scanners by lower-case file extension (with the dot), in registration order: filled by the
#: language modules. Several languages may share an extension (``.cpp``: CUDA host code, metal-cpp,
#: Vulkan); :func:`scanners_for` gives them all.
ALL_SCANNERS: dict[str, list[Scanner]] = {}
#: Per scanner, a test of a file's bytes that is false only when the scanner finds nothing there (the
#: words every record it reads needs, searched for: most host files have none). See :func:`wanted`.
_WANTS: dict[Scanner, Callable[[bytes], bool]] = {}
#: Scanners each record of which that names a kernel names it by an identifier written in the file
#: (CUDA: ``k<<<…>>>``, ``cudaLaunchKernel(k, …)``, ``k`` as a value), so that a file whose bytes hold
#: no name a launch can link to gives them no record the index keeps (:meth:`HostIndex.build`).
BY_NAME: set[Scanner] = set()


def register(extensions: tuple[str, ...], scanner: Scanner, wants: Callable[[bytes], bool] | None = None,
             by_name: bool = False) -> None:
    """Register ``scanner`` for ``extensions``; ``wants(data)``, when given, is false for the bytes in
    which the scanner finds nothing (it may be true for some of those too). ``by_name``: see
    :data:`BY_NAME`."""
    for ext in extensions:
        found = ALL_SCANNERS.setdefault(ext.lower(), [])
        if scanner not in found:
            found.append(scanner)
    if wants is not None:
        _WANTS[scanner] = wants
    if by_name:
        BY_NAME.add(scanner)


def wanted(scanners: list[Scanner], data: bytes) -> bool:
    """Whether one of ``scanners`` may find a record in ``data`` (False: every one finds none)."""
    for scanner in scanners:
        test = _WANTS.get(scanner)
        if test is None or test(data):
            return True
    return False


def scanners_for(path: str) -> list[Scanner]:
    """Every scanner registered for ``path``'s extension."""
    dot = path.rfind(".")
    return list(ALL_SCANNERS.get(path[dot:].lower(), ())) if dot > path.rfind("/") else []


def has_scanners(path: str) -> bool:
    """Whether a scanner is registered for ``path``'s extension (``bool(scanners_for(path))``,
    without copying the list: asked for every file a run's walk finds)."""
    dot = path.rfind(".")
    return dot > path.rfind("/") and bool(ALL_SCANNERS.get(path[dot:].lower()))
