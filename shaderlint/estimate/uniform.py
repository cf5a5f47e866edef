"""Which local values of a GLSL shader are uniform across the wave (the same in every invocation).

AMD GPUs keep such values in scalar registers (SGPRs) when they are integers, booleans or addresses:
ACO computes them with scalar instructions, and only per-invocation values take vector registers
(VGPRs), which are the figure RADV reports and occupancy depends on. (Floating-point arithmetic has no
scalar unit before gfx11.5: a uniform float is still computed in, and held by, a VGPR.)

:func:`divergent_vars` is a static pass over the model, memoized on it: a variable (local or helper
parameter) is *divergent* when a value assigned to it depends on the invocation (``gl_LocalInvocationID``,
``gl_GlobalInvocationID``, a subgroup lane, a stage input, another divergent variable, shared memory,
a writable buffer, a readonly buffer read at a divergent index, an unknown function of divergent
arguments), when it is assigned under a condition that is divergent (inside an ``if``, loop,
``switch`` or ``?:`` on a divergent value), or when a call passes a divergent argument for it (helper
parameters). Everything else is uniform: the fixpoint only ever adds divergent variables, and
anything the pass does not recognise is divergent.
"""

from __future__ import annotations

import tree_sitter as ts

from shaderlint.estimate.headers import header_function
from shaderlint.model.expr import unparen

#: Built-ins that differ between the invocations of a wave.
DIVERGENT_BUILTINS = frozenset({
    "gl_LocalInvocationID", "gl_GlobalInvocationID", "gl_LocalInvocationIndex", "gl_SubgroupInvocationID",
    "gl_FragCoord", "gl_VertexIndex", "gl_InstanceIndex", "gl_VertexID", "gl_InstanceID", "gl_PrimitiveID",
    "gl_SubgroupEqMask", "gl_SubgroupGeMask", "gl_SubgroupGtMask", "gl_SubgroupLeMask", "gl_SubgroupLtMask",
    "gl_FrontFacing", "gl_PointCoord", "gl_SampleID", "gl_SamplePosition", "gl_Layer", "gl_ViewportIndex",
})
#: Built-ins with one component per workgroup axis: along an axis of size 1 every invocation has the same
#: component (``gl_LocalInvocationID.y`` is 0 and ``gl_GlobalInvocationID.y`` is ``gl_WorkGroupID.y``
#: when ``local_size_y`` is 1; NIR folds them so, and ACO keeps them in scalar registers).
_PER_AXIS = frozenset({"gl_LocalInvocationID", "gl_GlobalInvocationID"})


def uniform_component(model, name: str, components: str) -> bool:
    """Whether ``name.components`` (``gl_GlobalInvocationID.y``, ``.yz``) is the same in every invocation:
    each component names an axis of the shader's workgroup whose size is 1."""
    if name not in _PER_AXIS or not components:
        return False
    size = workgroup_size(model)
    if not size:
        return False
    for c in components:
        i = "xyz".find(c) if c in "xyz" else "rgb".find(c) if c in "rgb" else "stp".find(c)
        if i < 0 or size[i] != 1:
            return False
    return True


def workgroup_size(model):
    """The workgroup size ``model`` declares, else the one a file it includes declares (llama.cpp's
    rope shaders take `local_size_x = 1, local_size_y = 256` from rope_head.glsl; memoized)."""
    size = getattr(model, "workgroup_size", None)
    if size or getattr(model, "language", None) != "glsl":
        return size
    got = model.__dict__.get("_included_workgroup_size", False)
    if got is False:
        from shaderlint.estimate.headers import _load, header_paths

        got = None
        for hp in header_paths(model):
            hm = _load(hp, model)
            hs = getattr(hm, "workgroup_size", None) if hm is not None else None
            if hs:
                got = hs
                break
        model._included_workgroup_size = got
    return got


def included_workgroup_size(model) -> tuple[int, ...] | None:
    """The workgroup size a GLSL shader that declares none takes from a file it includes, when every
    axis is a number (an axis of a specialization constant is None there: unknown); else None."""
    if getattr(model, "language", None) != "glsl" or getattr(model, "workgroup_size", None) is not None:
        return None
    size = tuple(workgroup_size(model) or ())
    return size if size and all(isinstance(d, int) for d in size) else None


#: Calls whose result is the same in every invocation whatever their arguments.
_UNIFORM_CALLS = frozenset({
    "subgroupBroadcastFirst", "subgroupBroadcast", "subgroupAdd", "subgroupMul", "subgroupMin", "subgroupMax",
    "subgroupAnd", "subgroupOr", "subgroupXor", "subgroupAll", "subgroupAny", "subgroupAllEqual",
    "subgroupBallot", "subgroupElect", "readFirstInvocationARB", "readInvocationARB",
})
_OUT = frozenset({"out", "inout"})
_CONDITIONS = {"if_statement": "condition", "while_statement": "condition", "do_statement": "condition",
               "for_statement": "condition", "switch_statement": "condition", "conditional_expression": "condition"}


def divergent_vars(model) -> frozenset[int]:
    """``id(Var)`` of the divergent variables of ``model`` (see the module docstring; memoized)."""
    got = model.__dict__.get("_divergent_vars")
    if got is None:
        got = model._divergent_vars = frozenset(_compute(model))
    return got


def divergent_expression(model, node: ts.Node, divergent: frozenset[int] | None = None) -> bool:
    """Whether the value of ``node`` (an expression of ``model``) may differ between invocations;
    ``divergent``: the divergent variables to assume (default :func:`divergent_vars`)."""
    return _divergent(model, node, divergent_vars(model) if divergent is None else divergent)


def divergent_vars_in_call(model, g, divergent_params: frozenset[int]) -> frozenset[int]:
    """``id(Var)`` of the divergent variables of ``model`` when helper ``g`` runs inlined at one call
    whose divergent arguments are those of the parameters ``divergent_params`` (ids): NIR inlines every
    helper before its divergence analysis, so a helper's locals are uniform at a call with uniform
    arguments even when another call (or none in ``model``: a helper of an included file) passes
    divergent ones. Memoized on the model per helper and set."""
    memo = model.__dict__.setdefault("_divergent_in_call", {})
    key = (id(g), divergent_params)
    got = memo.get(key)
    if got is None:
        got = memo[key] = frozenset(_compute(model, (g, divergent_params)))
    return got


def _compute(model, inlined=None) -> set[int]:
    """The divergent variables of ``model``; ``inlined``: (helper, ids of its divergent parameters) for one
    inlined call of it (its parameters take that call's values, not those of every call)."""
    context = {id(p) for p in inlined[0].params} if inlined is not None else set()
    # (variable, value node or None, the nodes whose conditions guard the assignment)
    sources: list[tuple[object, ts.Node | None, ts.Node]] = []
    for kind in ("assign", "update"):
        for a in model.nodes(kind):
            target = a.child_by_field_name("left") or a.child_by_field_name("argument")
            if target is None:
                continue
            t = unparen(target)
            while t.type in ("subscript_expression", "field_expression"):
                t = unparen(t.child_by_field_name("argument"))
            if t.type != "identifier":
                continue
            v = model.resolve(t)
            if v is None or v.is_global:
                continue
            sources.append((v, a.child_by_field_name("right"), a))
    for vs in model._vars_by_name.values():
        for v in vs:
            if not v.is_global and v.init is not None:
                sources.append((v, v.init, v.init))
    # helper parameters: the arguments of every call of the helper
    for call in model.nodes("call"):
        g = model.function_by_name.get(model.callee_name(call))
        args = [a for a in model.call_args(call) if a.type != "comment"]
        if g is None or g.body is None or len(g.params) != len(args):
            # a call of code this model does not hold (a helper of an included file, an overload, a
            # built-in with out parameters such as umulExtended): a local passed by name may be an
            # out argument, as divergent as the call
            for a in args:
                a = unparen(a)
                if a.type == "identifier":
                    v = model.resolve(a)
                    if v is not None and not v.is_global:
                        sources.append((v, call, call))
            continue
        for p, a in zip(g.params, args):
            if id(p) not in context:
                sources.append((p, a, call))
            if p.qualifiers & _OUT:  # the caller's variable takes the helper's value
                a = unparen(a)
                if a.type == "identifier":
                    v = model.resolve(a)
                    if v is not None and not v.is_global:
                        sources.append((v, call, call))
    if inlined is not None:  # only the helper's own values are asked for under this call
        lo, hi = inlined[0].node.start_byte, inlined[0].node.end_byte
        sources = [x for x in sources if lo <= x[2].start_byte < hi]
    divergent: set[int] = set(inlined[1]) if inlined is not None else set()
    # the parameters of a helper no call of this model reaches (a helper of an included file, inlined
    # into the shader that includes it): their values are the caller's, not known here
    called = {model.callee_name(c) for c in model.nodes("call")}
    for g in model.functions:
        if g.body is not None and not g.is_entry and g.name not in called \
                and (inlined is None or g is not inlined[0]):
            divergent.update(id(p) for p in g.params)
    guards: dict[int, list[ts.Node]] = {}
    for _, _, at in sources:
        if at.id not in guards:
            guards[at.id] = _guards(at)
    for _ in range(12):
        changed = False
        for v, value, at in sources:
            if id(v) in divergent:
                continue
            if (value is not None and _divergent(model, value, divergent)) \
                    or any(_divergent(model, c, divergent) for c in guards[at.id]):
                divergent.add(id(v))
                changed = True
        if not changed:
            break
    return divergent


def _guards(node: ts.Node) -> list[ts.Node]:
    """The conditions of the branches and loops around ``node`` (up to its function)."""
    out = []
    n = node.parent
    child = node
    while n is not None and n.type != "function_definition":
        field = _CONDITIONS.get(n.type)
        if field is not None:
            cond = n.child_by_field_name(field)
            if cond is not None and cond is not child and cond.id != child.id:
                out.append(cond)
        child = n
        n = n.parent
    return out


def _divergent(model, node: ts.Node, divergent: set[int]) -> bool:
    stack = [node]
    while stack:
        n = stack.pop()
        t = n.type
        if t == "identifier":
            name = model.text(n)
            if name in DIVERGENT_BUILTINS:
                up = n.parent
                if up is not None and up.type == "field_expression" and up.child_by_field_name("argument") == n:
                    fld = up.child_by_field_name("field")
                    if fld is not None and uniform_component(model, name, model.text(fld)):
                        continue
                return True
            v = model.resolve(n)
            if v is None:
                continue  # a constant, a function name, a uniform built-in
            if v.is_global:
                space = v.address_space
                if space in ("shared", "in") or (space == "buffer" and "readonly" not in v.qualifiers):
                    return True
                continue  # push constants, uniforms, specialization constants; readonly buffers: see below
            if id(v) in divergent:
                return True
            continue
        if t == "call_expression":
            name = model.callee_name(n)
            if name in _UNIFORM_CALLS:
                continue
            g = model.function_by_name.get(name)
            if g is not None and g.body is not None:
                if _reads_divergent(model, g):
                    return True
            else:  # a helper of an included file: its body decides, as above
                nargs = sum(1 for a in model.call_args(n) if a.type != "comment")
                memo = model.__dict__.setdefault("_header_reads_divergent", {})
                got = memo.get((name, nargs))
                if got is None:
                    hit = header_function(model, name, nargs)
                    got = memo[(name, nargs)] = hit is not None and _reads_divergent(*hit)
                if got:
                    return True
            fn = n.child_by_field_name("function")
            stack.extend(a for a in n.named_children if a is not fn)
            continue
        stack.extend(n.named_children)
    return False


def _reads_divergent(model, g) -> bool:
    """Whether helper ``g`` reads an invocation-dependent built-in or memory whatever its arguments."""
    memo = model.__dict__.setdefault("_reads_divergent", {})
    got = memo.get(id(g))
    if got is None:
        memo[id(g)] = False  # (recursion)
        got = _divergent(model, g.body, set())
        memo[id(g)] = got
    return got
