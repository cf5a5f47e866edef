"""Metal host code: the dispatches Swift, Objective-C(++) and metal-cpp code encodes.

A Metal kernel runs with the pipeline, threadgroup size and dispatch mode that host
code picks: a pipeline is built from a function name (``makeFunction(name:)``,
``newFunctionWithName:``, ``library->newFunction(…)``), bound with
``setComputePipelineState`` and dispatched with ``dispatchThreads`` (the grid counts
threads) or ``dispatchThreadgroups`` (the grid counts whole threadgroups). The
scanners here read one host file and return one :class:`~shaderlint.host.HostLaunch`
per dispatch call, with what can be traced *within that file*:

* ``dispatch`` — from the call itself, always known;
* ``group`` / ``grid`` — when the ``MTLSize`` is constant: literals, locals
  (``let``/``var``, C declarations), constants no other file can write (Swift ``let``
  and ``private`` properties, ``Self.x``, C ``const``/``constexpr``/``static``,
  ``#define``), through integer arithmetic and casts (``(n + 15) / 16`` with ``n``
  unknown, ``pso.threadExecutionWidth`` and anything else read at run time: None);
* ``kernel`` — the function name when the pipeline bound by the last
  ``setComputePipelineState`` on the same encoder, in the same function and on every
  path to the dispatch (not in a branch, a ``case`` or a loop that binds again; the
  encoder not handed to a call in between), traces back to exactly one
  ``makeFunction`` name (through locals, stored properties set anywhere in the file,
  and same-file helpers whose parameter is the function name, ``getPipeline("name")``).

A name with more than one value in the file (two assignments, a parameter, a loop or
closure variable, a subscript of an array or dictionary, a field write, anything passed
by address or through a setter) is unknown; an unknown value leaves the field None.
Precision first: a record never claims what the file does not show.

After the dispatches come ``reference`` records: one per name-like string literal that
no linked dispatch accounts for (a name in a table or a ternary, a pipeline whose
dispatch could not be linked or that is also bound before such a dispatch). A kernel
named by one may run with any configuration, so the index derives no fact for it.

The analysis is one language-neutral evaluator over three tree-sitter grammars:
tree-sitter-swift, tree-sitter-objc (``.m``, and ``.mm`` whose C++ the grammar reads
as far as it can) and tree-sitter-cpp for metal-cpp (:func:`scan_metal_cpp`, which the
C++ host index combines with the CUDA and Vulkan scanners).
"""

from __future__ import annotations

import warnings

import tree_sitter as ts

from shaderlint.host import HostLaunch, register
from shaderlint.host._metal_analysis import _Analysis
from shaderlint.host._metal_c import _Cpp, _ObjC
from shaderlint.host._metal_swift import _Swift

__all__ = ["scan_metal_cpp", "scan_objc", "scan_swift"]

#: Files larger than this are not scanned (host files are small; this bounds the work).
MAX_BYTES = 4 * 1024 * 1024

#: A file is parsed only when it dispatches or builds a function by name (the latter gives
#: ``reference`` records: a pipeline built here may be dispatched anywhere).
_TRIGGER = (b"dispatchThread", b"makeFunction", b"newFunctionWithName", b"newFunction(")

_LANGUAGES: dict[str, ts.Language] = {}


def _language(name: str) -> ts.Language | None:
    lang = _LANGUAGES.get(name)
    if lang is not None:
        return lang
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            if name == "swift":
                import tree_sitter_swift as mod
            elif name == "objc":
                import tree_sitter_objc as mod
            else:
                import tree_sitter_cpp as mod
            lang = ts.Language(mod.language())
    except Exception:  # grammar not installed or incompatible: no Metal host facts from this language
        return None
    _LANGUAGES[name] = lang
    return lang


def _analyse(path: str, data: bytes, cls: type[_Analysis], grammar: str) -> list[HostLaunch]:
    """The scan itself; may raise on a bug (the tests call it directly to see one)."""
    if not isinstance(data, (bytes, bytearray)) or len(data) > MAX_BYTES:
        return []
    data = bytes(data)
    if not any(t in data for t in _TRIGGER):
        return []
    lang = _language(grammar)
    if lang is None:
        return []
    analysis = cls(path, data, ts.Parser(lang).parse(data))
    analysis.collect()
    return analysis.launches()


def _scan(path: str, data: bytes, cls: type[_Analysis], grammar: str) -> list[HostLaunch]:
    try:
        return _analyse(path, data, cls, grammar)
    except Exception:  # never raise: a host file that cannot be read gives no facts
        return []


def scan_swift(path: str, data: bytes) -> list[HostLaunch]:
    """Dispatches in a Swift file."""
    return _scan(path, data, _Swift, "swift")


def scan_objc(path: str, data: bytes) -> list[HostLaunch]:
    """Dispatches in an Objective-C or Objective-C++ file."""
    return _scan(path, data, _ObjC, "objc")


def scan_metal_cpp(path: str, data: bytes) -> list[HostLaunch]:
    """Dispatches in a C++ file using metal-cpp (``MTL::ComputeCommandEncoder``)."""
    return _scan(path, data, _Cpp, "cpp")


def _scan_cpp_dispatches(path: str, data: bytes) -> list[HostLaunch]:
    """metal-cpp in a C++ file that dispatches at all (most C++ files are not Metal host code: they
    are not parsed)."""
    return scan_metal_cpp(path, data) if b"dispatchThread" in data else []


def _triggered(data: bytes) -> bool:
    return any(t in data for t in _TRIGGER)  # (:func:`_analyse` reads no file without one)


register((".swift",), scan_swift, _triggered)
register((".m", ".mm"), scan_objc, _triggered)
register((".cpp", ".cc", ".cxx", ".hpp"), _scan_cpp_dispatches, lambda data: b"dispatchThread" in data)
