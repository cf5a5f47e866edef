"""Memory operations the access list does not hold: texture/image calls, atomics, plain
stores to buffer variables, and the uses of a variable inside a function.

:attr:`Function.accesses` records subscripts and ``->`` on device/threadgroup/
texture variables. Rules about resources also need the calls that touch them
(Metal ``tex.read(coord)``/``tex.write(v, coord)``/``tex.sample(s, uv)``, GLSL
``imageStore``/``imageLoad``/``texelFetch``, atomics) and stores to GLSL buffer
block members (``count += 1u``); :func:`resource_ops` lists them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

import tree_sitter as ts

from shaderlint.model.dispatch import nodes_in
from shaderlint.model.expr import unparen
from shaderlint.model.types import Type

if TYPE_CHECKING:
    from shaderlint.model.build import FileModel
    from shaderlint.model.kernel import Function, Var

# Metal texture member functions: name -> (op, index of the coordinate argument or None)
METAL_TEXTURE_METHODS: dict[str, tuple[str, int | None]] = {
    "read": ("read", 0), "write": ("write", 1),
    "sample": ("sample", 1), "sample_compare": ("sample", 1), "gather": ("sample", 1),
    "gather_compare": ("sample", 1),
    "atomic_fetch_add": ("atomic", 0), "atomic_fetch_and": ("atomic", 0), "atomic_fetch_or": ("atomic", 0),
    "atomic_fetch_xor": ("atomic", 0), "atomic_fetch_min": ("atomic", 0), "atomic_fetch_max": ("atomic", 0),
    "atomic_exchange": ("atomic", 0), "atomic_compare_exchange_weak": ("atomic", 0), "atomic_store": ("atomic", 0),
    "atomic_load": ("read", 0),
}
# GLSL built-ins on images/samplers: name -> (op, index of the coordinate argument or None)
GLSL_IMAGE_FUNCTIONS: dict[str, tuple[str, int | None]] = {
    "imageLoad": ("read", 1), "imageStore": ("write", 1), "texelFetch": ("read", 1), "texelFetchOffset": ("read", 1),
    "texture": ("sample", 1), "textureLod": ("sample", 1), "textureGrad": ("sample", 1), "textureOffset": ("sample", 1),
    "textureGather": ("sample", 1),
}
_GLSL_IMAGE_ATOMIC = re.compile(r"^imageAtomic\w+$")
METAL_ATOMIC = re.compile(r"^atomic_(?:fetch_\w+|store|exchange|compare_exchange_weak)_explicit$")
GLSL_ATOMIC = re.compile(r"^atomic(?:Add|Min|Max|And|Or|Xor|Exchange|CompSwap|Store)$")
GLSL_COUNTER = frozenset({"atomicCounterIncrement", "atomicCounterDecrement", "atomicCounterAdd",
                          "atomicCounterSubtract", "atomicCounterExchange"})
CUDA_ATOMIC = re.compile(r"^atomic(?:Add|Sub|Exch|Min|Max|Inc|Dec|CAS|And|Or|Xor)(?:_block|_system)?$")


@dataclass(frozen=True, eq=False)
class ResourceOp:
    node: ts.Node  # the call or assignment
    var: "Var | None"  # the texture/image/buffer variable
    op: str  # read | write | sample | atomic
    coord: ts.Node | None  # the coordinate/index argument, if any


def resource_ops(model: "FileModel", f: "Function") -> list[ResourceOp]:
    """Texture/image calls, atomics and stores to buffer variables inside ``f`` (calls in order)."""
    cache = _cache(model, "_resource_ops")
    if id(f) in cache:
        return cache[id(f)]
    out: list[ResourceOp] = []
    if f.body is not None:
        lo, hi = f.body.start_byte, f.body.end_byte
        for call in nodes_in(model, "call", lo, hi):
            op = _call_op(model, call)
            if op is not None:
                out.append(op)
        if model.language == "glsl":
            for a in nodes_in(model, "assign", lo, hi) + nodes_in(model, "update", lo, hi):
                target = a.child_by_field_name("left") or a.child_by_field_name("argument")
                base = model.base_var(target) if target is not None else None
                if base is not None and base.address_space == "buffer" and unparen(target).type != "subscript_expression":
                    out.append(ResourceOp(a, base, "write", None))
    cache[id(f)] = out
    return out


def _call_op(model: "FileModel", call: ts.Node) -> ResourceOp | None:
    name = model.callee_name(call)
    args = model.call_args(call)
    fn = call.child_by_field_name("function")
    if model.language == "metal" and fn is not None and fn.type == "field_expression":
        obj = fn.child_by_field_name("argument")
        var = model.resolve(unparen(obj)) if obj is not None and unparen(obj).type == "identifier" else None
        if var is not None and var.type.kind == "texture" and name in METAL_TEXTURE_METHODS:
            op, i = METAL_TEXTURE_METHODS[name]
            return ResourceOp(call, var, op, args[i] if i is not None and i < len(args) else None)
        return None
    if model.language == "glsl":
        spec = GLSL_IMAGE_FUNCTIONS.get(name) or (("atomic", 1) if _GLSL_IMAGE_ATOMIC.match(name) else None)
        if spec is not None and args:
            var = model.base_var(args[0])
            op, i = spec
            return ResourceOp(call, var, op, args[i] if i is not None and i < len(args) else None)
        if (GLSL_ATOMIC.match(name) or name in GLSL_COUNTER) and args:
            return ResourceOp(call, model.base_var(args[0]), "atomic", None)
        return None
    pattern = METAL_ATOMIC if model.language == "metal" else CUDA_ATOMIC
    if pattern.match(name) and args:
        return ResourceOp(call, model.base_var(args[0]), "atomic", None)
    return None


def uses(model: "FileModel", f: "Function") -> dict[int, list[ts.Node]]:
    """Identifier nodes inside ``f`` by ``id()`` of the variable they resolve to."""
    cache = _cache(model, "_uses")
    if id(f) in cache:
        return cache[id(f)]
    out: dict[int, list[ts.Node]] = {}
    stack = [f.body] if f.body is not None else []
    while stack:
        n = stack.pop()
        if n.type == "identifier":
            v = model.resolve(n)
            if v is not None:
                out.setdefault(id(v), []).append(n)
            continue
        stack.extend(n.children)
    for lst in out.values():
        lst.sort(key=lambda n: n.start_byte)
    cache[id(f)] = out
    return out


def is_store(node: ts.Node) -> bool:
    """True when ``node`` (a read site such as ``p[i]``, ``s.f``, ``p->f``) is the target, or part of
    the target, of a store: ``p[i].f = …``, ``p[i] += …``, ``++p[i]``, ``&p[i]`` (atomics)."""
    p = node.parent
    while p is not None and p.type in ("parenthesized_expression", "field_expression", "subscript_expression") \
            and (p.type == "parenthesized_expression" or p.child_by_field_name("argument") == node):
        node, p = p, p.parent
    if p is None:
        return False
    if p.type == "assignment_expression" and p.child_by_field_name("left") == node:
        return True
    return p.type in ("update_expression", "pointer_expression")


def statement_of(node: ts.Node) -> ts.Node:
    """The statement (direct child of a block) that contains ``node``."""
    n = node
    while n.parent is not None and n.parent.type not in ("compound_statement", "case_statement", "translation_unit"):
        n = n.parent
    return n


def is_reference(var: "Var") -> bool:
    """True for ``T& name`` declarations (parameters and locals)."""
    n = var.node.parent
    while n is not None and n != var.decl:
        if n.type == "reference_declarator":
            return True
        n = n.parent
    return False


def value_bytes(t: Type) -> int | None:
    """Size in bytes of a scalar/vector value (``float3`` counted as 12), None for anything else."""
    if not t.is_arithmetic or t.bits <= 0 or t.name.startswith(("mat", "dmat", "f16mat")) or "x" in t.name:
        return None
    return max(1, t.bits // 8) * t.width


def _cache(model: "FileModel", name: str) -> dict:
    c = getattr(model, name, None)
    if c is None:
        c = {}
        setattr(model, name, c)
    return c


# ---- struct layout -----------------------------------------------------------------------------

_EXPLICIT_ALIGN = re.compile(r"(?:__align__|alignas)\s*\(\s*(\d+)\s*\)")


@dataclass(frozen=True)
class FieldLayout:
    name: str
    offset: int | None  # None once a field of unknown size precedes it
    size: int | None
    align: int | None


def _pow2(n: int) -> int:
    p = 1
    while p < n:
        p *= 2
    return p


def struct_layout(model: "FileModel", struct, depth: int = 0) -> tuple[list[FieldLayout], int | None, int | None]:
    """(fields with byte offsets, struct size, struct alignment) under the language's layout rules
    (C/C++ natural alignment; Metal 3-vectors take 16 bytes unless ``packed_``; CUDA 3-vectors are
    12 bytes aligned to 4; GLSL std430: 3-vectors 12 bytes aligned to 16). None where unknown."""
    fields: list[FieldLayout] = []
    offset: int | None = 0
    align_all: int | None = 1
    for name, t, fnode in struct.fields:
        size, align = _member_layout(model, name, t, fnode, depth)
        if align is None:
            align_all = None
        elif align_all is not None:
            align_all = max(align_all, align)
        if offset is not None and align is not None:
            offset = -(-offset // align) * align
        else:
            offset = None
        fields.append(FieldLayout(name, offset, size, align))
        offset = offset + size if offset is not None and size is not None else None
    node = struct.node
    body = node.child_by_field_name("body")
    head = model.source.data[node.start_byte:(body.start_byte if body is not None else node.start_byte)]
    m = _EXPLICIT_ALIGN.search(head.decode("utf-8", "replace"))
    if m and align_all is not None:
        align_all = max(align_all, int(m.group(1)))
    elif m:
        align_all = int(m.group(1))
    total = -(-offset // align_all) * align_all if offset is not None and align_all else None
    return fields, total, align_all


def _member_layout(model: "FileModel", name: str, t: Type, fnode: ts.Node, depth: int) -> tuple[int | None, int | None]:
    count = 1
    if t.kind == "array":
        count = _array_count(model, name, fnode)
        t = t.pointee or t
    if t.kind == "struct" and t.struct in model.structs and depth < 4:
        _, size, align = struct_layout(model, model.structs[t.struct], depth + 1)
    else:
        size, align = _value_layout(model, t, fnode)
    if count is None or size is None:
        return None, align
    return size * count, align


def _array_count(model: "FileModel", name: str, fnode: ts.Node) -> int | None:
    for decl in fnode.children_by_field_name("declarator"):
        n, count = decl, 1
        while n is not None and n.type == "array_declarator":
            size = n.child_by_field_name("size")
            value = model.const_value(size) if size is not None else None
            if not isinstance(value, int) or value <= 0 or count * value >= 1 << 62:
                return None  # unknown, invalid or absurd: not a size to compute with
            count *= value
            n = n.child_by_field_name("declarator")
        if n is not None and model.text(n) == name:
            return count
    return None


def _value_layout(model: "FileModel", t: Type, fnode: ts.Node) -> tuple[int | None, int | None]:
    if value_bytes(t) is None:
        return None, None
    el = max(1, t.bits // 8)
    if t.width == 1:
        return el, el
    ty = fnode.child_by_field_name("type")
    if model.language == "metal":
        if ty is not None and model.text(ty).strip().startswith("packed_"):
            return el * t.width, el
        return el * _pow2(t.width), el * _pow2(t.width)
    if model.language == "cuda":
        return el * t.width, (el if t.width == 3 else el * t.width)
    return el * t.width, el * _pow2(t.width)
