"""Device functions the project's headers define, for the register walk.

nvcc compiles a kernel with every helper it calls inlined, those of the headers the file includes
as much as its own (llama.cpp's ``dequantize_block_q4_K`` is one line calling ``dequantize_q4_K``
from ``dequantize.cuh``; deepspeed's layer norms call ``reduce::`` and ``mem_access::`` helpers found
through ``-I csrc/includes``). A model of the file alone sees none of them, and a call it cannot see
costs nothing: the kernel looks small. When the walk meets a call to a function the file does not
define, :func:`header_function` looks (with :data:`CONTEXT_HELPERS`) in the headers the file's project context read
(:attr:`shaderlint.project.includes.FileContext.files`: the includer's directory, ``include-dirs``
and the ``-I`` of ``compile_commands.json``, followed transitively in the branches the build reads,
never toolkit or system headers, within the context's bounds), as the kernel model's macros come
from. Without it (the default, see :data:`CONTEXT_HELPERS`), or without a context, it looks in the headers the file includes with
``#include "..."`` found next to their includer, transitively (:data:`MAX_HEADERS`,
:data:`MAX_BYTES`, :data:`MAX_DEPTH`).

Lazily: only a header whose text names the callee followed by ``(`` or ``<`` is parsed (a set of
such names per header's content, :func:`_names`), with the includer's build macros, within a time
budget (:data:`HEADER_BUDGET`), once per process for a given content and set of macros
(:data:`_MODELS`); lookups are memoized per file model and name.

Never a guess: a name the headers define more than once with the same number of parameters, or not
at all, stays an unknown call.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections import OrderedDict

MAX_HEADERS = 32  # headers read for one file
MAX_BYTES = 4 << 20  # header bytes read for one file
MAX_DEPTH = 4  # nested includes followed
MAX_HEADER_SIZE = 1 << 20  # a larger header is not read
HEADER_BUDGET = 3.0  # seconds to parse one header

#: Whether the walk takes helpers from every header the project context read (``-I``, ``include-dirs``)
#: or only from the quoted includes found next to their includer. Off: measured on the real-code corpus
#: (session 11, docs/register-model.md), the context's helpers changed no estimate of the held-out
#: packages and made the development packages' worse (deepspeed's ``reduce::`` and ``mem_access::``
#: helpers walked at about twice what ptxas allocates: development median |error| 17 % -> 21 %).
CONTEXT_HELPERS = False

#: Languages whose helpers are looked up in headers (GLSL: ``#include "utils.glsl"`` as glslang's
#: GL_GOOGLE_include_directive / shaderc read it, next to the includer).
_LANGUAGES = ("cuda", "glsl")

_INCLUDE = re.compile(rb'^[ \t]*#[ \t]*include[ \t]*"([^"\r\n]+)"', re.M)

#: Models of headers by (path, size, mtime, digest of the build's macros): shared by every file
#: including them (an LRU; None for a header that could not be parsed in its budget).
_MODELS: "OrderedDict[tuple, object]" = OrderedDict()
_MODELS_MAX = 256


def _header_paths(path: str, data: bytes) -> list[str]:
    """Quoted includes of ``path`` resolved next to their includer, transitively, in include order."""
    from shaderlint.project.includes import is_toolkit

    out: list[str] = []
    seen = {os.path.abspath(path)}
    total = 0
    stack = [(os.path.abspath(path), data, 0)]
    while stack:
        includer, text, depth = stack.pop(0)
        if depth >= MAX_DEPTH:
            continue
        for m in _INCLUDE.finditer(text):
            name = m.group(1).decode("utf-8", "replace").strip()
            if not name or is_toolkit(name):
                continue
            cand = os.path.abspath(os.path.join(os.path.dirname(includer), name))
            if cand in seen:
                continue
            seen.add(cand)
            try:
                if not os.path.isfile(cand) or os.path.getsize(cand) > MAX_HEADER_SIZE:
                    continue
                with open(cand, "rb") as fh:
                    body = fh.read(MAX_HEADER_SIZE + 1)
            except OSError:
                continue
            total += len(body)
            if total > MAX_BYTES or len(out) >= MAX_HEADERS:
                return out
            out.append(cand)
            stack.append((cand, body, depth + 1))
    return out


_CLOSURES: "OrderedDict[tuple, list[str]]" = OrderedDict()


def header_paths(model) -> list[str]:
    """The headers :func:`header_function` may read for ``model``'s file: those its project context
    read when it has one, else the quoted includes found next to their includer (memoized per includer
    path and the quoted includes it writes)."""
    got = model.__dict__.get("_header_paths")
    if got is not None:
        return got
    path = getattr(model.source, "path", None)
    got = []
    context = getattr(model.parsed, "headers", None) if CONTEXT_HELPERS else None
    if context is not None:
        if model.language in _LANGUAGES:
            got = [p for p, _ in context]
    elif model.language in _LANGUAGES and path and os.path.isfile(path):
        data = model.source.data
        key = (os.path.abspath(path), tuple(_INCLUDE.findall(data)))
        got = _CLOSURES.get(key)
        if got is None:
            got = _CLOSURES[key] = _header_paths(path, data) if key[1] else []
            if len(_CLOSURES) > _MODELS_MAX:
                _CLOSURES.popitem(last=False)
    model._header_paths = got
    return got


def header_stamp(model) -> tuple:
    """(path, size, mtime) of every header :func:`header_function` may read: part of the key under
    which an estimate is reused (an edited header changes the estimates of the kernels calling it);
    with a project context, its (path, sha256) of every header read."""
    context = getattr(model.parsed, "headers", None) if CONTEXT_HELPERS else None
    if context is not None:
        return tuple(context) if model.language in _LANGUAGES else ()
    out = []
    for hp in header_paths(model):
        try:
            st = os.stat(hp)
        except OSError:
            continue
        out.append((hp, st.st_size, st.st_mtime_ns))
    return tuple(out)


def _load(path: str, model):
    """The model of header ``path`` under the includer's build macros (memoized; None if unreadable)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    pre = getattr(model.parsed, "predefined", None)
    extra = getattr(model.parsed, "macros", None)
    digest = hashlib.blake2b(repr((pre, sorted((extra or {}).keys()))).encode(), digest_size=12).hexdigest()
    key = (path, st.st_size, st.st_mtime_ns, digest)
    if key in _MODELS:
        _MODELS.move_to_end(key)
        return _MODELS[key]
    got = None
    try:
        from shaderlint.deadline import Deadline
        from shaderlint.languages import FRONT_ENDS
        from shaderlint.model.build import build_model
        from shaderlint.model.source import Source

        with open(path, "rb") as fh:
            data = fh.read()
        with Deadline(HEADER_BUDGET) as dl:
            got = build_model(FRONT_ENDS[model.language].parse(Source(path, data), deadline=dl, predefined=pre,
                                                              extra_macros=extra))
    except Exception:
        got = None
    _MODELS[key] = got
    if len(_MODELS) > _MODELS_MAX:
        _MODELS.popitem(last=False)
    return got


_NAMES: "OrderedDict[tuple, frozenset]" = OrderedDict()
_NAMES_MAX = 4096
# (the look-behind only stops the search from trying again inside a name whose start did not match: no
# such try can match, so the names are the same; on the corpus's 10,758 sources 2.6x less CPU)
_CALLED = re.compile(rb"(?<![A-Za-z_])([A-Za-z_]\w*)\s*[(<]")


def _names(path: str) -> frozenset:
    """The identifiers a header's text follows with ``(`` or ``<``: the names it may define a function
    of (memoized on its size and mtime: one pass over each header's bytes per process)."""
    try:
        st = os.stat(path)
    except OSError:
        return frozenset()
    key = (path, st.st_size, st.st_mtime_ns)
    got = _NAMES.get(key)
    if got is None:
        try:
            with open(path, "rb") as fh:
                text = fh.read(MAX_HEADER_SIZE + 1)
        except OSError:
            text = b""
        got = _NAMES[key] = frozenset(_CALLED.findall(text)) if len(text) <= MAX_HEADER_SIZE else frozenset()
        if len(_NAMES) > _NAMES_MAX:
            _NAMES.popitem(last=False)
    else:
        _NAMES.move_to_end(key)
    return got


def _lookup(model, name: str) -> list:
    """[(header model, function)] named ``name`` with a body in the file's headers. Only the headers
    whose text holds the name are parsed (memoized on the file's model, per name)."""
    memo = model.__dict__.setdefault("_header_functions", {})
    got = memo.get(name)
    if got is not None:
        return got
    got = []
    key = name.encode()
    for hp in header_paths(model):
        if key not in _names(hp):
            continue
        hm = _load(hp, model)
        if hm is None:
            continue
        got.extend((hm, g) for g in hm.functions if g.name == name and g.body is not None and not g.is_entry)
    memo[name] = got
    return got


#: C++ keywords written like calls (``static_cast<T>(x)``, ``sizeof(x)``): the walk asks for a helper
#: of the name, and the headers whose text has the name followed by ``<`` or ``(`` would be parsed to
#: find none.
_CXX_KEYWORDS = frozenset({
    "static_cast", "reinterpret_cast", "const_cast", "dynamic_cast", "sizeof", "alignof", "decltype",
    "typeid", "noexcept", "static_assert", "alignas",
})


def header_function(model, name: str, nargs: int, arg_types=None):
    """(header model, function) for a call of ``name`` with ``nargs`` arguments that the file's
    headers define once (with that many parameters, or as the only function of the name), or
    define several times with that many parameters where one overload alone takes the argument
    types (``arg_types``: a callable giving the arguments' types, asked only then: llama.cpp's
    ``warp_reduce_sum(float)`` against its ``int``, ``float2`` and ``half2`` overloads); None
    otherwise."""
    if not name or not name.isidentifier() or (name in _CXX_KEYWORDS and model.language == "cuda"):
        return None  # (a C++ keyword names no function: no header is parsed to look for one)
    cands = _lookup(model, name)
    if not cands:
        return None
    if len(cands) > 1:
        cands = [c for c in cands if len(c[1].params) == nargs]
        if len(cands) > 1 and arg_types is not None:
            cands = overload_for(cands, arg_types(), lambda c: c[1])
        if len(cands) != 1:
            return None
    return cands[0]


def header_callable(model, name: str, templates: bool = False):
    """The function ``name`` of the project's headers next to the file (:func:`header_function`) that a
    function-pointer template argument names (llama.cpp's ``dequantize_block<32, 2, dequantize_q4_0>``
    with ``dequantize_q4_0`` in ``dequantize.cuh``): defined there once (and, unless ``templates``,
    not a template); else None."""
    if not name or not name.isidentifier():
        return None
    hit = header_function(model, name, -1)
    if hit is None or (hit[1].template_params and not templates):
        return None
    return hit[1]


def _same_type(p, a) -> bool | None:
    """Whether parameter type ``p`` takes argument type ``a`` exactly (None: one is unknown)."""
    if not p.is_known or not a.is_known:
        return None
    if p.kind == "pointer" or a.kind == "pointer":
        return p.kind == a.kind
    if p.kind == "struct" or a.kind == "struct":
        return p.kind == a.kind and p.struct == a.struct
    return (p.kind, p.bits, p.width) == (a.kind, a.bits, a.width)


def overload_for(cands: list, arg_types: list, fn_of=lambda c: c) -> list:
    """``[the one candidate]`` whose parameters take the known argument types exactly (at least one
    known on both sides, none different), or ``cands`` unchanged when not exactly one does."""
    hits = []
    for c in cands:
        agree = [_same_type(p.type, a) for p, a in zip(fn_of(c).params, arg_types)]
        if True in agree and False not in agree:
            hits.append(c)
    return hits if len(hits) == 1 else cands
