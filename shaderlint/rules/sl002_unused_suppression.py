"""SL002 unused-suppression

## What it does
Reports `// shaderlint: ignore[...]` and `ignore-file[...]` directives, or
codes inside them, that suppressed nothing in this run; codes that name no
rule (`ignore[SL999]`); and bare `ignore` / `ignore-file` without codes, which
silence every rule. A code is only called unused when its rule ran on the
file: `ignore[SL302]` with the opt-in SL302 disabled is left alone. It is
reported at the directive. Enabled by `--show-unused-ignores` (or by
selecting SL002); off by default.

The check needs every other rule's results, so the engine performs it after
applying the suppressions; the rule's own `check` does nothing.

## Why is this bad?
A suppression outlives the code it was written for: after a refactoring it
hides nothing today and silently hides the next real finding on that line
tomorrow. A bare `ignore` hides every rule, including ones added later. ruff
(RUF100) and flake8-noqa treat unused and blanket `noqa` comments the same
way.

## Example
```cuda
int q = i / 16;  // shaderlint: ignore[SL201]   <- SL002: 16 is a constant, nothing to ignore
float x = a[i];  // shaderlint: ignore          <- SL002: bare, names no rule
```

## Use instead
Remove the directive, or name exactly the codes it is for:
```cuda
int q = i / 16;
float x = a[i];  // shaderlint: ignore[SL105]
```

## Fix safety
Safe: the fixes edit comments only, so the compiled kernel is byte for byte
the same. Removing a directive (or codes in it) that suppressed nothing, and
replacing a bare `ignore` by the list of codes it suppressed in this run,
leave this run's diagnostics unchanged (a code whose rule did not run is never
called unused, so it is never removed). A directive sharing its comment with
other text is not removed automatically.

## Impact
None (documentation hygiene; impact null).

## Options
`--show-unused-ignores` turns the rule on for a run; `extend-select =
["SL002"]` in the configuration turns it on permanently.

## Evidence
Not applicable: the rule reads comments, not generated code; nvcc compiles
suppression comments like any other comment.
"""

from __future__ import annotations

from collections.abc import Iterable

from shaderlint.diagnostics import Finding, Severity
from shaderlint.rules.base import Rule, RuleContext


class UnusedSuppression(Rule):
    code = "SL002"
    name = "unused-suppression"
    languages = frozenset({"metal", "cuda", "glsl"})
    severity = Severity.INFO
    fix = "safe"
    default_on = False
    summary = "a suppression comment that suppressed nothing, names an unknown code, or names none"

    def check(self, model, ctx: RuleContext) -> Iterable[Finding]:
        # Needs the other rules' results: done by the engine after suppressions are applied
        # (shaderlint.suppression.unused_suppressions).
        return ()
