"""What the C-family host scanners share: parsing with a bound, spans, and constant values.

Host files are parsed with tree-sitter-cuda (a superset of C++ that reads ``<<<…>>>``) or
tree-sitter-cpp, under a node budget: a scanner sees at most :data:`MAX_NODES` nodes and files up
to :data:`MAX_BYTES`, so any input costs bounded work. Values are *constants* only when the file
makes them so: integer literals, object-like ``#define``s defined once, ``const``/``constexpr``
names (file scope or in the enclosing function), locals given one value and never assigned, passed
by address or handed to an unknown call, and ``+ - * / % << >>`` of those. Anything else is None.
"""

from __future__ import annotations

import bisect
import re
from operator import attrgetter
from dataclasses import dataclass, field

import tree_sitter as ts

from shaderlint.host import Span
from shaderlint.model.expr import unparen

#: Files larger than this are not scanned (the lint's own per-file limit is 1 MiB).
MAX_BYTES = 2 << 20
#: Nodes visited per file at most.
MAX_NODES = 400_000

_PARSERS: dict[str, ts.Parser] = {}


def parser(grammar: str) -> ts.Parser:
    p = _PARSERS.get(grammar)
    if p is None:
        if grammar == "cuda":
            import tree_sitter_cuda as mod
        else:
            import tree_sitter_cpp as mod
        p = _PARSERS[grammar] = ts.Parser(ts.Language(mod.language()))
    return p


def parse(data: bytes, grammar: str) -> ts.Tree | None:
    if len(data) > MAX_BYTES:
        return None
    try:
        return parser(grammar).parse(data)
    except Exception:
        return None


class LineIndex:
    """Byte offset -> 1-based line and column (columns count characters)."""

    def __init__(self, path: str, data: bytes) -> None:
        self.path = path
        self.data = data
        self.starts = [0] + [m.end() for m in re.finditer(rb"\n", data)]

    def span(self, node: ts.Node) -> Span:
        i = bisect.bisect_right(self.starts, node.start_byte) - 1
        col = len(self.data[self.starts[i]:node.start_byte].decode("utf-8", "replace")) + 1
        return Span(self.path, node.start_byte, node.end_byte, i + 1, col)


def walk(root: ts.Node, budget: list[int]):
    """Every node under ``root`` in document order, while ``budget[0]`` lasts."""
    cursor = root.walk()
    while budget[0] > 0:
        budget[0] -= 1
        yield cursor.node
        if cursor.goto_first_child():
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return


_QUERIES: dict[tuple[int, str], ts.Query] = {}


def nodes_of_types(root: ts.Node, types: tuple[str, ...], budget: list[int],
                   language: ts.Language | None) -> list[ts.Node]:
    """The nodes of ``types`` that :func:`walk` with ``budget`` would reach, in the same (document)
    order, found by one tree-sitter query (in C) instead of a Python walk over every node; the
    walk itself when the tree has more nodes than the budget lets it visit (then which ones it
    reaches depends on the order of the walk). Takes from ``budget`` what the walk would."""
    if language is None or root.descendant_count > budget[0]:
        wanted = frozenset(types)
        return [n for n in walk(root, budget) if n.type in wanted]
    from shaderlint.model.build import captures

    key = (id(language), " ".join(types))
    query = _QUERIES.get(key)
    if query is None:
        query = _QUERIES[key] = ts.Query(language, "\n".join(f"({t}) @n" for t in types))
    budget[0] -= root.descendant_count
    return document_order(captures(query, root).get("n", []))


def document_order(nodes: list[ts.Node]) -> list[ts.Node]:
    """``nodes`` sorted as a walk meets them: by start, the longer first, an ancestor before a
    descendant of the same extent."""
    _by_extent(nodes)
    i = 1
    while i < len(nodes):
        a, b = nodes[i - 1], nodes[i]
        if a.start_byte == b.start_byte and a.end_byte == b.end_byte:  # (rare: nested nodes of one extent)
            j = i - 1
            while i < len(nodes) and nodes[i].start_byte == a.start_byte and nodes[i].end_byte == a.end_byte:
                i += 1
            nodes[j:i] = sorted(nodes[j:i], key=_depth)
        i += 1
    return nodes


_START = attrgetter("start_byte")
_END = attrgetter("end_byte")


def _by_extent(nodes: list[ts.Node]) -> None:
    """Sort ``nodes`` by start, the longer first (stable): the sort by ``(start_byte, -end_byte)``, as two
    stable sorts whose keys are read in C (the later sort decides, the earlier breaks its ties)."""
    nodes.sort(key=_END, reverse=True)  # (``reverse`` keeps equal keys in their order)
    nodes.sort(key=_START)


def _depth(node: ts.Node) -> int:
    d = 0
    p = node.parent
    while p is not None:
        d += 1
        p = p.parent
    return d


def text(node: ts.Node | None) -> str:
    if node is None or node.text is None:
        return ""
    return node.text.decode("utf-8", "replace")


def args_of(call: ts.Node) -> list[ts.Node]:
    a = call.child_by_field_name("arguments")
    return [c for c in a.named_children if c.type != "comment"] if a is not None else []


def callee_name(call: ts.Node) -> str:
    f = call.child_by_field_name("function")
    if f is None:
        return ""
    if f.type == "template_function":
        f = f.child_by_field_name("name") or f
    if f.type in ("qualified_identifier", "field_expression"):
        last = f.child_by_field_name("name") or f.child_by_field_name("field")
        return text(last) if last is not None else text(f)
    return text(f)


# ---- constants --------------------------------------------------------------------------------------

#: Calls that read their arguments and never change them (a local passed to one stays constant).
PURE_CALLS = frozenset({"dim3", "make_uint3", "make_int3", "printf", "fprintf", "min", "max", "std::min",
                        "std::max", "ceil", "floor", "sizeof", "assert", "static_cast", "MTLSizeMake"})

_DECL_TYPES = ("declaration", "field_declaration")
_NUM = re.compile(r"^\s*(0[xX][0-9a-fA-F]+|\d+)[uUlL]*\s*$")


@dataclass
class Scope:
    """Names of one function (or the file) with the values they are given."""

    inits: dict[str, list[ts.Node | None]] = field(default_factory=dict)  # name -> initializers (None: no value)
    const: set[str] = field(default_factory=set)
    tainted: set[str] = field(default_factory=set)  # assigned, incremented, address taken, passed to a call
    declarator: dict[str, ts.Node] = field(default_factory=dict)  # name -> its declarator (vexing parse)


_INTERESTING = """
(preproc_def) @n
(preproc_call) @n
(preproc_function_def) @n
(declaration) @n
(parameter_declaration) @n
(optional_parameter_declaration) @n
(assignment_expression) @n
(update_expression) @n
(pointer_expression) @n
(argument_list (identifier) @n)
(function_definition) @function
"""
_INTERESTING_QUERIES: dict[tuple[int, str], ts.Query] = {}


def _interesting(root: ts.Node, budget: list[int], language: ts.Language | None,
                 also: tuple[str, ...] = ()) -> tuple[list[ts.Node], list[ts.Node] | None, list[ts.Node] | None]:
    """The nodes :class:`Constants` reads, in document order (a parent before its children), found
    by one tree-sitter query instead of a Python walk over every node; at most ``budget[0]``. And
    every ``function_definition`` of the tree (None when not queried), and the nodes of the types
    ``also`` as :func:`nodes_of_types` gives them when the same query can (else None)."""
    from shaderlint.model.build import captures

    if language is None:
        return list(walk(root, budget)), None, None
    whole = root.descendant_count <= MAX_NODES  # (else the caller's walk decides which nodes it meets)
    key = (id(language), " ".join(also) if whole else "")
    query = _INTERESTING_QUERIES.get(key)
    if query is None:
        query = _INTERESTING_QUERIES[key] = ts.Query(
            language, _INTERESTING + "".join(f"({t}) @also\n" for t in (also if whole else ())))
    got = captures(query, root)
    nodes = got.get("n", [])
    _by_extent(nodes)
    if len(nodes) > budget[0]:
        nodes = nodes[:max(budget[0], 0)]
    budget[0] -= len(nodes)
    return nodes, got.get("function", []), document_order(got.get("also", [])) if whole and also else None


class _Enclosing:
    """The innermost ``function_definition`` around a node, from the definitions' byte ranges
    (:meth:`Constants.scope_of` without climbing ``node.parent``, which tree-sitter answers by
    descending from the root: a chain of parents costs the square of the depth).

    A node of positive width lies within a definition's range exactly when it is a descendant of
    it or an ancestor of the same extent (nodes that are neither have disjoint ranges): nodes of no
    width or of a definition's own extent are left to the caller (None)."""

    def __init__(self, functions: list[ts.Node]) -> None:
        functions = sorted(functions, key=lambda n: (n.start_byte, -n.end_byte))
        self.nodes = functions
        self.starts = [f.start_byte for f in functions]
        self.ends = [f.end_byte for f in functions]
        self.up: list[int] = []  # index of the innermost definition around each one (-1: none)
        stack: list[int] = []
        for i, f in enumerate(functions):
            while stack and self.ends[stack[-1]] < f.end_byte:
                stack.pop()
            self.up.append(stack[-1] if stack else -1)
            stack.append(i)

    def of(self, node: ts.Node) -> ts.Node | None | bool:
        """The innermost definition around ``node``, False when none, None when not known here."""
        s, e = node.start_byte, node.end_byte
        if s >= e:
            return None
        i = bisect.bisect_right(self.starts, s) - 1
        while i >= 0:
            fs, fe = self.starts[i], self.ends[i]
            if fs <= s and e <= fe:
                return None if fs == s and fe == e else self.nodes[i]
            i = self.up[i]
        return False


class Constants:
    """Constant integer values of expressions in one file."""

    def __init__(self, root: ts.Node, budget: list[int], language: ts.Language | None = None,
                 also: tuple[str, ...] = ()) -> None:
        self.macros: dict[str, str | None] = {}
        self.file = Scope()
        self.functions: dict[int, Scope] = {}  # function_definition id -> its scope
        self._enclosing: _Enclosing | None = None
        #: The nodes of the types ``also`` (a scanner's own), as :func:`nodes_of_types` with a whole
        #: budget gives them, found by the same query; None when it could not (the caller asks).
        self.also: list[ts.Node] | None = None
        self._root = root
        self._base = root.start_byte  # (``_text()`` starts here in the file)
        self._bytes: bytes | None = None
        self._arguments: list[ts.Node] = []  # identifiers handed to a call (or another argument list)
        self._argument_starts: list[int] | None = None
        self._argument_names: set[str] = set()  # names whose identifiers in ``_arguments`` were read
        self._taints: dict[int, bool] = {}  # call id -> whether it may change the names handed to it
        self._collect(root, budget, language, also)

    # -- collection
    def _collect(self, root: ts.Node, budget: list[int], language: ts.Language | None = None,
                 also: tuple[str, ...] = ()) -> None:
        nodes, functions, self.also = _interesting(root, budget, language, also)
        if functions is not None:
            self._enclosing = _Enclosing(functions)
        # Names handed to a call taint the name in its scope: most files ask about few names, or none,
        # so these are read per name when asked (:meth:`tainted`), not all here.
        arguments = self._arguments
        for n in nodes:
            t = n.type
            if t == "preproc_def":
                name = text(n.child_by_field_name("name"))
                val = n.child_by_field_name("value")
                v = text(val) if val is not None else None
                self.macros[name] = v if name not in self.macros or self.macros[name] == v else None
            elif t == "preproc_call" and text(n.child_by_field_name("directive")) == "#undef":
                self.macros[text(n.child_by_field_name("argument")).strip()] = None
            elif t == "preproc_function_def":
                self.macros[text(n.child_by_field_name("name"))] = None
            elif t == "declaration":
                self._declaration(n)
            elif t in ("parameter_declaration", "optional_parameter_declaration"):
                scope = self.scope_of(n)
                if scope is self.file and n.parent is not None and n.parent.type == "template_parameter_list":
                    scope = self._templated(n.parent.parent) or scope  # `template <int BS> void f()`
                if scope is not self.file:  # a parameter shadows any constant of its name
                    d = n.child_by_field_name("declarator")
                    while d is not None and d.type not in ("identifier",) and d.child_by_field_name("declarator"):
                        d = d.child_by_field_name("declarator")
                    if d is not None and d.type == "identifier":
                        scope.inits.setdefault(text(d), []).append(None)
            elif t in ("assignment_expression", "update_expression", "pointer_expression"):
                self._taint(n)
            elif t == "identifier":
                arguments.append(n)  # (read when a name's taint is asked: :meth:`tainted`)

    def _text(self) -> bytes:
        """The bytes of the tree's root (read once)."""
        if self._bytes is None:
            self._bytes = self._root.text or b""
        return self._bytes

    def tainted(self, scope: Scope, name: str) -> bool:
        """Whether ``name`` may change in ``scope``: assigned, incremented, its address taken, or
        handed to a call that is not :data:`PURE_CALLS` (nor a kernel launch)."""
        if name not in self._argument_names:
            self._argument_names.add(name)
            for n in self._identifiers(name):
                # (``Node.parent`` descends from the root: asked once per level, the call's test once per call)
                lst = n.parent
                call = lst.parent if lst is not None and lst.type == "argument_list" else None
                if call is not None and call.type == "call_expression":
                    taint = self._taints.get(call.id)
                    if taint is None:
                        taint = self._taints[call.id] = callee_name(call) not in PURE_CALLS \
                            and not any(c.type == "kernel_call_syntax" for c in call.children)
                    if taint:
                        self.scope_of(n).tainted.add(name)
        return name in scope.tainted

    def _identifiers(self, name: str) -> list[ts.Node]:
        """The nodes of :attr:`_arguments` whose text is ``name``: found where the name's bytes occur
        in the file (an identifier's text is its bytes), or by each node's text."""
        args = self._arguments
        if not args:
            return []
        if not name.isascii():
            return [n for n in args if text(n) == name]
        data = self._text()  # starts at the root's first byte, ``_base`` in the file: not always 0
        base = self._base
        word = name.encode("ascii")
        starts = self._argument_starts
        if starts is None:
            starts = self._argument_starts = [n.start_byte for n in args]
        out = []
        at = data.find(word)
        while at >= 0:
            i = bisect.bisect_left(starts, at + base)
            if i < len(starts) and starts[i] == at + base and args[i].end_byte == at + base + len(word):
                out.append(args[i])
            at = data.find(word, at + 1)
        return out

    def scope_of(self, node: ts.Node) -> Scope:
        """The scope of the innermost function around ``node`` (the file's outside any)."""
        if self._enclosing is not None:
            f = self._enclosing.of(node)
            if f is False:
                return self.file
            if f is not None:
                s = self.functions.get(f.id)
                if s is None:
                    s = self.functions[f.id] = Scope()
                return s
        p = node.parent
        while p is not None:
            if p.type == "function_definition":
                s = self.functions.get(p.id)
                if s is None:
                    s = self.functions[p.id] = Scope()
                return s
            p = p.parent
        return self.file

    def _templated(self, decl: ts.Node | None) -> Scope | None:
        """The scope of the function a ``template_declaration`` declares, if it declares one."""
        if decl is None or decl.type != "template_declaration":
            return None
        for c in decl.named_children:
            if c.type == "function_definition":
                s = self.functions.get(c.id)
                if s is None:
                    s = self.functions[c.id] = Scope()
                return s
        return None

    def _declaration(self, d: ts.Node) -> None:
        found = []
        for decl in d.children_by_field_name("declarator"):
            name, init = _declared(decl)
            if name is not None:
                found.append((decl, name, init))
        if not found:
            return  # (nothing is recorded: the scope and the qualifiers are not read)
        scope = self.scope_of(d)
        # (a qualifier's text is within the declaration's bytes: where they hold no ``const``, no
        # child is read)
        is_const = self._text().find(b"const", d.start_byte - self._base, d.end_byte - self._base) >= 0 \
            and any(c.type == "type_qualifier" and text(c) in ("const", "constexpr") for c in d.children)
        if is_const:
            p = d.parent
            if p is not None and p.type in ("for_statement", "for_range_loop", "condition_clause"):
                is_const = False  # a loop counter
        for decl, name, init in found:
            if decl.type == "function_declarator" and scope is self.file:
                continue  # (a prototype, not the most vexing parse of a `dim3` variable)
            scope.inits.setdefault(name, []).append(init)
            if decl.type == "function_declarator":
                scope.declarator[name] = decl
            if is_const:
                scope.const.add(name)

    def _taint(self, n: ts.Node) -> None:
        if n.type == "pointer_expression":
            if n.child_by_field_name("operator") is None or text(n.child_by_field_name("operator")) != "&":
                return
            target = n.child_by_field_name("argument")
        elif n.type == "assignment_expression":
            target = n.child_by_field_name("left")
        else:
            target = n.child_by_field_name("argument")
        while target is not None and target.type in ("field_expression", "subscript_expression",
                                                      "parenthesized_expression"):
            target = target.child_by_field_name("argument") if target.type != "parenthesized_expression" \
                else (target.named_children[0] if target.named_child_count else None)
        if target is not None and target.type == "identifier":
            self.scope_of(n).tainted.add(text(target))

    # -- lookup
    def lookup(self, ident: ts.Node) -> tuple[ts.Node | None, ts.Node | None] | None:
        """The one initializer of the name ``ident`` refers to (and its declarator), when the name
        keeps that value; None when unknown."""
        name = text(ident)
        local = self.scope_of(ident)
        for scope in ([local, self.file] if local is not self.file else [self.file]):
            inits = scope.inits.get(name)
            if inits is None:
                continue
            if len(inits) != 1:
                return None  # declared twice (blocks, branches): which one is meant is not followed
            if name in scope.const:
                return inits[0], scope.declarator.get(name)
            if scope is self.file or self.tainted(scope, name):
                return None  # a mutable global (any function may change it), or a local that changes
            return inits[0], scope.declarator.get(name)
        return None

    def value(self, node: ts.Node | None, depth: int = 0) -> int | None:
        """The integer value of ``node`` when the file makes it constant."""
        if node is None or depth > 12:
            return None
        node = unparen(node)
        t = node.type
        if t == "number_literal":
            return _int(text(node))
        if t == "identifier":
            name = text(node)
            got = self.lookup(node)
            if got is not None:
                init, _ = got
                if init is None or init.type in ("argument_list", "initializer_list"):
                    if init is not None and init.named_child_count == 1:
                        return self.value(init.named_children[0], depth + 1)
                    return None
                return self.value(init, depth + 1)
            if name in self.macros and not self._shadowed(node):
                return self.macro_value(name, depth + 1)
            return None
        if t == "binary_expression":
            a = self.value(node.child_by_field_name("left"), depth + 1)
            if a is None:
                return None
            b = self.value(node.child_by_field_name("right"), depth + 1)
            if b is None:
                return None
            return _binop(text(node.child_by_field_name("operator")), a, b)
        if t == "unary_expression":
            v = self.value(node.child_by_field_name("argument"), depth + 1)
            op = text(node.child_by_field_name("operator"))
            return None if v is None else (-v if op == "-" else v if op == "+" else None)
        if t == "cast_expression":
            return self.value(node.child_by_field_name("value"), depth + 1)
        if t == "call_expression" and callee_name(node) in ("static_cast",):
            a = args_of(node)
            return self.value(a[0], depth + 1) if len(a) == 1 else None
        if t == "call_expression" and callee_name(node) in ("min", "max", "std::min", "std::max"):
            vals = [self.value(a, depth + 1) for a in args_of(node)]
            if len(vals) == 2 and None not in vals:
                return min(vals) if callee_name(node) == "min" else max(vals)  # type: ignore[type-var]
        return None

    def _shadowed(self, ident: ts.Node) -> bool:
        name = text(ident)
        return name in self.scope_of(ident).inits

    def macro_value(self, name: str, depth: int = 0) -> int | None:
        body = self.macros.get(name)
        if body is None or depth > 12:
            return None
        return _eval_text(body, lambda n: self.macro_value(n, depth + 1))

    def dims(self, node: ts.Node | None, depth: int = 0) -> tuple[tuple[int, int, int] | None, ts.Node | None]:
        """(x, y, z) of a grid/block argument: ``256``, ``dim3(16, 16)``, ``{16, 16}``, a ``dim3``
        variable or a name holding a size; and the node the value is written at (a declaration or
        the argument). ``(None, None)`` when not constant."""
        if node is None or depth > 6:
            return None, None
        node = unparen(node)
        if node.type == "cast_expression":
            return self.dims(node.child_by_field_name("value"), depth + 1)
        parts: list[ts.Node] | None = None
        if node.type in ("initializer_list", "argument_list"):
            parts = [c for c in node.named_children if c.type != "comment"]
        elif node.type == "call_expression" and callee_name(node) in ("dim3", "make_uint3", "uint3", "MTLSizeMake"):
            parts = args_of(node)
        elif node.type == "compound_literal_expression":
            v = node.child_by_field_name("value")
            parts = [c for c in v.named_children if c.type != "comment"] if v is not None else None
        elif node.type == "identifier" and not (text(node) in self.macros and self.lookup(node) is None):
            got = self.lookup(node)
            if got is None:
                return None, None
            init, declarator = got
            if init is None and declarator is not None:  # `dim3 block(threads);`: the most vexing parse
                params = declarator.child_by_field_name("parameters")
                kids = [p for p in params.named_children if p.type != "comment"] if params is not None else []
                idents = [p.named_children[0] for p in kids
                          if p.type == "parameter_declaration" and p.named_child_count == 1
                          and p.named_children[0].type == "type_identifier"]
                if not idents or len(idents) != len(kids):
                    return None, None
                d, _ = _pad([self._type_ident_value(i) for i in idents])
                return (d, _statement(declarator)) if d is not None else (None, None)
            if init is None:
                return None, None
            got_dims, _ = self.dims(init, depth + 1)
            return got_dims, (_statement(init) if got_dims is not None else None)
        if parts is None:
            v = self.value(node)
            return ((v, 1, 1), node) if v is not None and v > 0 else (None, None)
        if not 1 <= len(parts) <= 3:
            return None, None
        d, _ = _pad([self.value(p) for p in parts])
        return (d, node) if d is not None else (None, None)

    def _type_ident_value(self, node: ts.Node) -> int | None:
        # an identifier parsed as a type in `dim3 block(N)`: a macro or constant named N
        name = text(node)
        s = self.scope_of(node)
        for scope in (s, self.file):
            inits = scope.inits.get(name)
            if inits is not None:
                if len(inits) == 1 and inits[0] is not None and not self.tainted(scope, name) \
                        and (scope is not self.file or name in scope.const):
                    return self.value(inits[0])
                return None
        return self.macro_value(name) if name in self.macros else None


def _pad(vals: list[int | None]) -> tuple[tuple[int, int, int] | None, None]:
    if not vals or any(v is None or v <= 0 for v in vals):
        return None, None
    full = [int(v) for v in vals if v is not None] + [1] * (3 - len(vals))
    return (full[0], full[1], full[2]), None


def _statement(node: ts.Node) -> ts.Node:
    n = node
    while n.parent is not None and n.type not in _DECL_TYPES:
        n = n.parent
    return n if n.type in _DECL_TYPES else node


def _declared(decl: ts.Node) -> tuple[str | None, ts.Node | None]:
    if decl.type == "init_declarator":
        name = decl.child_by_field_name("declarator")
        val = decl.child_by_field_name("value")
        if name is not None and name.type == "identifier":
            return text(name), val
        return None, None
    if decl.type == "identifier":
        return text(decl), None
    if decl.type == "function_declarator":  # `dim3 block(threads);`
        name = decl.child_by_field_name("declarator")
        return (text(name), None) if name is not None and name.type == "identifier" else (None, None)
    return None, None


def _int(s: str) -> int | None:
    s = s.strip().replace("'", "")
    m = _NUM.match(s)
    if m is None:
        return None
    try:
        return int(m.group(1), 0) if not (m.group(1).startswith("0") and len(m.group(1)) > 1
                                          and m.group(1)[1] not in "xX") else int(m.group(1), 8)
    except ValueError:
        return None


def _binop(op: str, a: int, b: int) -> int | None:
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b if abs(a * b) < 1 << 62 else None
    if op in ("/", "%"):
        if b == 0:
            return None
        q = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)  # C truncates toward zero (exactly:
        return q if op == "/" else a - b * q                        # no float division above 2^53)
    if op == "<<":
        return a << b if 0 <= b < 32 else None
    if op == ">>":
        return a >> b if 0 <= b < 64 else None
    return None


_TOKEN = re.compile(r"\s*(0[xX][0-9a-fA-F]+[uUlL]*|\d+[uUlL]*|[A-Za-z_]\w*|<<|>>|[-+*/%()])")


def _eval_text(body: str, name_value) -> int | None:
    """A ``#define`` body of integers, names of other macros, ``+ - * / % << >>`` and parentheses."""
    toks: list[str] = []
    pos = 0
    body = body.strip()
    while pos < len(body):
        m = _TOKEN.match(body, pos)
        if m is None:
            return None
        toks.append(m.group(1))
        pos = m.end()
        if len(toks) > 64:
            return None
    at = [0]

    def peek() -> str | None:
        return toks[at[0]] if at[0] < len(toks) else None

    def atom() -> int | None:
        t = peek()
        if t is None:
            return None
        at[0] += 1
        if t == "(":
            v = expr(0)
            if peek() != ")":
                return None
            at[0] += 1
            return v
        if t == "-":
            v = atom()
            return None if v is None else -v
        if t[0].isdigit():
            return _int(t)
        if t[0].isalpha() or t[0] == "_":
            return name_value(t)
        return None

    prec = {"<<": 1, ">>": 1, "+": 2, "-": 2, "*": 3, "/": 3, "%": 3}

    def expr(level: int) -> int | None:
        left = atom()
        while left is not None:
            op = peek()
            if op not in prec or prec[op] < level:
                break
            at[0] += 1
            right = expr(prec[op] + 1)
            if right is None:
                return None
            left = _binop(op, left, right)
        return left

    v = expr(0)
    return v if v is not None and at[0] == len(toks) else None
