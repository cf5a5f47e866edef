"""CUDA host code: the launches of kernels in ``.cu .cuh .cpp .cc .cxx .c .h .hpp`` files.

Reads ``k<<<grid, block[, smem[, stream]]>>>(…)`` (also ``k<T, 4><<<…>>>``),
``cudaLaunchKernel((void*)k, grid, block, args, smem, stream)``,
``cudaLaunchCooperativeKernel(…)`` and HIP's ``hipLaunchKernelGGL(k, grid, block, …)``. Block
and grid are constant when the file makes them so (:mod:`shaderlint.host._c`);
``(n + 255) / 256`` stays None.

A kernel named anywhere else in the file as a value (handed to a function, stored in a variable
or a table, chosen by ``?:``, returned, ``cudaLaunchKernelEx(&config, k, …)``, a launch macro's
argument, a ``k<<<…>>>`` inside a ``#define``) may be launched in a way not read here: such a
mention is returned as a launch with api ``"reference"`` and nothing known, so that no fact is
derived for that kernel (the index only keeps records naming a kernel it knows). Functions that
only inspect a kernel (``cudaFuncSetAttribute``, the occupancy calculators) do not count.
"""

from __future__ import annotations

import re

from shaderlint.host import HostLaunch, register
from shaderlint.host._c import MAX_NODES, Constants, LineIndex, args_of, callee_name, nodes_of_types, parse, text
from shaderlint.host._truncation import ConstantsReader
from shaderlint.host._truncation import read as read_truncations
from shaderlint.model.expr import unparen

EXTENSIONS = (".cu", ".cuh", ".cpp", ".cc", ".cxx", ".c", ".h", ".hpp")
_MARKERS = (b"<<<", b"cudaLaunchKernel", b"cudaLaunchCooperativeKernel", b"hipLaunchKernelGGL")
#: In every marker but ``<<<``: a file without it (most host files) is searched twice, not four times.
_API_MARK = b"Launch"
#: Launch functions taking (kernel, grid, block, …); HIP's hipLaunchKernelGGL has the same layout.
_LAUNCH_APIS = ("cudaLaunchKernel", "cudaLaunchCooperativeKernel", "hipLaunchKernelGGL")
#: Calls that take a kernel but do not launch it.
_INSPECT = frozenset({
    "cudaFuncSetAttribute", "cudaFuncGetAttributes", "cudaFuncSetCacheConfig", "cudaFuncSetSharedMemConfig",
    "cudaOccupancyMaxActiveBlocksPerMultiprocessor", "cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags",
    "cudaOccupancyMaxPotentialBlockSize", "cudaOccupancyMaxPotentialBlockSizeVariableSMem",
    "cudaOccupancyAvailableDynamicSMemPerBlock", "cudaOccupancyMaxActiveClusters", "cudaGetFuncBySymbol",
    "cudaFuncGetName",
})
_MACRO_LAUNCH = re.compile(r"([A-Za-z_]\w*)\s*(?:<[^;{}<>]*(?:<[^;{}<>]*>[^;{}<>]*)*>\s*)?<<<")
#: The nodes :func:`_scan` reads (calls, and where a value may name a function).
_COLLECTED = ("call_expression", "init_declarator", "initializer_list", "assignment_expression",
              "conditional_expression", "return_statement", "preproc_def", "preproc_function_def")
#: At most this many records per file (a generated file naming thousands of symbols).
MAX_RECORDS = 5000


def scan(path: str, data: bytes) -> list[HostLaunch]:
    """The kernel launches in one host file. Never raises."""
    try:
        if not _wants(data):
            return []
        return _scan(path, data)
    except Exception:
        return []


def _wants(data: bytes) -> bool:
    """Whether ``data`` holds one of the markers (:func:`scan` reads nothing in a file without)."""
    return _HAS_CHEVRONS(data) is not None or _HAS_API_MARK(data) is not None and any(m in data for m in _MARKERS[1:])


# (``re`` finds a literal starting with a rare byte faster than ``in`` does: most host files hold neither)
_HAS_CHEVRONS = re.compile(re.escape(_MARKERS[0])).search
_HAS_API_MARK = re.compile(re.escape(_API_MARK)).search


def _scan(path: str, data: bytes) -> list[HostLaunch]:
    ext = path[path.rfind("."):].lower() if "." in path else ""
    grammar = "cuda" if ext in (".cu", ".cuh") or b"<<<" in data else "cpp"
    tree = parse(data, grammar)
    if tree is None:
        return []
    budget = [MAX_NODES]
    # (in a CUDA tree the launches' ``<<<…>>>`` too: which calls are launches, without listing every
    # call's children)
    consts = Constants(tree.root_node, budget, language=tree.language,
                       also=_COLLECTED + ("kernel_call_syntax",) if grammar == "cuda" else _COLLECTED)
    lines = LineIndex(path, data)
    out: list[HostLaunch] = []
    launched: set[int] = set()  # ids of the kernel-name nodes read as launches
    calls = []
    macro_launches = []
    values = []  # expressions whose value may be a function: `auto f = k;`, `{k1, k2}`, `c ? k1 : k2`, `return k;`
    configs = []  # the ``<<<…>>>`` of launches (when the query found every one of the tree)
    collected = consts.also if consts.also is not None else \
        nodes_of_types(tree.root_node, _COLLECTED, [MAX_NODES], tree.language)
    for n in collected:
        if n.type == "call_expression":
            calls.append(n)
        elif n.type == "init_declarator":
            v = n.child_by_field_name("value")
            if v is not None:
                values.append(v)
        elif n.type == "initializer_list":
            values.extend(c for c in n.named_children if c.type != "comment")
        elif n.type == "assignment_expression":
            v = n.child_by_field_name("right")
            if v is not None:
                values.append(v)
        elif n.type == "conditional_expression":
            values.extend(c for c in (n.child_by_field_name("consequence"), n.child_by_field_name("alternative"))
                          if c is not None)
        elif n.type == "return_statement" and n.named_child_count == 1:
            values.append(n.named_children[0])
        elif n.type in ("preproc_def", "preproc_function_def"):
            body = n.child_by_field_name("value")
            if body is not None and b"<<<" in (body.text or b""):
                macro_launches.append(body)
        elif n.type == "kernel_call_syntax":
            configs.append(n)
    # Per call: its ``<<<…>>>`` (None: not a kernel launch's call) and the name it calls ("" for a launch)
    if consts.also is not None:
        of_call = {}
        for c in configs:
            p = c.parent
            if p is not None and p.type == "call_expression":
                of_call.setdefault(p.id, c)  # (the first: as ``call.children`` meets them)
        kinds = [of_call.get(call.id) for call in calls]
    else:
        kinds = [next((c for c in call.children if c.type == "kernel_call_syntax"), None) for call in calls]
    reader = ConstantsReader(data, lines.span, consts)
    by_api = _API_MARK in data  # (in every name of _LAUNCH_APIS: without it, only ``<<<…>>>`` launch)
    for call, config in zip(calls, kinds):
        name = ""
        if config is None:
            if not by_api:
                continue
            name = callee_name(call)
            if name not in _LAUNCH_APIS:
                continue  # (not a launch: what ``_launch`` answers)
        rec = _launch(call, consts, lines, launched, reader, config, name)
        if rec is not None:
            out.append(rec)
    # launches inside macro bodies: where and with what they run is not read here
    for body in macro_launches:
        for m in _MACRO_LAUNCH.finditer(text(body)):
            out.append(HostLaunch(lines.span(body), "reference", kernel=m.group(1)))
    # mentions of names as values outside launches and inspections. (Only the values that may name a
    # function are handed on: ``_function_value`` finds none in the others. Records past the limit are
    # cut below, so where the loops stop once it is reached does not change what is kept.)
    for call, config in zip(calls, kinds):
        if config is not None:
            continue  # (a kernel's own arguments are data)
        a = call.child_by_field_name("arguments")
        args = [c for c in a.named_children if c.type in _MAY_NAME] if a is not None else None
        if not args:
            continue
        name = callee_name(call)
        if name in _INSPECT or name in _LAUNCH_APIS and call.id in launched:
            continue
        for a in args:
            _add_reference(out, a, launched, consts, lines)
        if len(out) >= MAX_RECORDS:
            break
    for v in values:
        if v.type in _MAY_NAME:
            _add_reference(out, v, launched, consts, lines)
            if len(out) >= MAX_RECORDS:
                break
    return out[:MAX_RECORDS]


def _add_reference(out: list[HostLaunch], value, launched, consts, lines) -> None:
    """A kernel named as a value (an argument, an initializer) that no launch accounts for: a
    ``"reference"`` record (it may run with any size)."""
    if value.type == "identifier":  # (most values: what _function_value and _kernel_name give for one)
        if value.id in launched:
            return
        ident, nm = value, text(value)
    else:
        ident = _function_value(value)
        if ident is None or ident.id in launched:
            return
        nm, _ = _kernel_name(ident)
    if nm and not _is_variable(consts, ident, nm):
        out.append(HostLaunch(lines.span(ident), "reference", kernel=nm))


_UNREAD = object()


def _launch(call, consts: Constants, lines: LineIndex, launched: set[int], reader=None, config=_UNREAD,
            api: str | None = None) -> HostLaunch | None:
    """The launch ``call`` is, if it is one; ``config``: its ``<<<…>>>`` child (None: none), and ``api``
    the name it calls, when the caller has them."""
    fn = call.child_by_field_name("function")
    if config is _UNREAD:
        config = next((c for c in call.children if c.type == "kernel_call_syntax"), None)
    if config is not None and fn is not None:
        name, targs = _kernel_name(fn)
        if name is None:
            return None
        launched.update(d.id for d in _descend(fn))  # (the name node itself included)
        parts = [c for c in config.named_children if c.type != "comment"]
        return _record(call, "cuda", name, targs, parts[0] if parts else None, parts[1] if len(parts) > 1 else None,
                       consts, lines, fn, reader)
    if api is None or config is not None:
        api = callee_name(call)
    if api not in _LAUNCH_APIS:
        return None
    args = args_of(call)
    if len(args) < 3:
        return None
    kn = unparen(args[0])
    while kn.type in ("cast_expression", "pointer_expression", "parenthesized_expression"):
        nxt = kn.child_by_field_name("value") if kn.type == "cast_expression" else \
            kn.child_by_field_name("argument") if kn.type == "pointer_expression" else unparen(kn)
        if nxt is None or nxt == kn:
            break
        kn = nxt
    if kn.type == "call_expression" and callee_name(kn) in ("reinterpret_cast", "static_cast"):
        inner = args_of(kn)
        kn = unparen(inner[0]) if len(inner) == 1 else kn
    name, targs = _kernel_name(kn)
    launched.add(call.id)
    if name is None:
        return None
    launched.update(d.id for d in _descend(kn))
    return _record(call, api, name, targs, args[1], args[2], consts, lines, kn, reader)


def _template_values(node, consts: Constants, targs: tuple[str, ...]) -> tuple[str, ...]:
    """The launch's template arguments with the constants the file defines replaced by their values
    (``k<BS, float>`` with ``#define BS 256``: ``("256", "float")``)."""
    n = unparen(node)
    while n.type in ("cast_expression", "pointer_expression", "qualified_identifier"):
        nxt = n.child_by_field_name("value") if n.type == "cast_expression" else \
            n.child_by_field_name("argument") if n.type == "pointer_expression" else n.child_by_field_name("name")
        if nxt is None:
            break
        n = unparen(nxt)
    if n.type != "template_function":
        return targs
    lst = n.child_by_field_name("arguments")
    kids = [c for c in lst.named_children if c.type != "comment"] if lst is not None else []
    if len(kids) != len(targs):
        return targs
    out = []
    for k, t in zip(kids, targs):
        v = consts.value(k)
        if v is None and k.type == "type_descriptor" and k.named_child_count == 1 \
                and k.named_children[0].type == "type_identifier":
            v = consts._type_ident_value(k.named_children[0])
        out.append(str(v) if v is not None else t)
    return tuple(out)


def _record(call, api: str, name: str, targs: tuple[str, ...], grid, block, consts: Constants,
            lines: LineIndex, kernel_node=None, reader=None) -> HostLaunch:
    g, g_at = consts.dims(grid) if grid is not None else (None, None)
    b, b_at = consts.dims(block) if block is not None else (None, None)
    return HostLaunch(
        at=lines.span(call), api=api, kernel=name, dispatch="threadgroups",
        group=b, group_at=lines.span(b_at) if b is not None and b_at is not None else None,
        grid=g, grid_at=lines.span(g_at) if g is not None and g_at is not None else None,
        template_args=_template_values(kernel_node, consts, targs) if kernel_node is not None and targs else targs,
        truncations=read_truncations(reader, grid, block) if reader is not None and grid is not None else (),
    )


def _kernel_name(node) -> tuple[str | None, tuple[str, ...]]:
    node = unparen(node)
    targs: tuple[str, ...] = ()
    if node.type == "template_function":
        lst = node.child_by_field_name("arguments")
        targs = tuple(text(c) for c in lst.named_children if c.type != "comment") if lst is not None else ()
        node = node.child_by_field_name("name") or node
    if node.type == "qualified_identifier":
        last = node.child_by_field_name("name")
        while last is not None and last.type == "qualified_identifier":
            last = last.child_by_field_name("name")
        if last is not None and last.type == "template_function":
            return _kernel_name(last)
        node = last if last is not None else node
    if node.type == "identifier":
        return text(node), targs
    return None, ()


def _descend(node):
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(n.children)


def _function_value(arg):
    """The name in an argument that may be a function used as a value: ``k``, ``&k``, ``(void*)k``,
    ``k<float>``, ``ns::k``."""
    a = unparen(arg)
    t = a.type
    if t in _NAMES:
        return a
    if t != "cast_expression" and t != "pointer_expression":
        return None  # (most values: a call, a literal, arithmetic)
    for _ in range(4):
        if a.type == "cast_expression":
            a = a.child_by_field_name("value") or a
        elif a.type == "pointer_expression" and text(a.child_by_field_name("operator")) == "&":
            a = a.child_by_field_name("argument") or a
        else:
            break
        a = unparen(a)
    if a.type in _NAMES:
        return a
    return None


_NAMES = frozenset({"identifier", "template_function", "qualified_identifier"})
#: The values :func:`_function_value` may find a name in (any other gives None).
_MAY_NAME = _NAMES | {"cast_expression", "pointer_expression", "parenthesized_expression"}


def _is_variable(consts: Constants, ident, name: str) -> bool:
    """Whether ``name`` is a variable, parameter or macro of the file (not a function)."""
    return name in consts.macros or name in consts.file.inits or name in consts.scope_of(ident).inits


register(EXTENSIONS, scan, _wants, by_name=True)  # (every name it records is an identifier's text)
