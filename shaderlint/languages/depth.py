"""A bound on the nesting depth of the syntax tree every later phase sees.

Real code nests little: the deepest tree in the real-code corpus (1,501 files) is 63 levels. Machine-
made or hostile input can nest without limit (``a[a[a[...]]]``, ``((((...))))``, ``x + x + ...``), and
work over such a tree grows with the square of its depth: tree-sitter's query cursor (past 32,767
levels it returns only part of the captures, and each further level costs time in one C call no
watchdog can interrupt: 93 s of CPU for 200,000 levels), and any walk that starts again below each
of a chain of nested nodes (a 15 KB file reached 692 MB).

So the front end cuts what lies deeper than :data:`MAX_TREE_DEPTH`: the body of the function around it
is blanked (its braces kept), or at file scope the top-level item around it, and the file is parsed
again. Each cut is a ``too-deep`` :class:`~shaderlint.languages.base.Mask`; the model reports it as
an unreadable region (SL001) and the function as not analysed, as it does for a syntax error.

Finding the deep places costs almost nothing on ordinary trees: a node can only hold a chain of
``k`` levels if it has at least ``k`` descendants, which tree-sitter stores in every node, so the walk
only enters the few nodes large enough.
"""

from __future__ import annotations

import tree_sitter as ts

#: Deepest tree level (the root is level 0) a parsed file keeps: 16x the deepest real file.
MAX_TREE_DEPTH = 1000

_FUNCTIONS = frozenset(("function_definition",))
# Nodes that hold top-level items rather than being one.
_CONTAINERS = frozenset(("translation_unit", "preproc_if", "preproc_ifdef", "preproc_else", "preproc_elif",
                         "preproc_elifdef", "declaration_list", "linkage_specification", "namespace_definition",
                         "template_declaration"))


def deep_regions(root: ts.Node, limit: int = MAX_TREE_DEPTH, whole_items: bool = False) -> list[tuple[int, int]]:
    """Byte ranges to blank so that no node lies deeper than ``limit``: for each place deeper than
    that, the inside of the body of the outermost function around it (without its braces), else (or
    with ``whole_items``) the top-level item around it. Sorted and disjoint."""
    if root.descendant_count <= limit:
        return []  # a chain of more than ``limit`` levels needs more nodes than that
    regions: list[tuple[int, int]] = []
    stack: list[tuple[ts.Node, int, tuple | None]] = [(root, 0, None)]  # (node, depth, parent's entry)
    while stack:
        entry = stack.pop()
        node, depth, _ = entry
        if regions and any(s <= node.start_byte and node.end_byte <= e for s, e in regions):
            continue  # inside a region already cut
        if depth < limit:
            need = limit - depth  # a child holding a node at ``limit`` has at least this many descendants
            stack.extend((c, depth + 1, entry) for c in node.children if c.descendant_count >= need)
            continue
        path = []
        while entry is not None:
            path.append(entry[0])
            entry = entry[2]
        path.reverse()  # root, ..., the deep node
        cut = None
        if not whole_items:
            fn = next((n for n in path if n.type in _FUNCTIONS), None)
            body = fn.child_by_field_name("body") if fn is not None else None
            if body is not None and body.end_byte - body.start_byte >= 2 and node.start_byte >= body.start_byte:
                cut = (body.start_byte + 1, body.end_byte - 1)
        if cut is None:  # the outermost item that is not a container (the deep chain may be one)
            item = next((n for n in path if n.type not in _CONTAINERS), path[1] if len(path) > 1 else path[0])
            cut = (item.start_byte, item.end_byte)
        regions.append(cut)
    regions.sort()
    merged: list[tuple[int, int]] = []
    for s, e in regions:
        if merged and s <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(e, merged[-1][1]))
        else:
            merged.append((s, e))
    return merged
