"""Metal host scanners: Objective-C(++) (tree-sitter-objc) and metal-cpp (tree-sitter-cpp).

See :mod:`shaderlint.host.metal`.
"""

from __future__ import annotations

import re

import tree_sitter as ts

from shaderlint.host._metal_analysis import _Analysis
from shaderlint.host._metal_values import NULL, _Call, _Decl, _Kernel, _Param, _Str, _arith, _parse_int


class _CFamily(_Analysis):
    FUNCTIONS = frozenset({"function_definition", "method_definition", "block_literal", "lambda_expression"})
    SEQUENCES = frozenset({"compound_statement", "translation_unit", "declaration_list", "implementation_definition"})
    CONTROL = frozenset(
        {"if_statement", "switch_statement", "case_statement", "conditional_expression", "else_clause",
         "try_statement", "catch_clause", "@try", "preproc_if", "preproc_ifdef", "preproc_else", "preproc_elif"}
    )
    LOOPS = frozenset({"for_statement", "while_statement", "do_statement", "for_range_loop", "for_in_statement"})
    _TYPE_SCOPES = frozenset(
        {"translation_unit", "field_declaration_list", "declaration_list", "class_implementation",
         "class_interface", "instance_variables", "implementation_definition"}
    )

    def visit(self, node: ts.Node) -> None:
        t = node.type
        if t == "identifier":
            self.idents.setdefault(self.text(node), []).append(node.start_byte)
        elif t == "string_literal":
            kids = node.named_children
            if len(kids) == 1 and kids[0].type == "string_content":
                self.note_literal(node, kids[0])
        elif t in ("call_expression", "message_expression"):
            self.note_call(node)
            if t == "message_expression":
                self.note_setter(node)
        elif t == "declaration" or t == "field_declaration":
            self.visit_declaration(node)
        elif t == "assignment_expression":
            self.visit_assignment(node)
        elif t == "update_expression":
            self.unknown_write(node.child_by_field_name("argument"))
        elif t == "pointer_expression":
            op = node.child_by_field_name("operator")
            if op is not None and self.text(op) == "&":
                self.unknown_write(node.child_by_field_name("argument"))
        elif t in ("parameter_declaration", "method_parameter"):
            self.visit_parameter(node)
        elif t == "for_range_loop":
            d = node.child_by_field_name("declarator")
            ident = self.declarator_name(d) if d is not None else None
            if ident is not None:
                self.add_decl(_Decl(self.text(ident), ident.start_byte, (node.start_byte, node.end_byte), "unknown"))
        elif t == "preproc_def":
            name = node.child_by_field_name("name")
            value = node.child_by_field_name("value")
            if name is not None:
                self.declare_global(self.text(name), True)
                self.add_decl(_Decl(self.text(name), name.start_byte, (0, len(self.data)), "global"))
                self.add_prop(self.text(name), name.start_byte, value if value is not None else "unknown")
        elif t == "field_initializer":
            kids = node.named_children
            if len(kids) == 2 and kids[0].type == "field_identifier":
                args = [c for c in kids[1].named_children if c.type != "comment"]
                self.add_prop(self.text(kids[0]), node.start_byte, args[0] if len(args) == 1 else "unknown")
        elif t == "function_definition":
            d = node.child_by_field_name("declarator")
            while d is not None and d.type in ("pointer_declarator", "reference_declarator", "function_declarator"):
                d = d.child_by_field_name("declarator")
            if d is not None and d.type in ("identifier", "field_identifier"):
                self.functions.setdefault(self.text(d), []).append(node)
        elif t == "method_definition":
            sel = self.method_selector(node)
            if sel:
                self.functions.setdefault(sel, []).append(node)

    _SETTER = re.compile(r"^set([A-Z][A-Za-z0-9_]*):$")

    def note_setter(self, node: ts.Node) -> None:
        """``[obj setPipeline:p]`` writes the property ``pipeline`` as ``obj.pipeline = p`` would."""
        call = self.call_of(node)
        m = self._SETTER.match(call.name) if call is not None and len(call.args) == 1 else None
        if m:
            name = m.group(1)
            self.add_prop(name[0].lower() + name[1:], node.start_byte, "unknown")

    def method_selector(self, node: ts.Node) -> str:
        parts = []
        has_params = False
        for child in node.children:
            if child.type == "identifier":
                parts.append(self.text(child))
            elif child.type == "method_parameter":
                has_params = True
                if parts:
                    parts[-1] += ":"
        if not has_params:
            return parts[0] if parts else ""
        return "".join(p for p in parts if p.endswith(":"))

    def declarator_name(self, d: ts.Node) -> ts.Node | None:
        for _ in range(32):
            if d is None:
                return None
            if d.type in ("identifier", "field_identifier"):
                return d
            if d.type in ("pointer_declarator", "reference_declarator", "init_declarator", "parenthesized_declarator",
                          "attributed_declarator", "block_pointer_declarator"):
                inner = d.child_by_field_name("declarator")
                if inner is None:
                    kids = [c for c in d.named_children if c.type in ("identifier", "field_identifier")]
                    inner = kids[0] if kids else None
                d = inner
            else:
                return None
        return None

    def is_global_scope(self, node: ts.Node) -> bool:
        # Not func_of: where the grammar cannot read a file (C++ in a ``.mm``) function
        # definitions come out as ERROR nodes, but their bodies are still compound statements.
        n = node.parent
        while n is not None:
            if n.type == "compound_statement" or n.type in self.FUNCTIONS:
                return False
            n = n.parent
        return True

    def find_func(self, node: ts.Node) -> ts.Node | None:
        n = node.parent
        outer = None
        while n is not None:
            if n.type in self.FUNCTIONS:
                return n
            if n.type == "compound_statement":
                outer = n
            n = n.parent
        return outer

    def visit_declaration(self, node: ts.Node) -> None:
        is_global = self.is_global_scope(node)
        scope = (0, len(self.data)) if is_global else self.scope_of(node)
        typ = node.child_by_field_name("type")
        auto = any(c.type == "storage_class_specifier" and self.text(c) == "auto" for c in node.children)
        size_type = typ is not None and self.text(typ).replace(" ", "") in ("MTL::Size", "MTLSize")
        quals = {self.text(c) for c in node.children if c.type in ("type_qualifier", "storage_class_specifier")}
        # const/constexpr, or a file-static variable (every write to it is in this file)
        closed = bool(quals & {"const", "constexpr"}) or ("static" in quals and node.type == "declaration")
        for i, child in enumerate(node.children):
            f = node.field_name_for_child(i)
            if f == "declarator":
                value = None
                size_ctor = False
                if child.type == "init_declarator":
                    value = child.child_by_field_name("value")
                    if value is not None and value.type in ("argument_list", "initializer_list"):
                        if size_type:
                            size_ctor = True
                        elif value.type == "argument_list" or len(value.named_children) != 1:
                            value = "unknown"
                        else:
                            value = value.named_children[0]
                elif child.type in ("array_declarator", "function_declarator"):
                    value = "unknown"
                ident = self.declarator_name(child)
                if ident is not None and ident.is_missing and auto and typ is not None \
                        and typ.type == "type_identifier":
                    # tree-sitter-objc reads C++ ``auto x = …`` in a ``.mm`` as type ``x``, name missing.
                    ident = typ
                if ident is None or ident.is_missing:
                    continue
                if child.type == "function_declarator":
                    continue
                name = self.text(ident)
                if is_global:
                    self.declare_global(name, closed)
                    self.add_decl(_Decl(name, ident.start_byte, scope, "global"))
                    if value is not None:
                        if size_ctor:
                            self.add_prop(name, ident.start_byte, ("size", value))
                        else:
                            self.add_prop(name, ident.start_byte, value)
                else:
                    self.add_decl(_Decl(name, ident.start_byte, scope, value, size_ctor=size_ctor))
            elif f == "default_value" and is_global:
                # ``static constexpr int kTile = 32;`` in a class
                ident = None
                for j in range(i - 1, -1, -1):
                    if node.field_name_for_child(j) == "declarator":
                        ident = self.declarator_name(node.children[j])
                        break
                if ident is not None:
                    self.declare_global(self.text(ident), closed)
                    self.add_prop(self.text(ident), ident.start_byte, child)

    def visit_parameter(self, node: ts.Node) -> None:
        func = self.func_of(node)
        if func is None:
            return
        if node.type == "method_parameter":
            idents = [c for c in node.named_children if c.type == "identifier"]
            ident = idents[-1] if idents else None
            siblings = [c for c in func.named_children if c.type == "method_parameter"]
        else:
            ident = self.declarator_name(node.child_by_field_name("declarator"))
            parent = node.parent
            siblings = [c for c in parent.named_children if c.type == "parameter_declaration"] if parent else []
        if ident is None:
            return
        index = next((k for k, c in enumerate(siblings) if c.id == node.id), -1)
        if index < 0:
            return
        scope = (func.start_byte, func.end_byte)
        self.add_decl(_Decl(self.text(ident), ident.start_byte, scope, None, _Param(func.id, index)))

    def member_of_self(self, node: ts.Node) -> str | None:
        if node.type != "field_expression":
            return None
        arg = node.child_by_field_name("argument")
        fld = node.child_by_field_name("field")
        if arg is None or fld is None:
            return None
        return self.text(fld)

    def visit_assignment(self, node: ts.Node) -> None:
        left = node.child_by_field_name("left")
        right = node.child_by_field_name("right")
        op = node.child_by_field_name("operator")
        if left is None:
            return
        value = right if (op is not None and self.text(op) == "=" and right is not None) else "unknown"
        if left.type == "identifier":
            self.add_assign(self.text(left), node.start_byte, value)
        elif left.type == "field_expression" and self.member_of_self(left) is not None:
            # ``self.x = …``, ``this->x = …`` and ``ctx->x = …``: the stored property ``x``.
            self.add_prop(self.member_of_self(left), node.start_byte, value)
            arg = left.child_by_field_name("argument")
            op = left.child_by_field_name("operator")
            through_pointer = op is not None and self.text(op) == "->" and arg is not None and arg.type == "identifier"
            if arg is not None and not self.is_self(arg) and not through_pointer:
                # ``tg.width = 8`` changes the value ``tg``; ``ctx->pso = …`` leaves the pointer ``ctx`` as it was
                self.unknown_write(arg)
        else:
            self.unknown_write(left)

    def unknown_write(self, node: ts.Node | None) -> None:
        n = node
        for _ in range(64):
            if n is None:
                return
            if n.type == "identifier":
                self.add_assign(self.text(n), node.start_byte, "unknown")
                return
            if n.type == "field_expression":
                member = self.member_of_self(n)
                arg = n.child_by_field_name("argument")
                if member is not None and arg is not None and self.is_self(arg):
                    self.add_prop(member, node.start_byte, "unknown")
                    return
                n = arg
                continue
            kids = n.named_children
            if not kids:
                return
            n = kids[0]

    def call_of(self, node: ts.Node) -> _Call | None:
        if node.type == "message_expression":
            receiver = node.child_by_field_name("receiver")
            parts: list[str] = []
            args: list = []
            expect_arg = False
            for i, child in enumerate(node.children):
                f = node.field_name_for_child(i)
                if f == "method":
                    parts.append(self.text(child))
                elif child.type == ":":
                    if parts:
                        parts[-1] += ":"
                    expect_arg = True
                elif expect_arg and child.is_named and child.type != "comment":
                    args.append(child)
                    expect_arg = False
            name = "".join(parts) if args else (parts[0] if parts else "")
            labels = tuple(p.rstrip(":") for p in parts)
            return _Call(name, labels, args, receiver, node)
        if node.type != "call_expression":
            return None
        fn = node.child_by_field_name("function")
        arglist = node.child_by_field_name("arguments")
        if fn is None or arglist is None:
            return None
        args = [c for c in arglist.named_children if c.type != "comment"]
        receiver = None
        if fn.type == "field_expression":
            receiver = fn.child_by_field_name("argument")
            fld = fn.child_by_field_name("field")
            name = self.text(fld) if fld is not None else ""
        elif fn.type == "template_function":
            name = self.text(fn.child_by_field_name("name"))
        elif fn.type in ("identifier", "qualified_identifier"):
            name = re.sub(r"\s+", "", self.text(fn))
        else:
            return None
        return _Call(name, (), args, receiver, node)

    def helper_key(self, call: _Call) -> str | None:
        if call.receiver is None:
            return call.name
        if call.node.type == "message_expression" and self.is_self(call.receiver):
            return call.name
        return None

    def is_receiver_position(self, node: ts.Node) -> bool:
        p = node.parent
        if p is None:
            return False
        if p.type == "message_expression":
            r = p.child_by_field_name("receiver")
            return r is not None and r.id == node.id
        if p.type == "field_expression":
            a = p.child_by_field_name("argument")
            return a is not None and a.id == node.id and p.parent is not None and p.parent.type == "call_expression"
        return False

    def eval_node(self, node: ts.Node, depth: int) -> object:
        t = node.type
        if t == "number_literal":
            return _parse_int(self.text(node))
        if t == "preproc_arg":
            return _parse_int(self.text(node))
        if t == "string_literal":
            kids = [c for c in node.named_children]
            if not kids:
                return _Str("")
            if len(kids) == 1 and kids[0].type == "string_content":
                return _Str(self.text(kids[0]), node.start_byte)
            return None
        if t == "concatenated_string":
            parts = [self.eval(c, depth) for c in node.named_children]
            if parts and all(isinstance(p, _Str) for p in parts):
                return _Str("".join(p.text for p in parts))
            return None
        if t in ("null", "nullptr"):
            return NULL
        if t == "identifier":
            name = self.text(node)
            if name in ("nil", "NULL", "Nil"):
                return NULL
            return self.eval_name(name, node, depth)
        if t in ("call_expression", "message_expression"):
            call = self.call_of(node)
            return self.eval_call(call, depth) if call is not None else None
        if t == "parenthesized_expression":
            kids = node.named_children
            return self.eval(kids[0], depth) if len(kids) == 1 else None
        if t == "cast_expression":
            v = self.eval(node.child_by_field_name("value"), depth)
            return v if isinstance(v, (int, _Kernel, _Str)) else None
        if t == "compound_literal_expression":
            typ = node.child_by_field_name("type")
            value = node.child_by_field_name("value")
            if typ is not None and value is not None and self.text(typ).replace(" ", "") in ("MTLSize", "MTL::Size"):
                return self.eval_size_init(value, depth)
            return None
        if t == "binary_expression":
            op = node.child_by_field_name("operator")
            a = self.eval(node.child_by_field_name("left"), depth)
            if not isinstance(a, int):
                return None
            b = self.eval(node.child_by_field_name("right"), depth)
            if isinstance(b, int) and op is not None:
                return _arith(self.text(op), a, b)
            return None
        if t == "unary_expression":
            op = node.child_by_field_name("operator")
            v = self.eval(node.child_by_field_name("argument"), depth)
            if isinstance(v, int) and op is not None and self.text(op) in ("-", "+"):
                return -v if self.text(op) == "-" else v
            return None
        if t == "field_expression":
            arg = node.child_by_field_name("argument")
            member = self.member_of_self(node)
            if member is None or arg is None:
                return None
            v = self.eval_property(member, depth)
            if self.is_self(arg):
                return v
            # ``ctx->pipeline``: any receiver, only for a pipeline every such assignment agrees on.
            return v if isinstance(v, _Kernel) else None
        if t == "qualified_identifier":
            return None
        return None


class _ObjC(_CFamily):
    language_name = "objc"


class _Cpp(_CFamily):
    language_name = "cpp"
