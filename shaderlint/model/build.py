"""Build the kernel model of one file: once per file, shared by every rule.

Candidates are collected with one tree-sitter query per language (C-side
traversal); Python then decides per candidate. The model never raises on odd
input: whatever cannot be read is left out and reported as a parse error.
"""

from __future__ import annotations

import bisect
import re
from collections import defaultdict
from functools import lru_cache
from operator import attrgetter

import tree_sitter as ts

from shaderlint.languages.base import Mask, Parsed, word_starts
from shaderlint.model import builtins as B
from shaderlint.model.consteval import eval_text, parse_number
from shaderlint.model.expr import ExprAnalysis, compared_with, unparen
from shaderlint.model.flow import ReachingWrites, opaque_call_outputs
from shaderlint.model.preproc import branch_literals, exclusive
from shaderlint.model.kernel import (
    parse_dims,
    Access, Barrier, Function, GroupSize, LaunchSite, Loop, ParseError, StructDef, Var,
)
from shaderlint.model.source import Source
from shaderlint.model.types import UNKNOWN, Type, array_of, parse_type_name, pointer_to, struct_type

_COMMON = """
(function_definition) @function
(declaration) @declaration
(struct_specifier) @struct
(enumerator) @enumerator
(preproc_def) @define
(for_statement) @for
(call_expression) @call
(subscript_expression) @subscript
(field_expression) @field
(assignment_expression) @assign
(update_expression) @update
(type_definition) @typedef
(return_statement) @return
(binary_expression) @binary
(switch_statement) @switch
(init_declarator) @init
(pointer_expression) @pointer
(cast_expression) @cast
"/" @div_operator
"%" @div_operator
"/=" @div_operator
"%=" @div_operator
"""
# ``binary_div`` (``/ %`` and ``/= %=``) is found from its operator tokens (bare token patterns: linear
# time) in Python: a query pattern with a field or child constraint costs time quadratic in the nesting
# depth of its node type (a 4,000-term ``a + a + ...`` took 3 s). The token's parent is the binary
# expression or assignment it is the operator of (the grammar puts these tokens nowhere else in either);
# reading ``operator`` of every binary expression and assignment instead cost 3 % of the model build.
_DIV_PARENTS = frozenset(("binary_expression", "assignment_expression"))
_QUERIES = {
    "metal": _COMMON + "(user_defined_literal) @udl\n",
    "cuda": _COMMON + "(kernel_call_syntax) @launch\n(user_defined_literal) @udl\n",
    "glsl": _COMMON,
}

ANNOTATION = re.compile(r"shaderlint:\s*([a-z-]+)\s*=\s*([\w.-]+)")
_DECL_WRAPPERS = ("init_declarator", "array_declarator", "pointer_declarator", "reference_declarator",
                  "attributed_declarator", "parenthesized_declarator")


class _UncertainMacro(Exception):
    """A macro body names a macro whose value depends on the build."""


@lru_cache(maxsize=8)
def _query(language: ts.Language, name: str) -> ts.Query:
    return ts.Query(language, _QUERIES[name])


_start_byte = attrgetter("start_byte")
_KINDS: dict[str, dict[int, tuple[str, bool]]] = {}
_DECLARED_NAMES = frozenset(("identifier", "field_identifier", "type_identifier"))

#: A node with more children than this is queried a child at a time (:func:`captures`).
WIDE = 4096


def captures(query: ts.Query, root: ts.Node) -> dict[str, list[ts.Node]]:
    """``QueryCursor(query).captures(root)``, in calls whose time is linear in the size of the tree.

    tree-sitter's query cursor takes time quadratic in the number of children of one node when
    error recovery strings them on a chain (100,000 unclosed ``{``: 9 s in one C call, which the
    time budget cannot interrupt). Such nodes, and the nodes above them, are queried alone (matches
    that start at the node: ``set_max_start_depth(0)``) and their children one at a time. Ordinary
    trees have no node that wide: one call, as before. (The cursor's ``progress_callback`` would let
    the deadline stop it, but in py-tree-sitter 0.26 it crashes the interpreter.)"""
    wide = _wide_paths(root)
    if not wide:
        return ts.QueryCursor(query).captures(root)
    out: dict[str, list[ts.Node]] = defaultdict(list)
    stack = [root]
    while stack:
        n = stack.pop()
        if n.id not in wide:
            got = ts.QueryCursor(query).captures(n)
        else:
            cur = ts.QueryCursor(query)
            cur.set_max_start_depth(0)
            got = cur.captures(n)
            stack.extend(n.children)
        for k, v in got.items():
            out[k].extend(v)
    return dict(out)


def _in_capture_order(nodes: list[ts.Node], *lists: list[ts.Node]) -> list[ts.Node]:
    """``nodes`` (each in one of ``lists``, those sorted by start) in the order of the concatenated
    ``lists``: by start, and of nodes starting together (``a / b / c``), as they stand there (the order
    the query cursor gave them, which is not always outermost first)."""
    out = sorted(nodes, key=_start_byte)
    starts = [n.start_byte for n in out]
    if len(set(starts)) == len(starts):
        return out

    def rank(n: ts.Node) -> tuple[int, int, int]:
        s, key = n.start_byte, n.id
        for li, lst in enumerate(lists):
            i = bisect.bisect_left(lst, s, key=_start_byte)
            while i < len(lst) and lst[i].start_byte == s:
                if lst[i].id == key:
                    return s, li, i
                i += 1
        return s, len(lists), 0
    return sorted(out, key=rank)


def _wide_paths(root: ts.Node) -> set[int]:
    """Ids of the nodes with more than :data:`WIDE` children and of the nodes above them. Only nodes
    with that many descendants can hold one, so the walk enters few nodes."""
    if root.descendant_count <= WIDE:
        return set()
    marked: set[int] = set()
    stack: list[tuple[ts.Node, tuple | None]] = [(root, None)]
    while stack:
        entry = stack.pop()
        n = entry[0]
        if n.child_count > WIDE:
            up = entry
            while up is not None and up[0].id not in marked:
                marked.add(up[0].id)
                up = up[1]
        stack.extend((c, entry) for c in n.children if c.descendant_count > WIDE)
    return marked


class FileModel(ExprAnalysis):
    def __init__(self, parsed: Parsed) -> None:
        self.parsed = parsed
        self.source: Source = parsed.source
        self.language = parsed.language
        self.stage = parsed.stage
        self.root = parsed.tree.root_node
        self.functions: list[Function] = []
        self.function_by_name: dict[str, Function] = {}
        self.globals: list[Var] = []
        self.structs: dict[str, StructDef] = {}
        self.typedefs: dict[str, Type] = {}
        self.enums: dict[str, int] = {}
        self.macros: dict[str, int | float] = {}
        self.constant_names: set[str] = set()  # constants with unknown value (e.g. function-like macro results)
        self.launches: list[LaunchSite] = []
        self.errors: list[ParseError] = []
        self.facts: dict[str, str] = {}  # file-level `// shaderlint: key=value`
        self.workgroup_size: tuple[int | None, int | None, int | None] | None = None
        self.workgroup_mask: Mask | None = None
        self.workgroup_spec_ids: tuple[str | None, ...] = ()
        self.captures: dict[str, list[ts.Node]] = {}
        self._var_deps: dict[Var, frozenset[str]] = {}
        self._intrinsic_deps: dict[Function, frozenset[str]] = {}
        #: While compute_dependence runs: the variables and write keys whose dependence was read.
        self._dep_reads: dict | None = None
        #: While compute_dependence runs: leaf values of the round (None otherwise), the compiled
        #: forms of nodes and what their leaves read (see FileModel._dep_formula).
        self._dep_leaves: dict[int, frozenset[str]] | None = None
        self._dep_forms: dict[int, tuple] = {}
        self._dep_specs: dict[int, object] = {}
        self._flow: ReachingWrites | None = None  # set by the dependence fixpoint
        #: True from the end of the build until the thread dependence is first asked for (see ``var_deps``).
        self._dependence_pending = False
        self._vars_by_name: dict[str, list[Var]] = defaultdict(list)
        self._function_starts: list[int] = []
        self._function_ends: list[int] = []  # (set with _function_starts)
        self._resolve_cache: dict[int, Var | None] = {}
        self._type_cache: dict[int, Type] = {}
        self._const_cache: dict[int, int | float | None] = {}
        self._isconst_cache: dict[int, bool] = {}
        self._deps_cache: dict[int, frozenset[str]] = {}

    # ---- thread dependence, computed when first asked for -------------------------------------------
    # The dependence fixpoint (``_Builder.compute_dependence``) is the costliest part of the model, and
    # many files never ask for it: none of the rules that ran needed it (no barrier, no division, no
    # guarded access to judge). It runs at the first read of ``var_deps``, ``intrinsic_deps``, ``flow``
    # or ``deps()`` after the build, on the finished model: the same input as at the end of the build
    # (the analyses the rules ran meanwhile only fill memo caches of pure functions of the tree).
    def _ensure_dependence(self) -> None:
        if self._dependence_pending:
            self._dependence_pending = False
            try:
                _Builder(self).compute_dependence()
            except BaseException:  # (a time budget ran out in it): asked again, it starts over
                self._var_deps, self._intrinsic_deps, self._flow, self._dep_reads = {}, {}, None, None
                self._dep_leaves, self._dep_forms, self._dep_specs = None, {}, {}
                self._deps_cache.clear()
                self._dependence_pending = True
                raise

    @property
    def var_deps(self) -> dict[Var, frozenset[str]]:
        if self._dependence_pending:
            self._ensure_dependence()
        return self._var_deps

    @var_deps.setter
    def var_deps(self, value: dict[Var, frozenset[str]]) -> None:
        self._var_deps = value

    @property
    def intrinsic_deps(self) -> dict[Function, frozenset[str]]:
        if self._dependence_pending:
            self._ensure_dependence()
        return self._intrinsic_deps

    @property
    def flow(self) -> ReachingWrites | None:
        if self._dependence_pending:
            self._ensure_dependence()
        return self._flow

    @flow.setter
    def flow(self, value: ReachingWrites | None) -> None:
        self._flow = value

    @property
    def write_flow(self) -> ReachingWrites | None:
        """:attr:`flow` for the questions its structure answers (``reaching``, ``tracks``,
        ``may_change``, ``by_value``: which writes reach a use), without running the dependence
        fixpoint, which only fills its ``deps``: the writes are collected here when the fixpoint has
        not run, and the fixpoint takes them (and this flow) over when it does."""
        if not self._dependence_pending:
            return self._flow
        got = self.__dict__.get("_collected_writes")
        if got is None:
            got = self._collected_writes = _Builder(self).collect_writes()
        return got[-1]

    @property
    def kernels(self) -> list[Function]:
        return [f for f in self.functions if f.is_entry]

    def nodes(self, capture: str) -> list[ts.Node]:
        return self.captures.get(capture, [])

    def add_var(self, v: Var) -> Var:
        self._vars_by_name[v.name].append(v)
        return v

    def pragma_before(self, node: ts.Node) -> str | None:
        """The ``#pragma``/``_Pragma`` text directly before a statement (only blanks and
        comments in between), e.g. ``#pragma unroll 4`` above a loop; None if there is none."""
        masks = self.parsed.masks
        starts = self.__dict__.get("_mask_starts")
        if starts is None:
            starts = self._mask_starts = [mk.start for mk in masks]
        i = bisect.bisect_right(starts, node.start_byte) - 1
        while i >= 0 and masks[i].end > node.start_byte:
            i -= 1
        if i < 0 or masks[i].kind not in ("pragma", "unroll-macro"):
            return None
        mk = masks[i]
        gap = self.parsed.parse_bytes[mk.end:node.start_byte]
        gap = re.sub(rb"//[^\n]*|/\*.*?\*/", b"", gap, flags=re.S)
        if gap.strip():
            return None
        return "#pragma unroll" if mk.kind == "unroll-macro" else mk.text  # `UNROLL for`: GLSL front end

    def masks_between(self, start: int, end: int, kind: str) -> list[Mask]:
        masks = self.parsed.masks  # sorted by start (FrontEnd.parse)
        starts = self.__dict__.get("_mask_starts")
        if starts is None:
            starts = self._mask_starts = [mk.start for mk in masks]
        out = []
        for i in range(bisect.bisect_left(starts, start), len(masks)):
            mk = masks[i]
            if mk.start >= end:
                break
            if mk.kind == kind:
                out.append(mk)
        return out


def build_model(parsed: Parsed) -> FileModel:
    model = FileModel(parsed)
    _Builder(model).run()
    return model


class _Builder:
    def __init__(self, model: FileModel) -> None:
        self.m = model
        self.lang = model.language
        self.text = model.text
        #: a node's (type, is_named) by its kind id (both are functions of the kind: one look-up
        #: instead of two reads of the node), per language
        self.kinds = _KINDS.setdefault(self.lang, {})

    # ------------------------------------------------------------------------------------
    def run(self) -> None:
        m = self.m
        from shaderlint.languages import FRONT_ENDS
        language = FRONT_ENDS[self.lang].language()
        m.captures = {k: sorted(v, key=_start_byte)
                      for k, v in captures(_query(language, self.lang), m.root).items()}
        div = [p for op in m.captures.pop("div_operator", ())
               if (p := op.parent) is not None and p.type in _DIV_PARENTS]
        if div:
            m.captures["binary_div"] = _in_capture_order(div, m.captures.get("binary", []), m.captures.get("assign", []))
        self.collect_errors()
        self.collect_annotations()
        self.collect_macros()
        self.collect_types()
        self.collect_functions()
        self.collect_globals()
        self.collect_locals()
        self.collect_workgroup()
        self.collect_file_facts()
        for f in m.functions:
            self.collect_group_size(f)
        self.collect_loops()
        self.collect_calls()
        self.collect_launch_group_sizes()
        self.collect_accesses()
        m._deps_cache.clear()  # (what the build asked before the fixpoint: as compute_dependence does)
        m._dependence_pending = True  # compute_dependence at the first use (FileModel.var_deps)

    # ---- parse errors ------------------------------------------------------------------------
    def collect_errors(self) -> None:
        deep = self.deep = [(mk.start, mk.end) for mk in self.m.parsed.masks if mk.kind == "too-deep"]
        if deep:  # cut by the front end (shaderlint.languages.depth): unreadable as a syntax error is
            from shaderlint.languages.depth import MAX_TREE_DEPTH
            self.m.errors.extend(ParseError(s, e, f"code nested more than {MAX_TREE_DEPTH:,} levels deep")
                                 for s, e in deep)
            self.m.errors.sort(key=lambda e: e.start)
        root = self.m.root
        if not root.has_error:
            return
        stack = [root]
        while stack:
            n = stack.pop()
            if n.is_error:
                end = min(max(n.end_byte, n.start_byte + 1), len(self.m.source.data))  # an error at EOF is empty
                self.m.errors.append(ParseError(n.start_byte, max(end, n.start_byte), "unexpected syntax"))
                continue
            if n.is_missing:
                self.m.errors.append(ParseError(n.start_byte, n.start_byte, f"missing {n.type!r}"))
                continue
            stack.extend(c for c in reversed(n.children) if c.has_error or c.is_missing)
        self.m.errors.sort(key=lambda e: e.start)

    # ---- annotations ---------------------------------------------------------------------
    def collect_annotations(self) -> None:
        self.annotations: list[tuple[int, int, str, str]] = []
        for c in self.m.source.comments:
            for mm in ANNOTATION.finditer(c.text):
                key, value = mm.group(1), mm.group(2)
                if key.startswith("ignore"):
                    continue
                self.annotations.append((c.start, c.end, key, value))

    def facts_for(self, f: Function) -> dict[str, str]:
        """Annotations directly above a function (only comments/blank lines/attributes in between)."""
        start = (f.outer or f.node).start_byte
        lo = prelude_start(f)
        out: dict[str, str] = {}
        data = self.m.parsed.parse_bytes
        for s, e, key, value in self.annotations:
            if lo <= s and e <= start and (not data[e:start].strip(b" \t\r\n") or _only_comments(self.m.source, e, start)
                               or _attached(self.m.parsed, e, start)):
                out[key] = value
        return out

    # ---- macros, enums, structs, typedefs --------------------------------------------------
    def _header_macros(self, own: dict[str, set[str]], uncertain: set[str], lookup) -> None:
        """Values of the object-like macros the included headers define (``Parsed.macros``, from
        :class:`shaderlint.project.includes.FileContext`), before the file's own: mmcv's
        ``THREADS_PER_BLOCK`` from its ``.cuh``. A name the file defines itself keeps the file's
        value(s). A header macro whose definition the walk of the headers could not settle (defined
        differently in branches the build may read: absent from ``Parsed.predefined``, or with another
        body) is a constant of unknown value when its body is one."""
        m = self.m
        header = getattr(m.parsed, "macros", None)
        if not header:
            return
        state = dict(m.parsed.predefined or ())
        for name, d in header.items():
            if d.params is not None or name in own or not d.body:
                continue
            try:
                v = eval_text(d.body, lookup)
            except _UncertainMacro:
                uncertain.add(name)
                continue
            if v is None or isinstance(v, bool):
                continue
            settled = state.get(name)
            if isinstance(settled, str) and " ".join(settled.split()) == " ".join(d.body.split()):
                m.macros[name] = v
            else:
                uncertain.add(name)

    def collect_macros(self) -> None:
        """Values of the object-like macros the file defines. A name defined with different bodies
        (in the two arms of ``#ifndef X ... #else ... #endif``, or redefined after ``#undef``) has no
        one value: which definition is live depends on the build. When every body is a constant, the
        name is a constant of unknown value, and so is a macro computed from it."""
        m = self.m
        bodies: dict[str, set[str]] = defaultdict(set)
        defines = []
        for d in m.nodes("define"):
            name = d.child_by_field_name("name")
            body = m.macro_body(d)
            if name is not None and body is not None:
                bodies[self.text(name)].add(body)
                defines.append((self.text(name), body))
        uncertain: set[str] = set()
        not_constant: set[str] = set()

        def lookup(n: str) -> int | float | None:
            if n in uncertain:
                raise _UncertainMacro
            return m.macros.get(n, m.enums.get(n))

        self._header_macros(bodies, uncertain, lookup)
        for name, body in defines:
            try:
                v = eval_text(body, lookup)
            except _UncertainMacro:
                uncertain.add(name)
                continue
            if v is None or isinstance(v, bool):
                not_constant.add(name)
                continue
            if len(bodies[name]) > 1:
                uncertain.add(name)
            else:
                m.macros[name] = v
        for name in uncertain:
            m.macros.pop(name, None)
            if name not in not_constant:
                m.constant_names.add(name)
        # An array's size must be a constant expression in every language modelled (C++ has no
        # variable-length arrays, nor does GLSL): a name the file cannot resolve that sizes an array
        # (`float acc[TILE / 4];` with TILE from a header, or from a `#define` whose body is not
        # evaluated here) is a compile-time constant of unknown value wherever it appears.
        data = m.parsed.parse_bytes
        for d in m.nodes("declaration"):
            if not _may_hold(data, d, b"[", b"["):
                continue  # no array declarator (its `[` token is in the parsed text)
            for decl in d.children_by_field_name("declarator"):
                for size in self.unwrap_declarator(decl)[1]:
                    if size is not None:
                        stack = [size]
                        while stack:
                            n = stack.pop()
                            if n.type == "identifier":
                                m.constant_names.add(self.text(n))
                            elif n.type not in ("call_expression", "field_expression", "subscript_expression"):
                                stack.extend(n.named_children)

    def collect_types(self) -> None:
        m = self.m
        for e in m.nodes("enumerator"):
            pass
        # enumerators need sequential values per enum
        seen_lists: set[int] = set()
        for e in m.nodes("enumerator"):
            parent = e.parent
            if parent is None or parent.id in seen_lists:
                continue
            seen_lists.add(parent.id)
            value = -1
            for item in parent.named_children:
                if item.type != "enumerator":
                    continue
                name = item.child_by_field_name("name")
                val = item.child_by_field_name("value")
                if val is not None:
                    cv = m.const_value(val)
                    value = int(cv) if isinstance(cv, (int, float)) else value + 1
                else:
                    value += 1
                if name is not None:
                    m.enums[self.text(name)] = value
        for s in m.nodes("struct"):
            name = s.child_by_field_name("name")
            body = s.child_by_field_name("body")
            if body is None:
                continue
            sname = self.text(name) if name is not None else None
            if sname is None and s.parent is not None and s.parent.type == "type_definition":
                decl = s.parent.child_by_field_name("declarator")
                sname = self.text(decl) if decl is not None else None
            if sname is None:
                continue
            m.structs[sname] = StructDef(sname, s, self.fields_of(body))
        for td in m.nodes("typedef"):
            ty = td.child_by_field_name("type")
            decl = td.child_by_field_name("declarator")
            if ty is not None and decl is not None and decl.type in ("type_identifier", "identifier"):
                t = m.parse_type(ty)
                if t.is_known:
                    m.typedefs[self.text(decl)] = t
        # GLSL blocks: `buffer Name { ... } inst;` parse as declarations with a field list.
        data = m.parsed.parse_bytes
        for d in m.nodes("declaration"):
            if not _may_hold(data, d, b"{", b"{"):
                continue  # no field list (its `{` token is in the parsed text)
            body = next((c for c in d.children if c.type == "field_declaration_list"), None)
            if body is None:
                continue
            ids = [c for c in d.children if c.type == "identifier"]
            if ids:
                m.structs[self.text(ids[0])] = StructDef(self.text(ids[0]), d, self.fields_of(body))

    def fields_of(self, body: ts.Node) -> list[tuple[str, Type, ts.Node]]:
        out = []
        for fd in body.named_children:
            if fd.type != "field_declaration":
                continue
            ty = fd.child_by_field_name("type")
            for decl in fd.children_by_field_name("declarator"):
                name_node, dims, ptr = self.unwrap_declarator(decl)
                if name_node is None:
                    continue
                t = self.m.parse_type(ty)
                for _ in range(ptr):
                    t = pointer_to(t)
                if dims:
                    t = array_of(t)
                out.append((self.text(name_node), t, fd))
        return out

    # ---- declarators -------------------------------------------------------------------------
    def unwrap_declarator(self, decl: ts.Node) -> tuple[ts.Node | None, list[ts.Node | None], int]:
        """(identifier node, array size nodes outermost-first, pointer/reference depth)."""
        dims: list[ts.Node | None] = []
        ptr = 0
        n: ts.Node | None = decl
        for _ in range(32):
            if n is None:
                return None, dims, ptr
            t = n.type
            if t in _DECLARED_NAMES:
                return n, dims, ptr
            if t == "array_declarator":
                dims.append(n.child_by_field_name("size"))
            elif t == "pointer_declarator":
                ptr += 1  # references keep the referenced type
            elif t == "qualified_identifier":
                return n, dims, ptr
            nxt = n.child_by_field_name("declarator")
            if nxt is None and t in ("reference_declarator", "attributed_declarator", "parenthesized_declarator"):
                nxt = next((c for c in n.named_children if c.type not in ("attribute_declaration", "type_qualifier")), None)
            n = nxt
        return None, dims, ptr

    def qualifiers_of(self, decl: ts.Node) -> set[str]:
        quals: set[str] = set()
        kinds = self.kinds
        for c in decl.children:
            got = kinds.get(c.kind_id)
            if got is None:
                got = kinds[c.kind_id] = (c.type, c.is_named)
            t, named = got
            if t == "type_qualifier" or t == "storage_class_specifier":
                quals.update(self.text(c).split())
            elif t == "layout_specification":
                quals.add("layout")
            elif not named:
                quals.add(t)
            elif t == "extension_storage_class":
                quals.add(self.text(c))
        return quals

    def layout_args(self, decl: ts.Node) -> dict[str, str]:
        out: dict[str, str] = {}
        for c in decl.children:
            if c.type == "layout_specification":
                for q in c.named_children:
                    if q.type == "layout_qualifiers":
                        for item in q.named_children:
                            parts = [self.text(x) for x in item.named_children]
                            if parts:
                                out[parts[0]] = parts[1] if len(parts) > 1 else ""
        return out

    def attrs_of(self, start: int, end: int) -> tuple[tuple[str, tuple[str, ...]], ...]:
        parsed = self.m.parsed
        after, before = parsed.attrs_after.get(end), parsed.attrs_before.get(start)
        if after is None and before is None:
            return ()  # (most declarations)
        return tuple((mk.value, mk.args) for mk in (after or []) + (before or []))

    def address_space_of(self, decl: ts.Node, declarator_start: int) -> str | None:
        p = self.m.parsed
        for mk in p.qualifiers_before.get(decl.start_byte, []):
            if mk.kind == "address-space":
                return mk.value
        for mk in self.m.masks_between(decl.start_byte, declarator_start, "address-space"):
            return mk.value
        return None

    def make_var(self, decl: ts.Node, declarator: ts.Node, type_node: ts.Node | None, scope: tuple[int, int],
                 function: Function | None, *, is_param: bool = False, is_global: bool = False) -> Var | None:
        m = self.m
        name_node, dim_nodes, ptr = self.unwrap_declarator(declarator)
        if name_node is None:
            return None
        quals = self.qualifiers_of(decl)
        base = m.parse_type(type_node)
        space = None
        if self.lang == "metal":
            space = self.address_space_of(decl, declarator.start_byte)
        elif self.lang == "cuda":
            if "__shared__" in quals:
                space = "shared"
            elif "__constant__" in quals:
                space = "constant"
            elif ptr and is_param and function is not None and function.kind == "kernel":
                space = "global"
        else:
            for q in ("shared", "buffer", "uniform", "in", "out", "inout"):
                if q in quals:
                    space = q
                    break
        t = base
        for _ in range(ptr):
            t = pointer_to(t, space)
        dims: tuple = ()
        if dim_nodes:
            dims = tuple(m.const_value(d) if d is not None else None for d in reversed(dim_nodes))
            dims = tuple(int(d) if isinstance(d, (int, float)) else None for d in dims)
            for _ in dims:
                t = array_of(t)
        init = declarator.child_by_field_name("value") if declarator is not name_node and declarator.type == "init_declarator" \
            else None  # (a bare name: its type is not read again)
        attrs = self.attrs_of(decl.start_byte, name_node.end_byte)
        layout = self.layout_args(decl) if self.lang == "glsl" else {}
        v = Var(
            name=self.text(name_node), node=name_node, decl=decl, type=t, address_space=space,
            is_const="const" in quals, is_constexpr="constexpr" in quals, init=init, dims=dims,
            is_param=is_param, is_global=is_global, attributes=attrs, scope=scope, function=function,
            qualifiers=frozenset(quals),
        )
        if self.lang == "metal" and v.attribute("function_constant") is not None:
            v.function_constant = True
        elif self.lang == "metal" and is_global and space == "constant":
            v.is_const = True  # program-scope `constant` variables are immutable and initialized
        if self.lang == "glsl" and "constant_id" in layout:
            v.function_constant = True
        if self.lang == "metal" and is_param:
            for name, _ in attrs:
                if name in B.METAL_ROLES:
                    v.role = name
        return m.add_var(v)

    def declarators(self, decl: ts.Node) -> list[ts.Node]:
        return decl.children_by_field_name("declarator")

    # ---- functions -------------------------------------------------------------------------
    def collect_functions(self) -> None:
        m = self.m
        for fd in m.nodes("function"):
            decl = fd.child_by_field_name("declarator")
            fdecl = decl
            for _ in range(8):
                if fdecl is None or fdecl.type == "function_declarator":
                    break
                fdecl = fdecl.child_by_field_name("declarator")
            if fdecl is None or fdecl.type != "function_declarator":
                continue
            name_node = fdecl.child_by_field_name("declarator")
            if name_node is None:
                continue
            name = self.text(name_node).split("::")[-1]
            outer = fd.parent if fd.parent is not None and fd.parent.type == "template_declaration" else None
            kind, is_entry, device = self.function_kind(fd, name)
            f = Function(name=name, node=fd, name_node=name_node, body=fd.child_by_field_name("body"), kind=kind,
                         is_entry=is_entry, is_device_code=device, outer=outer)
            f.return_type = m.parse_type(fd.child_by_field_name("type"))
            if self.lang == "metal":
                start = (outer or fd).start_byte
                masks = m.parsed.attrs_before.get(fd.start_byte, []) + (m.parsed.attrs_before.get(start, []) if outer else [])
                f.attributes = tuple((mk.value, mk.args) for mk in masks)
            f.has_error = fd.has_error or any(fd.start_byte <= s < fd.end_byte for s, _ in self.deep)
            f.facts = self.facts_for(f)
            scope = (fd.start_byte, fd.end_byte)
            if outer is not None:
                params = outer.child_by_field_name("parameters")
                for p in params.named_children if params is not None else []:
                    pname = p.child_by_field_name("declarator") or p.child_by_field_name("name")
                    if pname is None and p.named_child_count:
                        pname = p.named_children[-1]
                    ptype = m.parse_type(p.child_by_field_name("type"))
                    if pname is not None and pname.type == "function_declarator":
                        # `template <float (*F)(float)>`: a function-pointer parameter, bound to a
                        # function at a launch (estimate.registers.template_instances)
                        ptype, pname = UNKNOWN, _declared_name(pname)
                    if pname is None or pname.type not in ("identifier", "type_identifier"):
                        continue
                    tv = m.add_var(Var(self.text(pname), pname, p, ptype,
                                       scope=scope, function=f, template_param=True, is_const=True))
                    f.template_params[tv.name] = tv
            if self.lang == "cuda":
                for c in fd.children:
                    if c.type == "launch_bounds":
                        vals = [m.const_value(x) for x in c.named_children]
                        f.launch_bounds_node = c
                        if vals and vals[0] is not None and vals[0] >= 1:  # `__launch_bounds__(-1)`: unknown
                            f.launch_bounds = tuple(int(v) for v in vals if v is not None)
                if f.launch_bounds_node is None and any(  # `__global__ HEADER_MACRO(n) void k(`: bounds unknown
                        mk.value == "unknown" for mk in m.masks_between(fd.start_byte, fdecl.start_byte, "launch-bounds-macro")):
                    f.launch_bounds_node = fd
            params = fdecl.child_by_field_name("parameters")
            for p in params.named_children if params is not None else []:
                if p.type not in ("parameter_declaration", "optional_parameter_declaration"):
                    continue
                d = p.child_by_field_name("declarator")
                if d is None:
                    continue
                v = self.make_var(p, d, p.child_by_field_name("type"), scope, f, is_param=True)
                if v is not None:
                    f.params.append(v)
            m.functions.append(f)
            m.function_by_name.setdefault(name, f)
        m.functions.sort(key=lambda f: f.node.start_byte)
        m._function_starts = [f.node.start_byte for f in m.functions]
        m._function_ends = [f.node.end_byte for f in m.functions]

    def function_kind(self, fd: ts.Node, name: str) -> tuple[str, bool, bool]:
        if self.lang == "cuda":
            tokens = {c.type for c in fd.children}
            decl = fd.child_by_field_name("declarator")
            outer = fd.parent if fd.parent is not None and fd.parent.type == "template_declaration" else None
            start = (outer or fd).start_byte
            masks = self.m.parsed.qualifiers_before.get(start, []) + self.m.masks_between(
                start, decl.start_byte if decl is not None else start, "function-qualifier")
            for mk in masks:
                if mk.kind == "function-qualifier" and mk.value == "macro":  # a qualifier macro the file defines (CudaFrontEnd): its expansion
                    tokens.update(mk.args)
            if "__global__" in tokens:
                return "kernel", True, True
            if "__device__" in tokens:
                return "device", False, True
            return "host", False, False
        if self.lang == "metal":
            p = self.m.parsed
            quals = [mk.value for mk in p.qualifiers_before.get(fd.start_byte, []) if mk.kind == "function-qualifier"]
            outer = fd.parent if fd.parent is not None and fd.parent.type == "template_declaration" else None
            attrs = [mk.value for mk in p.attrs_before.get(fd.start_byte, [])]
            if outer is not None:
                quals += [mk.value for mk in p.qualifiers_before.get(outer.start_byte, []) if mk.kind == "function-qualifier"]
            for q in quals + attrs:
                if q in ("kernel", "vertex", "fragment", "mesh", "object"):
                    return q, True, True
            if "visible" in quals or "visible" in attrs:
                return "visible", False, True
            return "device", False, True
        # GLSL: main is the entry point of its stage.
        if name == "main":
            return self.m.stage or "shader", True, True
        return "device", False, True

    # ---- globals and locals -----------------------------------------------------------------------
    def collect_globals(self) -> None:
        m = self.m
        end = len(m.source.data) + 1
        for d in m.nodes("declaration"):
            if m.function_at(d.start_byte) is not None:
                continue
            p = d.parent
            if p is not None and p.type not in ("translation_unit", "preproc_if", "preproc_ifdef", "preproc_else",
                                                  "preproc_elif", "declaration_list", "linkage_specification",
                                                  "namespace_definition", "template_declaration", "preproc_elifdef"):
                continue
            if d.has_error:
                continue  # what error recovery read as a declaration (`}grid(n), kBlock, 0>>>(...)` after a
                # function closed early) would declare names that shadow the real globals in every later function
            scope = (d.start_byte, end)
            body = next((c for c in d.children if c.type == "field_declaration_list"), None)
            if body is not None:  # GLSL interface block
                quals = self.qualifiers_of(d)
                space = next((q for q in ("buffer", "uniform", "shared", "in", "out") if q in quals), None)
                if "push_constant" in self.layout_args(d):
                    space = "push_constant"
                ids = [c for c in d.children if c.type == "identifier"]
                block = self.text(ids[0]) if ids else None
                if len(ids) > 1:
                    inst = ids[1]
                    dims = ()
                    m.globals.append(m.add_var(Var(self.text(inst), inst, d, struct_type(block) if block else UNKNOWN,
                                                   address_space=space, is_global=True, scope=scope,
                                                   qualifiers=frozenset(quals), dims=dims)))
                else:
                    for fname, ftype, fnode in self.fields_of(body):
                        fid = next((c for c in fnode.named_children if c.type not in ("primitive_type", "type_identifier")), fnode)
                        m.globals.append(m.add_var(Var(fname, fid, fnode, ftype, address_space=space, is_global=True,
                                                       scope=scope, qualifiers=frozenset(quals))))
                continue
            for decl in self.declarators(d):
                v = self.make_var(d, decl, d.child_by_field_name("type"), scope, None, is_global=True)
                if v is not None:
                    if self.lang == "cuda" and v.address_space is None and "__device__" in v.qualifiers:
                        v.address_space = "global"
                    m.globals.append(v)

    def collect_locals(self) -> None:
        m = self.m
        bodies: dict[int, tuple[int, int]] = {}  # id(function) -> its body's range
        for d in m.nodes("declaration"):
            start = d.start_byte
            f = m.function_at(start)
            if f is None or f.body is None:
                continue
            body = bodies.get(id(f))
            if body is None:
                body = bodies[id(f)] = (f.body.start_byte, f.body.end_byte)
            if not (body[0] <= start < body[1]):
                continue
            scope_node = d.parent  # (a block, or a `for` whose initializer it is: its end either way)
            scope = (start, scope_node.end_byte if scope_node is not None else f.node.end_byte)
            type_node = d.child_by_field_name("type")
            for decl in d.children_by_field_name("declarator"):
                v = self.make_var(d, decl, type_node, scope, f)
                if v is not None:
                    f.vars.append(v)

    # ---- group sizes ---------------------------------------------------------------------------
    def collect_workgroup(self) -> None:
        """The compute shader's workgroup size from its ``layout(local_size_…) in;`` declarations. A
        shader may spread them over several declarations (``layout(local_size_x_id = 0) in;
        layout(local_size_y = 1) in;``): they add up, an axis none names is 1. An axis taken from a
        specialization constant (``local_size_x_id``) with no literal size beside it is unknown: the
        constant's default (1) holds only until the pipeline sets it, which is what such a shader is
        written for."""
        m = self.m
        sizes: list[int | None] = [1, 1, 1]
        ids: list[str | None] = [None, None, None]
        literal = [False, False, False]
        first = None
        for mk in m.parsed.masks:
            if mk.kind != "layout" or mk.value != "in":
                continue
            found = False
            for arg in mk.args:
                key, _, val = arg.partition("=")
                key, val = key.strip(), val.strip()
                for i, axis in enumerate("xyz"):
                    if key == f"local_size_{axis}":
                        found = literal[i] = True
                        num = parse_number(val)
                        if num is None:
                            num = m.macros.get(val)
                        if num is None:
                            num = self.global_constant(val)
                        sizes[i] = int(num) if isinstance(num, (int, float)) and num >= 1 else None  # 0, -1: unknown
                    elif key == f"local_size_{axis}_id":
                        found = True
                        ids[i] = val
            if found and (first is None or any(a.partition("=")[0].strip() in ("local_size_x", "local_size_x_id")
                                               for a in mk.args)):
                first = mk  # where the size is reported: the declaration that sets x (the last one: as it wins)
        if first is None:
            return
        for i in range(3):
            if ids[i] is not None and not literal[i]:
                sizes[i] = None  # (the specialization constant's default applies only with a literal size beside it)
        m.workgroup_size = (sizes[0], sizes[1], sizes[2])
        m.workgroup_mask = first
        m.workgroup_spec_ids = tuple(ids)

    def global_constant(self, name: str) -> int | float | None:
        """The value of a file-scope constant named ``name`` (``const uint num_threads = 256;
        layout(local_size_x = num_threads) in;``); None for a specialization constant or anything else."""
        v = next((g for g in self.m.globals if g.name == name), None)
        return self.m.var_const_value(v) if v is not None else None

    def collect_group_size(self, f: Function) -> None:
        """The most specific declared group size: annotation above the kernel, then the
        language's own declaration, then a file-level annotation."""
        m = self.m
        if not f.is_entry and not (self.lang == "cuda" and f.kind == "kernel"):
            return
        ann = f.facts.get("threadgroup-size")
        if ann:
            dims = _parse_dims(ann)
            if dims:
                start = self.annotation_pos(f, "threadgroup-size")
                f.group_size = GroupSize(dims, start[0], start[1], "annotation", True)
                return
        if self.lang == "glsl" and m.workgroup_size is not None and m.workgroup_mask is not None:
            if all(s is not None for s in m.workgroup_size):
                mk = m.workgroup_mask
                f.group_size = GroupSize(tuple(int(s) for s in m.workgroup_size), mk.start, mk.end, "local_size", True)  # type: ignore[arg-type]
                return
        if self.lang == "metal":
            for mk in m.parsed.masks:
                if mk.kind == "attribute" and mk.value == "max_total_threads_per_threadgroup" and mk.args:
                    nxt = m.parsed.attrs_before
                    fstart = (f.outer or f.node).start_byte
                    if not (prelude_start(f) <= mk.start and mk.end <= fstart):
                        continue  # only attributes between the previous declaration and this function
                    if any(mk in lst for key, lst in nxt.items() if key in (f.node.start_byte, fstart)) or (
                            mk.end <= fstart and _attached(m.parsed, mk.end, fstart)):  # a comment in between
                        val = parse_number(mk.args[0])
                        if val is None:
                            val = m.macros.get(mk.args[0])
                        if isinstance(val, (int, float)) and val >= 1:
                            f.group_size = GroupSize((int(val), 1, 1), mk.start, mk.end, "max_total_threads", False)
                            return
        if self.lang == "cuda" and f.launch_bounds and f.launch_bounds_node is not None:
            n = f.launch_bounds_node
            f.group_size = GroupSize((f.launch_bounds[0], 1, 1), n.start_byte, n.end_byte, "launch_bounds", False)
            return
        file_ann = self.file_fact("threadgroup-size")
        if file_ann:
            dims = _parse_dims(file_ann[2])
            if dims:
                f.group_size = GroupSize(dims, file_ann[0], file_ann[1], "annotation", True)

    def collect_launch_group_sizes(self) -> None:
        """CUDA kernels whose size no annotation above them or ``__launch_bounds__`` declares:
        the block size every launch site in this file agrees on (see :mod:`shaderlint.model.dispatch`)."""
        if self.lang != "cuda" or not self.m.launches:
            return
        from shaderlint.model.dispatch import agreed_launch_size
        for f in self.m.functions:
            if f.kind != "kernel":
                continue
            gs = f.group_size
            if gs is not None and (gs.origin == "launch_bounds" or "threadgroup-size" in f.facts):
                continue
            agreed = agreed_launch_size(self.m, f)
            if agreed is not None:
                f.group_size = agreed

    def annotation_pos(self, f: Function, key: str) -> tuple[int, int]:
        start = (f.outer or f.node).start_byte
        best = (f.name_node.start_byte, f.name_node.end_byte)
        for s, e, k, _ in self.annotations:
            if k == key and e <= start:
                best = (s, e)
        return best

    def file_fact(self, key: str) -> tuple[int, int, str] | None:
        """A file-level annotation: before the first function and not directly above it (an
        annotation directly above a kernel is that kernel's own, see :meth:`facts_for`)."""
        for s, e, k, v in self.file_annotations():
            if k == key:
                self.m.facts[k] = v
                return (s, e, v)
        return None

    def file_annotations(self) -> list[tuple[int, int, str, str]]:
        if self.m.functions:
            f0 = self.m.functions[0]
            first = (f0.outer or f0.node).start_byte
        else:
            first = len(self.m.source.data)
        broken = [c.start_byte for c in self.m.root.children if c.has_error or c.type == "ERROR"]
        return [a for a in self.annotations if a[1] <= first and not _attached(self.m.parsed, a[1], first)
                and not any(a[1] <= b < first and _attached(self.m.parsed, a[1], b) for b in broken)]
        # (an annotation directly above a function that does not parse right now is that function's,
        # not the whole file's: it must not give its threadgroup size to every other kernel)

    def collect_file_facts(self) -> None:
        """Every file-level annotation into ``model.facts`` (``dispatch=``, ``grid-size=``, …)."""
        for _, _, k, v in self.file_annotations():
            self.m.facts.setdefault(k, v)

    # ---- loops -------------------------------------------------------------------------------------
    def collect_loops(self) -> None:
        m = self.m
        for node in m.nodes("for"):
            f = m.function_at(node.start_byte)
            if f is None:
                continue
            loop = Loop(node, None)
            init = node.child_by_field_name("initializer")
            cond = node.child_by_field_name("condition")
            update = node.child_by_field_name("update")
            var = None
            if init is not None and init.type == "declaration":
                decls = self.declarators(init)
                if len(decls) > 1:
                    # `for (int ldg = 0, col = start; ldg < N; ++ldg, col += C)`: the counter is the
                    # declared variable the condition tests (vLLM topk_softmax_kernels.cu); when a
                    # conjunction tests several (`i < 2 && rem > 0`, vLLM hadacore), the one the
                    # update steps
                    tested = [d for d in decls if self._tested_by(d, cond)] if cond is not None else []
                    if len(tested) > 1 and update is not None:
                        stepped = [d for d in tested if (v := self._declared_var(f, d)) is not None
                                   and self._update_of(update, v) is not None]
                        tested = stepped or tested
                    decls = tested[:1]
                if len(decls) == 1:
                    var = self._declared_var(f, decls[0])
                    if var is not None and var.init is not None:
                        loop.start = m.const_value(var.init)
            elif init is not None and init.type == "assignment_expression":
                left = init.child_by_field_name("left")
                if left is not None and left.type == "identifier":
                    var = m.resolve(left)
                    right = init.child_by_field_name("right")
                    loop.start = m.const_value(right) if right is not None else None
            loop.var = var
            if var is not None and update is not None and update.type == "comma_expression":
                update = self._update_of(update, var)
            if var is not None and cond is not None:
                loop.bound, strict, sign = self._bound(cond, var)
                loop.step = self._step(update, var)
                if loop.start is not None and loop.bound is not None and loop.step:
                    span = (loop.bound - loop.start) if loop.step > 0 else (loop.start - loop.bound)
                    if sign != (1 if loop.step > 0 else -1):
                        loop.trip_count = None
                    else:
                        if not strict:
                            span += abs(loop.step)
                        loop.trip_count = max(0, int(-(-span // abs(loop.step))))
            body = node.child_by_field_name("body")
            if var is not None and cond is not None:
                loop.constant_trip = self._constant_trip(var, init, cond, update)
            if var is not None and body is not None:
                loop.counter_modified = self._modified_in(var, body)
                if loop.counter_modified:
                    loop.trip_count = None
                    loop.constant_trip = False
            loop.unroll = self._pragma_unroll(node)
            f.loops.append(loop)

    def _tested_by(self, declarator: ts.Node, cond: ts.Node) -> bool:
        """True if the variable ``declarator`` declares is an operand of the comparison ``cond`` or
        of one of its ``&&`` conjuncts."""
        nm, _, _ = self.unwrap_declarator(declarator)
        c = unparen(cond)
        if nm is None or c.type != "binary_expression":
            return False
        left, right = c.child_by_field_name("left"), c.child_by_field_name("right")
        op = c.child_by_field_name("operator")
        if op is not None and op.type == "&&":
            return any(x is not None and self._tested_by(declarator, x) for x in (left, right))
        name = self.text(nm)
        return any(x is not None and unparen(x).type == "identifier" and self.text(unparen(x)) == name
                   for x in (left, right))

    def _declared_var(self, f, declarator: ts.Node) -> Var | None:
        nm, _, _ = self.unwrap_declarator(declarator)
        if nm is None:
            return None
        # the first of f's locals declared at ``nm``: by node id (one tree), from a map made per
        # function at its first loop (the locals are all collected by then), not a scan per loop
        maps = self.__dict__.setdefault("_vars_by_node", {})
        by_node = maps.get(id(f))
        if by_node is None:
            by_node = maps[id(f)] = {}
            for v in f.vars:
                by_node.setdefault(v.node.id, v)
        return by_node.get(nm.id)

    def _update_of(self, update: ts.Node, var: Var) -> ts.Node | None:
        """The part of a comma-separated loop update (``++ldg, col += C``) that steps ``var``; None
        when none or several do."""
        m = self.m
        parts, stack = [], [update]
        while stack:
            n = stack.pop()
            if n.type == "comma_expression":
                stack.extend(c for c in n.named_children if c.type != "comment")
            else:
                parts.append(n)
        mine = []
        for p in parts:
            target = p.child_by_field_name("argument") if p.type == "update_expression" else (
                p.child_by_field_name("left") if p.type == "assignment_expression" else None)
            if target is not None and unparen(target).type == "identifier" and m.resolve(unparen(target)) is var:
                mine.append(p)
        return mine[0] if len(mine) == 1 else None

    def _constant_trip(self, var: Var, init: ts.Node | None, cond: ts.Node, update: ts.Node | None) -> bool:
        m = self.m
        start = var.init if var.init is not None and init is not None and init.type == "declaration" else (
            init.child_by_field_name("right") if init is not None and init.type == "assignment_expression" else None)
        if start is None or not m.is_constant(start):
            return False
        other = compared_with(m, cond, var)
        if other is None or not m.is_constant(other) or update is None:
            return False
        if update.type == "update_expression":
            return True
        if update.type == "assignment_expression":
            r = update.child_by_field_name("right")
            return r is not None and m.is_constant(r)
        return False

    def _bound(self, cond: ts.Node, var: Var) -> tuple[int | float | None, bool, int]:
        m = self.m
        cond = unparen(cond)
        if cond.type != "binary_expression":
            return None, True, 0
        left, right = cond.child_by_field_name("left"), cond.child_by_field_name("right")
        op = self.text(cond.child_by_field_name("operator"))
        if left is None or right is None:
            return None, True, 0
        if unparen(left).type == "identifier" and m.resolve(unparen(left)) is var:
            other, flip = right, False
        elif unparen(right).type == "identifier" and m.resolve(unparen(right)) is var:
            other, flip = left, True
        else:
            return None, True, 0
        if flip:
            op = {"<": ">", ">": "<", "<=": ">=", ">=": "<="}.get(op, op)
        val = m.const_value(other)
        if op in ("<", "!="):
            return val, True, 1
        if op == "<=":
            return val, False, 1
        if op == ">":
            return val, True, -1
        if op == ">=":
            return val, False, -1
        return None, True, 0

    def _step(self, update: ts.Node | None, var: Var) -> int | float | None:
        m = self.m
        if update is None:
            return None
        if update.type == "update_expression":
            arg = update.child_by_field_name("argument")
            if arg is not None and m.resolve(arg) is var:
                return 1 if "++" in self.text(update) else -1
            return None
        if update.type == "assignment_expression":
            left, right = update.child_by_field_name("left"), update.child_by_field_name("right")
            op = self.text(update.child_by_field_name("operator"))
            if left is None or right is None or m.resolve(left) is not var:
                return None
            val = m.const_value(right)
            if val is None:
                return None
            if op == "+=":
                return val
            if op == "-=":
                return -val
            if op in ("*=", "<<=", ">>=", "/="):
                return None
        return None

    def _modified_in(self, var: Var, body: ts.Node) -> bool:
        return any(body.start_byte <= a.start_byte < body.end_byte for a in self.m.direct_writes(var))

    def _pragma_unroll(self, node: ts.Node) -> int | None:
        for mk in self.m.masks_between(node.start_byte, node.start_byte + 1, "loop-macro"):
            if mk.value == "unroll":
                return 0  # `FOR_UNROLL (...)`: a loop macro that asks for a full unroll
        text = self.m.pragma_before(node)
        if text is None:
            return None
        mm = re.match(r"\s*(?:#\s*pragma|_Pragma\s*\(\s*\")\s*unroll\s*(\(?\s*(\d+)\s*\)?)?", text)
        if mm:
            return (int(mm.group(2)) if len(mm.group(2)) <= 9 else None) if mm.group(2) else 0
        return None

    # ---- calls: barriers and launches --------------------------------------------------------------
    def collect_calls(self) -> None:
        m = self.m
        table = B.BARRIERS[self.lang]
        # A call's callee name is a piece of the call's text: only calls whose text holds one of the
        # names looked for are read (most files call no barrier; reading every call's name was 5 % of
        # the model build)
        data = m.source.data  # (what ``text`` reads)
        at = word_starts(data, tuple(w.encode() for w in ([*table, "sync"] if self.lang == "cuda" else table)))
        for call in m.nodes("call") if at else ():
            i = bisect.bisect_left(at, call.start_byte)
            if i == len(at) or at[i] >= call.end_byte:
                continue
            name = m.callee_name(call)
            if name not in table and (name != "sync" or self.lang != "cuda"):
                continue  # (most calls: neither a barrier nor `block.sync()`)
            f = m.function_at(call.start_byte)
            if name in table and f is not None:
                scope, orders = table[name]
                if self.lang == "metal":
                    flags = set()
                    for a in m.call_args(call):
                        words = [w for w in re.findall(r"mem_\w+", self.text(a)) if w != "mem_flags"]
                        for word in words:
                            if word in B.METAL_MEM_FLAGS:
                                flags.update(B.METAL_MEM_FLAGS[word].split())
                            elif word != "mem_none":
                                words = []  # a flag we do not know: assume it orders every space
                        if not words:  # a variable, a macro, an unknown flag
                            flags.update(("threadgroup", "device", "texture"))
                    orders = frozenset(flags)
                f.barriers.append(Barrier(call, name, scope, orders, f))
            elif self.lang == "cuda" and name in ("sync",) and f is not None:
                fn = call.child_by_field_name("function")
                if fn is not None and fn.type == "field_expression":  # block.sync()
                    obj = self.text(fn.child_by_field_name("argument"))
                    if "block" in obj or obj in ("cta", "tb", "g"):
                        f.barriers.append(Barrier(call, "sync", "group", frozenset({"threadgroup", "device"}), f))
        for ks in m.nodes("launch"):
            call = ks.parent
            if call is None or call.type != "call_expression":
                continue
            fn = call.child_by_field_name("function")
            name = self.text(fn.child_by_field_name("name") or fn) if fn is not None and fn.type == "template_function" else (self.text(fn) if fn is not None else "")
            args = [c for c in ks.named_children if c.type != "comment"]
            m.launches.append(LaunchSite(call, name.split("::")[-1], *(args + [None] * 4)[:4], function=m.function_at(call.start_byte)))

    # ---- memory accesses --------------------------------------------------------------------------
    def collect_accesses(self) -> None:
        m = self.m
        # Computed downwards from the writes and chains: `node.parent` costs time proportional to the
        # node's depth, and asking it of every access was quadratic on long expressions.
        written = _write_targets(m)
        subscripts = [(s, s.child_by_field_name("argument")) for s in m.nodes("subscript")]
        inner = {a.id for _, a in subscripts if a is not None and a.type == "subscript_expression"}
        for node, arg in subscripts:
            f = m.function_at(node.start_byte)
            if f is None:
                continue
            if node.id in inner:
                continue  # only the outermost subscript of a chain
            base = m.base_var(arg) if arg is not None else None
            if base is None:
                continue
            space = self.space_of(base)
            if space is None:
                continue
            f.accesses.append(Access(node, base, space, node.id in written, _index_of(node)))
        text = m.source.data  # (what ``self.text`` reads)
        for node in m.nodes("field"):
            s, e = node.start_byte, node.end_byte
            if e - s <= 4096 and text.find(b"->", s, e) < 0:
                continue  # `a.b`: no `->` in its text (a long node is not searched: nested ones would be quadratic)
            f = m.function_at(s)
            if f is None:
                continue
            op = node.child_by_field_name("operator")
            if op is None or self.text(op) != "->":
                continue
            base = m.base_var(node.child_by_field_name("argument"))
            if base is None or self.space_of(base) is None:
                continue
            f.accesses.append(Access(node, base, self.space_of(base), node.id in written, None))
        for f in m.functions:
            f.accesses.sort(key=lambda a: a.node.start_byte)

    def space_of(self, v: Var) -> str | None:
        s = v.address_space
        if self.lang == "metal":
            if s in ("device", "constant", "threadgroup", "threadgroup_imageblock", "object_data", "ray_data"):
                return "threadgroup" if s == "threadgroup" else s
            if v.type.kind == "texture":
                return "texture"
            return None
        if self.lang == "cuda":
            if s == "shared":
                return "threadgroup"
            if s in ("global", "constant"):
                return "device" if s == "global" else "constant"
            if v.type.kind == "pointer" and v.is_param and v.function is not None and v.function.is_device_code:
                return "device"
            return None
        if s == "shared":
            return "threadgroup"
        if s == "buffer":
            return "device"
        if s == "uniform" or s == "push_constant":
            return "constant" if v.type.kind != "texture" else "texture"
        if v.type.kind == "texture":
            return "texture"
        return None

    # ---- uniformity ---------------------------------------------------------------------------------
    def compute_dependence(self, compiled: bool = True) -> None:
        """The thread dependence of every variable, write and helper result (see ``_fixpoint``);
        ``compiled=False`` walks the expression trees each round (what the compiled form must equal)."""
        m = self.m
        deps: dict[Var, frozenset[str]] = {}
        for f in m.functions:
            for p in f.params:
                if self.lang == "metal" and p.role:
                    deps[p] = B.METAL_ROLES.get(p.role, frozenset())
                elif f.kind in ("vertex", "fragment") or (f.is_entry and self.lang == "metal" and f.kind not in ("kernel",)):
                    deps[p] = frozenset({B.LOCAL})
                elif self.lang == "glsl" and p.is_param:
                    deps[p] = frozenset()
        for g in m.globals:
            if self.lang == "glsl" and g.address_space in ("in",) and m.stage not in ("compute", None):
                deps[g] = frozenset({B.LOCAL})
        m.var_deps = deps
        # (collected already when a question to the flow's structure came first: model.write_flow)
        collected = m.__dict__.pop("_collected_writes", None)
        mem_refs, writes, unknown_stores, opaque_writes, conds, flow = collected or self.collect_writes()
        for v in mem_refs:
            deps[v] = frozenset({B.UNKNOWN_DEP})
        m.flow = flow
        from shaderlint.model.expr import DependenceTooDeep  # noqa: PLC0415
        intrinsic0 = dict(m._intrinsic_deps)
        initial = dict(deps)
        try:
            # the expressions compiled to their leaves (FileModel._dep_formula): the same values
            if not compiled:
                raise DependenceTooDeep
            m._dep_leaves, m._dep_forms, m._dep_specs = {}, {}, {}
            self._fixpoint(writes, conds, opaque_writes, unknown_stores, compiled=True)
        except DependenceTooDeep:  # an expression nested too deep for that: walk the trees
            deps.clear()
            deps.update(initial)
            flow.deps.clear()
            m._intrinsic_deps = dict(intrinsic0)
            m._dep_leaves = None
            self._fixpoint(writes, conds, opaque_writes, unknown_stores, compiled=False)
        finally:
            m._dep_leaves, m._dep_forms, m._dep_specs = None, {}, {}
        m._dep_reads = None
        m._deps_cache.clear()

    def collect_writes(self) -> tuple:
        """(memory references, writes, unknown stores, opaque writes, their conditions, the
        :class:`ReachingWrites` over them): what the dependence fixpoint runs on, collected from the
        finished model (pure functions of the tree)."""
        m = self.m
        # References bound to memory (`int& count = smem_ints[0];`, `auto& s = *reinterpret_cast<S*>(smem);`,
        # `auto& bin = storage.bin;` on a reference parameter) name that memory: a read is a load (not
        # known either way, like a shared-memory read) and a write is a store, which leaves the
        # reference bound where it was. vLLM's top-k kernels publish a shared threshold through such
        # references from one thread (`if (tid == 0) s_bin = b;`), barrier, then branch on it.
        mem_refs = self.memory_references()
        # Every write to a local variable: (target var, rhs nodes, statement)
        writes: list[tuple[Var, list[ts.Node], ts.Node]] = []
        unknown_stores: set[int] = set()  # stores that may go through a pointer member (see below)
        for f in m.functions:
            for v in f.vars:
                if v.init is not None:
                    writes.append((v, [v.init], v.decl))
        for a in m.nodes("assign"):
            left, right = a.child_by_field_name("left"), a.child_by_field_name("right")
            if left is None or right is None:
                continue
            base = m.base_var(left)
            if base is None or base.is_global or base.address_space is not None or base in mem_refs:
                continue
            if self.stores_through_pointer(left):
                # `p.data[tid] = x` on a struct holding pointers (a kernel's parameter block): the
                # store goes to the memory `p.data` points at, `p` keeps its value (vLLM's
                # `Params p` made every later `p.G` thread-dependent).
                continue
            if unparen(left).type != "identifier" and base.type.kind == "pointer" and not base.dims:
                # `p[tid] = x`, `p->f = x`, `*p = x` store through the pointer: the pointer keeps its
                # value (the memory it points at changes, shared or global for all the analysis knows).
                # Counting the store as a write to `p` made every later `p[k]` look thread-dependent
                # (thundersvm's block-min helper writing `index[tid]` and returning `index[0]`).
                continue
            rhs = [right]
            if left.type != "identifier":
                rhs.extend(c for c in left.named_children if c is not None)
            if self.text(a.child_by_field_name("operator")) != "=":
                rhs.append(left)
            if self.store_through_unknown_member(left):
                unknown_stores.add(a.id)
            writes.append((base, rhs, a))
        for u in m.nodes("update"):
            arg = u.child_by_field_name("argument")
            base = m.base_var(arg) if arg is not None else None
            if base is not None and not base.is_global and base not in mem_refs:
                if unparen(arg).type != "identifier" and base.type.kind == "pointer" and not base.dims:
                    continue  # `p[i]++` stores through the pointer (see above)
                if self.stores_through_pointer(arg):
                    continue
                writes.append((base, [arg], u))
        # A local handed by name to a call of unknown signature may be written through a reference
        # there (`BlockReduce(tmp).Reduce(lo, op)`): a write at the call, not known either way when
        # what the call reads is thread-dependent (it may be an input only), else nothing known.
        # The guess must not make a uniform variable look thread-dependent or unknown.
        opaque_writes: set[int] = set()
        for call, v in opaque_call_outputs(m):
            if v not in mem_refs:
                writes.append((v, [call], call))
                opaque_writes.add(call.id)
        writes.sort(key=lambda w: w[2].start_byte)  # source order: most values flow forward
        conds = [_value_conditions(m, stmt) for _, _, stmt in writes]  # structure: computed once
        # Each write's own dependence too: a use that a later plain `v = …;` dominates sees only the
        # writes that can reach it (model.flow), not the union over the variable's writes.
        return mem_refs, writes, unknown_stores, opaque_writes, conds, ReachingWrites(m, writes, conds, mem_refs)

    def _fixpoint(self, writes: list[tuple[Var, list[ts.Node], ts.Node]], conds: list[list[ts.Node]],
                  opaque_writes: set[int], unknown_stores: set[int], compiled: bool) -> None:
        from shaderlint.model.idioms import uniform_idiom  # noqa: PLC0415 (idioms imports the model's helpers)
        m = self.m
        deps = m._var_deps
        wdeps = m._flow.deps
        leaves = m._dep_leaves
        # uniform_idiom(c) per condition, reused while nothing it can read changed: no write's or
        # variable's dependence grew since (``version``) in this round (its memo of values)
        idiom_cache: dict[int, tuple[int, bool]] = {}
        version = 0
        # Rounds in source order until nothing changes. A round that changes only values nothing
        # read before they changed ends it too: the next round would read what this one did and
        # change nothing (most files: one round instead of two).
        for _ in range(12):
            stale = False  # a value changed after something read it: another round
            reads = m._dep_reads = {}
            m._deps_cache.clear()
            if compiled:
                leaves.clear()
            version += 1
            for (var, rhs, stmt), cs in zip(writes, conds):
                d: set[str] = set()
                for r in rhs:
                    d |= m.deps(r)
                if stmt.id in opaque_writes:
                    cs = ()
                    d = {B.UNKNOWN_DEP} if B.LOCAL in d else set()
                for c in cs:
                    cd = m.deps(c)
                    if B.LOCAL in cd:
                        hit = idiom_cache.get(c.id)
                        if hit is None or hit[0] != version or not compiled:
                            hit = idiom_cache[c.id] = (version, uniform_idiom(m, m.function_at(c.start_byte), c))
                        if hit[1]:
                            continue  # same in every thread (a vote through shared memory, a uniform trip count)
                    d |= cd
                if stmt.id in unknown_stores and d:
                    d = {B.UNKNOWN_DEP}
                key = (id(var), stmt.id)
                old = wdeps.get(key, frozenset())
                if not d <= old:
                    wdeps[key] = old | d
                    stale = stale or key in reads
                    version += 1
                vd = deps.get(var, frozenset())
                if not d <= vd:
                    deps[var] = vd | d
                    stale = stale or var in reads
                    version += 1
            # Helper functions: what their result depends on besides their arguments.
            for f in m.functions:
                if f.is_entry or f.body is None:
                    continue
                d = set()
                for r in self.returns(f):
                    d |= m.deps(r)
                fd = frozenset(d)
                if fd != m.intrinsic_deps.get(f, frozenset()):
                    m.intrinsic_deps[f] = fd
                    stale = True
            if not stale:
                break

    def store_through_unknown_member(self, lvalue: ts.Node) -> bool:
        """``params.ptr[i] = x`` where the type of ``params.ptr`` is not known (a parameter block
        declared in a header): the store goes either through a pointer member, leaving ``params`` as
        it was, or into an array member of the thread's own copy. Which one is unknown, so the write
        makes ``params`` unknown, not thread-dependent (flashinfer's routing kernels wrote
        ``params.mPtrExpandedIdxToPermutedIdx[idx]`` and every later ``params.mNumTokens`` looked
        thread-dependent, which made their tile loops 'divergent')."""
        n = unparen(lvalue)
        for _ in range(64):
            if n.type == "subscript_expression":
                arg = n.child_by_field_name("argument")
                if arg is None:
                    return False
                a = unparen(arg)
                if a.type == "field_expression" and not self.m.type_of(a).is_known:
                    return True
                n = a
            elif n.type == "field_expression":
                nxt = n.child_by_field_name("argument")
                if nxt is None:
                    return False
                n = unparen(nxt)
            else:
                return False
        return False

    def stores_through_pointer(self, lvalue: ts.Node) -> bool:
        """True when writing to ``lvalue`` stores through a pointer (``s.ptr[i]``, ``a.b->c``,
        ``*p``, ``p[i].f``) rather than into the variable at its root (``a[i]``, ``s.f``, ``s.arr[i]``).
        Unknown types count as not through a pointer."""
        m = self.m
        n = unparen(lvalue)
        for _ in range(64):
            t = n.type
            if t == "pointer_expression":
                op = n.child_by_field_name("operator")
                return op is not None and self.text(op) == "*"
            if t == "field_expression":
                op = n.child_by_field_name("operator")
                if op is not None and self.text(op) == "->":
                    return True
            elif t == "subscript_expression":
                arg = n.child_by_field_name("argument")
                if arg is None:
                    return False
                a = unparen(arg)
                if a.type in ("identifier", "qualified_identifier"):
                    v = m.resolve(a)
                    return v is not None and not v.dims and v.type.kind == "pointer"
                if m.type_of(a).kind == "pointer":
                    return True
            else:
                return False
            nxt = n.child_by_field_name("argument")
            if nxt is None:
                return False
            n = unparen(nxt)
        return False

    def memory_references(self) -> set[Var]:
        """Local references (``T& r = …``) bound to memory: to an element or field reached through a
        pointer, to a dereferenced pointer, to shared/global memory, into a reference parameter or
        into another such reference. References to a thread's own variables are left out."""
        from shaderlint.model.memory import is_reference
        m = self.m
        out: set[Var] = set()
        for f in m.functions:
            # A struct passed by reference (`SelectSmem& s`, `Storage& storage`) is the caller's object,
            # in practice the block's shared scratch: `s.hist[b] = 0` and `s.bin = b` store into it
            # (vLLM topk512_gfx942.cu branched on `s.inBin` after a barrier). Scalars and arrays
            # passed by reference (out-parameters, private accumulators) are left as they were, and so
            # are Metal's `constant Params& p` buffer parameters (uniform kernel arguments).
            for p in f.params if self.lang == "cuda" and not f.is_entry else ():
                if is_reference(p) and not p.dims and not p.type.is_arithmetic and p.type.kind not in (
                        "bool", "pointer", "array"):
                    out.add(p)
            for v in sorted(f.vars, key=lambda x: x.node.start_byte):
                if v.is_param or v.init is None or not is_reference(v):
                    continue
                init = _uncast(m, unparen(v.init))
                if init.type not in ("subscript_expression", "field_expression", "pointer_expression",
                                     "identifier"):
                    continue
                if init.type != "identifier" and self.stores_through_pointer(init):
                    out.add(v)
                    continue
                base = m.base_var(init)
                if base is None:
                    continue
                if base in out or base.address_space in ("shared", "global", "threadgroup", "device") or (
                        base.is_param and is_reference(base)):
                    out.add(v)
        return out

    def returns(self, f: Function) -> list[ts.Node]:
        cache = self.__dict__.setdefault("_returns_cache", {})
        if id(f) not in cache:
            cache[id(f)] = self._returns(f)
        return cache[id(f)]

    def _returns(self, f: Function) -> list[ts.Node]:
        """The values returned by ``f`` (not by lambdas inside it)."""
        if f.body is None:
            return []
        from shaderlint.model.dispatch import nodes_in
        out: list[ts.Node] = []
        for r in nodes_in(self.m, "return", f.body.start_byte, f.body.end_byte):
            p = r.parent
            while p is not None and p.type not in ("lambda_expression", "function_definition"):
                p = p.parent
            if p is None or p.type == "function_definition":
                out.extend(c for c in r.named_children if c.type != "comment")
        return out

    def control_deps(self, node: ts.Node) -> frozenset[str]:
        return control_deps(self.m, node)


_REF_CASTS = frozenset({"reinterpret_cast", "static_cast", "const_cast"})


def _uncast(m: FileModel, init: ts.Node) -> ts.Node:
    """The operand of a C++ cast to a reference (``reinterpret_cast<S&>(smem)``): the reference is
    bound to what the operand names, as with ``*reinterpret_cast<S*>(smem)``."""
    for _ in range(8):
        if init.type != "call_expression" or m.callee_name(init) not in _REF_CASTS:
            return init
        args = [a for a in m.call_args(init) if a.type != "comment"]
        if len(args) != 1:
            return init
        init = unparen(args[0])
    return init


def control_deps(m: FileModel, node: ts.Node) -> frozenset[str]:
    """Dependence of the conditions that decide whether ``node`` executes (see
    :func:`control_conditions`)."""
    out: set[str] = set()
    for cond in control_conditions(m, node):
        out |= m.deps(cond)
    return frozenset(out)


_LOOP_TYPES = ("for_statement", "while_statement", "do_statement", "for_range_loop")


def control_conditions(m: FileModel, node: ts.Node) -> list[ts.Node]:
    """The conditions that decide whether ``node`` executes, nearest first: enclosing
    if/loop/switch/``?:`` conditions, the left operand of an enclosing ``&&``/``||``, the
    conditions guarding earlier exits in enclosing blocks (``if (c) return;``, also nested,
    inside loops or in ``else`` branches; ``break``/``continue`` of an enclosing loop) and,
    inside a loop, the conditions guarding a ``break`` or ``return`` anywhere in its body
    (later iterations run only for the threads that did not leave)."""
    cache = m.__dict__.setdefault("_control_cache", {})
    hit = cache.get(node.id)
    if hit is not None:
        return hit
    f = m.function_at(node.start_byte)
    flat, guards = _control_levels(m, node, f.node if f is not None else None)
    if True in guards and any(g and _excludable(m, c) for c, g in zip(flat, guards)) and branch_literals(m, node):
        # only the exit guards whose exits can be compiled together with ``node``: an early return in
        # ``#if !X`` does not skip a barrier in ``#if X`` (see :mod:`shaderlint.model.preproc`); a guard
        # stays when any exit statement under it is not in a branch exclusive with ``node``
        out = [c for c, g in zip(flat, guards) if not (g and _exits_exclusive(m, c, node))]
    else:
        out = list(flat)
    cache[node.id] = out
    return out


_LOOPS3 = ("for_statement", "while_statement", "do_statement")


def _control_levels(m: FileModel, node: ts.Node, stop: ts.Node | None) -> tuple[tuple[ts.Node, ...], tuple[bool, ...]]:
    """What :func:`control_conditions` collects from the ancestors of ``node`` below ``stop``
    before the exit guards are filtered for ``node``: the conditions, nearest
    first, and which of them are exit guards. Memoized per node: a node's answer is its own level's
    followed by its parent's, so the nodes of a function share their ancestors' work and each
    ``.parent`` (which costs time proportional to the node's depth) is asked once."""
    memo = m.__dict__.get("_control_levels")
    if memo is None:
        memo = m._control_levels = {}
    sid = stop.id if stop is not None else None
    path: list[tuple[ts.Node, ts.Node]] = []  # (node, parent) from ``node`` up to a memoized node
    x = node
    while True:
        got = memo.get((x.id, sid))
        if got is not None:
            break
        p = x.parent
        if p is None or p == stop:
            got = memo[(x.id, sid)] = ((), (), False)
            break
        path.append((x, p))
        x = p
    flat, guards, in_loop = got  # (in_loop: a loop among the node's ancestors below ``stop``)
    for x, p in reversed(path):
        in_loop = p.type in _LOOPS3 or in_loop
        own, own_guards = _control_level(m, x, p, in_loop)
        if own:
            flat = own + flat
            guards = own_guards + guards
        memo[(x.id, sid)] = (flat, guards, in_loop)
    return flat, guards


def _control_level(m: FileModel, child: ts.Node, parent: ts.Node,
                   in_loop: bool) -> tuple[tuple[ts.Node, ...], tuple[bool, ...]]:
    """The conditions the ancestor ``parent`` adds for the code in its child ``child`` (exit guards
    not filtered), and which of them are exit guards."""
    out: list[ts.Node] = []
    t = parent.type
    n = 0  # conditions before the exit guards
    if t in ("if_statement", "switch_statement", "conditional_expression"):
        cond = parent.child_by_field_name("condition")
        if cond is not None and child != cond:
            out.append(cond)
    elif t in _LOOP_TYPES:
        cond = parent.child_by_field_name("condition")
        if child != cond and child != parent.child_by_field_name("initializer"):
            if cond is not None:
                out.append(cond)
            n = len(out)
            body = parent.child_by_field_name("body")
            if body is not None:
                out.extend(_exit_guards(m, body, True, False))
    elif t == "binary_expression" and child == parent.child_by_field_name("right"):
        op = parent.child_by_field_name("operator")
        left = parent.child_by_field_name("left")
        if op is not None and left is not None and m.text(op) in ("&&", "||"):
            out.append(left)
    if t in ("compound_statement", "case_statement"):
        n = len(out)
        out.extend(_guards_before(m, child, in_loop))
    elif t not in _LOOP_TYPES:
        n = len(out)
    return tuple(out), (False,) * n + (True,) * (len(out) - n)


def _value_conditions(m: FileModel, stmt: ts.Node) -> list[ts.Node]:
    """The conditions whose value a write at ``stmt`` inherits: those of :func:`control_conditions`
    except, in a kernel, guards of earlier ``return``s only (``if (gx >= n) return;``). The threads
    that return are gone: the survivors all compute the same value (``const int N = psc(h) * k;``
    after the exit is uniform among them), while a barrier after the exit still has the guard among
    its own control conditions. Guards of a ``break``/``continue`` (the skipped threads live on with
    the old value), enclosing conditions and returns in helpers (the caller sees which one was taken)
    are kept."""
    conds = control_conditions(m, stmt)
    f = m.function_at(stmt.start_byte)
    if not conds or f is None or not f.is_entry:
        return conds
    out = []
    only = m.__dict__.setdefault("_only_returns_cache", {})  # per guard: its statement's exits (structure)
    at = stmt.start_byte
    for g in conds:
        hit = only.get(g.id)
        if hit is None:
            st = g.parent
            hit = only[g.id] = [st.start_byte, st.end_byte, None, st] if st is not None else [0, 0, False, None]
        if not (hit[0] <= at < hit[1]):
            if hit[2] is None:
                hit[2] = _only_returns(hit[3], g)
            if hit[2]:
                continue
        out.append(g)
    return out


def _only_returns(stmt: ts.Node, guard: ts.Node) -> bool:
    found = False
    stack = [c for c in stmt.named_children if c.id != guard.id]
    while stack:
        n = stack.pop()
        if n.type in ("break_statement", "continue_statement", "goto_statement"):
            return False
        if n.type == "return_statement":
            found = True
        elif n.type not in ("function_definition", "lambda_expression"):
            stack.extend(n.named_children)
    return found


def _exits_exclusive(m: FileModel, guard: ts.Node, node: ts.Node) -> bool:
    return _excludable(m, guard) and all(exclusive(m, e, node) for e in _guard_exits(m, guard))


def _guard_exits(m: FileModel, guard: ts.Node) -> list[ts.Node]:
    """The exit statements under the statement ``guard`` decides (memoized per guard)."""
    cache = m.__dict__.setdefault("_guard_exits_cache", {})
    got = cache.get(guard.id)
    if got is None:
        got = cache[guard.id] = []
        stmt = guard.parent
        if stmt is not None:
            stack = [c for c in stmt.named_children if c.id != guard.id]
            while stack:
                n = stack.pop()
                if n.type in ("return_statement", "break_statement", "continue_statement"):
                    got.append(n)
                elif n.type not in ("function_definition", "lambda_expression"):
                    stack.extend(n.named_children)
    return got


def _excludable(m: FileModel, guard: ts.Node) -> bool:
    """Whether ``guard``'s exits may all be exclusive with some node: there are some, and each sits
    in a preprocessor branch (:func:`shaderlint.model.preproc.exclusive` is False for any other)."""
    cache = m.__dict__.setdefault("_excludable_cache", {})
    got = cache.get(guard.id)
    if got is None:
        exits = _guard_exits(m, guard)
        got = cache[guard.id] = bool(exits) and all(branch_literals(m, e) for e in exits)
    return got


def _guards_before(m: FileModel, stmt: ts.Node, in_loop: bool) -> list[ts.Node]:
    """Exit guards of every earlier sibling of ``stmt``, nearest first (memoized along the
    sibling chain, so a long block costs linear time)."""
    cache = m.__dict__.setdefault("_guards_before_cache", {})
    key = (stmt.id, in_loop)
    hit = cache.get(key)
    if hit is not None:
        return hit
    chain = []
    prev = stmt.prev_named_sibling
    base: list[ts.Node] = []
    while prev is not None:
        k = (prev.id, in_loop)
        if k in cache:
            base = cache[k]
            chain.append(prev)
            break
        chain.append(prev)
        prev = prev.prev_named_sibling
    # chain[-1] is the oldest sibling visited; build from it forwards
    acc = base
    if chain and (chain[-1].id, in_loop) in cache:
        acc = cache[(chain[-1].id, in_loop)]
    result_for: dict[int, list[ts.Node]] = {}
    for i in range(len(chain) - 1, -1, -1):
        sib = chain[i]
        # guards before the node after `sib` = exit guards of sib + guards before sib
        acc = _exit_guards(m, sib, in_loop, in_loop) + acc
        nxt = chain[i - 1] if i > 0 else stmt
        result_for[nxt.id] = acc
    for nid, val in result_for.items():
        cache[(nid, in_loop)] = val
    if (stmt.id, in_loop) not in cache:
        cache[(stmt.id, in_loop)] = []
    return cache[(stmt.id, in_loop)]


def _exit_guards(m: FileModel, stmt: ts.Node, brk: bool, cont: bool) -> list[ts.Node]:
    """Conditions guarding the ways ``stmt`` can leave the flow that follows it: ``return``s, and
    ``break``/``continue`` that reach past it when ``brk``/``cont``. Unconditional exits add
    nothing (what follows is unreachable)."""
    cache = m.__dict__.setdefault("_exit_guard_cache", {})
    key = (stmt.id, brk, cont)
    hit = cache.get(key)
    if hit is not None:
        return hit
    seg = m.source.data[stmt.start_byte:stmt.end_byte]
    if b"return" not in seg and not ((brk and b"break" in seg) or (cont and b"continue" in seg)):
        cache[key] = []  # no exit statement anywhere inside: nothing to walk
        return cache[key]
    out: list[ts.Node] = []
    seen: set[int] = set()
    data = m.source.data
    stack: list[tuple[ts.Node, tuple[ts.Node, ...], bool, bool]] = [(stmt, (), brk, cont)]
    while stack:
        n, guards, b, c = stack.pop()
        t = n.type
        if t == "return_statement" or (b and t == "break_statement") or (c and t == "continue_statement"):
            for g in guards:
                if g.id not in seen:
                    seen.add(g.id)
                    out.append(g)
            continue
        if t in ("function_definition", "lambda_expression", "break_statement", "continue_statement"):
            continue
        cond = n.child_by_field_name("condition") if t in _GUARDING else None
        init = n.child_by_field_name("initializer") if cond is not None else None
        nb, nc = b, c
        if t in _LOOP_TYPES:
            nb = nc = False  # break/continue inside a nested loop stay there; returns still leave
        elif t == "switch_statement":
            nb = False
        for ch in n.named_children:
            s, e = ch.start_byte, ch.end_byte
            if data.find(b"return", s, e) < 0 and not (nb and data.find(b"break", s, e) >= 0) \
                    and not (nc and data.find(b"continue", s, e) >= 0):
                continue  # no exit statement in its text (as for ``stmt`` above): nothing to walk
            g = guards + (cond,) if cond is not None and ch != cond and ch != init else guards
            stack.append((ch, g, nb, nc))
    cache[key] = out
    return out


_GUARDING = ("if_statement", "switch_statement", "conditional_expression") + _LOOP_TYPES


def _in_loop(node: ts.Node, stop: ts.Node | None) -> bool:
    n = node
    while n is not None and n != stop:
        if n.type in ("for_statement", "while_statement", "do_statement"):
            return True
        n = n.parent
    return False


def _may_hold(data: bytes, node: ts.Node, a: bytes, b: bytes) -> bool:
    """False only when ``node`` cannot hold a token spelled with ``a`` or ``b`` (``/``: the division
    operators): neither byte is in its text (``data``: the parsed text). A node with an error may hold a
    zero-width missing token of any type: True. A cheap test before reading the node's children; a
    long node is not searched (nested ones would make the searches quadratic): True."""
    s, e = node.start_byte, node.end_byte
    return e - s > 4096 or data.find(a, s, e) >= 0 or data.find(b, s, e) >= 0 or node.has_error


def _write_targets(m: FileModel) -> set[int]:
    """Ids of the nodes :func:`_is_write` holds true for, found from the writes downwards: assignment
    targets, increment operands and ``&x``/``*x`` call arguments, through parentheses and member access."""
    out: set[int] = set()
    roots = [a.child_by_field_name("left") for a in m.nodes("assign")]
    roots += [u.child_by_field_name("argument") for u in m.nodes("update")]
    # (from the `&x`/`*x` expressions up to their argument lists: far fewer than the argument lists)
    roots += [p.child_by_field_name("argument") for p in m.nodes("pointer")
              if (up := p.parent) is not None and up.type == "argument_list"]
    stack = [r for r in roots if r is not None]
    while stack:
        x = stack.pop()
        out.add(x.id)
        if x.type == "parenthesized_expression":
            stack.extend(x.named_children)
        elif x.type == "field_expression":
            arg = x.child_by_field_name("argument")
            if arg is not None:
                stack.append(arg)
    return out


def _is_write(node: ts.Node) -> bool:
    p = node.parent
    while p is not None and p.type in ("parenthesized_expression", "field_expression") and p.type != "subscript_expression":
        node, p = p, p.parent
    if p is None:
        return False
    if p.type == "assignment_expression" and p.child_by_field_name("left") == node:
        return True
    if p.type == "update_expression":
        return True
    if p.type in ("pointer_expression",) and p.parent is not None and p.parent.type == "argument_list":
        return True  # &buf[i] passed to an atomic
    return False


def _index_of(node: ts.Node) -> ts.Node | None:
    idx = node.child_by_field_name("indices") or node.child_by_field_name("index")
    if idx is not None and idx.type == "subscript_argument_list":
        kids = [c for c in idx.named_children if c.type != "comment"]
        return kids[0] if kids else None
    return idx


def _parse_dims(text: str) -> tuple[int, int, int] | None:
    return parse_dims(text)


def prelude_start(f: Function) -> int:
    """Where the text that may precede a function's own declaration begins: the end of the
    previous sibling declaration (comments excluded), so scans above a function stay local."""
    node = f.outer or f.node
    prev = node.prev_sibling
    while prev is not None and prev.type == "comment":
        prev = prev.prev_sibling
    if prev is not None:
        return prev.end_byte
    parent = node.parent
    if parent is None or parent.parent is None:
        return 0  # the root starts at its first token, not at offset 0
    return parent.start_byte


def _only_comments(source: Source, start: int, end: int) -> bool:
    """True if [start, end) holds only whitespace, comments and Metal attributes."""
    seg = source.data[start:end]
    seg = re.sub(rb"//[^\n]*|/\*.*?\*/|\[\[.*?\]\]|\btemplate\s*<[^>]*>", b"", seg, flags=re.S)
    return not seg.strip()


def _attached(parsed: Parsed, start: int, end: int) -> bool:
    """True if [start, end) of the parsed (masked) text holds only whitespace, comments, attributes
    and template heads: an annotation ending at ``start`` belongs to the function at ``end``."""
    seg = parsed.parse_bytes[start:end]
    seg = re.sub(rb"//[^\n]*|/\*.*?\*/|\[\[.*?\]\]|\btemplate\s*<[^>]*>", b"", seg, flags=re.S)
    return not seg.strip()


def _declared_name(decl: ts.Node) -> ts.Node | None:
    """The identifier a (function, pointer, parenthesized) declarator declares: ``F`` in ``(*F)(float)``."""
    for _ in range(8):
        if decl is None or decl.type == "identifier":
            return decl
        inner = decl.child_by_field_name("declarator")
        if inner is None and decl.type == "parenthesized_declarator" and decl.named_child_count:
            inner = decl.named_children[0]
        decl = inner
    return None
