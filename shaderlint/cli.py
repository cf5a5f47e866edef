"""Command line: ``shaderlint [PATH ...]``, ``report``, ``rule``, ``rules``, ``lsp``.

``main(argv) -> int``: 0 clean, 1 findings at or above ``--fail-on``, 2 usage or
internal error. Everything the CLI prints goes through a formatter.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections import Counter
from collections.abc import Sequence

from shaderlint import __version__
from shaderlint.config import ConfigError, Settings, find_config, load_config
from shaderlint.diagnostics import Severity
from shaderlint.discovery import discover
from shaderlint.engine import FileResult, lint_source
from shaderlint.languages import language_for_path

SUBCOMMANDS = ("report", "rule", "rules", "lsp")


def _codes(value: str) -> tuple[str, ...]:
    return tuple(c.strip().upper() for c in value.split(",") if c.strip())


def lint_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="shaderlint",
        description="Lint Metal, CUDA and GLSL kernels for GPU performance pitfalls. "
                    "Subcommands: report, rule CODE, rules, lsp.",
    )
    p.add_argument("paths", nargs="*", default=None, help="files or directories (default: .)")
    p.add_argument("--format", choices=("text", "json", "sarif", "github"), default="text")
    p.add_argument("-q", "--quiet", action="store_true", help="one line per diagnostic, no excerpt")
    p.add_argument("--select", type=_codes, help="comma-separated codes or prefixes (SL1 = all SL1xx)")
    p.add_argument("--ignore", type=_codes)
    p.add_argument("--extend-select", type=_codes)
    p.add_argument("--target", help="GPU profile for register/occupancy estimates (e.g. sm_80, apple-m1)")
    p.add_argument("--occupancy-threshold", type=float)
    p.add_argument("--fail-on", choices=("info", "warning", "error", "never"), default="warning")
    p.add_argument("--fix", action="store_true", help="apply safe fixes in place")
    p.add_argument("--unsafe-fixes", action="store_true", help="with --fix/--diff, also apply unsafe fixes")
    p.add_argument("--diff", action="store_true", help="print fixes as a unified diff instead of writing")
    p.add_argument("--statistics", action="store_true", help="count diagnostics per rule")
    p.add_argument("--show-unused-ignores", action="store_true")
    p.add_argument("-j", "--jobs", type=int, default=0, help="parallel processes (default: all cores)")
    p.add_argument("--no-cache", action="store_true")
    p.add_argument("--stdin-filename", help="read the source from stdin and report it under this name")
    p.add_argument("--baseline", help="report only findings not in this baseline file")
    p.add_argument("--write-baseline", help="write all current findings to this baseline file")
    p.add_argument("--config", help="configuration file (default: closest shaderlint.toml / pyproject.toml)")
    p.add_argument("-o", "--output", help="write the report to this file")
    p.add_argument("--color", choices=("auto", "always", "never"), default="auto")
    p.add_argument("--version", action="version", version=f"shaderlint {__version__}")
    return p


class Usage(Exception):
    pass


def cli_settings(args: argparse.Namespace) -> dict:
    return {k: v for k, v in {
        "select": args.select, "ignore": args.ignore, "extend_select": args.extend_select,
        "target": args.target, "occupancy_threshold": args.occupancy_threshold,
    }.items() if v is not None}


class SettingsResolver:
    """Closest config file per linted path, with CLI overrides; cached per directory."""

    def __init__(self, explicit: str | None, overrides: dict) -> None:
        self.overrides = overrides
        self.explicit = load_config(explicit) if explicit else None
        self._cache: dict[str, Settings] = {}
        if "target" in overrides:
            from shaderlint.estimate.targets import TARGETS
            if overrides["target"] not in TARGETS:
                raise Usage(f"unknown target {overrides['target']!r}; known: {', '.join(sorted(TARGETS))}")

    def for_path(self, path: str) -> Settings:
        if self.explicit is not None:
            base = self.explicit
        else:
            d = os.path.dirname(os.path.abspath(path))
            if d not in self._cache:
                cfg = find_config(d)
                self._cache[d] = load_config(cfg) if cfg else Settings()
            base = self._cache[d]
        return base.with_overrides(**self.overrides)


def read_file(path: str) -> bytes:
    with open(path, "rb") as fh:
        return fh.read()


def run_lint(args: argparse.Namespace) -> int:
    from shaderlint.rules.sl001_parse_error import ParseErrorRule
    from shaderlint.engine import _resolve
    from shaderlint.diagnostics import Finding
    from shaderlint.model.source import Source

    resolver = SettingsResolver(args.config, cli_settings(args))
    results: list[FileResult] = []
    if args.stdin_filename:
        data = sys.stdin.buffer.read()
        settings = resolver.for_path(args.stdin_filename)
        results.append(lint_source(args.stdin_filename, data, settings))
        files = [args.stdin_filename]
    else:
        paths = args.paths or ["."]
        errors: list[tuple[str, str]] = []
        base_settings = resolver.for_path(os.path.join(paths[0], "x") if os.path.isdir(paths[0]) else paths[0])
        files = list(discover(paths, base_settings.exclude, errors))
        for p, reason in errors:
            print(f"shaderlint: {p}: {reason}", file=sys.stderr)
        if any(reason == "no such file or directory" for _, reason in errors) and not files:
            return 2
        for path in files:
            settings = resolver.for_path(path)
            try:
                data = read_file(path)
            except OSError as e:
                src = Source(path, b"")
                r = FileResult(path, src, language_for_path(path))
                r.diagnostics = [_resolve(src, ParseErrorRule, Finding(0, 0, f"could not read file: {e.strerror or e}"))]
                results.append(r)
                continue
            results.append(lint_source(path, data, settings))

    from shaderlint.formatters import get_formatter

    color = args.color == "always" or (args.color == "auto" and sys.stdout.isatty() and not args.output
                                        and os.environ.get("NO_COLOR") is None)
    text = get_formatter(args.format)(results, {"quiet": args.quiet, "files": len(files), "color": color,
                                                  "root": os.getcwd()})
    if args.statistics and args.format == "text":
        counts = Counter((d.code, d.name) for r in results for d in r.diagnostics)
        lines = [f"{n:6d}  {code}  {name}" for (code, name), n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]
        text = "\n".join(lines) + ("\n" if lines else "")
    if args.output:
        with open(args.output, "w", encoding="utf-8") as fh:
            fh.write(text)
    else:
        sys.stdout.write(text)
    return exit_code(results, args.fail_on)


def exit_code(results: list[FileResult], fail_on: str) -> int:
    if fail_on == "never":
        return 0
    threshold = Severity(fail_on).rank
    return 1 if any(d.severity.rank >= threshold for r in results for d in r.diagnostics) else 0


def run_rule(argv: Sequence[str]) -> int:
    from shaderlint.rules.registry import get_rule

    if len(argv) != 1:
        print("usage: shaderlint rule SLnnn", file=sys.stderr)
        return 2
    rule = get_rule(argv[0])
    if rule is None:
        print(f"shaderlint: unknown rule {argv[0]!r} (see `shaderlint rules`)", file=sys.stderr)
        return 2
    sys.stdout.write(rule.markdown())
    return 0


def run_rules(argv: Sequence[str]) -> int:
    from shaderlint.rules.base import LANGUAGE_NAMES
    from shaderlint.rules.registry import RULES

    for r in RULES:
        langs = "".join(LANGUAGE_NAMES[x][0] for x in ("metal", "cuda", "glsl") if x in r.languages)
        opt = "" if r.default_on else " (opt-in)"
        print(f"{r.code}  {r.name:<40} {r.severity.value:<8} {langs:<4} {r.summary}{opt}")
    return 0


def run_lsp(argv: Sequence[str]) -> int:
    from shaderlint.server.server import serve

    return serve([a for a in argv if a != "--stdio"])


def run_report(argv: Sequence[str]) -> int:
    from shaderlint.report import main as report_main

    return report_main(argv)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if argv and argv[0] in SUBCOMMANDS:
            cmd, rest = argv[0], argv[1:]
            return {"report": run_report, "rule": run_rule, "rules": run_rules, "lsp": run_lsp}[cmd](rest)
        parser = lint_parser()
        try:
            args = parser.parse_args(argv)
        except SystemExit as e:
            return int(e.code) if isinstance(e.code, int) else 2
        return run_lint(args)
    except (ConfigError, Usage) as e:
        print(f"shaderlint: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except Exception as e:  # an internal error must not look like a clean run
        import traceback
        traceback.print_exc()
        print(f"shaderlint: internal error: {type(e).__name__}: {e}", file=sys.stderr)
        return 2


def entry() -> None:
    sys.exit(main())
