"""Vulkan host code in C and C++: compute dispatches and the shader each one runs.

A ``vkCmdDispatch(cmd, x, y, z)`` (vulkan-hpp: ``cmd.dispatch(x, y, z)``) gives the group counts
(constant or None). Which shader it runs is read only where the file leaves no choice: the
function that dispatches also creates the compute pipeline (``vkCreateComputePipelines``,
vulkan-hpp's ``createComputePipeline(s)``) and names exactly one compute shader path as a string
literal, or else the whole file creates exactly one compute pipeline and names exactly one such
path (``"shaders/blur.comp.spv"``, ``"blur.comp"``, also through a helper such as
``loadShader("…")``). The literal is returned as written (:attr:`HostLaunch.shader_literal`); the
index resolves it to the ``.comp``/``.glsl`` file next to it. A dispatch that cannot be linked is
dropped: precision first.

Specialization constants are read when the pipeline's scope (the same function, or the file)
spells them plainly: ``VkSpecializationMapEntry`` initializers with constant id, offset and a
4-byte size, and one ``pData`` naming an array (or a variable) of constant 32-bit values. The
result is :attr:`HostLaunch.specialization` (``constant_id -> value``); None when the scope
mentions specialization in a way not read here, ``()`` when it does not mention it.
"""

from __future__ import annotations

import re

from shaderlint.host import HostLaunch, Span, register
from shaderlint.host._c import MAX_NODES, Constants, LineIndex, args_of, callee_name, nodes_of_types, parse, text, walk
from shaderlint.host._truncation import ConstantsReader
from shaderlint.host._truncation import read as read_truncations
from shaderlint.model.expr import unparen

EXTENSIONS = (".c", ".cc", ".cpp", ".cxx", ".h", ".hpp")
#: In every dispatch :func:`_scan_tree` counts: ``vkCmdDispatch*`` (:data:`_DISPATCH`), or a member call of
#: :data:`_HPP_DISPATCH` (``cmd.dispatchIndirect(…)``, ``cmd->dispatch (…)``, ``cmd\n.dispatchBase(…)``).
_MARKERS = (b"vkCmdDispatch", b"dispatch(", b".dispatch", b">dispatch")
#: In the name of every pipeline creation (:data:`_CREATE`): a file without it links no dispatch.
_CREATE_MARK = b"ComputePipeline"
#: Between them, in every name of :data:`_CREATE` (a creation's callee is one of them, as written):
#: a file without either creates no pipeline :func:`_scan_tree` counts, so links no dispatch.
_CREATE_NAMES = (b"vkCreateComputePipelines", b"createComputePipeline")
#: In code that creates, keeps or hands on a Vulkan pipeline (the C type and the C++ bindings' names).
_VULKAN_PIPELINE_MARKS = (b"VkPipeline", b"vk::Pipeline", b"createComputePipeline", b"vk::raii::Pipeline",
                          b"CreateComputePipelines")  # (vkCreateComputePipelines into a member typed elsewhere)
#: In Vulkan's C++ bindings (vulkan-hpp's headers), never in code using them.
_BINDINGS_MARK = b"VULKAN_HPP_NAMESPACE"
#: In every pipeline bind (``vkCmdBindPipeline``, vulkan-hpp's ``bindPipeline``).
_BIND_MARK = b"indPipeline"
_CREATE = frozenset({"vkCreateComputePipelines", "createComputePipeline", "createComputePipelines",
                     "createComputePipelineUnique", "createComputePipelinesUnique"})
_DISPATCH = frozenset({"vkCmdDispatch", "vkCmdDispatchIndirect", "vkCmdDispatchBase", "vkCmdDispatchBaseKHR"})
_HPP_DISPATCH = frozenset({"dispatch", "dispatchIndirect", "dispatchBase", "dispatchBaseKHR"})
#: A compute shader's path: ``x.comp``, ``x.comp.spv``, ``x.glsl``, ``x.spv`` (no other stage's suffix).
_COMPUTE = re.compile(r"^[^\"*?<>|\n]*?(\.comp|\.glsl)?(\.spv)?$")
_OTHER_STAGES = (".vert", ".frag", ".geom", ".tesc", ".tese", ".mesh", ".task", ".rgen", ".rchit", ".rmiss",
                 ".rahit", ".rint", ".rcall")
_WORD = frozenset({"uint32_t", "int32_t", "int", "unsigned", "uint", "float", "unsigned int", "VkBool32"})


def compute_literal(s: str) -> bool:
    """Whether a string literal names a compute shader's source or SPIR-V."""
    low = s.lower()
    if not (low.endswith((".comp", ".glsl", ".spv"))) or len(s) > 400:
        return False
    stem = low[:-4] if low.endswith(".spv") else low
    return not stem.endswith(_OTHER_STAGES) and _COMPUTE.match(s) is not None


def scan(path: str, data: bytes) -> list[HostLaunch]:
    """The compute dispatches in one Vulkan host file that can be linked to a shader. Never raises."""
    try:
        if not any(m in data for m in _MARKERS) or _CREATE_MARK not in data \
                or not any(m in data for m in _CREATE_NAMES):
            return []  # (no dispatch, or no pipeline created here to link one to: nothing to read)
        return _scan(path, data)[0]
    except Exception:
        return []


def scan_with_summary(path: str, data: bytes) -> list:
    """:func:`scan`'s launches and the file's :class:`~shaderlint.host._vulkan_summary.VulkanSummary`
    (functions creating compute pipelines, building shader paths, calling each other, dispatching a
    pipeline they are given), which the index links across files. Never raises."""
    try:
        if b"Pipeline" not in data:
            return []  # (in every mark below, and in :func:`scan`'s: one search for most files)
        dispatches = None
        if not any(m in data for m in _VULKAN_PIPELINE_MARKS):
            dispatches = _BIND_MARK in data and any(m in data for m in _MARKERS)
            if not dispatches:
                # (no Vulkan pipeline created, kept or handed on here, none bound for a dispatch:
                # Metal's and WebGPU's compute pipelines have other names)
                return scan(path, data)
        if dispatches is None:
            dispatches = any(m in data for m in _MARKERS)
        if _BINDINGS_MARK in data:
            return scan(path, data)  # Vulkan's own C++ bindings: their "creations" are the API's
        launches, summary = _scan(path, data, with_summary=True,
                                  launches=dispatches and _CREATE_MARK in data)
        return [*launches, *([summary] if summary is not None else [])]
    except Exception:
        return []


class _Fn:
    __slots__ = ("literals", "creates", "dispatches", "spec_nodes")

    def __init__(self) -> None:
        self.literals: dict[str, object] = {}  # literal -> first node
        self.creates = 0
        self.dispatches: list = []
        self.spec_nodes: list = []  # declarations/assignments/initializers about specialization


def _scan(path: str, data: bytes, with_summary: bool = False, launches: bool = True):
    tree = parse(data, "cpp")
    if tree is None:
        return [], None
    budget = [MAX_NODES]
    lines = LineIndex(path, data)
    if launches:
        consts = Constants(tree.root_node, budget, language=tree.language)
        out = _scan_tree(tree, consts, lines, data, budget)
    else:
        consts = _LazyConstants(tree, data)  # (the summaries ask for few values, in few files)
        out = []
    summary = None
    if with_summary:
        from shaderlint.host._vulkan_summary import VulkanSummary, summarise
        from shaderlint.host.index import _launch_to_json

        try:
            reader = ConstantsReader(data, lines.span, consts)
            got = summarise(tree, consts, lines, [MAX_NODES], _CREATE, _DISPATCH, _HPP_DISPATCH, data,
                            lambda call: _launch_to_json(_record(call, None, (), consts, lines, None, reader)))
        except Exception:  # (the file's own launches stand; the run's summaries are then incomplete)
            got = {"fns": [], "complete": False}
        # (kept when empty too: a file summarised counts as read when the index looks for calls and
        # assignments in the files that were not: host.index._unseen)
        summary = VulkanSummary(got if got is not None else {"fns": []})
    return out, summary


class _LazyConstants:
    """What the summaries ask of :class:`Constants` in a file whose launches are not read: integer
    values, from literals, and names the file defines once as an integer (``#define N 64``,
    ``const``/``constexpr … N = 64;``) read from its text; anything else (a truncation reader's
    ``lookup``) builds the real :class:`Constants` when first asked."""

    def __init__(self, tree, data: bytes) -> None:
        self.tree = tree
        self.data = data
        self.real: Constants | None = None
        self.table: dict[str, int] | None = None

    def __getattr__(self, name: str):
        if self.real is None:
            self.real = Constants(self.tree.root_node, [MAX_NODES], language=self.tree.language)
        return getattr(self.real, name)

    def value(self, node, depth: int = 0) -> int | None:
        from shaderlint.host._c import _binop, _int

        if node is None or depth > 12:
            return None
        node = unparen(node)
        t = node.type
        if t == "number_literal":
            return _int(text(node))
        if t == "identifier":
            if self.table is None:
                self.table = _defined_ints(self.data)
            return self.table.get(text(node))
        if t == "binary_expression":
            a = self.value(node.child_by_field_name("left"), depth + 1)
            b = self.value(node.child_by_field_name("right"), depth + 1) if a is not None else None
            return None if b is None else _binop(text(node.child_by_field_name("operator")), a, b)  # type: ignore[arg-type]
        if t == "unary_expression" and text(node.child_by_field_name("operator")) == "-":
            v = self.value(node.child_by_field_name("argument"), depth + 1)
            return None if v is None else -v
        if t == "cast_expression":
            return self.value(node.child_by_field_name("value"), depth + 1)
        return None


_INT_TEXT = rb"\(?\s*((?:0[xX][0-9a-fA-F]+|\d+)[uUlL]*)\s*\)?"
_DEFINED_INT = re.compile(rb"^[ \t]*#[ \t]*define[ \t]+(\w+)[ \t]+" + _INT_TEXT + rb"[ \t]*(?://[^\n]*)?$|"
                          rb"^(?:static[ \t]+|inline[ \t]+)*const(?:expr)?\b[^;={}()\n]*?\b(\w+)\s*=\s*" + _INT_TEXT
                          + rb"\s*;", re.M)  # (a `const` at the start of a line: the file's, not a function's)
_NAME_MENTIONS = re.compile(rb"#[ \t]*(?:define|undef)[ \t]+(\w+)|\b(?:const(?:expr)?\b[^;={}()]*?)?\b(\w+)\s*=[^=]")


def _defined_ints(data: bytes) -> dict[str, int]:
    """Names the file gives exactly one integer value, by one ``#define`` or one ``const`` initializer
    at the start of a line (file scope), and never defines, undefines or assigns otherwise."""
    from shaderlint.host._c import _int

    found: dict[bytes, list[int | None]] = {}
    for m in _DEFINED_INT.finditer(data):
        name, num = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
        found.setdefault(name, []).append(_int(num.decode("ascii")))
    if not found:
        return {}
    mentions: dict[bytes, int] = {}
    for m in _NAME_MENTIONS.finditer(data):
        name = m.group(1) or m.group(2)
        if name in found:
            mentions[name] = mentions.get(name, 0) + 1
    return {k.decode("ascii"): v[0] for k, v in found.items()
            if len(v) == 1 and v[0] is not None and mentions.get(k, 0) == 1}


#: The nodes :func:`_scan_tree` reads.
_SCANNED_TYPES = ("string_literal", "call_expression", "type_identifier", "field_identifier")


def _scan_tree(tree, consts: Constants, lines: LineIndex, data: bytes, budget: list[int]) -> list[HostLaunch]:
    file = _Fn()
    fns: dict[int, _Fn] = {}
    for n in nodes_of_types(tree.root_node, _SCANNED_TYPES, [MAX_NODES], tree.language):
        t = n.type
        if t == "string_literal":
            s = "".join(text(c) for c in n.named_children if c.type == "string_content")
            if compute_literal(s):
                for scope in _scopes(n, fns, file):
                    scope.literals.setdefault(s, n)
        elif t == "call_expression":
            name = callee_name(n)
            fn = n.child_by_field_name("function")
            if name in _CREATE:
                count = 1
                if name == "vkCreateComputePipelines":
                    a = args_of(n)
                    count = consts.value(a[2]) if len(a) > 2 else None  # type: ignore[assignment]
                for scope in _scopes(n, fns, file):
                    scope.creates += count if count is not None and count >= 1 else 2  # unknown: several
            elif name in _DISPATCH or (name in _HPP_DISPATCH and fn is not None and fn.type == "field_expression"):
                _scopes(n, fns, file)[0].dispatches.append(n)
        elif t in ("type_identifier", "field_identifier") and text(n) in (
                "VkSpecializationMapEntry", "VkSpecializationInfo", "pSpecializationInfo", "pData",
                "SpecializationMapEntry", "SpecializationInfo", "constantID"):
            for scope in _scopes(n, fns, file):
                scope.spec_nodes.append(n)
    out: list[HostLaunch] = []
    reader = ConstantsReader(data, lines.span, consts)
    for scope in [*fns.values(), file]:
        home = _link_scope(scope, file) if scope.dispatches else None
        if home is None:
            continue
        literal = next(iter(home.literals))
        where: list = []
        spec = _specialization(home, consts, where)
        # the size the shader takes from these constants is written there
        group_at = lines.span(where[0]) if spec and where else None
        out.extend(_record(call, literal, spec, consts, lines, group_at, reader) for call in scope.dispatches)
    return out


def _scopes(node, fns: dict[int, _Fn], file: _Fn) -> list[_Fn]:
    """The innermost function's record and the file's (or only the file's, at file scope)."""
    p = node.parent
    while p is not None and p.type != "function_definition":
        p = p.parent
    if p is None:
        return [file]
    fn = fns.get(p.id)
    if fn is None:
        fn = fns[p.id] = _Fn()
    return [fn, file]


def _link_scope(fn: _Fn, file: _Fn) -> _Fn | None:
    if fn is not file and fn.creates == 1 and len(fn.literals) == 1:
        return fn
    if file.creates == 1 and len(file.literals) == 1:
        return file
    return None


def _record(call, literal: str, spec, consts: Constants, lines: LineIndex, group_at: Span | None,
            reader: ConstantsReader | None = None) -> HostLaunch:
    name = callee_name(call)
    args = args_of(call)
    grid = grid_at = None
    counts = args[1:4] if name == "vkCmdDispatch" else args[0:3] if name == "dispatch" else []
    truncations = read_truncations(reader, list(counts)) if reader is not None and len(counts) == 3 else ()
    if len(counts) == 3:
        vals = [consts.value(a) for a in counts]
        if all(v is not None and v > 0 for v in vals):
            grid = (int(vals[0]), int(vals[1]), int(vals[2]))  # type: ignore[arg-type]
            grid_at = lines.span(call)
    return HostLaunch(at=lines.span(call), api="vulkan", dispatch="threadgroups", grid=grid, grid_at=grid_at,
                      shader_literal=literal, specialization=spec, group_at=group_at, truncations=truncations)


# ---- specialization constants ------------------------------------------------------------------------


def _specialization(scope: _Fn, consts: Constants, where: list | None = None) -> tuple[tuple[int, int], ...] | None:
    if not scope.spec_nodes:
        return ()
    entries: list[tuple[int, int, int]] = []
    data_refs: list = []
    for n in scope.spec_nodes:
        word = text(n)
        parent = n.parent
        if word in ("VkSpecializationMapEntry", "SpecializationMapEntry") and parent is not None \
                and parent.type == "declaration":
            for decl in parent.children_by_field_name("declarator"):
                init = decl.child_by_field_name("value") if decl.type == "init_declarator" else None
                if init is None or init.type != "initializer_list":
                    return None  # filled in later: not read
                items = [c for c in init.named_children if c.type != "comment"]
                rows = items if items and all(c.type == "initializer_list" for c in items) else [init]
                for row in rows:
                    e = _entry(row, consts)
                    if e is None:
                        return None
                    entries.append(e)
        elif word in ("VkSpecializationInfo", "SpecializationInfo") and parent is not None \
                and parent.type == "declaration":
            for decl in parent.children_by_field_name("declarator"):
                init = decl.child_by_field_name("value") if decl.type == "init_declarator" else None
                if init is not None and init.type == "initializer_list":
                    items = [c for c in init.named_children if c.type != "comment"]
                    if items and all(c.type != "initializer_pair" for c in items):
                        if len(items) != 4:
                            return None
                        data_refs.append(items[3])
        elif word == "pData" and parent is not None:
            if parent.type == "field_designator" and parent.parent is not None:
                data_refs.append(parent.parent.child_by_field_name("value"))
            elif parent.type == "field_expression" and parent.parent is not None \
                    and parent.parent.type == "assignment_expression":
                data_refs.append(parent.parent.child_by_field_name("right"))
        elif word == "constantID" and parent is not None and parent.type == "field_expression":
            return None  # `entry.constantID = …`: entries filled field by field are not read
    if not entries:
        return None
    if len(data_refs) != 1 or data_refs[0] is None:
        return None
    words = _data_words(data_refs[0], consts, where)
    if words is None:
        return None
    out: dict[int, int] = {}
    for cid, offset, size in entries:
        if size != 4 or offset % 4 or offset // 4 >= len(words) or cid in out:
            return None
        out[cid] = words[offset // 4]
    return tuple(sorted(out.items()))


def _entry(row, consts: Constants) -> tuple[int, int, int] | None:
    items = [c for c in row.named_children if c.type != "comment"]
    vals: dict[str, object] = {}
    if items and all(c.type == "initializer_pair" for c in items):
        for c in items:
            d = c.child_by_field_name("designator")
            key = text(d).lstrip(".") if d is not None else ""
            vals[key] = c.child_by_field_name("value")
    elif len(items) == 3:
        vals = dict(zip(("constantID", "offset", "size"), items))
    else:
        return None
    got = [_size_value(vals.get(k), consts) for k in ("constantID", "offset", "size")]
    if any(v is None for v in got):
        return None
    return got[0], got[1], got[2]  # type: ignore[return-value]


def _size_value(node, consts: Constants) -> int | None:
    if node is None:
        return None
    node = unparen(node)
    if node.type == "sizeof_expression":
        inner = node.child_by_field_name("type") or node.child_by_field_name("value")
        return 4 if inner is not None and text(inner).strip("() ") in _WORD else None
    return consts.value(node)


def _data_words(ref, consts: Constants, where: list | None = None) -> list[int] | None:
    ref = unparen(ref)
    if ref.type == "pointer_expression" and text(ref.child_by_field_name("operator")) == "&":
        ref = unparen(ref.child_by_field_name("argument"))
    if ref.type == "call_expression" and callee_name(ref) == "data" and ref.child_by_field_name("function") is not None:
        fn = ref.child_by_field_name("function")
        ref = fn.child_by_field_name("argument") if fn.type == "field_expression" else ref  # `vec.data()`
    if ref is None or ref.type != "identifier":
        return None
    name = text(ref)
    # the one declaration of `name` in the enclosing function or the file with a constant initializer
    found = []
    p = ref
    while p.parent is not None and p.type != "function_definition":
        p = p.parent
    for root in (p, p.parent) if p.type == "function_definition" else (p,):
        if root is None:
            continue
        for n in walk(root, [50_000]):
            if n.type == "init_declarator":
                d = n.child_by_field_name("declarator")
                while d is not None and d.type == "array_declarator":
                    d = d.child_by_field_name("declarator")
                if d is not None and d.type == "identifier" and text(d) == name:
                    found.append(n)
            elif n.type in ("assignment_expression", "update_expression") and name in text(n).split("=")[0]:
                return None  # written after its declaration: not read
        if found:
            break
    if len(found) != 1:
        return None
    decl = found[0].parent
    typ = text(decl.child_by_field_name("type")) if decl is not None else ""
    if typ.replace("const", "").strip() not in _WORD - {"float"} and typ.replace("const", "").strip() not in (
            "std::array<uint32_t", "uint32_t"):
        return None
    init = found[0].child_by_field_name("value")
    if init is None:
        return None
    if init.type == "initializer_list":
        vals = [consts.value(c) for c in init.named_children if c.type != "comment"]
    else:
        vals = [consts.value(init)]
    if not vals or any(v is None for v in vals):
        return None
    if where is not None and decl is not None:
        where.append(decl)
    return [int(v) for v in vals if v is not None]


# (its first test; ``re`` finds this literal faster than ``in`` does, and most host files lack it)
register(EXTENSIONS, scan_with_summary, lambda data, _has=re.compile(rb"Pipeline").search: _has(data) is not None)
