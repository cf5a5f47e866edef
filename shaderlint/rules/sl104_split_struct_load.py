"""SL104 split-struct-load

## What it does
Flags two or more scalar/vector fields of the same struct element in device or
constant memory (GLSL: buffer blocks; `particles[i].mass` and `particles[i].charge`, `p->a` and
`p->c`, or the fields of a `const T& p = buf[i]` reference) that are read
together — in one statement or in neighbouring statements of one block — when
other fields lie between them in the struct declaration, so that:
the fields read would fit one aligned vector load (at most 16 bytes, and the
struct's alignment allows it) if they were declared next to each other, but the
span they cover now, gap included, does not. Struct layout follows the
language's rules (natural alignment, `__align__`/`alignas`, Metal 3-vectors of
16 bytes, CUDA 3-vectors of 12, GLSL std430). It is reported at the statement
of the first read of that element, naming the fields and what lies between
them. Adjacent fields, a single field, the components of one vector field,
whole-struct copies, fields between which are read too, and small elements that
already load in one aligned vector (a 16-byte, 16-aligned struct) are not
flagged.

## Why is this bad?
GPUs load up to 16 bytes per thread in one instruction when the bytes are
contiguous and aligned. Apple's GPU compiler team ("Advanced Metal Shader
Optimization", WWDC) points out that the struct layout decides this: fields
read together that are declared apart cannot be combined into one vector load,
so each becomes its own memory transaction; reordering the declaration (or
packing the values into one vector field) lets the compiler vectorise.

## Example
```cuda
struct Particle { float4 pos; float mass; float pad[3]; float charge; };

__global__ void force(const Particle* ps, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = ps[i].mass * ps[i].charge;   // SL104
}
```

## Use instead
```cuda
struct Particle { float4 pos; float mass; float charge; float pad[3]; };
```

## Impact
Memory instructions rather than registers: one vector load instead of N scalar
loads of the same element. The register model does not price it; the impact
field is left empty.

## Options
None.

## Evidence
`nvcc -arch=sm_90 -ptx` on the CUDA fixture: `ps[i].mass * ps[i].charge` with
`pad[3]` between the fields compiles to two loads,
`ld.global.nc.f32 %f1, [%rd6+32]` and `ld.global.nc.f32 %f2, [%rd6+16]`; with
the fields declared next to each other (`float mass; float charge;` at offset
16) the same expression compiles to a single
`ld.global.nc.v2.f32 {%f1, %f2}, [%rd5+16]`. `edge_ends` (`int src; float
weight; int dst;` in an 8-aligned struct) loads `ld.global.u32 [%rd6+8]` and
`[%rd6]`; declared adjacent it becomes `ld.global.v2.u32`. The look-alike
`cell_ranges` reads two fields of a 16-byte `__align__(16)` struct with one
between, and nvcc loads the whole element with one `ld.global.v4.u32` — which
is why spans that already fit one aligned vector are not flagged; without the
alignment (`only_four_byte_aligned`) even adjacent fields load one by one.
"""

from __future__ import annotations

from collections.abc import Iterable

from shaderlint.diagnostics import Finding, Related, Severity
from shaderlint.model.dispatch import nodes_in
from shaderlint.model.expr import unparen
from shaderlint.model.memory import is_store, is_reference, statement_of, struct_layout, value_bytes
from shaderlint.rules.base import Rule, RuleContext

_VECTOR_BYTES = 16


class SplitStructLoad(Rule):
    code = "SL104"
    name = "split-struct-load"
    languages = frozenset({"metal", "cuda", "glsl"})
    severity = Severity.INFO
    summary = "fields of one struct element read together but declared apart, blocking a vector load"

    def check(self, model, ctx: RuleContext) -> Iterable[Finding]:
        for f in model.functions:
            if not f.is_device_code or f.body is None:
                continue
            spaces = ("device",) if model.language == "glsl" else ("device", "constant")  # std140 differs
            memory = {a.node.id: a for a in f.accesses if a.space in spaces}
            reads: dict[tuple, list] = {}
            for fe in nodes_in(model, "field", f.body.start_byte, f.body.end_byte):
                key, struct = _element(model, fe, memory)
                if key is None or struct is None:
                    continue
                fld = fe.child_by_field_name("field")
                if fld is None or is_store(fe):  # (asked last: ``Node.parent`` costs time proportional to the depth)
                    continue
                reads.setdefault(key, []).append((fe, model.text(fld), struct))
            for key, items in reads.items():
                everywhere = {name for _, name, _ in items}
                for cluster in _clusters(items):
                    finding = _check_cluster(model, f, key, cluster, everywhere)
                    if finding is not None:
                        yield finding
                        break  # one report per element


def _element(model, fe, memory):
    """(key of the struct element read, its StructDef) for ``buf[i].f``, ``p->f``, ``ref.f``."""
    arg = fe.child_by_field_name("argument")
    op = fe.child_by_field_name("operator")
    if arg is None or op is None:
        return None, None
    arg = unparen(arg)
    arrow = model.text(op) == "->"
    if arrow:
        if fe.id not in memory:
            return None, None
        base = model.base_var(arg)
        key = (id(base), f"{model.text(arg)}[0]")
        t = model.type_of(arg)
        t = t.pointee if t.kind == "pointer" and t.pointee is not None else t
    elif arg.type == "subscript_expression" and arg.id in memory:
        base = model.base_var(arg)
        key = (id(base), " ".join(model.text(arg).split()))
        t = model.type_of(arg)
    elif arg.type == "identifier":
        v = model.resolve(arg)
        if v is None or v.is_param or v.init is None or not is_reference(v):
            return None, None
        init = unparen(v.init)
        if init.type != "subscript_expression" or init.id not in memory:
            return None, None
        key = (id(model.base_var(init)), " ".join(model.text(init).split()))
        t = model.type_of(init)
    else:
        return None, None
    if t.kind != "struct" or t.struct not in model.structs:
        return None, None
    return key, model.structs[t.struct]


def _clusters(items):
    """Reads grouped by block, chaining statements that are neighbours."""
    groups: list[list] = []
    last = None
    for fe, name, struct in sorted(items, key=lambda t: t[0].start_byte):
        stmt = statement_of(fe)
        block = stmt.parent.id if stmt.parent is not None else None
        index = _position(stmt)
        if last is not None and last[0] == block and index - last[1] <= 1:
            groups[-1].append((fe, name, struct, stmt))
        else:
            groups.append([(fe, name, struct, stmt)])
        last = (block, index)
    return groups


def _position(stmt) -> int:
    i, n = 0, stmt.prev_named_sibling
    while n is not None:
        if n.type != "comment":
            i += 1
        n = n.prev_named_sibling
    return i


def _check_cluster(model, f, key, cluster, everywhere):
    struct = cluster[0][2]
    names = []
    for _, name, _, _ in cluster:
        if name not in names:
            names.append(name)
    order = [n for n, _, _ in struct.fields]
    idx = sorted(order.index(n) for n in names if n in order)
    if len(idx) < 2 or len(idx) != len(names):
        return None
    between = [i for i in range(idx[0], idx[-1] + 1) if i not in idx]
    if not between or all(struct.fields[i][0] in everywhere for i in between):
        return None  # nothing in between, or the fields between are read too (one wider load)
    layout, _, align = struct_layout(model, struct)
    first, last = layout[idx[0]], layout[idx[-1]]
    sizes = [layout[i].size for i in idx]
    if align is None or first.offset is None or last.offset is None or last.size is None or None in sizes \
            or any(value_bytes(struct.fields[i][1]) is None for i in idx):
        return None
    together = sum(sizes)  # type: ignore[arg-type]
    if together > _VECTOR_BYTES or align < _pow2(together):
        return None  # even adjacent, the fields would not form one aligned vector load
    span = last.offset + last.size - first.offset
    if span <= _VECTOR_BYTES and first.offset % _pow2(span) == 0 and align >= _pow2(span):
        return None  # the whole span, gap included, is one aligned vector load already
    read = [struct.fields[i][0] for i in idx]
    gap = ", ".join(f"'{struct.fields[i][0]}' ({_type_name(model, struct.fields[i])})" for i in between)
    fe0, _, _, stmt0 = cluster[0]
    element = key[1]
    return Finding(
        stmt0.start_byte, max(fe0.end_byte, stmt0.start_byte + 1),
        f"fields {_names(read)} of '{element}' (struct {struct.name}) are read together but {gap} "
        f"lie{'s' if len(between) == 1 else ''} between them (the reads span {span} bytes); declare them next to each "
        f"other so the {together} bytes load as one vector",
        kernel=f.name,
        related=tuple(Related(fe.start_byte, fe.end_byte, f"reads '{model.text(fe)}'") for fe, _, _, _ in cluster[1:]),
        fingerprint_text=f"{struct.name}:{','.join(read)}:{element}",
    )


def _pow2(n: int) -> int:
    p = 1
    while p < n:
        p *= 2
    return p


def _names(names: list[str]) -> str:
    quoted = [f"'{n}'" for n in names]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1]


def _type_name(model, field) -> str:
    name, t, node = field
    ty = node.child_by_field_name("type")
    text = " ".join(model.text(ty).split()) if ty is not None else t.name
    for decl in node.children_by_field_name("declarator"):
        d = "".join(model.text(decl).split())
        if d.startswith(name + "["):
            return text + d[len(name):]
    return text
