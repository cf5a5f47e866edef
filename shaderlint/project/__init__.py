"""The project layer: what a compiler knows about a file beyond its own text.

* :mod:`shaderlint.project.macros` — the macro table a file defines (``scan_macros``);
* :mod:`shaderlint.project.includes` — ``#include`` resolution (relative to the includer, the
  ``include-dirs`` setting, ``compile_commands.json``), headers read once per run;
* :class:`shaderlint.project.includes.FileContext` — for one file: the files read with their
  digests (the cache key covers them), the header macros in force, the build's ``-D`` and arch.

See docs/project-context.md.
"""

from shaderlint.project.macros import MacroDef, scan_macros

__all__ = ["MacroDef", "scan_macros"]
