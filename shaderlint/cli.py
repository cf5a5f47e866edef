"""Command line: ``shaderlint [check] [PATH ...]``, ``report``, ``rule``, ``rules``, ``lsp``.

``main(argv) -> int`` (in-process, for tests and embedding):

- 0: clean (or ``--exit-zero``, ``--fail-on never``);
- 1: findings at or above ``--fail-on`` (default ``warning``); with ``--exit-non-zero-on-fix``,
  also when ``--fix`` changed a file; ``--diff`` when there is something to fix;
- 2: usage, configuration or internal error, and any path that could not be linted: a path that
  does not exist (a typo in a CI command), one that is not a file or directory (a FIFO, a device:
  never opened, so the run cannot hang on them), a directory that cannot be read. The other files
  are still linted and reported; the message goes to stderr. Not a finding (ruff's E902 is one):
  findings can be filtered by ``--fail-on``, ``--exit-zero``, a baseline or a suppression, and a
  path that was never read must fail the gate whatever those say.

``check`` is accepted as the name of the default command (``shaderlint check src/``, the ruff
habit); ``-`` reads standard input (with ``--stdin-filename``). A file named on the command line
whose language is unknown (``x.h``: map it with the ``extension`` setting) and a run that finds no
shader files at all are warned about on stderr, and do not fail the run. Everything the CLI prints
on stdout goes through a formatter.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Sequence

from shaderlint import __version__
from shaderlint.baseline import BaselineError, load_baseline, write_baseline
from shaderlint.config import ConfigError, Settings, SettingsResolver
from shaderlint.diagnostics import Severity
from shaderlint.discovery import discover, release_listings, shared_listings
from shaderlint.result import FileResult

SUBCOMMANDS = ("check", "report", "rule", "rules", "lsp")


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


USAGE = """shaderlint [check] [OPTIONS] [PATH ...]
       shaderlint report [OPTIONS] [PATH ...]
       shaderlint rule CODE | shaderlint rules | shaderlint lsp"""

EPILOG = """subcommands:
  check         lint (the default; `shaderlint check src/` = `shaderlint src/`)
  report        registers, memory and occupancy per kernel (`shaderlint report -h`)
  rule CODE     print a rule's documentation
  rules         list every rule
  lsp           start the language server on stdio

exit codes: 0 clean; 1 findings at or above --fail-on; 2 usage or internal error, or a path
that could not be linted (missing, unreadable, not a file or directory)"""

OUTPUT_FORMATS = ("text", "concise", "json", "sarif", "github")


def _globs(value: str) -> tuple[str, ...]:
    return tuple(g.strip() for g in value.split(",") if g.strip())


def lint_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="shaderlint", usage=USAGE, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Lint Metal, CUDA and GLSL kernels for GPU performance pitfalls.",
    )
    p.add_argument("paths", nargs="*", default=None, metavar="PATH",
                   help="files or directories (default: .); - reads standard input (with --stdin-filename)")
    out = p.add_argument_group("output")
    out.add_argument("--output-format", "--format", dest="format", choices=OUTPUT_FORMATS, default="text",
                     metavar="FORMAT",
                     help="text (default: with source excerpts), concise (one line each), json, sarif or github "
                          "(workflow annotations); --format is the same option")
    out.add_argument("-q", "--quiet", action="store_true", help="one line per diagnostic, no excerpt, no summary")
    out.add_argument("--statistics", action="store_true",
                     help="count diagnostics per rule (text: a table instead of the diagnostics; json: an array "
                          "of counts; github: the table after the annotations; sarif: run.properties.statistics)")
    out.add_argument("-o", "--output", metavar="FILE", help="write the report to FILE instead of stdout")
    out.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                     help="colour the text output (auto: on a terminal, unless NO_COLOR is set)")
    out.add_argument("--show-files", action="store_true", help="print the files that would be linted and exit")
    out.add_argument("--show-settings", action="store_true",
                     help="print the settings used for the first file (or PATH) and exit")
    rules = p.add_argument_group("rule selection")
    rules.add_argument("--select", type=_codes, metavar="CODES",
                       help="comma-separated codes or prefixes (SL1 = all SL1xx); replaces the configuration's "
                            "selection")
    rules.add_argument("--ignore", type=_codes, metavar="CODES",
                       help="codes or prefixes to ignore, added to the configuration's")
    rules.add_argument("--extend-select", type=_codes, metavar="CODES",
                       help="codes or prefixes to enable on top of the selection")
    rules.add_argument("--show-unused-ignores", action="store_true",
                       help="report suppression comments that suppress nothing (SL002)")
    model = p.add_argument_group("estimates")
    model.add_argument("--target", metavar="NAME",
                       help="GPU profile for register/occupancy estimates (e.g. sm_80, apple-m1)")
    model.add_argument("--occupancy-threshold", type=float, metavar="X",
                       help="SL505 reports estimated occupancy below X (0 to 1, default 0.5)")
    model.add_argument("--compiler", choices=("none", "ptxas", "auto"),
                       help="compile CUDA files with nvcc for exact register counts where a verdict needs them "
                            "(SL505, SL506); about a second per file (default: the configuration's, else none)")
    fixes = p.add_argument_group("fixes and suppressions")
    fixes.add_argument("--fix", action="store_true", help="apply safe fixes in place")
    fixes.add_argument("--unsafe-fixes", action="store_true",
                       help="with --fix/--diff, also apply unsafe fixes (and count them as fixable)")
    fixes.add_argument("--diff", action="store_true", help="print fixes as a unified diff instead of writing")
    fixes.add_argument("--exit-non-zero-on-fix", action="store_true",
                       help="with --fix, exit 1 when anything was fixed, even if nothing remains")
    fixes.add_argument("--add-ignore", action="store_true",
                       help="add `// shaderlint: ignore[CODE]` comments to the lines with findings and exit")
    gate = p.add_argument_group("exit status and baselines")
    gate.add_argument("--fail-on", choices=("info", "warning", "error", "never"), default="warning",
                      help="lowest severity that makes the exit status 1 (default: warning)")
    gate.add_argument("--exit-zero", action="store_true",
                      help="exit 0 even with findings (paths that could not be linted still exit 2)")
    gate.add_argument("--baseline", metavar="FILE", help="report only findings not in this baseline file")
    gate.add_argument("--write-baseline", metavar="FILE",
                      help="write all current findings to this baseline file and exit 0")
    files = p.add_argument_group("files and configuration")
    files.add_argument("--config", action="append", default=[], metavar="FILE|KEY=VALUE",
                       help="a configuration file (default: closest shaderlint.toml / pyproject.toml), or a TOML "
                            "`key = value` overriding one setting of every configuration (repeatable)")
    files.add_argument("--extend-exclude", type=_globs, action="append", default=[], metavar="GLOBS",
                       help="comma-separated globs (relative to the current directory) to exclude as well")
    files.add_argument("--force-exclude", action="store_true",
                       help="apply exclusions (exclude, --extend-exclude, .gitignore) to paths named on the "
                            "command line too, as pre-commit needs")
    files.add_argument("--stdin-filename", metavar="NAME",
                       help="read the source from stdin and report it under NAME (its extension picks the language)")
    files.add_argument("-j", "--jobs", type=_jobs, default=0, metavar="N",
                       help="parallel processes (default 0: all cores; 1: no worker processes)")
    files.add_argument("--no-cache", action="store_true", help="neither read nor write the result cache")
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
        "compiler": getattr(args, "compiler", None),
    }.items() if v is not None}


def config_options(values: list[str]) -> tuple[str | None, dict]:
    """``--config`` values: one configuration file, and any number of ``key = value`` overrides
    (TOML, as ruff's ``--config``)."""
    import tomllib

    path: str | None = None
    overrides: dict = {}
    for v in values:
        if os.path.isfile(v) or ("=" not in v and v.endswith(".toml")):
            if path is not None:
                raise Usage(f"--config: only one configuration file can be given ({path}, {v})")
            path = v
            continue
        try:
            table = tomllib.loads(v)
        except tomllib.TOMLDecodeError as e:
            if "=" not in v:
                raise Usage(f"--config: {v!r} is neither a file nor a `key = value` setting") from None
            raise Usage(f"--config: {v!r} is not a TOML `key = value` setting ({e})") from None
        overrides.update(table)
    return path, overrides


def _stdin_name(args: argparse.Namespace) -> str | None:
    """The name stdin is linted under, or None when no stdin is read (usage errors raise)."""
    dash = args.paths is not None and "-" in args.paths
    if not dash and not args.stdin_filename:
        return None
    if not args.stdin_filename:
        raise Usage("reading standard input (-) needs --stdin-filename NAME to tell the language "
                    "(e.g. --stdin-filename kernel.cu)")
    for p in args.paths or ():
        if p != "-":
            print(f"shaderlint: warning: ignoring {p}: linting standard input (--stdin-filename)", file=sys.stderr)
    return args.stdin_filename


def collect_files(args: argparse.Namespace, resolver: SettingsResolver,
                  host_walk: list | None = None) -> tuple[list[str], list[tuple[str, str]]]:
    """The files to lint and the paths that could not be linted (path, reason). Files named on the
    command line whose language is unknown are dropped with a warning. ``host_walk``: gets the paths
    walked and the files the host index reads under them (``HostIndex.build``'s ``walked``), found by
    the same walk (not with ``--force-exclude`` or standard input)."""
    from shaderlint.discovery import clean, force_excluded

    exclude = tuple(g for group in args.extend_exclude for g in group)

    by_dir: dict[str, Settings] = {}  # every file of a directory has the same settings

    def settings(p: str) -> Settings:
        # the directory part, up to its last separator (what names a directory here, not a clean path)
        d = p[:p.rfind(os.sep) + 1] if os.altsep is None else os.path.dirname(p)
        st = by_dir.get(d)
        if st is None:
            st = by_dir[d] = resolver.for_path(p)
        return st

    def is_excluded(p: str) -> bool:
        return settings(p).is_excluded(p)

    def language(p: str) -> str | None:
        return settings(p).language_for(p)

    if args.stdin_name:
        name = clean(args.stdin_name)
        if args.force_exclude and force_excluded(name, exclude, is_excluded):
            return [], []
        files = [name]
        errors: list[tuple[str, str]] = []
    else:
        errors = []
        paths = args.paths or ["."]
        side = None
        if host_walk is not None and not args.force_exclude:
            import shaderlint.host.index as hi

            hi.load_scanners()
            scanners_for = hi.scanners_for

            def host_or_metal(p: str, lang: str | None) -> bool:
                return lang == "metal" or bool(scanners_for(p))

            side = (host_or_metal, [])
            host_walk[:] = [list(paths), side[1]]
        memo = got = None
        if not args.no_cache and not args.force_exclude:  # (what an earlier run's walk found, when nothing changed)
            from shaderlint.cache import cache_dir_for
            from shaderlint.discovery import WalkMemo

            top = paths[0] if os.path.isfile(paths[0]) else os.path.join(paths[0], "x")
            explicit = resolver.explicit.config_path if resolver.explicit is not None else None
            memo = WalkMemo(cache_dir_for(resolver.for_path(top)),
                            repr((WalkMemo.FORMAT, os.getcwd(), paths, exclude, side is not None, explicit,
                                  sorted(resolver.cli.items()), sorted(resolver.overrides.items()))))
            got = memo.load()
        if got is not None:
            files = got[0]
            if side is not None:
                side[1][:] = got[1]
        else:
            from shaderlint.discovery import record_above, stat_text

            record: list[tuple[str, str]] | None = None
            since = time.time_ns()
            if memo is not None:
                record = []
                record_above(paths, record)
                if explicit:
                    record.append((explicit, stat_text(explicit)))
            files = list(discover(paths, exclude, errors, is_excluded=is_excluded, language_for=language,
                                  force_exclude=args.force_exclude, side=side, record=record))
            if memo is not None and record is not None and not errors and host_walk is not None:  # (a lint run's)
                memo.save(record, files, side[1] if side is not None else [], since)
    kept = []
    for f in files:
        if language(f) is None:
            ext = os.path.splitext(f)[1] or "(no extension)"
            print(f"shaderlint: warning: {f}: not linted: no language for {ext} files "
                  f"(map it in the configuration, e.g. extension = {{ \"{ext if ext.startswith('.') else '.x'}\" "
                  f"= \"cuda\" }})", file=sys.stderr)
            continue
        kept.append(f)
    for p, reason in errors:
        print(f"shaderlint: {p}: {reason}", file=sys.stderr)
    if not files and not errors:  # ruff: "No Python files found under the given path(s)"
        print("shaderlint: warning: no shader files found under the given paths", file=sys.stderr)
    return kept, errors


def lint(args: argparse.Namespace, resolver: SettingsResolver, files: list[str]) -> list[FileResult]:
    from shaderlint.runner import Progress, lint_files

    read = None
    if args.stdin_name:
        data = args.stdin_data
        read = lambda _path: data  # noqa: E731
    host = None
    cache_dir = None
    if not args.stdin_name:
        from shaderlint.host.index import HostIndex
        exclude = tuple(g for group in args.extend_exclude for g in group)
        cache_dir = None
        if not args.no_cache and files:
            from shaderlint.cache import cache_dir_for
            cache_dir = cache_dir_for(resolver.for_path(files[0]))
        from shaderlint.host.index import host_roots
        roots = host_roots(args.paths or ["."], files, resolver.for_path)
        walk = getattr(args, "host_walk", None)  # (what collect_files' walk found for it, when under the same paths)
        host = HostIndex.build(roots, files, resolver.for_path, exclude, cache_dir=cache_dir,
                               walked=walk[1] if walk and walk[0] == list(roots) else None)
    release_listings()  # (no more walks this run)
    from shaderlint.project.run import plan_run

    # each file's context (headers, macros, compile flags); the headers the CUDA sources include are
    # analysed in context (shaderlint.project.run)
    plan = plan_run(files, resolver.for_path, None if args.stdin_name else _header_filter(args, resolver),
                    read=read, cache_dir=cache_dir if not args.stdin_name else None)
    files = plan.files
    progress = Progress(len(files))
    try:
        results = lint_files(files, resolver.for_path, jobs=args.jobs, use_cache=not args.no_cache and not read,
                             progress=progress, read=read, host=host, plan=plan)
    finally:
        progress.close()
    if host is not None:  # findings in the host files themselves (SL503 at the host line)
        from shaderlint.host.lint import lint_host_files
        results = lint_host_files(host, results, resolver.for_path, use_cache=not args.no_cache,
                                  only=args.paths or ["."])
    if args.fix or args.diff:  # a fix is checked by linting the fixed text in the file's context
        from shaderlint.fixes import fixable
        for r in results:
            if r.file_context is None and any(fixable(d, True) for d in r.diagnostics):
                r.file_context = plan.contexts.get(r.path)  # (known by digest only from a kept plan)
    return results


def _header_filter(args: argparse.Namespace, resolver: SettingsResolver):
    """Which headers found through the includes are linted: under the paths given, not excluded."""
    from shaderlint.project.run import under_roots

    inside = under_roots(args.paths or ["."])
    exclude = tuple(g for group in args.extend_exclude for g in group)
    from shaderlint.config import glob_match

    def accept(p: str) -> bool:
        st = resolver.for_path(p)
        return inside(p) and not st.is_excluded(p) and not any(glob_match(p, g, os.getcwd()) for g in exclude)

    return accept


def show_settings(args: argparse.Namespace, resolver: SettingsResolver, files: list[str]) -> None:
    """``--show-settings``: what shaderlint will use for the first file (or the first PATH)."""
    from shaderlint.engine import enabled_rules, resolve_target

    path = files[0] if files else (args.stdin_name or (args.paths or ["."])[0])
    st = resolver.for_path(path)
    language = st.language_for(path)

    def arr(xs) -> str:
        return "[" + ", ".join(f'"{x}"' for x in xs) + "]"

    lines = [f"# settings for {path}",
             f"config-file = {json.dumps(st.config_path) if st.config_path else '(none: defaults)'}",
             f"language = {json.dumps(language) if language else '(none: not linted)'}",
             f"select = {arr(st.select)}", f"extend-select = {arr(st.extend_select)}",
             f"ignore = {arr(st.ignore)}", f"per-file-ignores = {arr(st.ignored_for(path))}  # matching this file",
             f"target = {json.dumps(st.target) if st.target else '(default for the language)'}",
             f"occupancy-threshold = {st.occupancy_threshold:g}", f"time-budget = {st.time_budget:g}",
             f"exclude = {arr(st.exclude)}",
             "extension = {" + ", ".join(f'"{e}" = "{lang}"' for e, lang in st.extension) + "}",
             "facts = {" + ", ".join(f'{k} = "{v}"' for k, v in st.facts_for(path).items()) + "}  # for this file",
             f"host-code = {'true' if st.host_code else 'false'}",
             f"compiler = {json.dumps(st.compiler)}",
             f"defines = {arr(st.defines)}",
             "defines-complete = " + ("(when compile_commands.json gives the flags)" if st.defines_complete is None
                                      else "true" if st.defines_complete else "false"),
             f"include-dirs = {arr(st.include_dirs)}"]
    if language:
        lines.append(f"# active target: {resolve_target(st, language).name}")
        lines.append("# rules: " + " ".join(r.code for r in enabled_rules(st, language, path)))
    sys.stdout.write("\n".join(lines) + "\n")


def run_lint(args: argparse.Namespace) -> int:
    """Phases: settings -> files -> lint (cache, pool) -> [add-ignore | fixes] -> baseline -> output -> exit."""
    if args.show_unused_ignores:  # SL002 unused-suppression, checked by the engine after suppressions
        args.extend_select = tuple(args.extend_select or ()) + ("SL002",)
    args.stdin_name = _stdin_name(args)
    if args.add_ignore and (args.fix or args.diff or args.stdin_name):
        raise Usage("--add-ignore cannot be combined with --fix, --diff or standard input")
    config, overrides = config_options(args.config)
    resolver = SettingsResolver(config, cli_settings(args), overrides)
    with shared_listings():  # (the walk for host code in lint() lists the same directories again)
        return _run_lint(args, resolver)


def _run_lint(args: argparse.Namespace, resolver: SettingsResolver) -> int:
    args.host_walk = [] if not (args.stdin_name or args.show_files or args.show_settings) else None
    files, errors = collect_files(args, resolver, args.host_walk)
    failed = 2 if errors else 0  # a path that could not be linted fails the run, whatever the findings
    if args.show_files:
        sys.stdout.write("".join(f + "\n" for f in files))
        return failed
    if args.show_settings:
        show_settings(args, resolver, files)
        return failed
    args.stdin_data = sys.stdin.buffer.read() if args.stdin_name else b""
    if args.stdin_name and not files:  # excluded or of no known language: stdin passes through
        if args.fix and not args.diff:
            sys.stdout.buffer.write(args.stdin_data)
            sys.stdout.flush()
        return failed
    results = lint(args, resolver, files)
    nfiles = max(len(files), len(results))  # with the headers analysed in context (shaderlint.project.run)

    if args.add_ignore:
        from shaderlint.add_ignore import add_ignores
        add_ignores(results, resolver.for_path)
        return failed

    fixed = False
    if args.fix or args.diff:  # shaderlint.fixes: --diff prints and exits; --fix writes, then reports what remains
        from shaderlint.fixes import cli_fix
        before = list(results)
        code = cli_fix(results, fix=args.fix, diff=args.diff, unsafe=args.unsafe_fixes,
                       settings_for=resolver.for_path, stdin=bool(args.stdin_name))
        if code is not None:
            return max(code, failed)
        fixed = any(a is not b for a, b in zip(before, results))

    if args.write_baseline:
        n = write_baseline(args.write_baseline, results)
        print(f"shaderlint: wrote {n} finding{'s' if n != 1 else ''} to baseline {args.write_baseline}",
              file=sys.stderr)
        return failed
    if args.baseline:
        results, _dropped = load_baseline(args.baseline).filter(results)
    emit(args, results, nfiles, errors)
    code = 0 if args.exit_zero else exit_code(results, args.fail_on)
    if fixed and args.exit_non_zero_on_fix:
        code = max(code, 1)
    return max(code, failed)


def emit(args: argparse.Namespace, results: list[FileResult], nfiles: int,
         failed: list[tuple[str, str]] = ()) -> None:
    """Format ``results`` (with ``--statistics`` as each format wants it) to stdout or ``-o``."""
    from shaderlint.formatters import get_formatter
    from shaderlint.formatters.statistics import format_statistics_json, format_statistics_text, statistics

    color = args.color == "always" or (args.color == "auto" and not args.output and sys.stdout.isatty()
                                       and os.environ.get("NO_COLOR") is None)
    options = {"quiet": args.quiet, "files": nfiles, "color": color, "root": os.getcwd(),
               "unsafe_fixes": args.unsafe_fixes, "failed_paths": list(failed)}
    if args.statistics:
        rows = statistics(results, unsafe=args.unsafe_fixes)
        if args.format in ("text", "concise"):
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


GENERATED = "<!-- Generated from"


def rule_page(rule) -> str:
    """The rule's document as ``shaderlint rule`` prints it: the page of ``rules/``, without the
    comment that says the page is generated (a fact about the file, not the rule)."""
    lines = rule.markdown().split("\n")
    out: list[str] = []
    for line in lines:
        if line.startswith(GENERATED):
            if out and out[-1] == "":
                out.pop()
            continue
        out.append(line)
    return "\n".join(out)


def run_rule(argv: Sequence[str]) -> int:
    from shaderlint.rules.registry import get_rule

    if argv and argv[0] in ("-h", "--help"):
        print("usage: shaderlint rule CODE\n\nPrint a rule's documentation (CODE: SL201, or its name).")
        return 0
    if len(argv) != 1:
        print("usage: shaderlint rule CODE  (e.g. shaderlint rule SL201)", file=sys.stderr)
        return 2
    rule = get_rule(argv[0])
    if rule is None:
        print(f"shaderlint: unknown rule {argv[0]!r} (see `shaderlint rules`)", file=sys.stderr)
        return 2
    sys.stdout.write(rule_page(rule))
    return 0


def run_rules(argv: Sequence[str]) -> int:
    from shaderlint.rules.base import LANGUAGE_NAMES
    from shaderlint.rules.registry import RULES

    if argv and argv[0] in ("-h", "--help"):
        print("usage: shaderlint rules\n\nList every rule: code, name, severity, languages (M C G), summary.")
        return 0
    if argv:
        print(f"usage: shaderlint rules  (takes no arguments; for one rule: shaderlint rule {argv[0]})",
              file=sys.stderr)
        return 2
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
        if argv and argv[0] == "check":  # ruff's habit: `check` is the default command
            argv = argv[1:]
        elif argv and argv[0] in SUBCOMMANDS:
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
