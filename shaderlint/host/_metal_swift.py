"""Metal host scanners: Swift (tree-sitter-swift). See :mod:`shaderlint.host.metal`."""

from __future__ import annotations

import re

import tree_sitter as ts

from shaderlint.host._metal_analysis import _Analysis
from shaderlint.host._metal_values import NULL, _Call, _Decl, _Kernel, _Param, _Str, _arith, _parse_int


class _Swift(_Analysis):
    language_name = "swift"
    FUNCTIONS = frozenset(
        {"function_declaration", "init_declaration", "deinit_declaration", "lambda_literal", "computed_property",
         "computed_getter", "computed_setter", "subscript_declaration"}
    )
    SEQUENCES = frozenset({"statements", "function_body", "source_file", "class_body"})
    CONTROL = frozenset(
        {"if_statement", "guard_statement", "switch_statement", "switch_entry", "ternary_expression",
         "conjunction_expression", "disjunction_expression", "catch_block", "do_statement"}
    )
    LOOPS = frozenset({"for_statement", "while_statement", "repeat_while_statement"})
    IDENT = "simple_identifier"
    global_closed = False
    type_names: set[str] | None = None
    _TYPE_SCOPES = frozenset({"class_body", "protocol_body", "enum_class_body", "source_file"})

    def decl_scope(self, node: ts.Node) -> tuple[tuple[int, int], bool]:
        """(scope, global) for a declaration at ``node``."""
        p = node.parent
        if p is None or p.type in self._TYPE_SCOPES or self.func_of(node) is None:
            return (0, len(self.data)), True
        return (p.start_byte, p.end_byte), False

    def visit(self, node: ts.Node) -> None:
        t = node.type
        if t == "simple_identifier":
            self.idents.setdefault(self.text(node), []).append(node.start_byte)
        elif t == "line_string_literal":
            kids = node.named_children
            if len(kids) == 1 and kids[0].type == "line_str_text":
                self.note_literal(node, kids[0])
        elif t == "call_expression":
            self.note_call(node)
        elif t == "property_declaration":
            self.visit_property(node)
        elif t == "assignment":
            self.visit_assignment(node)
        elif t in ("if_statement", "guard_statement", "while_statement"):
            self.visit_conditional_binding(node)
        elif t == "parameter":
            self.visit_parameter(node)
        elif t == "lambda_parameter":
            name = node.child_by_field_name("name")
            if name is not None and name.type == "simple_identifier":
                self.local_unknown(name, node)
        elif t == "pattern" and (node.parent is None or node.parent.type != "property_declaration"):
            for ident in self.pattern_names(node):
                self.local_unknown(ident, node)
        elif t == "prefix_expression":
            op = node.child_by_field_name("operation")
            target = node.child_by_field_name("target")
            if op is not None and self.text(op) == "&" and target is not None:
                self.unknown_write(target)
        elif t == "function_declaration":
            name = node.child_by_field_name("name")
            if name is not None:
                self.functions.setdefault(self.text(name), []).append(node)

    def pattern_names(self, node: ts.Node) -> list[ts.Node]:
        out = []
        stack = [node]
        while stack:
            n = stack.pop()
            if n.type == "simple_identifier":
                out.append(n)
            elif n.type not in ("user_type", "type_annotation"):
                stack.extend(n.children)
        return out

    _BINDING_SCOPES = frozenset(
        {"lambda_literal", "for_statement", "switch_entry", "catch_block", "if_statement", "while_statement",
         "statements", "function_body", "function_declaration", "init_declaration", "source_file"}
    )

    def local_unknown(self, ident: ts.Node, at: ts.Node) -> None:
        """A name bound by a closure parameter, a loop, a ``case let`` or a catch: unknown value."""
        p = at.parent
        while p is not None and p.type not in self._BINDING_SCOPES:
            p = p.parent
        if p is not None and p.type == "statements" and at.parent is not None and at.parent.type == "guard_statement":
            p = p.parent if p.parent is not None else p
        if p is None or p.type == "source_file":
            return
        self.add_decl(_Decl(self.text(ident), ident.start_byte, (p.start_byte, p.end_byte), "unknown"))

    def visit_property(self, node: ts.Node) -> None:
        scope, is_global = self.decl_scope(node)
        if is_global:
            binding = next((c for c in node.children if c.type == "value_binding_pattern"), None)
            modifiers = next((c for c in node.children if c.type == "modifiers"), None)
            private = modifiers is not None and re.search(r"\b(private|fileprivate)\b", self.text(modifiers))
            self.global_closed = (binding is not None and self.text(binding).strip() == "let") or bool(private)
        current = None
        for i, child in enumerate(node.children):
            f = node.field_name_for_child(i)
            if f == "name":
                if current is not None:
                    self.finish_decl(current, None, scope, is_global)
                current = child
            elif f == "value" and current is not None:
                self.finish_decl(current, child, scope, is_global)
                current = None
            elif child.type in ("computed_property",) and current is not None:
                self.finish_decl(current, "unknown", scope, is_global)
                current = None
        if current is not None:
            self.finish_decl(current, None, scope, is_global)

    def finish_decl(self, pattern: ts.Node, value, scope, is_global: bool) -> None:
        bound = pattern.child_by_field_name("bound_identifier")
        if bound is None:
            for ident in self.pattern_names(pattern):
                self.add_decl(_Decl(self.text(ident), ident.start_byte, scope, "global" if is_global else "unknown"))
                if is_global:
                    self.add_prop(self.text(ident), ident.start_byte, "unknown")
            return
        name = self.text(bound)
        if is_global:
            self.declare_global(name, self.global_closed)
            self.add_decl(_Decl(name, bound.start_byte, scope, "global"))
            if value is not None:
                self.add_prop(name, bound.start_byte, value)
        else:
            self.add_decl(_Decl(name, bound.start_byte, scope, value))

    def visit_parameter(self, node: ts.Node) -> None:
        func = self.func_of(node)
        name = None
        for i, child in enumerate(node.children):
            if node.field_name_for_child(i) == "name" and child.type == "simple_identifier":
                name = child
                break
        if name is None or func is None:
            return
        siblings = node.parent.named_children if node.parent is not None else []
        index = sum(1 for c in siblings if c.type == "parameter" and c.start_byte < node.start_byte)
        scope = (func.start_byte, func.end_byte)
        self.add_decl(_Decl(self.text(name), name.start_byte, scope, None, _Param(func.id, index)))

    def visit_conditional_binding(self, node: ts.Node) -> None:
        children = node.children
        for i, child in enumerate(children):
            if node.field_name_for_child(i) != "bound_identifier":
                continue
            value = None
            j = i + 1
            if j < len(children) and children[j].type == "=":
                j += 1
                value = children[j] if j < len(children) else None
            if node.type == "guard_statement":
                scope = self.scope_of(node)
            else:
                scope = (node.start_byte, node.end_byte)
            self.add_decl(_Decl(self.text(child), child.start_byte, scope, value if value is not None else "unknown"))

    def visit_assignment(self, node: ts.Node) -> None:
        target = node.child_by_field_name("target")
        op = node.child_by_field_name("operator")
        result = node.child_by_field_name("result")
        if target is None:
            return
        inner = target.named_children[0] if target.named_children else None
        if inner is None:
            return
        value = result if (op is not None and self.text(op) == "=" and result is not None) else "unknown"
        if inner.type == "simple_identifier":
            self.add_assign(self.text(inner), node.start_byte, value)
        elif inner.type == "navigation_expression" and self.self_member(inner) is not None:
            self.add_prop(self.self_member(inner), node.start_byte, value)
        else:
            self.unknown_write(inner)

    _TYPE_DECL = re.compile(rb"\b(?:class|struct|enum|actor|extension)\s+([A-Za-z_][A-Za-z0-9_]*)")

    def self_member(self, nav: ts.Node) -> str | None:
        """``x`` in ``self.x``, ``Self.x`` or ``T.x`` for a type ``T`` this file declares."""
        target = nav.child_by_field_name("target")
        suffix = nav.child_by_field_name("suffix")
        if target is None or suffix is None:
            return None
        if target.type != "self_expression":
            if target.type != "simple_identifier":
                return None
            if self.type_names is None:
                self.type_names = {m.group(1).decode() for m in self._TYPE_DECL.finditer(self.data)}
            name = self.text(target)
            if name != "Self" and name not in self.type_names:
                return None
        ident = suffix.child_by_field_name("suffix")
        return self.text(ident) if ident is not None and ident.type == "simple_identifier" else None

    def unknown_write(self, node: ts.Node) -> None:
        """``x.width = …``, ``x[i] = …``, ``&x``: ``x`` (or ``self.x``) is unknown from here on."""
        n = node
        for _ in range(64):
            if n.type == "simple_identifier":
                self.add_assign(self.text(n), node.start_byte, "unknown")
                return
            if n.type == "navigation_expression" and self.self_member(n) is not None:
                self.add_prop(self.self_member(n), node.start_byte, "unknown")
                return
            kids = n.named_children
            if not kids:
                return
            n = kids[0]

    def call_of(self, node: ts.Node) -> _Call | None:
        if node.type != "call_expression" or node.named_child_count < 2:
            return None
        callee = node.named_children[0]
        suffix = node.named_children[1]
        if suffix.type != "call_suffix":
            return None
        receiver = None
        if callee.type == "navigation_expression":
            nsuffix = callee.child_by_field_name("suffix")
            ident = nsuffix.child_by_field_name("suffix") if nsuffix is not None else None
            if ident is None:
                return None
            name = self.text(ident)
            receiver = callee.child_by_field_name("target")
        elif callee.type == "simple_identifier":
            name = self.text(callee)
        else:
            return None
        labels, args = [], []
        va = next((c for c in suffix.named_children if c.type == "value_arguments"), None)
        if va is not None:
            for arg in va.named_children:
                if arg.type != "value_argument":
                    continue
                label = arg.child_by_field_name("name")
                value = arg.child_by_field_name("value")
                labels.append(self.text(label).strip() if label is not None else "")
                args.append(value)
        if any(a is None for a in args):
            return None
        return _Call(name, tuple(labels), args, receiver, node)

    def truncation_reader(self):
        from shaderlint.host._truncation import SwiftReader

        return SwiftReader(self)

    def helper_key(self, call: _Call) -> str | None:
        if call.receiver is None or call.receiver.type == "self_expression":
            return call.name
        return None

    def is_receiver_position(self, node: ts.Node) -> bool:
        p = node.parent
        if p is None or p.type != "navigation_expression" or not p.named_children:
            return False
        return p.named_children[0].id == node.id and p.parent is not None and p.parent.type == "call_expression"

    _PASS = frozenset({"try_expression", "await_expression"})

    def eval_node(self, node: ts.Node, depth: int) -> object:
        t = node.type
        if t == "integer_literal":
            return _parse_int(self.text(node))
        if t == "line_string_literal":
            kids = node.named_children
            if len(kids) == 1 and kids[0].type == "line_str_text":
                return _Str(self.text(kids[0]), node.start_byte)
            if not kids:
                return _Str("")
            return None
        if t == "simple_identifier":
            name = self.text(node)
            if name == "nil":
                return NULL
            return self.eval_name(name, node, depth)
        if t == "call_expression":
            call = self.call_of(node)
            return self.eval_call(call, depth) if call is not None else None
        if t in self._PASS:
            e = node.child_by_field_name("expr")
            return self.eval(e, depth) if e is not None else None
        if t == "postfix_expression":
            op = node.child_by_field_name("operation")
            if op is not None and self.text(op) in ("!", "?"):
                return self.eval(node.child_by_field_name("target"), depth)
            return None
        if t == "as_expression":
            v = self.eval(node.child_by_field_name("expr"), depth)
            return v if isinstance(v, (int, _Kernel)) else None
        if t == "tuple_expression":
            kids = node.named_children
            return self.eval(kids[0], depth) if len(kids) == 1 else None
        if t in ("additive_expression", "multiplicative_expression", "bitwise_operation"):
            op = node.child_by_field_name("op")
            a = self.eval(node.child_by_field_name("lhs"), depth)
            b = self.eval(node.child_by_field_name("rhs"), depth)
            if isinstance(a, int) and isinstance(b, int) and op is not None:
                return _arith(self.text(op), a, b)
            return None
        if t == "prefix_expression":
            op = node.child_by_field_name("operation")
            v = self.eval(node.child_by_field_name("target"), depth)
            if isinstance(v, int) and op is not None and self.text(op) in ("-", "+"):
                return -v if self.text(op) == "-" else v
            return None
        if t == "navigation_expression":
            member = self.self_member(node)
            if member is not None:
                return self.eval_property(member, depth)
            return None
        return None
