"""Vulkan host code across functions and files: per-function summaries, and their resolution.

The single-file reading of :mod:`shaderlint.host.vulkan` links a dispatch only where one function
(or the file) both creates the pipeline and names its shader as a literal. Real projects split
that up: a helper loads ``dir + "/" + name + ".spv"``, a wrapper builds the pipeline from a
descriptor struct (the shader name and the specialization constants that set ``local_size_*_id``
are fields of a parameter), a lambda or a factory fills the struct and returns the pipeline, an
init function stores it in a member, and a dispatch helper binds whatever pipeline it is passed.

:func:`summarise` reads one file (a pure function of its path and content, so it is cached with
the file's scan) into a :class:`VulkanSummary`: per function (free, member, and lambdas bound to
a local name, which only their enclosing function can call) the values it hands on, as *abstract
values* (JSON lists):

``["s", text]``, ``["i", n]``
    a string or integer constant;
``["p", index, "a.b"]``
    parameter ``index`` (or the field chain ``a.b`` of it), never assigned in the function;
``["st", {field: value}]``
    a local struct whose fields are assigned once each, unconditionally, and which is used
    only by reading its fields or passing it to one call;
``["c", k, field]``
    field ``field`` of the result of the function's call ``k`` (``""``: the result);
``["k", field]``
    a struct whose ``field`` holds the pipeline the function creates (``""``: that pipeline);
``["f", name]``
    a member or field ``name`` (pipelines kept in a struct, found by the field's name);
``["path", prefix, stem, suffix]``
    a shader path built as ``prefix + stem + suffix`` (``suffix`` a SPIR-V/GLSL extension
    literal, ``prefix`` a string, or None when it is not a literal: a directory member).

and what the function does with them: the shader paths it builds (``sinks``), the compute
pipelines it creates (``creates``, with a specialization *template*: map entries and data words
whose values may be parameters, each under the ``if`` conditions around it), its calls with their
arguments, what it returns, the fields it assigns, and its dispatches with the pipeline they bind.

:func:`resolve` (used by :mod:`shaderlint.host.index`) links the summaries of every host file of a
run: a call names a function by its simple name, which must have exactly one definition among the
summaries (else it resolves to nothing); a creation whose shader or constants depend on
parameters is instantiated at each call site, up the call chain, until they are constants. Any
creation left unknown (a name that is not a constant, a function with no call site seen, a
creation whose shader is not read) makes the run's interprocedural group sizes unknown for every
shader. Anything not understood gives no fact.
"""

from __future__ import annotations

import bisect
import re

from shaderlint.host import HostLaunch, Span
from shaderlint.host._c import args_of, callee_name, text
from shaderlint.model.expr import unparen

#: Calls that hand on their one argument's value (conversions).
_WRAP = frozenset({"string", "std::string", "string_view", "std::string_view", "move", "std::move",
                   "static_cast", "c_str", "data", "String", "QString"})
_SUFFIXES = (".comp.spv", ".glsl.spv", ".spv", ".comp", ".glsl")
_INT_TYPES = ("uint32_t", "int32_t", "int", "unsigned", "uint", "unsigned int", "VkBool32")
_COMPARE = frozenset({"<", "<=", ">", ">=", "==", "!="})
_MAX_DEPTH = 8
#: Call sites visited at most when instantiating a run's creations.
_MAX_STEPS = 20_000
#: Nodes whose children are never read here.
_QUERY_TEXT = """
(function_definition) @fn
(lambda_expression) @lam
(declaration) @decl
(call_expression) @call
(assignment_expression) @assign
(return_statement) @ret
(string_literal) @str
(binary_expression) @cat
(field_initializer) @init
(initializer_pair) @init
(update_expression argument: (identifier) @write)
(pointer_expression operator: "&" argument: (identifier) @write)
(assignment_expression left: (identifier) @write)
(update_expression argument: [(field_expression) (subscript_expression)] @part)
(pointer_expression operator: "&" argument: [(field_expression) (subscript_expression)] @part)
(assignment_expression left: [(field_expression) (subscript_expression)] @part)
(for_range_loop declarator: (_) @bound)
(catch_clause parameters: (parameter_list (parameter_declaration declarator: (_) @bound)))
"""
_QUERY: dict[int, object] = {}
_IDENT_QUERY: dict[int, object] = {}
#: Pipeline creation functions of the API and its C++ bindings (a function of that name wraps the API).
_API = frozenset({"vkCreateComputePipelines", "createComputePipeline", "createComputePipelines",
                  "createComputePipelineUnique", "createComputePipelinesUnique"})


class VulkanSummary:
    """A file's function summaries (``data``: a JSON-able dict). Travels with the file's launches
    through the scan caches; :mod:`shaderlint.host.index` takes it out before linking launches."""

    api = "vulkan-summary"
    __slots__ = ("data",)

    def __init__(self, data: dict) -> None:
        self.data = data

    def __eq__(self, other: object) -> bool:
        return isinstance(other, VulkanSummary) and other.data == self.data

    def __repr__(self) -> str:
        return f"VulkanSummary({self.data!r})"


def _span(lines, node) -> list:
    s = lines.span(node)
    return [s.start, s.end, s.line, s.column]  # (the file's path is the summary's)


def span_of(path: str, o) -> Span:
    return Span(path, int(o[0]), int(o[1]), int(o[2]), int(o[3]))


#: Calls of the standard library and the C runtime, never a function summarised here (not recorded).
_NOISE = frozenset({
    "printf", "fprintf", "sprintf", "snprintf", "puts", "fputs", "perror", "strcmp", "strncmp", "strlen", "strnlen",
    "strcpy", "strncpy", "memcpy", "memset", "memcmp", "malloc", "calloc", "free", "realloc", "assert", "abort",
    "exit", "size", "empty", "begin", "end", "cbegin", "cend", "push_back", "emplace_back", "pop_back", "insert",
    "emplace", "erase", "clear", "resize", "reserve", "find", "count", "at", "front", "back", "data", "c_str",
    "to_string", "reinterpret_cast", "static_cast", "const_cast", "dynamic_cast", "min", "max", "std::min",
    "std::max", "make_unique", "make_shared", "std::make_unique", "std::make_shared", "reset", "get", "release",
    "lock", "unlock", "seekg", "tellg", "read", "write", "open", "close", "good", "fail", "what", "append",
    "substr", "length", "load", "store", "fetch_add", "exchange", "sizeof", "offsetof", "swap", "std::swap",
    "ceil", "floor", "sqrt", "exp", "log", "pow", "abs", "fabs", "isdigit", "getenv", "exists", "path"})


# ---- one file -----------------------------------------------------------------------------------


class _Fn:
    @property
    def idents(self) -> dict[str, list]:
        """The function's identifiers by name (not those of functions and lambdas inside it), found
        when first asked (most functions never are)."""
        if self._idents is None:
            import tree_sitter as ts

            from shaderlint.model.build import captures

            q = _IDENT_QUERY.get(id(self.lang))
            if q is None:
                q = _IDENT_QUERY[id(self.lang)] = ts.Query(self.lang, "(identifier) @i")
            got = captures(q, self.node).get("i", [])
            starts: list[int] = []  # the nested ones' byte ranges, merged, in order
            ends: list[int] = []
            for a, b in sorted((n.start_byte, n.end_byte) for n in self.nested):
                if ends and a <= ends[-1]:
                    ends[-1] = max(ends[-1], b)
                else:
                    starts.append(a)
                    ends.append(b)
            out: dict[str, list] = {}
            for n in got:
                i = bisect.bisect_right(starts, n.start_byte) - 1
                if i >= 0 and n.start_byte < ends[i]:
                    continue
                out.setdefault(text(n), []).append(n)
            self._idents = out
        return self._idents

    __slots__ = ("node", "name", "lam", "parent", "params", "body", "locals", "calls", "assigns",
                 "returns", "literals", "concats", "creates", "binds", "dispatches", "lambdas", "create_ids",
                 "local_memo", "nested", "_idents", "lang", "inits", "writes", "refs", "straight", "bound")

    def __init__(self, node, name: str, lam: bool, parent: "_Fn | None") -> None:
        self.node = node
        self.name = name
        self.lam = lam
        self.parent = parent
        self.params: dict[str, int] = {}
        self.body = node.child_by_field_name("body")
        self.locals: dict[str, list] = {}  # name -> declarators
        self._idents: dict[str, list] | None = None
        self.lang = None
        self.inits: list = []
        self.writes: set[str] = set()  # names assigned, incremented or whose address is taken
        self.straight: set[int] | None = None  # ids of the nodes that run whenever the function does
        self.bound: set[str] = set()  # names bound by a range `for` or a `catch` (not read here)
        self.refs: list = []  # what references are bound to (`T& r = x.f;`: x.f may be written through r)
        self.nested: list = []  # the functions and lambdas defined inside (their names are theirs)
        self.calls: list = []
        self.assigns: list = []
        self.returns: list = []
        self.literals: list = []
        self.concats: list = []
        self.creates: list = []
        self.binds: list = []
        self.dispatches: list = []
        self.lambdas: dict[str, "_Fn"] = {}
        self.create_ids: set[int] = set()
        self.local_memo: dict[str, object] = {}


def _param_names(fn_node) -> list[str]:
    d = fn_node.child_by_field_name("declarator")
    while d is not None and d.type not in ("function_declarator", "abstract_function_declarator"):
        d = d.child_by_field_name("declarator")
    plist = d.child_by_field_name("parameters") if d is not None else None
    if plist is None:
        return []
    out = []
    for p in plist.named_children:
        if p.type not in ("parameter_declaration", "optional_parameter_declaration"):
            if p.type == "comment":
                continue
            out.append("")
            continue
        x = p.child_by_field_name("declarator")
        while x is not None and x.type != "identifier" and x.child_by_field_name("declarator") is not None:
            x = x.child_by_field_name("declarator")
        if x is not None and x.type != "identifier":
            x = next((c for c in x.named_children if c.type == "identifier"), None)
        out.append(text(x) if x is not None and x.type == "identifier" else "")
    return out


def _fn_name(fn_node) -> str:
    d = fn_node.child_by_field_name("declarator")
    while d is not None and d.type != "function_declarator":
        d = d.child_by_field_name("declarator")
    d = d.child_by_field_name("declarator") if d is not None else None
    if d is None:
        return ""
    if d.type in ("qualified_identifier",):
        while d is not None and d.type == "qualified_identifier":
            d = d.child_by_field_name("name")
    return text(d) if d is not None and d.type in ("identifier", "field_identifier") else ""


def _declared_name(d) -> str:
    d = _declared_node(d)
    return text(d) if d is not None and d.type == "identifier" else ""


def summarise(tree, consts, lines, budget: list[int], create_names, dispatch_names,
              hpp_dispatch_names, data: bytes, record):
    """The :class:`VulkanSummary` of one parsed file, or None when it has nothing to say."""
    root = tree.root_node
    fns: list[_Fn] = []
    complete = True
    from shaderlint.host._c import document_order
    subscripts: dict[str, int] = {}  # `X[k] = …` assignments in the file, by X
    from shaderlint.host._c import _Enclosing
    from shaderlint.model.build import captures

    query = _QUERY.get(id(tree.language))
    if query is None:
        import tree_sitter as ts

        query = _QUERY[id(tree.language)] = ts.Query(tree.language, _QUERY_TEXT)
    got = captures(query, root)
    # (`+` tested here: `(binary_expression operator: "+")` takes the query time quadratic in a chain's length)
    got["cat"] = [n for n in got.get("cat", ()) if text(n.child_by_field_name("operator")) == "+"]
    budget[0] -= sum(len(v) for v in got.values())
    if budget[0] < 0:
        return {"fns": [], "complete": False}
    heads = sorted(got.get("fn", []) + got.get("lam", []), key=lambda n: (n.start_byte, -n.end_byte))
    enclosing = _Enclosing(heads)
    by_id: dict[int, _Fn] = {}
    for node in heads:  # (outer functions first: a lambda's parent is made before it)
        outer = enclosing.of(node.parent) if node.parent is not None else None
        parent = by_id.get(outer.id) if outer else None
        if node.type == "function_definition":
            fn = _Fn(node, _fn_name(node), False, parent)
        else:
            up = node.parent
            name = _declared_name(up.child_by_field_name("declarator")) \
                if up is not None and up.type == "init_declarator" else ""
            fn = _Fn(node, name, True, parent)
            if name and parent is not None:
                parent.lambdas[name] = fn
        fn.params = {n: i for i, n in enumerate(_param_names(node)) if n}
        fn.lang = tree.language
        if parent is not None:
            parent.nested.append(node)
        by_id[node.id] = fn
        fns.append(fn)

    def owner(node) -> _Fn | None:
        f = enclosing.of(node)
        return by_id.get(f.id) if f else None

    refs = []
    for node in got.get("decl", ()):
        fn = owner(node)
        if fn is not None:
            for d in node.children_by_field_name("declarator"):
                r = d.child_by_field_name("declarator") if d.type == "init_declarator" else None
                if r is not None and r.type == "reference_declarator" and d.child_by_field_name("value") is not None:
                    fn.refs.append(d.child_by_field_name("value"))
                    refs.append(_base(unparen(d.child_by_field_name("value"))))
                nm = _declared_name(d)
                if nm:
                    fn.locals.setdefault(nm, []).append(d)
    for node in document_order(got.get("call", [])):
        fn = owner(node)
        if fn is None:
            continue
        fn.calls.append(node)
        name = callee_name(node)
        if name in create_names:
            fn.creates.append(node)
        elif name in dispatch_names:
            fn.dispatches.append(node)
        elif name in hpp_dispatch_names:
            f = node.child_by_field_name("function")
            if f is not None and f.type == "field_expression":
                fn.dispatches.append(node)
        elif name in ("vkCmdBindPipeline", "bindPipeline"):
            fn.binds.append(node)
    for node in got.get("assign", ()):
        fn = owner(node)
        if fn is None:
            continue
        fn.assigns.append(node)
        left = node.child_by_field_name("left")
        if left is not None and left.type == "subscript_expression":
            base = text(left.child_by_field_name("argument"))
            subscripts[base] = subscripts.get(base, 0) + 1
    for node in got.get("write", []) + [_base(n) for n in got.get("part", ())] + refs:
        # (a part written, `p.x = …`, `&p.x`: the variable's value is not its caller's; a lambda's
        # writes are its enclosing functions' too: captures)
        if node is None or node.type != "identifier":
            continue
        fn = owner(node)
        name = text(node)
        while fn is not None:
            fn.writes.add(name)
            fn = fn.parent
    for node in got.get("bound", ()):
        fn = owner(node)
        if fn is not None:
            names = node.named_children if node.type == "structured_binding_declarator" else [_declared_node(node)]
            fn.bound.update(text(n) for n in names if n is not None and n.type == "identifier")
    for node in got.get("init", ()):  # `: pipe_(p)`, `{.pipe = p}`: members given a value
        fn = owner(node)
        if fn is not None:
            fn.inits.append(node)
    for node in got.get("ret", ()):
        fn = owner(node)
        if fn is not None:
            fn.returns.append(node)
    # operands of a `+` (by id: `node.parent` costs the node's depth, a chain's length)
    operands = {c.id for n in got["cat"] for c in (n.child_by_field_name("left"), n.child_by_field_name("right"))
                if c is not None}
    for node in got.get("str", ()):
        if node.id in operands:
            continue
        fn = owner(node)
        if fn is not None:
            fn.literals.append(node)
    for node in got["cat"]:
        if node.id in operands:
            continue
        fn = owner(node)
        if fn is not None:
            fn.concats.append(node)
    reader = _Reader(consts, lines, data, subscripts, record)
    out_fns = []
    for fn in fns:
        got = reader.function(fn)
        if got is not None:
            out_fns.append(got)
    if not out_fns and complete:
        return None
    return {"fns": out_fns, "complete": complete}


class _Reader:
    def __init__(self, consts, lines, data: bytes, subscripts: dict[str, int], record) -> None:
        self.record = record
        self.consts = consts
        self.lines = lines
        self.data = data
        self.subscripts = subscripts

    # -- values
    def ev(self, fn: _Fn, n, depth: int = 0):
        if n is None or depth > 10:
            return None
        n = unparen(n)
        t = n.type
        if t == "string_literal":
            if any(c.type not in ("string_content", '"') for c in n.children):
                return None  # (escapes, raw strings: not read)
            return ["s", "".join(text(c) for c in n.named_children if c.type == "string_content")]
        if t == "concatenated_string":
            parts = [self.ev(fn, c, depth + 1) for c in n.named_children]
            if all(p is not None and p[0] == "s" for p in parts):
                return ["s", "".join(p[1] for p in parts)]  # type: ignore[index]
            return None
        if t == "identifier":
            name = text(n)
            if name in fn.params:
                return ["p", fn.params[name], ""] if not self._written(fn, name) else None
            if name in fn.locals:
                return self.local(fn, name, depth + 1)
            if fn.lam or name in fn.bound:
                return None  # (a capture, a loop's variable: not followed)
            v = self.consts.value(n)
            return None if v is None else ["i", v]
        if t == "field_expression":
            base = self.ev(fn, n.child_by_field_name("argument"), depth + 1)
            field = text(n.child_by_field_name("field"))
            if base is None:
                return None
            if base[0] == "p":
                return ["p", base[1], (base[2] + "." + field) if base[2] else field]
            if base[0] == "st":
                return base[1].get(field)
            return None
        if t == "call_expression":
            name = callee_name(n)
            a = args_of(n)
            f = n.child_by_field_name("function")
            if name in ("c_str", "data", "string", "str") and not a and f is not None and f.type == "field_expression":
                return self.ev(fn, f.child_by_field_name("argument"), depth + 1)
            if name in _WRAP and len(a) == 1:
                return self.ev(fn, a[0], depth + 1)
            return None
        if t == "number_literal" or t in ("binary_expression", "unary_expression", "cast_expression"):
            v = self.consts.value(n)
            return None if v is None else ["i", v]
        return None

    def _written(self, fn: _Fn, name: str) -> bool:
        return name in fn.writes

    def local(self, fn: _Fn, name: str, depth: int):
        if name in fn.local_memo:
            return fn.local_memo[name]
        got = fn.local_memo[name] = self._local(fn, name, depth)
        return got

    def _local(self, fn: _Fn, name: str, depth: int):
        decls = fn.locals.get(name, [])
        if len(decls) != 1:
            return None
        d = decls[0]
        init = d.child_by_field_name("value") if d.type == "init_declarator" else None
        if init is not None and init.type not in ("initializer_list", "argument_list"):
            if self._written(fn, name):
                return None
            return self.ev(fn, init, depth + 1)
        # a struct filled field by field
        fields: dict[str, object] = {}
        if init is not None:
            items = [c for c in init.named_children if c.type != "comment"]
            if items and not all(c.type == "initializer_pair" for c in items):
                return None
            for c in items:
                key = text(c.child_by_field_name("designator")).lstrip(".")
                fields[key] = self.ev(fn, c.child_by_field_name("value"), depth + 1)
        seen: set[str] = set()
        passed = 0
        passed_at = -1
        last_write = last_read = -1
        for ident in fn.idents.get(name, ()):
            p = ident.parent
            if p is None or ident == _declared_node(d):
                continue
            if p.type == "field_expression" and p.child_by_field_name("argument") == ident:
                q = p.parent
                field = text(p.child_by_field_name("field"))
                if q is not None and q.type == "assignment_expression" and q.child_by_field_name("left") == p:
                    if text(q.child_by_field_name("operator")) != "=" or field in seen or not _straight(q, fn):
                        fields[field] = None
                    else:
                        fields[field] = self.ev(fn, q.child_by_field_name("right"), depth + 1)
                    seen.add(field)
                    last_write = max(last_write, q.start_byte)
                    continue
                if q is not None and q.type in ("call_expression",) and q.child_by_field_name("function") == p:
                    return None  # a method called on it may change it
                if _written_part(p) is not None:
                    fields[field] = None  # `d.f++`, `&d.f`, `d.f.g = …`: changed another way
                    seen.add(field)
                last_read = max(last_read, ident.start_byte)
                continue  # a field read
            if p.type == "argument_list":
                passed += 1
                passed_at = ident.start_byte
                continue
            return None  # assigned, address taken, ...: not followed
        if passed > 1 or passed_at < last_write or passed and last_read > passed_at:
            return None  # (handed to two calls, filled in after the call, or read after it: it may have changed it)
        return ["st", fields]

    def origin(self, fn: _Fn, n, calls: dict[int, int], creates: set[int], depth: int = 0):
        """Where a pipeline value comes from (see the module): ``["c", k, field]`` (field ``field`` of
        call ``k``'s result, ``""``: the result), ``["k", field]`` (a struct whose ``field`` is the
        pipeline this function creates, ``""``: that pipeline), ``["p", i, chain]``, ``["f", name]``."""
        if n is None or depth > 6:
            return None
        n = unparen(n)
        t = n.type
        if t == "call_expression":
            if n.id in creates:
                return ["k", ""]
            k = calls.get(n.id)
            return None if k is None else ["c", k, ""]
        if t == "field_expression":
            base = unparen(n.child_by_field_name("argument"))
            field = text(n.child_by_field_name("field"))
            if base is not None and (base.type == "call_expression"
                                     or base.type == "identifier" and text(base) in fn.locals):
                got = self.origin(fn, base, calls, creates, depth + 1)
                if got is None or got[0] in ("f", "p"):
                    return ["f", field] if base.type == "identifier" else None
                if got[0] == "k":
                    return ["k", ""] if got[1] == field or (not got[1] and field == "value") else None
                if got[0] == "c":
                    return ["c", got[1], field] if not got[2] else None
                return None
            if base is not None and base.type == "identifier" and text(base) in fn.params:
                return ["p", fn.params[text(base)], field]
            return ["f", field]
        if t == "identifier":
            name = text(n)
            if name in fn.params:
                return ["p", fn.params[name], ""] if not self._written(fn, name) else None
            if name in fn.locals:
                decls = fn.locals[name]
                if len(decls) != 1:
                    return None
                d = decls[0]
                init = d.child_by_field_name("value") if d.type == "init_declarator" else None
                writes = self._pipe_writes(fn, name)
                if writes is None:
                    return None
                if init is not None and init.type not in ("initializer_list", "argument_list"):
                    if writes:
                        return None
                    return self.origin(fn, init, calls, creates, depth + 1)
                if len(writes) == 1:
                    return writes[0]
                return None
            if fn.lam or name in fn.bound:
                return None
            return ["f", name]  # a member (or a global)
        return None

    def _pipe_writes(self, fn: _Fn, name: str) -> list | None:
        key = "\0w" + name
        if key not in fn.local_memo:
            fn.local_memo[key] = self._find_pipe_writes(fn, name)
        return fn.local_memo[key]  # type: ignore[return-value]

    def _find_pipe_writes(self, fn: _Fn, name: str) -> list | None:
        """How local ``name`` is written as the output of this function's creation (``&name`` ->
        ``["k", ""]``, ``&name.pipeline`` -> ``["k", "pipeline"]``); None when it (or that field) is
        written any other way."""
        out = []
        other_fields = []
        for ident in fn.idents.get(name, ()):
            p = ident.parent
            if p is not None and p.type == "assignment_expression" and p.child_by_field_name("left") == ident:
                return None
            field = ""
            q = p
            if p is not None and p.type == "field_expression" and p.child_by_field_name("argument") == ident:
                field = text(p.child_by_field_name("field"))
                q = p.parent
                if q is not None and q.type == "assignment_expression" and q.child_by_field_name("left") == p:
                    other_fields.append(field)
                    continue
            if q is not None and q.type == "pointer_expression" and text(q.child_by_field_name("operator")) == "&":
                al = q.parent
                call = al.parent if al is not None and al.type == "argument_list" else None
                if call is not None and call.type == "call_expression" and call.id in fn.create_ids:
                    out.append(["k", field])
                    continue
                if not field:
                    return None  # the whole variable handed to another call
                other_fields.append(field)
        if any(o[1] in other_fields or not o[1] and other_fields for o in out):
            return None
        return out

    # -- one function
    def function(self, fn: _Fn) -> dict | None:
        fn.create_ids = {c.id for c in fn.creates}
        return self._function(fn, {}, [], fn.create_ids)

    def _function(self, fn: _Fn, calls_idx: dict[int, int], calls_out: list, creates: set[int]) -> dict | None:
        # calls with their argument values
        fn_calls = []
        for c in fn.calls:
            if c.id in creates:
                continue
            name = callee_name(c)
            if not name or name.startswith("vk") or name in _WRAP:
                continue
            calls_idx[c.id] = len(fn_calls)
            fn_calls.append(c)
            row = self._call_row(fn, c)
            calls_out.append(None if row[3] is None and (name in _NOISE or not any(row[1])) else row)
        sinks = []
        for lit in fn.literals:
            v = self.ev(fn, lit)
            if v is not None and _suffix(v[1]):
                sfx = _suffix(v[1])
                sinks.append(["path", "", ["s", v[1][:len(v[1]) - len(sfx)]], sfx])
        for cat in fn.concats:
            got = self._concat(fn, cat)
            if got is not None:
                sinks.append(got)
        stores = []
        for a in fn.assigns:
            left = unparen(a.child_by_field_name("left"))
            if left is None:
                continue
            field = None
            if left.type == "field_expression":
                field = text(left.child_by_field_name("field"))
                if self._value_local(fn, left.child_by_field_name("argument")):
                    stores.append([field, None])  # a local struct's field: not traced (it may be copied to a member)
                    continue
            elif left.type == "identifier" and text(left) not in fn.locals and text(left) not in fn.params \
                    and text(left) not in fn.bound and not fn.lam:
                field = text(left)
            if field is None:
                continue
            o = self.origin(fn, a.child_by_field_name("right"), calls_idx, creates)
            stores.append([field, o if o is not None and (o[0] == "c" or o == ["k", ""]) and _straight(a, fn) else None])
        for n in fn.inits:  # members initialised (constructors' lists, designated initializers): never traced
            if n.type == "field_initializer":
                name = next((text(c) for c in n.named_children if c.type == "field_identifier"), "")
            else:
                d = n.child_by_field_name("designator")
                name = text(d).lstrip(".") if d is not None and d.type == "field_designator" else ""
            if name:
                stores.append([name, None])
        for c in fn.creates:  # `vkCreateComputePipelines(…, &this->pipe)`: a member written by the creation
            a = args_of(c)
            out_arg = unparen(a[5]) if callee_name(c) == "vkCreateComputePipelines" and len(a) == 6 else None
            if out_arg is not None and out_arg.type == "pointer_expression":
                target = unparen(out_arg.child_by_field_name("argument"))
                if target is not None and target.type == "field_expression":
                    local = self._value_local(fn, target.child_by_field_name("argument"))
                    stores.append([text(target.child_by_field_name("field")),
                                   ["k", ""] if _straight(c, fn) and not local else None])
                elif target is not None and target.type == "identifier" and text(target) not in fn.locals \
                        and text(target) not in fn.params and not fn.lam:
                    stores.append([text(target), ["k", ""] if _straight(c, fn) else None])
        # members another call may write (`f(&k.pipe)`) or a reference may (`VkPipeline& r = k.pipe;`)
        handed = [a.child_by_field_name("argument") for c in fn.calls if c.id not in creates for a in args_of(c)
                  if a.type == "pointer_expression" and text(a.child_by_field_name("operator")) == "&"]
        handed += fn.refs
        for target in handed:
            target = unparen(target) if target is not None else None
            if target is not None and target.type == "field_expression":
                stores.append([text(target.child_by_field_name("field")), None])
            elif target is not None and target.type == "identifier" and text(target) not in fn.locals \
                    and text(target) not in fn.params and not fn.lam:
                stores.append([text(target), None])
        rets = [self._ret(fn, r, calls_idx, creates) for r in fn.returns]
        dispatches = []
        if fn.dispatches:
            compute_binds = [b for b in fn.binds if _compute_bind(b)]
            pipe = None
            # one bind, always run, before every dispatch (else a dispatch may run what was bound before)
            if len(compute_binds) == 1 and len(fn.binds) == 1 and _straight(compute_binds[0], fn) \
                    and all(compute_binds[0].end_byte <= d.start_byte for d in fn.dispatches):
                ba = args_of(compute_binds[0])
                pipe = self.origin(fn, ba[-1] if ba else None, calls_idx, creates)
                if pipe is not None and pipe[0] == "p" and pipe[2]:
                    pipe = ["f", pipe[2].rsplit(".", 1)[-1]]  # (a field of a parameter: by the field's name)
            if pipe is not None:
                dispatches = [{"pipe": pipe, "launch": self.record(d)} for d in fn.dispatches]
        creates_out = None
        if fn.creates:
            count = 0
            for c in fn.creates:
                n = 1
                if callee_name(c) == "vkCreateComputePipelines":
                    a = args_of(c)
                    n = self.consts.value(a[2]) if len(a) > 2 else None  # type: ignore[assignment]
                count += n if n is not None and n >= 1 else 2
            spec = self.spec(fn, fn.creates[0]) if count == 1 else None
            creates_out = {"count": count, "at": _span(self.lines, fn.creates[0]), "spec": spec}
        referenced = {o[1] for _, o in stores if o is not None and o[0] == "c"}
        referenced |= {r[1] for r in rets if r is not None and r[0] == "c"}
        referenced |= {r[2][1] for r in rets if r is not None and r[0] == "cache" and r[2][0] == "c"}
        while calls_out and calls_out[-1] is None:
            calls_out.pop()
        if not any(calls_out) and not (sinks or stores or dispatches or creates_out) \
                and not any(rets) and not fn.lam:
            return {"id": fn.node.start_byte, "name": fn.name}
        for k in referenced:  # (a call only its result makes interesting: recorded with its arguments)
            if k < len(calls_out) and calls_out[k] is None:
                calls_out[k] = self._call_row(fn, fn_calls[k])
        out = {"id": fn.node.start_byte, "name": fn.name, "calls": calls_out, "n": len(_param_names(fn.node))}
        for key, val in (("lambda", fn.lam), ("sinks", sinks), ("stores", stores), ("rets", rets if any(rets) else []),
                         ("dispatches", dispatches), ("creates", creates_out)):
            if val:
                out[key] = val
        return out

    def _value_local(self, fn: _Fn, base) -> bool:
        """``base`` is a local variable of the function held by value (not a reference or pointer)."""
        base = unparen(base) if base is not None else None
        if base is None or base.type != "identifier" or text(base) not in fn.locals:
            return False
        d = fn.locals[text(base)][0]
        d = d.child_by_field_name("declarator") if d.type == "init_declarator" else d
        return d is not None and d.type == "identifier"

    def _call_row(self, fn: _Fn, c) -> list:
        """``[name, argument values, span, lambda id or None]``."""
        name = callee_name(c)
        vals = []
        for a in args_of(c):
            v = self.ev(fn, a)
            if v is None and not (a.type == "identifier" and text(a) in fn.locals):
                v = self.origin(fn, a, {}, set())  # (a pipeline handed on: a parameter's or a member)
                v = v if v is not None and v[0] in ("p", "f") else None
            vals.append(v)
        local = None
        f = c.child_by_field_name("function")
        scope: _Fn | None = fn
        while scope is not None and local is None and f is not None and f.type == "identifier":
            local = scope.lambdas.get(name)
            scope = scope.parent
        return [name, vals, _span(self.lines, c), None if local is None else local.node.start_byte]

    def _ret(self, fn: _Fn, r, calls_idx, creates):
        e = r.named_children[0] if r.named_children else None
        if e is None:
            return None
        o = self.origin(fn, e, calls_idx, creates)
        if o is not None and o[0] in ("c", "k"):
            return o
        # `return it->second.pipeline;` with `auto it = X.find(K);` and `X[K] = <the creation>;`
        e = unparen(e)
        base = e
        while base is not None and base.type in ("field_expression", "subscript_expression"):
            base = unparen(base.child_by_field_name("argument"))
        if base is None or base.type != "identifier" or text(base) not in fn.locals:
            return None
        decls = fn.locals[text(base)]
        init = decls[0].child_by_field_name("value") if len(decls) == 1 and decls[0].type == "init_declarator" else None
        if init is None or init.type != "call_expression" or callee_name(init) != "find":
            return None
        f = init.child_by_field_name("function")
        a = args_of(init)
        if f is None or f.type != "field_expression" or len(a) != 1:
            return None
        table = text(f.child_by_field_name("argument"))
        key = text(a[0])
        if self.subscripts.get(table) != 1 or re.search(
                rb"\b" + re.escape(table.encode()) + rb"\s*(\.|->)\s*(emplace|insert|try_emplace|insert_or_assign|swap)\b",
                self.data):
            return None
        for a2 in fn.assigns:
            left = unparen(a2.child_by_field_name("left"))
            if left is not None and left.type == "subscript_expression" \
                    and text(left.child_by_field_name("argument")) == table:
                idx = left.child_by_field_name("indices") or left.child_by_field_name("index")
                ktext = text(idx).strip("[]") if idx is not None else ""
                o = self.origin(fn, a2.child_by_field_name("right"), calls_idx, creates)
                if ktext == key and o is not None and o[0] in ("c", "k") and _straight(a2, fn):
                    field = text(e.child_by_field_name("field")) if e.type == "field_expression" else ""
                    if field == "second":
                        field = ""
                    if field and (o[0] == "c" and o[2] or o[0] == "k" and o[1] != field):
                        return None
                    return ["cache", self.ev(fn, a[0]), ["c", o[1], field] if o[0] == "c" else ["k", ""]]
        return None

    def _concat(self, fn: _Fn, cat):
        ops = []
        stack = [cat]
        while stack:
            n = unparen(stack.pop())
            if n.type == "binary_expression" and text(n.child_by_field_name("operator")) == "+":
                stack.append(n.child_by_field_name("right"))
                stack.append(n.child_by_field_name("left"))
            else:
                ops.append(n)
        if len(ops) < 2 or len(ops) > 12:
            return None
        last = self.ev(fn, ops[-1])
        if last is None or last[0] != "s":
            return None
        sfx = _suffix(last[1])
        if not sfx:
            return None
        lit = last[1][:len(last[1]) - len(sfx)]
        vals = [self.ev(fn, o) for o in ops[:-1]]
        if lit and not lit.endswith("/"):
            stem = ["s", lit.rsplit("/", 1)[-1]]
            pre_vals = vals + [["s", lit[:len(lit) - len(stem[1])]]]
        elif lit:
            return None  # the name is before a directory: not read
        else:
            stem = vals[-1]
            pre_vals = vals[:-1]
            if stem is None or stem[0] not in ("s", "p"):
                return None
        prefix: str | None = ""
        for v in pre_vals:
            if v is None or v[0] != "s" or prefix is None:
                prefix = None
            else:
                prefix += v[1]
        return ["path", prefix, stem, sfx]

    # -- specialization constants
    def spec(self, fn: _Fn, create) -> dict | None:
        """The creation's specialization as a template: ``{"e": [[id, offset, size, conds]], "d":
        [[value, conds]] | None}``, ``{}`` when the function sets none; None when not read."""
        body = fn.body
        btext = text(body) if body is not None else ""
        if "pecialization" not in btext:
            # the create info and its stage must be the function's own, filled here (else they may
            # carry constants set elsewhere)
            return {} if self._own_info(fn, create) else None
        if not self._local_info(fn, create):
            return None
        infos = [d for name, ds in fn.locals.items() for d in ds if _decl_type(d).endswith("SpecializationInfo")]
        if len(infos) != 1:
            return None
        info = infos[0]
        info_name = _declared_name(info)
        fields = self._struct_fields(fn, info, info_name, ("mapEntryCount", "pMapEntries", "dataSize", "pData"))
        if fields is None or fields.get("pMapEntries") is None or fields.get("pData") is None:
            return None
        # the info is used by the creation only as `pSpecializationInfo = &info` (or `e.empty() ? nullptr : &info`)
        entries_name = _container(fields["pMapEntries"])
        data_name = _container(fields["pData"])
        if not entries_name or not data_name:
            return None
        entries = self._entries(fn, entries_name)
        words = self._words(fn, data_name)
        if entries is None or words is None or not self._counts(fields.get("mapEntryCount"), entries_name, entries):
            return None
        uses = [i for i in fn.idents.get(info_name, ()) if i != _declared_node(info)]
        for u in uses:
            p = u.parent
            if p is not None and p.type == "field_expression" and p.parent is not None \
                    and p.parent.type == "assignment_expression" and p.parent.child_by_field_name("left") == p:
                continue  # (a field set: read above)
            if not (p is not None and p.type == "pointer_expression"):
                return None
        return {"e": entries, "d": words}

    def _counts(self, n, name: str, entries: list) -> bool:
        """``mapEntryCount`` is ``n``: the entries' ``size()`` (``sizeof(e) / …``), or their number when
        they are all set unconditionally (else the map may use fewer of them than are read)."""
        n = unparen(n) if n is not None else None
        while n is not None and (n.type == "cast_expression" or n.type == "call_expression"
                                 and callee_name(n) == "static_cast" and len(args_of(n)) == 1):
            n = unparen(n.child_by_field_name("value") if n.type == "cast_expression" else args_of(n)[0])
        if n is None:
            return False
        if n.type == "call_expression" and callee_name(n) == "size" and not args_of(n):
            f = n.child_by_field_name("function")
            return f is not None and f.type == "field_expression" and text(f.child_by_field_name("argument")) == name
        if n.type == "binary_expression" and text(n.child_by_field_name("operator")) == "/":
            left = unparen(n.child_by_field_name("left"))
            return left is not None and left.type == "sizeof_expression" and text(left).replace(" ", "") in (
                f"sizeof({name})", f"sizeof{name}")
        return self.consts.value(n) == len(entries) and not any(e[3] for e in entries)

    def _own_info(self, fn: _Fn, create) -> bool:
        """The creation's create info is a local variable filled field by field here, its stage
        too, or assigned whole from a local stage filled so (never from another value, nor handed
        to another call)."""
        return self._filled(fn, self._info_arg(create), create.id, True)

    def _filled(self, fn: _Fn, var, user: int, info: bool) -> bool:
        """``var`` is a local struct set only field by field (after an empty or designated
        initializer), used whole only by the node ``user`` (a creation, or the assignment of a
        create info's stage); with ``info``, its ``stage`` is so too."""
        if var is None or var.type != "identifier" or len(fn.locals.get(text(var), ())) != 1:
            return False
        d = fn.locals[text(var)][0]
        init = d.child_by_field_name("value") if d.type == "init_declarator" else None
        if init is not None and init.type == "compound_literal_expression":
            init = init.child_by_field_name("value")  # (`T{ .a = … }`)
        if init is not None:
            items = [c for c in init.named_children if c.type != "comment"] if init.type == "initializer_list" else None
            if items is None or not all(c.type == "initializer_pair" for c in items):
                return False
            for c in items:
                if info and text(c.child_by_field_name("designator")).lstrip(".") == "stage":
                    v = unparen(c.child_by_field_name("value"))
                    if v.type != "initializer_list" and not self._filled(fn, v, c.id, False):
                        return False
        for ident in fn.idents.get(text(var), ()):
            if ident == _declared_node(d):
                continue
            p = ident.parent
            if p is not None and p.type == "field_expression" and p.child_by_field_name("argument") == ident:
                q = p.parent
                if not info or text(p.child_by_field_name("field")) != "stage" or q is not None and q.type == "field_expression":
                    continue  # (`ci.layout`, `ci.stage.module`: a field read or set)
                if q is not None and q.type == "assignment_expression" and q.child_by_field_name("left") == p \
                        and self._filled(fn, unparen(q.child_by_field_name("right")), q.id, False):
                    continue  # (`ci.stage = st;`, `st` a stage filled here)
                return False  # the stage set from another value, or handed on
            up = p.parent if p is not None and p.type == "pointer_expression" else p  # (`&ci`)
            while up is not None and up.type in ("argument_list", "initializer_pair", "assignment_expression"):
                if up.id == user:
                    break
                up = up.parent
            if up is not None and up.id == user:
                continue
            return False
        return True

    @staticmethod
    def _info_arg(create):
        """The create info a creation is given (``&`` taken off)."""
        a = args_of(create)
        ci = a[3] if callee_name(create) == "vkCreateComputePipelines" and len(a) == 6 else a[1] if len(a) >= 2 else None
        ci = unparen(ci) if ci is not None else None
        if ci is not None and ci.type == "pointer_expression":
            ci = unparen(ci.child_by_field_name("argument"))
        return ci

    def _local_info(self, fn: _Fn, create) -> bool:
        ci = self._info_arg(create)
        # (a create info handed in by the caller carries whatever constants the caller set)
        return ci is not None and not (ci.type == "identifier" and text(ci) in fn.params)

    def _struct_fields(self, fn: _Fn, decl, name: str, keys: tuple[str, ...]) -> dict | None:
        init = decl.child_by_field_name("value") if decl.type == "init_declarator" else None
        out: dict = {}
        if init is not None and init.type == "initializer_list":
            items = [c for c in init.named_children if c.type != "comment"]
            if items and all(c.type == "initializer_pair" for c in items):
                for c in items:
                    out[text(c.child_by_field_name("designator")).lstrip(".")] = c.child_by_field_name("value")
            elif len(items) == 4:
                out = dict(zip(keys, items))
            elif items:
                return None
        for ident in fn.idents.get(name, ()):
            p = ident.parent
            if p is not None and p.type == "field_expression":
                q = p.parent
                if q is not None and q.type == "assignment_expression" and q.child_by_field_name("left") == p:
                    f = text(p.child_by_field_name("field"))
                    if f in out or not _straight(q, fn):
                        return None
                    out[f] = q.child_by_field_name("right")
        return out

    def _conds(self, fn: _Fn, node) -> list | None:
        """The ``if`` conditions ``node`` runs under (each ``[a, op, b]``), None when not read (a loop,
        an ``else``, a condition that is not a comparison of values read here)."""
        out = []
        p = node
        while p is not None and p != fn.body:
            q = p.parent
            if q is None:
                return None
            if q.type in ("for_statement", "for_range_loop", "while_statement", "do_statement", "switch_statement",
                          "lambda_expression", "conditional_expression", "try_statement", "catch_clause"):
                return None
            if q.type == "if_statement":
                if q.child_by_field_name("consequence") != p:
                    return None  # the else branch (or the condition itself)
                cond = q.child_by_field_name("condition")
                e = unparen(cond.named_children[0]) if cond is not None and cond.named_children else None
                if e is None or e.type != "binary_expression" or text(e.child_by_field_name("operator")) not in _COMPARE:
                    return None
                a = self.ev(fn, e.child_by_field_name("left"))
                b = self.ev(fn, e.child_by_field_name("right"))
                if a is None or b is None or a[0] not in ("i", "p") or b[0] not in ("i", "p"):
                    return None
                out.append([a, text(e.child_by_field_name("operator")), b])
            p = q
        return out

    def _entries(self, fn: _Fn, name: str) -> list | None:
        decls = fn.locals.get(name, [])
        if len(decls) != 1 or "SpecializationMapEntry" not in _decl_type(decls[0]):
            return None
        d = decls[0]
        out = []
        init = d.child_by_field_name("value") if d.type == "init_declarator" else None
        if init is not None:
            conds = self._conds(fn, d)
            if conds is None or init.type != "initializer_list":
                return None
            items = [c for c in init.named_children if c.type != "comment"]
            rows = items if items and all(c.type == "initializer_list" for c in items) else [init] if items else []
            for row in rows:
                e = self._entry(row)
                if e is None:
                    return None
                out.append([*e, conds])
        for ident in fn.idents.get(name, ()):
            if ident == _declared_node(d):
                continue
            p = ident.parent
            if p is not None and p.type == "field_expression" and p.parent is not None \
                    and p.parent.type == "call_expression":
                method = text(p.child_by_field_name("field"))
                call = p.parent
                if method in ("size", "empty", "reserve") or method == "data" and _pointer_field(p.parent):
                    continue
                if method in ("push_back", "emplace_back"):
                    a = args_of(call)
                    row = a[0] if len(a) == 1 and a[0].type == "initializer_list" else None
                    e = self._entry(row) if row is not None else None
                    if e is None and method == "emplace_back" and len(a) == 3:
                        e = self._entry_items(a)
                    conds = self._conds(fn, call)
                    if e is None or conds is None:
                        return None
                    out.append([*e, conds])
                    continue
                return None
            if p is not None and p.type == "assignment_expression" and p.child_by_field_name("left") == ident:
                return None  # `entries = {…}`: what it replaces is not followed
            if p is not None and p.type in ("initializer_pair", "assignment_expression", "initializer_list") \
                    or _in_sizeof(ident):
                continue  # `.pMapEntries = entries` (an array)
            return None
        return out

    def _entry(self, row) -> tuple[int, int, int] | None:
        items = [c for c in row.named_children if c.type != "comment"]
        if items and all(c.type == "initializer_pair" for c in items):
            vals = {text(c.child_by_field_name("designator")).lstrip("."): c.child_by_field_name("value")
                    for c in items}
            return self._entry_items([vals.get("constantID"), vals.get("offset"), vals.get("size")])
        if len(items) == 3:
            return self._entry_items(items)
        return None

    def _entry_items(self, items) -> tuple[int, int, int] | None:
        got = []
        for n in items:
            if n is None:
                return None
            n = unparen(n)
            if n.type == "sizeof_expression":
                inner = n.child_by_field_name("type") or n.child_by_field_name("value")
                got.append(4 if inner is not None and text(inner).strip("() ") in _INT_TYPES + ("float",) else None)
            else:
                got.append(self.consts.value(n))
        if any(v is None for v in got):
            return None
        return got[0], got[1], got[2]  # type: ignore[return-value]

    def _words(self, fn: _Fn, name: str) -> list | None:
        """The data words, each ``[value, conds]``; None when not read. One source of values only: the
        declaration's initializer, one assignment ``= {…}``, or ``push_back``s."""
        decls = fn.locals.get(name, [])
        if len(decls) != 1:
            return None
        d = decls[0]
        typ = _decl_type(d)  # (`uint32_t`, `std::vector<uint32_t>`, `std::array<uint32_t, 2>`: 4-byte words)
        elem = typ.split("<", 1)[1].split(",", 1)[0].split(">", 1)[0] if "<" in typ else typ
        if " ".join(elem.replace("const", " ").split()).removeprefix("std::") not in _INT_TYPES:
            return None
        sources = []
        init = d.child_by_field_name("value") if d.type == "init_declarator" else None
        if init is not None:
            sources.append((init, d))
        pushes = []
        for ident in fn.idents.get(name, ()):
            if ident == _declared_node(d):
                continue
            p = ident.parent
            if p is not None and p.type == "assignment_expression" and p.child_by_field_name("left") == ident:
                if text(p.child_by_field_name("operator")) != "=":
                    return None
                sources.append((p.child_by_field_name("right"), p))
                continue
            if p is not None and p.type == "field_expression" and p.parent is not None \
                    and p.parent.type == "call_expression":
                method = text(p.child_by_field_name("field"))
                if method in ("size", "empty", "reserve") or method == "data" and _pointer_field(p.parent):
                    continue
                if method == "push_back" and len(args_of(p.parent)) == 1:
                    pushes.append(p.parent)
                    continue
                return None
            if p is not None and (p.type in ("initializer_pair", "initializer_list") or p.type == "pointer_expression"
                                  and _pointer_field(p)) or _in_sizeof(ident):
                continue
            if p is not None and p.type == "assignment_expression":
                continue  # `info.pData = data` (the right side)
            return None
        if pushes and sources or len(sources) > 1:
            return None
        out = []
        if pushes:
            for call in pushes:
                conds = self._conds(fn, call)
                if conds is None:
                    return None
                out.append([self.ev(fn, args_of(call)[0]), conds])
            return out
        if not sources:
            return []
        value, at = sources[0]
        conds = self._conds(fn, at)
        if conds is None:
            return None
        value = unparen(value)
        if value.type in ("initializer_list", "argument_list"):
            for c in value.named_children:
                if c.type != "comment":
                    out.append([self.ev(fn, c), conds])
        else:
            out.append([self.ev(fn, value), conds])
        return out


def _base(n):
    """The variable a field or element access ``v.a[i].b`` is of (``n`` itself when it is none)."""
    while n is not None and n.type in ("field_expression", "subscript_expression", "parenthesized_expression"):
        n = n.named_children[0] if n.type == "parenthesized_expression" and n.named_children \
            else n.child_by_field_name("argument")
    return n


def _written_part(n):
    """The access ``n`` is part of (``n.b``, ``n[i]``, ...) when that is assigned, incremented or
    has its address taken; else None."""
    while n.parent is not None and n.parent.type in ("field_expression", "subscript_expression",
                                                     "parenthesized_expression") \
            and (n.parent.type == "parenthesized_expression" or n.parent.child_by_field_name("argument") == n):
        n = n.parent
    p = n.parent
    if p is None:
        return None
    if p.type == "assignment_expression" and p.child_by_field_name("left") == n or p.type == "update_expression" \
            or p.type == "pointer_expression" and text(p.child_by_field_name("operator")) == "&":
        return n
    return None


def _pointer_field(n) -> bool:
    """``n`` (a pointer, as cast) is the value a struct field is given (``info.pData = v.data()``,
    ``{.pData = v.data()}``), not handed to a call that may write through it."""
    while n.parent is not None and (n.parent.type in ("parenthesized_expression", "cast_expression")
                                    or n.parent.type == "argument_list" and n.parent.parent is not None
                                    and callee_name(n.parent.parent) in ("static_cast", "reinterpret_cast")):
        n = n.parent if n.parent.type != "argument_list" else n.parent.parent
    p = n.parent
    return p is not None and (p.type in ("initializer_pair", "initializer_list")
                              or p.type == "assignment_expression" and p.child_by_field_name("right") == n)


def _in_sizeof(node) -> bool:
    p = node.parent
    while p is not None and p.type == "parenthesized_expression":
        p = p.parent
    return p is not None and p.type == "sizeof_expression"


def _declared_node(d):
    while d is not None and d.type not in ("identifier",) and d.child_by_field_name("declarator") is not None:
        d = d.child_by_field_name("declarator")
    return d


def _decl_type(d) -> str:
    p = d.parent
    return text(p.child_by_field_name("type")) if p is not None and p.type == "declaration" else ""


def _container(n) -> str:
    n = unparen(n)
    if n.type == "pointer_expression" and text(n.child_by_field_name("operator")) == "&":
        n = unparen(n.child_by_field_name("argument"))
        if n.type == "subscript_expression":
            n = unparen(n.child_by_field_name("argument"))
    if n.type == "call_expression" and callee_name(n) == "data" and not args_of(n):
        f = n.child_by_field_name("function")
        n = f.child_by_field_name("argument") if f is not None and f.type == "field_expression" else n
    if n.type == "cast_expression":
        return _container(n.child_by_field_name("value"))
    return text(n) if n.type == "identifier" else ""


_BRANCHES = frozenset({"for_statement", "for_range_loop", "while_statement", "do_statement", "switch_statement",
                       "conditional_expression", "lambda_expression", "catch_clause"})


def _straight(node, fn: _Fn) -> bool:
    """``node`` runs whenever its function does, once (no ``if``, loop, ``switch``, ``?:`` or nested
    lambda between it and the function's body; a ``try`` block counts as straight)."""
    if fn.straight is None:
        # (one walk down from the function over the nodes that are straight: climbing each node's
        # parents costs the square of its depth)
        ids = fn.straight = set()
        stack = list(fn.node.children)
        while stack:
            n = stack.pop()
            ids.add(n.id)
            if n.type == "if_statement":
                cond = n.child_by_field_name("condition")
                if cond is not None:
                    stack.append(cond)  # (the condition runs; the branches may not)
            elif n.type not in _BRANCHES:
                stack.extend(n.children)
    return node.id in fn.straight


def _compute_bind(call) -> bool:
    a = args_of(call)
    if callee_name(call) == "vkCmdBindPipeline":
        return len(a) == 3 and "COMPUTE" in text(a[1])
    return len(a) == 2 and "eCompute" in text(a[0])


def _suffix(s: str) -> str:
    low = s.lower()
    for sfx in _SUFFIXES:
        if low.endswith(sfx):
            stem = low[:len(low) - len(sfx)]
            from shaderlint.host.vulkan import _OTHER_STAGES
            if stem.endswith(_OTHER_STAGES) or any(c in s for c in "\"*?<>|\n") or len(s) > 400:
                return ""
            return s[len(s) - len(sfx):]
    return ""


# ---- the run: summaries of every host file linked -------------------------------------------------

#: :func:`resolve`'s ``shader_for`` answer for a literal that names several shaders.
AMBIGUOUS = "\0ambiguous"
_UNKNOWN = ["?"]


class _Func:
    __slots__ = ("path", "d", "key")

    def __init__(self, path: str, d: dict) -> None:
        self.path = path
        self.d = d
        self.key = (path, d.get("id"))


def _has_param(v) -> bool:
    if isinstance(v, list):
        if v and v[0] == "p":
            return True
        return any(_has_param(x) for x in v)
    if isinstance(v, dict):
        return any(_has_param(x) for x in v.values())
    return False


def _subst(v, args: list):
    """``v`` (in a callee's parameters) in the caller's terms, given the call's argument values;
    a value the caller does not give is ``["?"]``."""
    if not isinstance(v, list) or not v:
        return v
    kind = v[0]
    if kind == "p":
        i, chain = v[1], v[2]
        a = args[i] if isinstance(i, int) and i < len(args) else None
        for part in chain.split(".") if chain else ():
            if a is None or a == _UNKNOWN:
                return _UNKNOWN
            if a[0] == "p":
                a = ["p", a[1], f"{a[2]}.{part}" if a[2] else part]
            elif a[0] == "st":
                a = a[1].get(part)
            else:
                return _UNKNOWN
        return _UNKNOWN if a is None else a
    if kind == "path":
        stem = _subst(v[2], args)
        return ["path", v[1], stem, v[3]]
    if kind == "st":
        return ["st", {k: _subst(x, args) for k, x in v[1].items()}]
    return v


def _subst_spec(spec, args: list):
    if not spec:
        return spec
    return {"e": [[c, o, s, [[_subst(a, args), op, _subst(b, args)] for a, op, b in conds]]
                  for c, o, s, conds in spec["e"]],
            "d": [[_subst(v, args), [[_subst(a, args), op, _subst(b, args)] for a, op, b in conds]]
                  for v, conds in spec["d"]]}


def _cond_true(conds) -> bool | None:
    for a, op, b in conds:
        if not (a and b and a[0] == "i" and b[0] == "i"):
            return None
        x, y = a[1], b[1]
        ok = {"<": x < y, "<=": x <= y, ">": x > y, ">=": x >= y, "==": x == y, "!=": x != y}[op]
        if not ok:
            return False
    return True


def spec_value(spec) -> tuple[tuple[int, int], ...] | None:
    """A closed specialization template's constants (``()``: none set; None: not known)."""
    if spec is None:
        return None
    if not spec:
        return ()
    entries = []
    for cid, off, size, conds in spec["e"]:
        c = _cond_true(conds)
        if c is None:
            return None
        if c:
            entries.append((cid, off, size))
    words: list[int | None] = []
    for v, conds in spec["d"]:
        c = _cond_true(conds)
        if c is None:
            return None
        if c:
            words.append(int(v[1]) if v and v[0] == "i" else None)
    if not entries:
        return ()
    out: dict[int, int] = {}
    for cid, off, size in entries:
        if size != 4 or off % 4 or off // 4 >= len(words) or cid in out:
            return None
        w = words[off // 4]
        if w is None:
            return None
        out[cid] = w
    return tuple(sorted(out.items()))


class _Run:
    def __init__(self, summaries: list[tuple[str, dict]]) -> None:
        self.funcs: dict[tuple, _Func] = {}
        self.by_name: dict[str, list[_Func]] = {}
        self.stores: dict[str, list[tuple[_Func, list | None]]] = {}
        self.incomplete = False
        for path, data in summaries:
            if not data.get("complete", True):
                self.incomplete = True
            for d in data.get("fns", ()):
                f = _Func(path, d)
                self.funcs[f.key] = f
                if not d.get("lambda"):
                    self.by_name.setdefault(_simple(d.get("name", "")), []).append(f)
                for name, o in d.get("stores", ()):
                    self.stores.setdefault(name, []).append((f, o))
        self.callers: dict[tuple, list[tuple[_Func, int]]] = {}
        for f in self.funcs.values():
            for k, row in enumerate(f.d.get("calls", ())):
                if row is None:
                    continue
                g = self.target(f, row)
                if g is not None:
                    self.callers.setdefault(g.key, []).append((f, k))
        self._sources: dict[tuple, list | None] = {}
        self._creation: dict[tuple, object] = {}
        self._returned: dict[tuple, object] = {}
        self.steps = 0
        #: Functions (simple names, not lambdas) whose callers a creation's constants were taken from,
        #: and fields a pipeline was traced through: code not summarised may call or assign them.
        self.chain_names: set[str] = set()
        self.fields: set[str] = set()
        #: Those that code not summarised does call or assign (see :func:`resolve`): not known.
        self.blocked_calls: set[str] = set()
        self.blocked_fields: set[str] = set()

    def target(self, f: _Func, row) -> _Func | None:
        """The one function a call row names (a lambda in scope, else the only definition of the
        name), when it takes at least as many parameters as the call passes."""
        if row[3] is not None:
            g = self.funcs.get((f.path, row[3]))
        else:
            got = self.by_name.get(_simple(row[0]), ())
            g = got[0] if len(got) == 1 else None
        if g is not None and len(row[1]) > g.d.get("n", 0):
            return None  # (another function of that name, or variadic: not followed)
        return g

    def ambiguous(self, row) -> list[_Func]:
        return self.by_name.get(_simple(row[0]), []) if row[3] is None else []

    # -- shader paths
    def sources(self, f: _Func, depth: int = 0) -> list | None:
        """The shader paths ``f`` builds or hands to a path function (templates in its parameters);
        None when one is not known (a call that may build one resolves to no single function)."""
        if f.key in self._sources:
            return self._sources[f.key]
        if depth > _MAX_DEPTH:
            return None
        self._sources[f.key] = None  # (a cycle: not known)
        out: list | None = list(f.d.get("sinks", ()))
        for row in f.d.get("calls", ()):
            if row is None:
                continue
            g = self.target(f, row)
            if g is None:
                if any(self.sources(h, depth + 1) != [] for h in self.ambiguous(row)):
                    out = None  # (one of several functions of that name builds a path: which is not known)
                    break
                continue
            if g.d.get("creates"):
                continue
            got = self.sources(g, depth + 1)
            if got is None:
                out = None
                break
            out.extend(_subst(s, row[1]) for s in got)
        self._sources[f.key] = out
        return out

    def creation(self, f: _Func):
        """``f``'s one creation as a template ``(shader path, spec, span)`` in its parameters, or
        None when its shader is not known (several creations, no or several shader paths)."""
        if f.key in self._creation:
            return self._creation[f.key]
        c = f.d.get("creates")
        got = None
        if c and c.get("count") == 1:
            src = self.sources(f)
            if src is not None and len(src) == 1:
                got = (src[0], c.get("spec"), span_of(f.path, c["at"]))
        self._creation[f.key] = got
        return got

    # -- creations, instantiated at their call sites
    def instances(self) -> tuple[list, bool]:
        """Every compute pipeline creation of the run, closed: ``(shader path, spec, span)``; and
        whether some creation is not known (then no creation's constants are trusted)."""
        out: list = []
        unknown = self.incomplete
        for f in self.funcs.values():
            if not f.d.get("creates") or f.d.get("name") in _API:
                continue  # (a definition of the API itself: a loader's or a binding's wrapper)
            t = self.creation(f)
            if t is None:
                unknown = True
                continue
            unknown |= not self._up(f, t, 0, out)
        return out, unknown

    def _up(self, f: _Func, t, depth: int, out: list) -> bool:
        self.steps += 1
        if self.steps > _MAX_STEPS:
            return False  # (call chains too many to follow: not known)
        shader, spec, at = t
        if not _has_param(shader) and not _has_param(spec):
            out.append(t)
            return True
        if not f.d.get("lambda"):
            name = _simple(f.d.get("name", ""))
            self.chain_names.add(name)
            if name in self.blocked_calls:
                return False  # called from a file not summarised: its arguments are not known
        sites = self.callers.get(f.key, [])
        if not sites or depth > _MAX_DEPTH:
            return False  # called from code not seen: its arguments are not known
        ok = True
        for g, k in sites:
            row = g.d["calls"][k]
            ok &= self._up(g, (_subst(shader, row[1]), _subst_spec(spec, row[1]), span_of(g.path, row[2])),
                           depth + 1, out)
        return ok

    # -- pipelines handed on
    def returned(self, f: _Func, depth: int = 0):
        """The pipeline ``f`` returns: ``(template, field)`` (``field``: the member of the returned
        struct that holds it, ``""``: the value itself), or None."""
        if f.key in self._returned:
            return self._returned[f.key]
        self._returned[f.key] = None
        rets = f.d.get("rets", ())
        got = None
        if rets and all(r is not None for r in rets):
            plain = [r for r in rets if r[0] != "cache"]
            if plain and all(r == plain[0] for r in plain):
                got = self._pipe_of(f, plain[0], depth)
                for r in rets:
                    if r[0] == "cache" and (r[2] != plain[0] or got is None or got[0][0][2] != r[1]):
                        got = None  # a cached pipeline kept under another key than its shader's name
        self._returned[f.key] = got
        return got

    def _pipe_of(self, f: _Func, o, depth: int):
        """``(template, field)`` for an origin ``["k", field]`` or ``["c", k, field]`` in ``f``."""
        if depth > _MAX_DEPTH or o is None:
            return None
        if o[0] == "k":
            t = self.creation(f)
            return None if t is None else (t, o[1])
        if o[0] != "c":
            return None
        calls = f.d.get("calls", ())
        row = calls[o[1]] if o[1] < len(calls) else None
        g = self.target(f, row) if row is not None else None
        if g is None:
            return None
        got = self.returned(g, depth + 1)
        if got is None:
            return None
        (shader, spec, at), field = got
        t = (_subst(shader, row[1]), _subst_spec(spec, row[1]), span_of(f.path, row[2]))
        want = o[2]
        if field == want:
            return t, ""
        if not want:
            return t, field
        return None

    def pipelines(self, f: _Func, v, depth: int = 0) -> list:
        """The closed creations a pipeline value ``v`` in ``f`` may be, one per call chain that
        resolves (a chain that does not links nothing)."""
        self.steps += 1
        if v is None or depth > _MAX_DEPTH or self.steps > 2 * _MAX_STEPS:
            return []
        if v[0] == "p" and v[2]:
            v = ["f", v[2].rsplit(".", 1)[-1]]
        if v[0] in ("k", "c"):
            got = self._pipe_of(f, v, depth)
            if got is None or got[1]:
                return []
            t = got[0]
            return [t] if not _has_param(t[0]) and not _has_param(t[1]) else []
        if v[0] == "f":
            self.fields.add(v[1])
            if v[1] in self.blocked_fields:
                return []  # (also assigned in a file not summarised)
            stores = self.stores.get(v[1], [])
            if len(stores) != 1 or stores[0][1] is None:
                return []
            g, o = stores[0]
            return self.pipelines(g, o, depth + 1)
        if v[0] == "p":
            out = []
            for g, k in self.callers.get(f.key, []):
                args = g.d["calls"][k][1]
                i = v[1]
                if i < len(args) and args[i] is not None:
                    out.extend(self.pipelines(g, args[i], depth + 1))
            return out
        return []


def _simple(name: str) -> str:
    return name.rsplit("::", 1)[-1]


def resolve(summaries: list[tuple[str, dict]], shader_for, launch_from_json,
            unseen=None) -> list[tuple[str, HostLaunch]]:
    """(kernel key, launch) pairs for a run's summaries: one ``vulkan-pipeline`` record per pipeline
    creation of a known shader (its specialization; None for all when some creation of the run is
    not known), and each dispatch that binds a pipeline traced to a creation, per call chain.
    ``shader_for(host path, literal, directory known)`` gives a shader's kernel key, None, or
    :data:`AMBIGUOUS`. ``unseen(functions, fields)``: which of these function names are called, and
    which of these fields assigned, in the run's host files that were not summarised (a summary is
    made only of files that name a Vulkan pipeline): a creation reached through such a function, or
    a pipeline kept in such a field, may be one not seen, so it is not known. Never raises."""
    try:
        run = _Run(summaries)
        out = _resolve(run, shader_for, launch_from_json)
        # (the search reads the other host files: only when there is a fact to keep or drop)
        if out and unseen is not None and (run.chain_names or run.fields):
            calls, fields = unseen(frozenset(run.chain_names), frozenset(run.fields))
            if calls or fields:
                run = _Run(summaries)
                run.blocked_calls, run.blocked_fields = set(calls), set(fields)
                out = _resolve(run, shader_for, launch_from_json)
        return out
    except Exception:
        return []


def _resolve(run: "_Run", shader_for, launch_from_json) -> list[tuple[str, HostLaunch]]:
    import dataclasses

    creations, unknown = run.instances()
    out: list[tuple[str, HostLaunch]] = []

    def shader_of(t) -> str | None:
        path = t[0]
        if not path or path[0] != "path" or not path[2] or path[2][0] != "s":
            return AMBIGUOUS
        return shader_for(t[2].path, (path[1] or "") + path[2][1] + path[3], path[1] is not None)

    records = []
    for t in creations:
        key = shader_of(t)
        if key == AMBIGUOUS:
            unknown = True
        elif key is not None:
            records.append((key, t))
    if not unknown:
        for key, t in records:
            out.append((key, HostLaunch(at=t[2], api="vulkan-pipeline", specialization=spec_value(t[1]),
                                        group_at=t[2], shader_literal=_literal(t))))
    seen: set = set()
    for f in list(run.funcs.values()):
        for d in f.d.get("dispatches", ()):
            for t in run.pipelines(f, d["pipe"]):
                key = shader_of(t)
                if key is None or key == AMBIGUOUS:
                    continue
                launch = launch_from_json(d["launch"])
                if (key, launch.at) in seen:
                    continue
                seen.add((key, launch.at))
                out.append((key, dataclasses.replace(
                    launch, shader_literal=_literal(t), group_at=t[2],
                    specialization=None if unknown else spec_value(t[1]))))
    return out


def _literal(t) -> str:
    p = t[0]
    return (p[1] or "") + p[2][1] + p[3]
