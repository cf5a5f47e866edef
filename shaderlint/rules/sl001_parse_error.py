"""SL001 parse-error

## What it does
Reports a file, or a part of it, that shaderlint could not analyse: bytes that
are not text, syntax the front end could not read (often a function-like macro
that expands to a kernel signature, or unbalanced braces across `#if`
branches), an internal failure of a rule, or a file that exceeded the time
budget. The diagnostic points at the unreadable region and says why.

Functions that contain unreadable syntax are skipped by every other rule, so a
parse problem never turns into a false positive; the rest of the file is still
checked.

## Why is this bad?
A linter that silently skips code gives false confidence. Saying exactly what
was not analysed lets you fix the syntax, or suppress the rule for generated
code.

## Example
```cuda
#define KERNEL(name) __global__ void name(float* out)
KERNEL(scale) { out[threadIdx.x] *= 2.0f; }   // not readable without expanding the macro
```

A GLSL file whose unreadable line holds template placeholders -- vispy's
hooks (`<viewport.clipping>`, `<paint>(...)`), `$name` or `${name}`
substitutions, Jinja's `{{ name }}` -- is a shader template, not GLSL: a
compiler rejects it too, and only the generated shader can be analysed. Such a
file gets one report, at the first placeholder found on an unreadable line,
naming it, instead of one per unreadable region.

On CUDA, when the unreadable region is attributable to one upper-case name
that the file neither defines nor declares -- its first token, or the token or
invocation right before it (`DEFINE_HAS_MEMBER(v_scale)` at file scope) -- the
message names it as missing context: "`X` is a macro defined outside this
file; add its header to include-dirs".

## Use instead
Write the kernel signature out, or add `// shaderlint: ignore-file[SL001]` to
files you know are generated. Exclude shader templates (`exclude` in the
configuration) and lint the shaders generated from them.

## Impact
None: this is a statement about coverage, not performance.

## Default
Opt-in: the unreadable regions are listed with `--extend-select SL001` (or
`extend-select = ["SL001"]`); by default the text summary counts them ("Not
analysed: 3 regions in 2 files that shaderlint could not read"). An analysis
cut short -- the time budget, a rule that failed, a file over
`max-file-size` -- is always reported, whatever is selected. Measured on the
real-code corpus (2,473 files of 33 PyPI packages and the 21 kernel headers their CUDA sources
include, `bench/realcode.py`): 80 findings (176 before the front end read the constructs below and
headers were read), every one judged by reading the code: 3 on code a compiler rejects (two
misplaced parentheses in a vispy transform, a `static_assert` without `;` in a branch only old
toolkits compile), 47 shader templates (vispy and glumpy hooks, `str.format` and `string.Template`
sources), 30 on valid code the front end still cannot read -- C++ the grammar misreads (`>=` inside a template argument list, pointer
parameter packs `T *... v`, a defaulted pointer template parameter before another one), qualifier
macros from headers not given to shaderlint (`include-dirs`). Where one upper-case name the file
neither defines nor declares explains the unreadable region, the message names it and asks for its
header. An *error* on valid code is
the false alarm that gets a linter switched off; the count keeps the coverage
gap visible without claiming the code is wrong.

## Options
`time-budget` (seconds per file, default 5) in configuration; files longer than
5,000 lines get proportionally more (10,000 lines: twice the budget; at most four
times), so a long file is not cut short on a slower machine while a pathological
input still is. The budget counts the CPU time of the thread analysing the file
(on Linux and other systems that expose it; wall-clock time elsewhere), so a
busy machine does not turn a slow file into this finding.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from shaderlint.diagnostics import Finding, Severity
from shaderlint.rules.base import Rule, RuleContext

MAX_REPORTS = 5

# Placeholders of shader template engines, which GLSL itself never contains: vispy's hooks
# (`<viewport.clipping>;`, `<paint>(d, w)`, `<transform.xscale.forward!(x)>`) where an expression
# stands, `$name` / `${name}` substitutions, Jinja's `{{ name }}`. GLSL has no templates, so `<`
# followed by a dotted name and `>` then `(`, `;`, `.`, `,` or `)` is not a comparison chain.
_TEMPLATE_PLACEHOLDER = re.compile(
    rb"(?<![\w$])<[A-Za-z_][\w.]*(?:!?\([^<>\n]*\))?>[ \t]*[(;.,)]"
    rb"|(?<![\w$])\$(?:\{[A-Za-z_]\w*\}|[A-Za-z_]\w*)|\{\{[ \t]*[A-Za-z_][\w.]*[ \t]*\}\}")


class ParseErrorRule(Rule):
    code = "SL001"
    name = "parse-error"
    languages = frozenset({"metal", "cuda", "glsl"})
    severity = Severity.ERROR
    default_on = False
    summary = "the file could not be analysed (or only partly)"

    def check(self, model, ctx: RuleContext) -> Iterable[Finding]:
        errors = model.errors
        if model.language == "glsl" and errors:
            found = next((p for p in (self._placeholder(model, err.start) for err in errors) if p is not None), None)
            if found is not None:
                # a shader template: one report, at the placeholder, instead of one per unreadable region
                # (a placeholder breaks the statement around it, and each break read as an error of its own)
                start, end, text = found
                regions = f"{len(errors)} unreadable region{'s' if len(errors) > 1 else ''}"
                yield Finding(start, end, f"could not parse: template placeholder '{text}' -- this file is a shader "
                                          f"template, not GLSL ({regions}); exclude it and lint the generated shader")
                return
        for i, err in enumerate(errors[:MAX_REPORTS]):
            f = model.function_at(err.start)
            where = f"in function '{f.name}' (not analysed)" if f is not None else "at file scope"
            more = f"; {len(errors) - MAX_REPORTS} more unreadable regions in this file" if i == MAX_REPORTS - 1 and len(errors) > MAX_REPORTS else ""
            snippet = model.source.text(err.start, min(err.end, err.start + 40)).split("\n")[0].strip()
            what = f"{err.message} near '{snippet}'" if snippet else err.message
            context = ""
            if model.language == "cuda":
                from shaderlint.languages.cuda import header_macro_at

                name = header_macro_at(model.source, err.start, err.end)
                if name is not None:
                    context = f": `{name}` is a macro defined outside this file; add its header to include-dirs"
            yield Finding(err.start, max(err.end, err.start), f"could not parse {what} {where}{context}{more}",
                          kernel=f.name if f is not None else None)

    @staticmethod
    def _placeholder(model, pos: int) -> tuple[int, int, str] | None:
        """The first template placeholder on the line of ``pos``, outside comments and strings:
        (start, end, text without what follows it)."""
        src = model.source
        i = src.line_of(pos)
        start = src.line_starts[i]
        end = src.line_starts[i + 1] if i + 1 < len(src.line_starts) else len(src.data)
        for m in _TEMPLATE_PLACEHOLDER.finditer(src.data, start, end):
            if not src.in_comment_or_string(m.start()):
                text = m.group(0).rstrip(b"(;.,) \t") if m.group(0).startswith(b"<") else m.group(0)
                return m.start(), m.start() + len(text), text.decode("utf-8", "replace")
        return None
