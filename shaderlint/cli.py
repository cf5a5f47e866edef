"""Command line: ``shaderlint [PATH ...]``, ``report``, ``rule``, ``rules``, ``lsp``.

``main(argv) -> int``: 0 clean, 1 findings at or above ``--fail-on``, 2 usage or
internal error. Everything the CLI prints goes through a formatter.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from shaderlint import __version__
from shaderlint.baseline import BaselineError, load_baseline, write_baseline
from shaderlint.config import ConfigError, SettingsResolver
from shaderlint.diagnostics import Severity
from shaderlint.discovery import discover
from shaderlint.engine import FileResult

SUBCOMMANDS = ("report", "rule", "rules", "lsp")


def _codes(value: str) -> tuple[str, ...]:
    from shaderlint.config import check_codes

    try:
        return check_codes([c for c in value.split(",") if c.strip()], "codes")
    except ConfigError as e:
        raise argparse.ArgumentTypeError(str(e).removeprefix("codes: ")) from None


def _jobs(value: str) -> int:
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number of processes") from None
    if n < 0:
        raise argparse.ArgumentTypeError("must be 0 (all cores) or more")
    return n


def lint_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="shaderlint",
        description="Lint Metal, CUDA and GLSL kernels for GPU performance pitfalls. "
                    "Subcommands: report, rule CODE, rules, lsp.",
    )
    p.add_argument("paths", nargs="*", default=None, help="files or directories (default: .)")
    p.add_argument("--format", choices=("text", "json", "sarif", "github"), default="text")
    p.add_argument("-q", "--quiet", action="store_true", help="one line per diagnostic, no excerpt")
    p.add_argument("--select", type=_codes, help="comma-separated codes or prefixes (SL1 = all SL1xx); "
                                                 "replaces the configuration's selection")
    p.add_argument("--ignore", type=_codes, help="codes or prefixes to ignore, added to the configuration's")
    p.add_argument("--extend-select", type=_codes, help="codes or prefixes to enable on top of the selection")
    p.add_argument("--target", help="GPU profile for register/occupancy estimates (e.g. sm_80, apple-m1)")
    p.add_argument("--occupancy-threshold", type=float)
    p.add_argument("--fail-on", choices=("info", "warning", "error", "never"), default="warning")
    p.add_argument("--fix", action="store_true", help="apply safe fixes in place")
    p.add_argument("--unsafe-fixes", action="store_true", help="with --fix/--diff, also apply unsafe fixes")
    p.add_argument("--diff", action="store_true", help="print fixes as a unified diff instead of writing")
    p.add_argument("--statistics", action="store_true",
                   help="count diagnostics per rule (text: a table instead of the diagnostics; json: an array "
                        "of counts; github: the table after the annotations; sarif: run.properties.statistics)")
    p.add_argument("--show-unused-ignores", action="store_true")
    p.add_argument("-j", "--jobs", type=_jobs, default=0,
                   help="parallel processes (default 0: all cores; 1: no worker processes)")
    p.add_argument("--no-cache", action="store_true", help="neither read nor write the result cache")
    p.add_argument("--stdin-filename", help="read the source from stdin and report it under this name")
    p.add_argument("--baseline", help="report only findings not in this baseline file")
    p.add_argument("--write-baseline", help="write all current findings to this baseline file and exit 0")
    p.add_argument("--config", help="configuration file (default: closest shaderlint.toml / pyproject.toml)")
    p.add_argument("-o", "--output", help="write the report to this file instead of stdout")
    p.add_argument("--color", choices=("auto", "always", "never"), default="auto")
    p.add_argument("--version", action="version", version=f"shaderlint {__version__}")
    return p


class Usage(Exception):
    pass


def cli_settings(args: argparse.Namespace) -> dict:
    """Command-line options that override configuration files (see ``Settings.with_cli``)."""
    if args.target is not None:
        from shaderlint.config import check_target
        try:
            args.target = check_target(args.target, "--target")
        except ConfigError as e:
            raise Usage(str(e)) from None
    if args.occupancy_threshold is not None and not 0 <= args.occupancy_threshold <= 1:
        raise Usage("--occupancy-threshold must be between 0 and 1")
    return {k: v for k, v in {
        "select": args.select, "ignore": args.ignore, "extend_select": args.extend_select,
        "target": args.target, "occupancy_threshold": args.occupancy_threshold,
    }.items() if v is not None}


def read_file(path: str) -> bytes:
    with open(path, "rb") as fh:
        return fh.read()


def collect_files(args: argparse.Namespace, resolver: SettingsResolver) -> list[str] | None:
    """The files to lint (None: a usage error was printed)."""
    if args.stdin_filename:
        return [args.stdin_filename]
    paths = args.paths or ["."]
    errors: list[tuple[str, str]] = []
    files = list(discover(paths, (), errors, is_excluded=lambda p: resolver.for_path(p).is_excluded(p)))
    for p, reason in errors:
        print(f"shaderlint: {p}: {reason}", file=sys.stderr)
    if any(reason == "no such file or directory" for _, reason in errors) and not files:
        return None
    return files


def lint(args: argparse.Namespace, resolver: SettingsResolver, files: list[str]) -> list[FileResult]:
    from shaderlint.runner import Progress, lint_files

    read = None
    if args.stdin_filename:
        data = sys.stdin.buffer.read()
        read = lambda _path: data  # noqa: E731
    progress = Progress(len(files))
    try:
        return lint_files(files, resolver.for_path, jobs=args.jobs, use_cache=not args.no_cache and not read,
                          progress=progress, read=read)
    finally:
        progress.close()


def run_lint(args: argparse.Namespace) -> int:
    """Phases: settings -> files -> lint (cache, pool) -> [fixes] -> baseline -> output -> exit code."""
    if args.show_unused_ignores:  # SL002 unused-suppression, checked by the engine after suppressions
        args.extend_select = tuple(args.extend_select or ()) + ("SL002",)
    resolver = SettingsResolver(args.config, cli_settings(args))
    files = collect_files(args, resolver)
    if files is None:
        return 2
    results = lint(args, resolver, files)

    if args.fix or args.diff:  # shaderlint.fixes: --diff prints and exits; --fix writes, then reports what remains
        from shaderlint.fixes import cli_fix
        code = cli_fix(results, fix=args.fix, diff=args.diff, unsafe=args.unsafe_fixes,
                       settings_for=resolver.for_path, stdin=bool(args.stdin_filename))
        if code is not None:
            return code

    if args.write_baseline:
        n = write_baseline(args.write_baseline, results)
        print(f"shaderlint: wrote {n} finding{'s' if n != 1 else ''} to baseline {args.write_baseline}",
              file=sys.stderr)
        return 0
    if args.baseline:
        results, _dropped = load_baseline(args.baseline).filter(results)
    emit(args, results, len(files))
    return exit_code(results, args.fail_on)


def emit(args: argparse.Namespace, results: list[FileResult], nfiles: int) -> None:
    """Format ``results`` (with ``--statistics`` as each format wants it) to stdout or ``-o``."""
    from shaderlint.formatters import get_formatter
    from shaderlint.formatters.statistics import format_statistics_json, format_statistics_text, statistics

    color = args.color == "always" or (args.color == "auto" and not args.output and sys.stdout.isatty()
                                       and os.environ.get("NO_COLOR") is None)
    options = {"quiet": args.quiet, "files": nfiles, "color": color, "root": os.getcwd()}
    if args.statistics:
        rows = statistics(results)
        if args.format == "text":
            text = format_statistics_text(rows)
        elif args.format == "json":
            text = format_statistics_json(rows)
        else:
            options["statistics"] = rows
            options["statistics_text"] = format_statistics_text(rows)
            text = get_formatter(args.format)(results, options)
    else:
        text = get_formatter(args.format)(results, options)
    if args.output:
        try:
            with open(args.output, "w", encoding="utf-8", newline="") as fh:
                fh.write(text)
        except OSError as e:
            raise Usage(f"cannot write {args.output}: {e.strerror or e}") from None
    else:
        sys.stdout.write(text)
        sys.stdout.flush()


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
    except (ConfigError, BaselineError, Usage) as e:
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
