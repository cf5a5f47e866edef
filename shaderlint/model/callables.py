"""Template arguments that name code: a function bound to a function-pointer template parameter
(``template <float (*F)(float)>`` launched as ``k<my_fn>``) and a functor type bound to a type
parameter (``template <typename Op>`` launched as ``k<AddOp>`` or deduced from ``k<<<g, b>>>(p,
AddOp())``). With the binding, ``F(x)`` is a call of ``my_fn`` and ``op(a, b)`` one of
``AddOp::operator()``, whose bodies the file shows.

Never a guess: an overloaded name, a template, a lambda, a type the file does not define (a
header's, not modelled) or a functor with several ``operator()`` resolve to nothing, and the call
stays unknown.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING

import tree_sitter as ts

from shaderlint.languages.base import split_args
from shaderlint.model.expr import unparen

if TYPE_CHECKING:
    from shaderlint.model.build import FileModel
    from shaderlint.model.kernel import Function, Var


def is_function_param(tv: "Var") -> bool:
    """A non-type template parameter of function-pointer type (``float (*F)(float)``)."""
    d = tv.decl.child_by_field_name("declarator") if tv.decl is not None else None
    return d is not None and d.type == "function_declarator"


def named_function(model: "FileModel", name: str) -> "Function | None":
    """The one non-kernel function called ``name`` the file defines with a body (None when the name
    is overloaded, qualified, a template instance or not defined here)."""
    if not name.isidentifier():
        return None
    got = [g for g in model.functions if g.name == name]
    if len(got) != 1 or got[0].body is None or got[0].is_entry or got[0].template_params:
        return None
    return got[0]


def functor_operator(model: "FileModel", type_name: str) -> "Function | None":
    """The ``operator()`` of the struct or class ``type_name`` the file defines, when it has exactly
    one, with a body, and the struct is not a template."""
    got = functor_binding(model, type_name)
    if got is None or got[1] or got[0].template_params:
        return None
    return got[0]


def functor_binding(model: "FileModel", type_name: str) -> "tuple[Function, dict[str, str]] | None":
    """(``operator()``, the struct's template arguments by parameter name) of the functor type
    ``type_name``: a struct the file defines with exactly one ``operator()`` with a body, or an
    instance of a struct template the file defines (``normal_functor<double>``: its type parameters
    are bound to the arguments for the operator's walk, as the compiler instantiates it). The
    operator may itself be a template (``template <typename... A> T operator()(A... a)``): its
    parameters are deduced at the call."""
    text = " ".join(re.sub(r"\b(const|volatile|struct|class|typename)\b", " ", type_name).split())
    args: list[str] = []
    lt = text.find("<")
    if lt > 0 and text.endswith(">"):
        args = [a.strip() for a in split_args(text[lt + 1:-1])]
        text = text[:lt].strip()
    name = text.split("::")[-1].strip()
    if not name.isidentifier() or name not in model.structs:
        return None
    index = model.__dict__.get("_functor_ops")
    if index is None:
        index = {}
        for g in model.functions:
            if g.name.replace(" ", "") != "operator()":  # (also written `operator ()`)
                continue
            owner = _owner(g)
            if owner is None or owner.type not in ("struct_specifier", "class_specifier"):
                continue
            sname = owner.child_by_field_name("name")
            if sname is not None:
                index.setdefault(model.text(sname), []).append(g)
        model._functor_ops = index
    ops = index.get(name, [])
    if len(ops) != 1 or ops[0].body is None:
        return None
    owner = _owner(ops[0])
    tparams = template_param_names(model, owner.parent) if owner.parent is not None \
        and owner.parent.type == "template_declaration" else None
    if tparams is None:
        return (ops[0], {}) if not args else None
    if not args or len(args) != len(tparams) or any(p is None for p in tparams):
        return None  # defaults, packs or a specialization: not instantiated here
    return ops[0], dict(zip(tparams, args))


def _owner(g: "Function") -> ts.Node | None:
    """The struct or class a member function is defined in (a member template's too), or None."""
    body = g.node.parent
    if body is not None and body.type == "template_declaration":
        body = body.parent
    return body.parent if body is not None and body.type == "field_declaration_list" else None


def template_param_names(model: "FileModel", decl: ts.Node) -> "list[str | None] | None":
    """The names of a template declaration's parameters (None for one that is not a plain type or
    value parameter: a pack, a default, a template template parameter)."""
    plist = decl.child_by_field_name("parameters")
    if plist is None:
        return None
    out: list[str | None] = []
    for p in plist.named_children:
        if p.type == "comment":
            continue
        if p.type == "type_parameter_declaration":
            ids = [c for c in p.named_children if c.type == "type_identifier"]
            out.append(model.text(ids[0]) if len(ids) == 1 else None)
        elif p.type == "parameter_declaration":
            d = p.child_by_field_name("declarator")
            out.append(model.text(d) if d is not None and d.type == "identifier" else None)
        else:
            out.append(None)
    return out


def declared_type_name(model: "FileModel", v: "Var") -> str | None:
    """The type a variable is declared with when it is a bare name (``Op op``, ``const Op& op``)."""
    t = v.decl.child_by_field_name("type") if v.decl is not None else None
    if t is None or t.type != "type_identifier":
        return None
    d = v.decl.child_by_field_name("declarator")
    if d is not None and d.type not in ("identifier", "reference_declarator", "init_declarator"):
        return None  # `Op* p`, `Op a[4]`: not callable as `p(x)`
    return model.text(t)


def bound_callables(model: "FileModel", f: "Function", bindings: Mapping[str, str] | None,
                    struct_args: dict | None = None) -> dict[int, "Function"]:
    """``id(Var) -> Function`` for the names a call in ``f`` may use under ``bindings``: a
    function-pointer template parameter bound to a function, and a parameter or local of a type
    parameter bound to a functor. ``struct_args``, when given, receives ``id(Var) -> {parameter:
    argument}`` for a functor that is an instance of a struct template (:func:`functor_binding`)."""
    out: dict[int, Function] = {}
    if not bindings:
        return out
    functors: dict[str, Function] = {}
    targs: dict[str, dict[str, str]] = {}
    for name, text in bindings.items():
        tv = f.template_params.get(name)
        if tv is None:
            continue
        if is_function_param(tv):
            g = named_function(model, text.strip().lstrip("&").strip())
            if g is not None:
                out[id(tv)] = g
        else:
            got = functor_binding(model, text)
            if got is not None:
                functors[name], targs[name] = got
    if functors:
        for v in list(f.params) + list(getattr(f, "vars", ())):
            tname = declared_type_name(model, v) or ""
            g = functors.get(tname)
            if g is not None:
                out[id(v)] = g
                if targs[tname] and struct_args is not None:
                    struct_args[id(v)] = targs[tname]
    return out


def callable_of(model: "FileModel", call: ts.Node, callables: Mapping[int, "Function"]) -> "Function | None":
    """The function ``call`` runs under ``callables`` (:func:`bound_callables`), or None."""
    if not callables:
        return None
    fn = call.child_by_field_name("function")
    if fn is None or fn.type != "identifier":
        return None
    v = model.resolve(fn)
    return callables.get(id(v)) if v is not None else None


def deduced_args(model: "FileModel", f: "Function", launch: ts.Node) -> dict[str, str]:
    """Type parameters deduced from a launch's arguments: a parameter declared ``Op op`` given a
    temporary ``AddOp()`` / ``AddOp{}`` or a variable declared ``AddOp`` binds ``Op = AddOp`` (a
    type the file defines; anything else deduces nothing)."""
    out: dict[str, str] = {}
    if not f.template_params:
        return out
    args = [a for a in model.call_args(launch) if a.type != "comment"]
    if len(args) != len(f.params):
        return out
    for p, a in zip(f.params, args):
        tname = declared_type_name(model, p)
        tv = f.template_params.get(tname or "")
        if tv is None or is_function_param(tv):
            continue
        got = _argument_type(model, unparen(a))
        if got is None:
            continue
        if out.get(tname, got) != got:
            return {}
        out[tname] = got
    return out


def _argument_type(model: "FileModel", a: ts.Node) -> str | None:
    name = None
    if a.type == "call_expression":  # `AddOp()`
        fn = a.child_by_field_name("function")
        if fn is not None and fn.type == "identifier":
            name = model.text(fn)
    elif a.type == "compound_literal_expression":  # `AddOp{}`
        t = a.child_by_field_name("type")
        if t is not None and t.type == "type_identifier":
            name = model.text(t)
    elif a.type == "identifier":
        v = model.resolve(a)
        if v is not None and not v.is_global:
            name = declared_type_name(model, v)
    if name is None or name not in model.structs:
        return None
    return name


def display_name(model: "FileModel", g: "Function") -> str:
    """``g``'s name, with its struct for a member (``AddOp::operator()``)."""
    owner = _owner(g)
    sname = owner.child_by_field_name("name") if owner is not None else None
    return f"{model.text(sname)}::{g.name}" if sname is not None else g.name


def bound_callee(model: "FileModel", call: ts.Node) -> "Function | None":
    """The function ``call`` (``F(x)``, ``op(a, b)``) runs in every template instance of the function
    around it, when the file or the host code binds it (at least one instance, all agreeing)."""
    fn = call.child_by_field_name("function")
    if fn is None or fn.type != "identifier":
        return None
    f = model.function_at(call.start_byte)
    if f is None or not f.template_params:
        return None
    v = model.resolve(fn)
    if v is None or v.function is not f:
        return None
    if not (v.template_param and is_function_param(v)) and declared_type_name(model, v) not in f.template_params:
        return None
    memo = model.__dict__.setdefault("_bound_callables", {})
    per_instance = memo.get(id(f))
    if per_instance is None:
        from shaderlint.estimate.registers import template_instances  # noqa: PLC0415 (estimate imports the model)

        per_instance = memo[id(f)] = [bound_callables(model, f, b) for b in template_instances(model, f)]
    got = {id(c.get(id(v))): c.get(id(v)) for c in per_instance}
    if len(got) != 1:
        return None
    return next(iter(got.values()))


def resolved_callee_name(model: "FileModel", call: ts.Node) -> str:
    """:meth:`callee_name`, or the name of the function a template argument binds the call to
    (:func:`bound_callee`) when that name is the file's only function so named."""
    name = model.callee_name(call)
    if not model.functions or name in model.function_by_name:
        return name
    g = bound_callee(model, call)
    if g is None or sum(1 for h in model.functions if h.name == g.name) != 1:
        return name
    return g.name
