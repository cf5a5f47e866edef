"""Dispatch facts: threadgroup sizes, CUDA launch configurations, dispatch mode.

Group sizes come, most specific first, from a ``// shaderlint: threadgroup-size=``
annotation above the kernel, the language's declaration (GLSL ``local_size_*``,
Metal ``[[max_total_threads_per_threadgroup(N)]]``, CUDA ``__launch_bounds__``),
the launch sites in the same ``.cu`` when they all agree (literal or constant
``<<<grid, block>>>``, ``dim3`` constructors and variables, variables holding
a block size), a file-level annotation, and finally configuration
(``threadgroup-size`` per path glob). The first four are resolved while the
model is built (:attr:`Function.group_size`); configuration is only known to
rules, so :func:`group_size` adds it.

Every helper answers ``None`` when it cannot tell.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import tree_sitter as ts

from shaderlint.model.expr import descendants, unparen
from shaderlint.model.kernel import Function, GroupSize, LaunchSite, Var

if TYPE_CHECKING:
    from shaderlint.estimate.targets import Target
    from shaderlint.model.build import FileModel

#: What a SIMD group and a core are called on each vendor's hardware.
SIMD_TERMS: dict[str, tuple[str, str]] = {
    "nvidia": ("warp", "SM"),
    "apple": ("SIMD-group", "GPU core"),
    "amd": ("wave", "CU"),
    "generic": ("subgroup", "core"),
}
#: What a thread group is called in each language.
GROUP_WORDS: dict[str, str] = {"metal": "threadgroup", "cuda": "block", "glsl": "workgroup"}
_PASS = ("parenthesized_expression", "cast_expression")
_GRID_WORDS = ("gridDim", "gl_NumWorkGroups")


def simd_terms(target: "Target") -> tuple[str, str]:
    """("warp", "SM") on NVIDIA, ("SIMD-group", "GPU core") on Apple, …"""
    return SIMD_TERMS.get(target.vendor, ("SIMD group", "core"))


from shaderlint.model.kernel import parse_dims  # noqa: E402  (re-exported for the rules)


def nodes_in(model: "FileModel", capture: str, start: int, end: int) -> list[ts.Node]:
    """The model's ``capture`` nodes (sorted by position) that start in [start, end)."""
    import bisect

    starts_cache = model.__dict__.setdefault("_capture_starts", {})
    nodes = model.nodes(capture)
    starts = starts_cache.get(capture)
    if starts is None or len(starts) != len(nodes):
        starts = starts_cache[capture] = [n.start_byte for n in nodes]
    return nodes[bisect.bisect_left(starts, start):bisect.bisect_left(starts, end)]


def calls_to(model: "FileModel", name: str) -> list[ts.Node]:
    """Calls in the file whose callee is called ``name``; a call through a template argument
    bound to ``name`` (``F(x)`` in every instance ``k<name>``: model.callables) counts."""
    index = model.__dict__.get("_calls_by_callee")
    if index is None:
        from shaderlint.model.callables import resolved_callee_name  # noqa: PLC0415 (callables imports expr)

        index = {}
        for call in model.nodes("call"):
            index.setdefault(resolved_callee_name(model, call), []).append(call)
        model._calls_by_callee = index
    return index.get(name, [])


# ---- facts ---------------------------------------------------------------------------------------


def kernel_fact(model: "FileModel", f: Function | None, key: str, config: dict[str, str] | None = None) -> str | None:
    """``key`` for ``f``: the annotation directly above it, else the file's (``model.facts``), else
    what the host code launching it says (``f.host_facts``), else configuration for the path."""
    if f is not None and key in f.facts:
        return f.facts[key]
    if key in model.facts:
        return model.facts[key]
    if f is not None and key in f.host_facts:
        return f.host_facts[key][0]
    if config and key in config:
        return str(config[key])
    return None


def dispatch_mode(model: "FileModel", f: Function | None, config: dict[str, str] | None = None) -> str | None:
    """``"threads"`` (Metal ``dispatchThreads``: the grid is exactly the data size, the last
    threadgroups may be partial) or ``"threadgroups"`` (whole groups: kernels must guard), or None."""
    value = kernel_fact(model, f, "dispatch", config)
    if value is None:
        return None
    value = value.strip().lower()
    return value if value in ("threads", "threadgroups") else None


def group_size(model: "FileModel", f: Function, config: dict[str, str] | None = None) -> GroupSize | None:
    """The kernel's declared group size; configuration (``threadgroup-size`` for the path) when the
    file says nothing. A configured size is reported at the kernel's name."""
    if f.group_size is not None:
        return f.group_size
    if config and "threadgroup-size" in config:
        dims = parse_dims(str(config["threadgroup-size"]))
        if dims is not None:
            return GroupSize(dims, f.name_node.start_byte, f.name_node.end_byte, "config", True)
    return None


def describe_origin(model: "FileModel", gs: GroupSize) -> str:
    """How the size was declared, for messages."""
    return {
        "local_size": "layout(local_size_…)",
        "launch_bounds": "__launch_bounds__",
        "max_total_threads": "[[max_total_threads_per_threadgroup]]",
        "annotation": "the threadgroup-size annotation",
        "launch": "the launch",
        "dim3": "the launch",
        "config": "the configured threadgroup-size",
        "host": f"the launch at {gs.host.path}:{gs.host.line}" if gs.host is not None else "the host launch",
    }.get(gs.origin, gs.origin)


def host_fact(model: "FileModel", f: Function | None, key: str) -> tuple[str, object] | None:
    """``(value, host span)`` when :func:`kernel_fact` takes ``key`` for ``f`` from the host code
    launching it (no annotation above it or in the file gives it), else None."""
    if f is None or key in f.facts or key in model.facts:
        return None
    return f.host_facts.get(key)


def format_dims(dims: tuple[int, int, int], rank: int = 1) -> str:
    """``16×16`` for (16, 16, 1): trailing 1s dropped, but at least ``rank`` dimensions."""
    d = list(dims)
    while len(d) > max(rank, 1) and d[-1] == 1:
        d.pop()
    return "×".join(str(x) for x in d)


# ---- values through single definitions -------------------------------------------------------------


def definitions(model: "FileModel", var: Var) -> list[ts.Node]:
    """Every value ``var`` is given: its initializer and the right sides of its assignments
    (compound assignments and ``++`` count as definitions of unknown value: returned as the node)."""
    out: list[ts.Node] = []
    if var.init is not None:
        out.append(var.init)
    lo, hi = var.scope
    for a in nodes_in(model, "assign", lo, hi):
        left = a.child_by_field_name("left")
        if left is None:
            continue
        left = unparen(left)
        if left.type == "identifier" and model.resolve(left) is var:
            op = a.child_by_field_name("operator")
            out.append(a.child_by_field_name("right") if op is not None and model.text(op) == "=" else a)
        elif left.type == "field_expression" and model.base_var(left) is var:
            out.append(a)  # `block.x = 16`: a partial definition we do not follow
    for u in nodes_in(model, "update", lo, hi):
        arg = u.child_by_field_name("argument")
        if arg is not None and unparen(arg).type == "identifier" and model.resolve(unparen(arg)) is var:
            out.append(u)
    return [d for d in out if d is not None]


def single_definition(model: "FileModel", var: Var) -> ts.Node | None:
    """The one value a local or global variable is ever given, or None."""
    if var.is_param or var.template_param:
        return None
    defs = definitions(model, var)
    if len(defs) != 1:
        return None
    d = defs[0]
    if d.type in ("assignment_expression", "update_expression"):
        return None
    return d


def follow(model: "FileModel", node: ts.Node, depth: int = 0) -> tuple[ts.Node, ts.Node | None]:
    """Follow an identifier to its single definition (repeatedly). Returns (expression, the
    declaration or assignment it came from — None when ``node`` itself is the expression)."""
    origin: ts.Node | None = None
    n = node
    for _ in range(6):
        inner = n
        while inner.type in _PASS:
            nxt = inner.child_by_field_name("value") if inner.type == "cast_expression" else unparen(inner)
            if nxt is None:
                return n, origin
            if nxt == inner:  # `(a /* c */)`: unparen cannot see through it (this looped forever)
                break
            inner = nxt
        if inner.type not in ("identifier", "type_identifier") or model.const_value(inner) is not None:
            return n, origin
        var = model.resolve(inner)
        if var is None:
            return n, origin
        d = single_definition(model, var)
        if d is None:
            return n, origin
        origin = _statement_of(d)
        n = d
    return n, origin


def _statement_of(node: ts.Node) -> ts.Node:
    n = node
    while n.parent is not None and n.type not in ("declaration", "expression_statement", "field_declaration"):
        n = n.parent
    return n


def dim_exprs(model: "FileModel", node: ts.Node) -> tuple[list[ts.Node], ts.Node | None] | None:
    """Per-dimension expressions of a grid/block argument (``256``, ``dim3(16, 16)``, a ``dim3``
    variable, ``{16, 16}``, a variable holding a size) and the declaration they come from."""
    expr, origin = follow(model, node)
    e = unparen(expr)
    if e.type in ("argument_list", "initializer_list"):
        kids = [c for c in e.named_children if c.type != "comment"]
        return (kids, origin) if 1 <= len(kids) <= 3 else None
    if e.type == "call_expression" and model.callee_name(e) in ("dim3", "make_uint3", "uint3"):
        kids = [c for c in model.call_args(e) if c.type != "comment"]
        return (kids, origin) if 1 <= len(kids) <= 3 else None
    if e.type == "compound_literal_expression":
        return None
    if e.type == "identifier":
        vexing = _vexing_arguments(model, e)
        if vexing is not None:
            return vexing
    return [expr], origin


def _vexing_arguments(model: "FileModel", ident: ts.Node) -> tuple[list[ts.Node], ts.Node] | None:
    """``dim3 block(threads);`` parses as a function declaration (C++'s most vexing parse): its
    "parameter types" are the constructor's arguments."""
    var = model.resolve(ident)
    decl = var.node.parent if var is not None else None
    if var is None or var.init is not None or decl is None or decl.type != "function_declarator":
        return None
    if model.text(var.decl.child_by_field_name("type") or var.decl) != "dim3":
        return None
    params = decl.child_by_field_name("parameters")
    kids = [p for p in params.named_children if p.type != "comment"] if params is not None else []
    args = [p.named_children[0] for p in kids if p.type == "parameter_declaration" and p.named_child_count == 1
            and p.named_children[0].type == "type_identifier"]
    if not args or len(args) != len(kids) or len(args) > 3:
        return None
    return args, _statement_of(var.decl)


def const_dims(model: "FileModel", node: ts.Node) -> tuple[tuple[int, int, int], ts.Node | None] | None:
    """Constant (x, y, z) of a grid/block argument, with the declaration holding them."""
    got = dim_exprs(model, node)
    if got is None:
        return None
    exprs, origin = got
    vals: list[int] = []
    for e in exprs:
        target, _ = follow(model, e)
        v = model.const_value(target)
        if not isinstance(v, int) or isinstance(v, bool) or v <= 0:
            return None
        vals.append(v)
    vals += [1] * (3 - len(vals))
    return (vals[0], vals[1], vals[2]), origin


def launch_group_size(model: "FileModel", launch: LaunchSite) -> GroupSize | None:
    """The block size of a ``<<<grid, block>>>`` launch when it is a compile-time constant,
    positioned at the ``dim3``/variable declaration holding it, else at the block argument."""
    if launch.block is None:
        return None
    got = const_dims(model, launch.block)
    if got is None:
        return None
    dims, origin = got
    if origin is not None:
        return GroupSize(dims, origin.start_byte, origin.end_byte, "dim3", True)
    return GroupSize(dims, launch.block.start_byte, launch.block.end_byte, "launch", True)


def launch_sizes(model: "FileModel") -> dict[str, list[tuple[LaunchSite, GroupSize | None]]]:
    """Launch sites per kernel name with their constant block size (None when not constant)."""
    cached = getattr(model, "_launch_sizes", None)
    if cached is not None:
        return cached
    out: dict[str, list[tuple[LaunchSite, GroupSize | None]]] = {}
    for site in model.launches:
        out.setdefault(site.kernel, []).append((site, launch_group_size(model, site)))
    model._launch_sizes = out
    return out


def single_thread_launch(model: "FileModel", gs: GroupSize) -> bool:
    """Whether ``gs`` is the block of a launch of one block of one thread (``kernel<<<1, 1>>>``, also
    through ``dim3`` variables): one thread on purpose (a test, a set-up step)."""
    if gs.total == 1 and gs.origin == "host":  # every host launch is `<<<1, 1>>>`: a grid of one thread
        return any(f.group_size is gs and (f.host_one_thread
                                           or f.host_facts.get("grid-size", ("",))[0] == "1") for f in model.functions)
    if gs.total != 1 or gs.origin not in ("launch", "dim3"):
        return False
    for sites in launch_sizes(model).values():
        for site, size in sites:
            if size is not None and size.start == gs.start:
                return _one_block(model, site)
    return False


def single_group_launch(model: "FileModel", f: Function) -> bool:
    """Every launch of ``f`` in this file runs one block (``<<<1, …>>>``, ``dim3 grid(1, 1)``), and
    there is at least one: occupancy, which counts blocks resident per SM, means nothing for it."""
    sites = launch_sizes(model).get(f.name, [])
    return bool(sites) and all(_one_block(model, site) for site, _ in sites)


def _one_block(model: "FileModel", site: LaunchSite) -> bool:
    """The launch's grid is the constant one block (``1``, ``dim3(1, 1)``, a ``dim3`` variable holding it)."""
    got = const_dims(model, site.grid) if site.grid is not None else None
    return got is not None and got[0] == (1, 1, 1)


def agreed_launch_size(model: "FileModel", f: Function) -> GroupSize | None:
    """The block size every launch of ``f`` in this file uses, when there is at least one launch
    and all of them use the same constant size."""
    sites = launch_sizes(model).get(f.name, [])
    if not sites or any(gs is None for _, gs in sites):
        return None
    dims = {gs.dims for _, gs in sites if gs is not None}
    if len(dims) != 1:
        return None
    return sites[0][1]


def declared_sizes(model: "FileModel", f: Function, config: dict[str, str] | None = None) -> list[GroupSize]:
    """The sizes ``f`` runs with as far as the file tells: its declared size, else the constant
    block size of each of its launches in this file (they may differ)."""
    gs = group_size(model, f, config)
    if gs is not None:
        return [gs]
    seen: set[int] = set()
    out = []
    for _, size in launch_sizes(model).get(f.name, []):
        if size is not None and size.start not in seen:
            seen.add(size.start)
            out.append(size)
    return out


# ---- kernel shapes -----------------------------------------------------------------------------------


def is_grid_stride(model: "FileModel", f: Function) -> bool:
    """True if ``f`` advances an index by a grid-wide stride inside a loop (``i += blockDim.x *
    gridDim.x``, ``threads_per_grid``, ``gl_NumWorkGroups``): the kernel covers any data size."""
    if f.body is None:
        return False
    for a in nodes_in(model, "assign", f.body.start_byte, f.body.end_byte):
        if not _in_loop(a, f.body):
            continue
        op = a.child_by_field_name("operator")
        right = a.child_by_field_name("right")
        if op is None or right is None or model.text(op) not in ("+=", "-=", "="):
            continue
        if _grid_wide(model, f, right):
            return True
    return False


def _grid_wide(model: "FileModel", f: Function, node: ts.Node, depth: int = 0) -> bool:
    # Memoized: each identifier may lead to a definition with many identifiers, four levels deep;
    # without it a long expression took minutes (exponential in the depth).
    memo = model.__dict__.setdefault("_grid_wide_memo", {})
    key = (node.id, depth)
    hit = memo.get(key)
    if hit is None:
        memo[key] = False  # a definition that refers back to itself
        hit = memo[key] = _grid_wide_uncached(model, f, node, depth)
    return hit


def _grid_wide_uncached(model: "FileModel", f: Function, node: ts.Node, depth: int) -> bool:
    if any(w in model.text(node) for w in _GRID_WORDS):
        return True
    if depth > 3:
        return False
    for ident in descendants(node, "identifier"):
        var = model.resolve(ident)
        if var is None:
            continue
        if var.role in ("threads_per_grid", "threadgroups_per_grid", "grid_size"):
            return True
        d = single_definition(model, var) if var.function is f else None
        if d is not None and _grid_wide(model, f, d, depth + 1):
            return True
    return False


def _in_loop(node: ts.Node, stop: ts.Node) -> bool:
    n = node.parent
    while n is not None and n != stop:
        if n.type in ("for_statement", "while_statement", "do_statement"):
            return True
        n = n.parent
    return False

