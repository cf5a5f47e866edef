"""The host index of a run: which host launches apply to which kernel file, and the facts they give.

:meth:`HostIndex.build` walks the paths being linted with the rules of
:mod:`shaderlint.discovery` (``.gitignore``, ``exclude`` globs) for files some host scanner
reads (:func:`shaderlint.host.scanners_for`), scans each (cached in memory by content), and links
every launch to a kernel file being linted:

* CUDA and Metal launches by the kernel's name: the name must be defined as a kernel (CUDA
  ``__global__``, Metal ``kernel``/``[[kernel]]``) in exactly one linted file of the launch's
  language and nowhere else under the paths (a CUDA kernel in a ``.h`` or a Metal kernel in a
  ``.metal`` that is not linted counts);
  a name defined in several files is ambiguous and links nowhere.
* Vulkan dispatches by shader: ``"shaders/blur.comp.spv"`` -> ``shaders/blur.comp`` (or
  ``.glsl``), the literal's path taken relative to the host file, a linted path, the current
  directory or the project root (the host file's configuration directory), only when that file
  is being linted.
* Vulkan pipelines traced across functions and files (:mod:`shaderlint.host._vulkan_summary`):
  each creation whose shader name and specialization constants come from its callers is
  instantiated at its call sites, giving a ``vulkan-pipeline`` record (the group size the
  pipeline runs its shader with, located at the call that names the shader); a dispatch that
  binds a pipeline it is passed links per call site to the pipeline the caller passes. A shader
  path built on a directory that is not a literal resolves by file name, when exactly one linted
  shader has it. When some creation of the run is not understood, no creation's constants count.

:class:`HostFacts` (one per kernel file, picklable for worker processes) carries the linked
launches; :func:`apply` turns them into the kernel model's facts after the file is parsed: the
threadgroup size when every linked launch uses the same constant size (``GroupSize`` with origin
``host``), the dispatch mode when all agree, the grid size (in threads) when all agree. What the
kernel's own file says always wins: an annotation, the language's declaration, same-file
``<<<>>>`` launches; host facts rank above configuration only. Settings ``host-code = false``
turns the index off for the files it applies to.

:func:`host_roots` gives the paths a run reads host code under: the paths it lints, or, when
it is given files only (pre-commit, an editor's "lint this file") that all belong to one
project with a configuration file, that project's directory, so that a kernel gets the same
facts whichever way it is linted.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import pkgutil
import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from shaderlint.host import BY_NAME, HostLaunch, Span, Truncation, has_scanners, scanners_for, wanted
from shaderlint.host._vulkan_summary import VulkanSummary

if TYPE_CHECKING:
    from shaderlint.config import Settings
    from shaderlint.model.build import FileModel

#: APIs whose launches link to CUDA kernels / Metal kernels by name.
CUDA_APIS = frozenset({"cuda", "cudaLaunchKernel", "cudaLaunchCooperativeKernel", "hipLaunchKernelGGL"})
METAL_APIS = frozenset({"metal"})
#: ``Function.host_facts`` key: launches in other files use another size than this file's launches
#: (the estimator then does not take the size from the file's own launches either).
LAUNCHES_DISAGREE = "launches-disagree"
#: Host files larger than this are not read.
MAX_HOST_BYTES = 2 << 20
#: The in-memory scan cache: :meth:`ScanStore.key` (path and content) -> launches.
_SCANNED: dict[str, tuple[HostLaunch, ...]] = {}
_SCANNED_MAX = 20_000


def load_scanners() -> None:
    """Import every scanner module of :mod:`shaderlint.host` (each registers itself)."""
    import importlib

    import shaderlint.host as pkg

    for info in pkgutil.iter_modules(pkg.__path__):
        if info.name.startswith("_") or info.name in ("index", "lint"):
            continue
        try:
            importlib.import_module(f"shaderlint.host.{info.name}")
        except Exception:  # a scanner that cannot load (a missing grammar) reads nothing
            continue


@dataclass(frozen=True)
class HostFacts:
    """The host launches linked to the kernels of one kernel file: (kernel name, launches) pairs,
    sorted; the name ``""`` stands for the file's compute entry point (Vulkan)."""

    launches: tuple[tuple[str, tuple[HostLaunch, ...]], ...]

    def for_kernel(self, name: str) -> tuple[HostLaunch, ...]:
        for n, ls in self.launches:
            if n == name:
                return ls
        return ()

    def digest(self) -> str:
        """A stable digest of everything here (part of the lint cache's key: a changed host line
        changes the findings' related locations)."""
        return hashlib.sha256(repr(self.launches).encode("utf-8", "surrogateescape")).hexdigest()[:32]


class ScanStore:
    """Scan results kept across runs in the lint cache directory (``<cache>/host/``), stamped with
    shaderlint's code: a warm run reads no host file with tree-sitter again. One JSON file, loaded
    once and written once (atomically) per run; any I/O or format problem is a miss.

    Two tables. ``scans``: :meth:`key` (the host file's path and content) -> its launches. ``files``:
    path -> the file's ``stat`` data when it was last read (size, ``st_mtime_ns``, ``st_ctime_ns``,
    inode, device), the content key it had and the CUDA kernels it defines. A file whose ``stat``
    data are unchanged is not read again at all (:meth:`known`), as ``git status`` does: an edit
    changes the modification time, and anything that puts an old modification time back (``touch
    -d``, an archive's timestamps) changes the change time, which no program can set, as does
    replacing the file (a new inode). Only data recorded at least :data:`RACY_NS` after the file's
    last change are trusted: two writes within one tick of the file system's clock leave the same
    times, so a file read that soon after a change is checked by its content on the next run (the
    ``scans`` table, keyed by content, is the fallback everywhere). Off where ``st_ctime`` is not a
    change time (Windows).

    Every value in the file is a string (format 3), so that loading it makes one object per entry and
    no container the cyclic garbage collector would traverse for the rest of the run: a scan is the
    JSON text of its launch list (``""`` for none), decoded when asked for (:meth:`get`); a file's record
    is ``"size mtime ctime inode device|key|names"`` (the ``stat`` part empty when not trusted; names
    space-separated, ``-`` for none recorded). A file in which no scanner can find anything
    (:func:`shaderlint.host.wanted`: most host files) is neither hashed nor given a scan: its record's
    key is :data:`NOTHING`. A scan some scanners were not asked for (:func:`_scan_keyed`'s ``linkable``) is
    kept nowhere and its file not recorded: a later run, whose kernels may differ, reads it again."""

    FORMAT = 3
    #: ``stat`` data recorded less than this after the file's modification or change time are not trusted.
    RACY_NS = 3_000_000_000

    def __init__(self, directory: str) -> None:
        from shaderlint.cache import code_stamp

        self.folder = os.path.join(directory, "host")
        self.file = os.path.join(self.folder, f"scans-{code_stamp()}.json")
        self.entries: dict[str, str] = {}
        self.all_files: dict[str, dict[str, str]] = {}  # current directory -> "kind\0path" -> record
        self.files: dict[str, str] = {}  # (this run's directory's: the paths are as the run writes them)
        self.used: set[str] = set()  # scan keys read or written by this run
        self.dirty = False
        self.now = time.time_ns()
        try:
            with open(self.file, "rb") as fh:
                got = json.loads(fh.read())
            if isinstance(got, dict) and got.get("format") == self.FORMAT \
                    and isinstance(got.get("scans"), dict) and isinstance(got.get("files"), dict):
                self.entries = got["scans"]
                self.all_files = got["files"]
        except (OSError, ValueError):
            pass
        try:
            cwd = os.getcwd()
            here = self.all_files.get(cwd)
            self.files = here if isinstance(here, dict) else {}
            self.all_files[cwd] = self.files
        except OSError:
            self.files = {}

    @staticmethod
    def key(path: str, data: bytes) -> str:
        h = hashlib.blake2b(path.encode("utf-8", "surrogateescape") + b"\0", digest_size=16)
        h.update(data)  # (the same digest as hashing the concatenation, without copying the file)
        return h.hexdigest()

    def get(self, key: str) -> tuple[HostLaunch, ...] | None:
        text = self.entries.get(key)
        if not isinstance(text, str):
            return None
        if not text:
            got: tuple[HostLaunch, ...] = ()
        else:
            try:
                rows = json.loads(text)
                if not isinstance(rows, list):
                    return None
                got = tuple([_launch_from_json(r) for r in rows])
            except (TypeError, ValueError, KeyError, IndexError, AttributeError, RecursionError):
                return None
        self.used.add(key)
        return got

    def put(self, key: str, launches: tuple[HostLaunch, ...]) -> None:
        self.entries[key] = json.dumps([_launch_to_json(x) for x in launches], separators=(",", ":")) \
            if launches else ""
        self.used.add(key)
        self.dirty = True

    # -- files by stat data
    @staticmethod
    def _file_key(path: str, kind: str) -> str:
        return f"{kind}\0{path}"

    def known(self, path: str, st: os.stat_result, kind: str = "host") -> tuple[str, list[str] | None] | None:
        """(scan key, kernel names) recorded for ``path`` when its ``stat`` data are those recorded and
        trusted; None when it must be read."""
        rec = self.files.get(self._file_key(path, kind))
        if not _STAT_TRUSTED or not isinstance(rec, str):
            return None
        parts = rec.split("|")
        if len(parts) != 3 or not parts[0] or parts[0] != _stat_text(st):
            return None
        names = parts[2]
        return parts[1], None if names == "-" else names.split()

    def remember(self, path: str, st: os.stat_result, key: str, names: set[str] | None,
                 kind: str = "host") -> None:
        """What ``path`` held when ``st`` was taken (just before reading it)."""
        row = _stat_text(st)
        if max(st.st_mtime_ns, st.st_ctime_ns) > self.now - self.RACY_NS:
            row = ""  # changed too recently to tell a later change by its times: checked by content
        rec = f"{row}|{key}|{'-' if names is None else ' '.join(sorted(names))}"
        fk = self._file_key(path, kind)
        if self.files.get(fk) != rec:
            self.files[fk] = rec
            self.dirty = True

    def save(self) -> None:
        if not self.dirty:
            return
        from shaderlint.cache import drop_other_versions, replace_file

        # scans no path refers to any more (an edited file's old content), unless this run used them
        live = {r.split("|")[1] for files in self.all_files.values() if isinstance(files, dict)
                for r in files.values() if isinstance(r, str) and r.count("|") == 2} | self.used
        scans = {k: v for k, v in self.entries.items() if k in live}
        try:
            os.makedirs(self.folder, exist_ok=True)
            drop_other_versions(self.folder, "scans-", self.file)  # results of other shaderlint versions
            payload = json.dumps({"format": self.FORMAT, "scans": scans, "files": self.all_files},
                                 separators=(",", ":"))
            replace_file(self.file, payload.encode("utf-8"))
        except (OSError, ValueError):
            pass


class RunSummary:
    """A run's host index kept in the lint cache directory (``<cache>/host/runs-<stamp>.json``, stamped
    with shaderlint's code like :class:`ScanStore`): a warm run whose own walk finds the same files
    with the same ``stat`` data takes the index from here, without loading the scan store or decoding
    a launch it does not link. Keyed by the run (current directory, the paths walked and their
    kind, ``exclude``) and, per run, by a digest of everything :meth:`HostIndex.build` computes the
    index from: the kernel files linted (with their language, ``host-code`` on), every file the walk
    found in its order (a host file with its ``stat`` data, its settings' ``host-code`` and base
    directory; a Metal file not linted by its path), and the ``stat`` data of every other file it
    read for the kernels it defines (checked when the summary is taken). Only data recorded at least
    :attr:`ScanStore.RACY_NS` after every such file's last change are kept (see :class:`ScanStore`);
    at most :data:`MAX_RUNS` runs, the latest kept. Any I/O or format problem is a miss."""

    FORMAT = 1
    MAX_RUNS = 8

    def __init__(self, directory: str, run: str, inputs: str) -> None:
        from shaderlint.cache import RunsFile

        self.folder = os.path.join(directory, "host")
        self.store = RunsFile(self.folder, "runs-", self.FORMAT, self.MAX_RUNS)
        self.file = self.store.file
        self.run = hashlib.blake2b(run.encode("utf-8", "surrogateescape"), digest_size=16).hexdigest()
        self.digest = hashlib.blake2b(inputs.encode("utf-8", "surrogateescape"), digest_size=16).hexdigest()

    def _runs(self) -> dict:
        return self.store.runs()

    def load(self) -> "HostIndex | None":
        rec = self._runs().get(self.run)
        if not isinstance(rec, dict) or rec.get("digest") != self.digest:
            return None
        try:
            for p, text in rec["consumed"]:
                try:
                    now = _stat_text(os.stat(p))
                except OSError:
                    now = ""
                if now != text:
                    return None
            return _index_from_json(rec["index"])
        except (TypeError, ValueError, KeyError, IndexError, AttributeError, RecursionError):
            return None

    def save(self, index: "HostIndex", consumed: list[tuple[str, str]]) -> None:
        try:
            os.makedirs(self.folder, exist_ok=True)
        except OSError:
            return
        self.store.put(self.run, {"digest": self.digest, "consumed": consumed, "index": _index_to_json(index)})


def _index_to_json(index: "HostIndex") -> dict:
    return {"by_file": [[target, [[name, [_launch_to_json(x) for x in ls]] for name, ls in facts.launches]]
                        for target, facts in index.by_file.items()],
            "paths": index.paths, "counts": [index.host_files, index.launches, index.linked]}


def _index_from_json(o: dict) -> "HostIndex":
    index = HostIndex()
    for target, facts in o["by_file"]:
        if type(target) is not str or not all(type(name) is str for name, _ in facts):
            raise ValueError("by_file")
        index.by_file[target] = HostFacts(tuple((name, tuple([_launch_from_json(x) for x in ls]))
                                                for name, ls in facts))
    paths = o["paths"]
    if not all(type(k) is str and type(v) is str for k, v in paths.items()):
        raise ValueError("paths")
    index.paths = dict(paths)
    index.host_files, index.launches, index.linked = (int(n) for n in o["counts"])
    return index


#: ``st_ctime`` is the inode's change time (POSIX), which no program sets: see :class:`ScanStore`.
_STAT_TRUSTED = os.name == "posix"


def _stat_text(st: os.stat_result) -> str:
    return f"{st.st_size} {st.st_mtime_ns} {st.st_ctime_ns} {st.st_ino} {st.st_dev}"


def _span_to_json(s: Span | None) -> list | None:
    return None if s is None else [s.path, s.start, s.end, s.line, s.column]


def _span_from_json(o) -> Span | None:
    if o is None:
        return None
    path, start, end, line, column = o  # (a stored value of another shape or type is a miss: ValueError)
    if type(path) is not str or type(start) is not int or type(end) is not int or type(line) is not int \
            or type(column) is not int:
        raise ValueError("span")
    s = _new(Span)
    _set(s, "__dict__", {"path": path, "start": start, "end": end, "line": line, "column": column})
    return s


def _dims_from_json(o) -> tuple[int, int, int] | None:
    if o is None:
        return None
    x, y, z = o
    if type(x) is not int or type(y) is not int or type(z) is not int:
        raise ValueError("dims")
    return (x, y, z)


def _launch_to_json(x: HostLaunch) -> dict:
    if isinstance(x, VulkanSummary):
        return {"vulkan-summary": x.data}
    o = {"at": _span_to_json(x.at), "api": x.api, "kernel": x.kernel, "shader": x.shader, "group": x.group,
         "group_at": _span_to_json(x.group_at), "dispatch": x.dispatch, "grid": x.grid,
         "grid_at": _span_to_json(x.grid_at), "template_args": x.template_args,
         "shader_literal": x.shader_literal, "specialization": x.specialization,
         "truncations": [_truncation_to_json(t) for t in x.truncations]}
    return {k: v for k, v in o.items() if v != _DEFAULTS.get(k, 0)}  # (what a field defaults to is left out)


_DEFAULTS: dict = {"kernel": None, "shader": None, "group": None, "group_at": None, "dispatch": None, "grid": None,
                   "grid_at": None, "template_args": (), "shader_literal": None, "specialization": (),
                   "truncations": []}
# A warm run decodes every stored launch (tens of thousands on a large tree): the records are built
# without the frozen dataclasses' ``__init__`` (one ``object.__setattr__`` per field), with the same
# field values, checked by type (a stored value of another type is a miss, never a wrong fact).
_new = object.__new__
_set = object.__setattr__
_OPTIONAL_STR = ("kernel", "shader", "dispatch", "shader_literal")


def _launch_from_json(o: dict) -> HostLaunch:
    if "vulkan-summary" in o:
        return VulkanSummary(o["vulkan-summary"])  # type: ignore[return-value]
    get = o.get
    api = o["api"]
    if type(api) is not str:
        raise ValueError("api")
    fields = {"at": _span_from_json(o["at"]), "api": api, "kernel": get("kernel"), "shader": get("shader"),
              "group": None, "group_at": None, "dispatch": get("dispatch"), "grid": None, "grid_at": None,
              "template_args": (), "shader_literal": get("shader_literal"), "specialization": (),
              "truncations": ()}
    for name in _OPTIONAL_STR:
        v = fields[name]
        if v is not None and type(v) is not str:
            raise ValueError(name)
    if len(o) > 3 or "kernel" not in o:  # (most launches are references: at, api, kernel)
        fields["group"] = _dims_from_json(get("group"))
        fields["group_at"] = _span_from_json(get("group_at"))
        fields["grid"] = _dims_from_json(get("grid"))
        fields["grid_at"] = _span_from_json(get("grid_at"))
        args = get("template_args", ())
        if args:
            if not all(type(a) is str for a in args):
                raise ValueError("template_args")
            fields["template_args"] = tuple(args)
        spec = get("specialization", ())
        if spec is None:
            fields["specialization"] = None
        elif spec:
            fields["specialization"] = tuple((int(a), int(b)) for a, b in spec)
        truncations = get("truncations", ())
        if truncations:
            fields["truncations"] = tuple(_truncation_from_json(t) for t in truncations)
    x = _new(HostLaunch)
    _set(x, "__dict__", fields)
    return x


def _truncation_to_json(t: Truncation) -> dict:
    return {"axis": t.axis, "at": _span_to_json(t.at), "kind": t.kind, "numerator": t.numerator,
            "divisor": t.divisor, "divisor_value": t.divisor_value, "as_group": t.as_group,
            "round_up": t.round_up, "numerator_value": t.numerator_value}


def _truncation_from_json(o: dict) -> Truncation:
    dv = o.get("divisor_value")
    return Truncation(int(o["axis"]), _span_from_json(o["at"]), str(o["kind"]), str(o["numerator"]),
                      str(o["divisor"]), None if dv is None else int(dv), bool(o.get("as_group")),
                      str(o.get("round_up", "")),
                      None if o.get("numerator_value") is None else int(o["numerator_value"]))


def scan_file(path: str, data: bytes, store: ScanStore | None = None) -> tuple[HostLaunch, ...]:
    """Every registered scanner's launches for one host file, cached by content (in memory, and
    in ``store`` across runs)."""
    return _scan_keyed(path, data, store)[1]


#: The scan key of a file in which no scanner finds anything (:func:`shaderlint.host.wanted`): neither
#: hashed nor kept in the scan store (its ``files`` record names this key, whose scan is no launch).
NOTHING = "-"


def _scan_keyed(path: str, data: bytes, store: ScanStore | None = None, idle=(),
                linkable: Callable[[bytes], bool] | None = None) -> tuple[str | None, tuple[HostLaunch, ...]]:
    """(content key, launches) of one host file. ``idle``: scanners of the file known to find nothing
    in ``data`` (their ``wants`` is false), not asked again. ``linkable(data)`` false: the by-name
    scanners (:data:`shaderlint.host.BY_NAME`) are not run, their records could link to no kernel of
    the run; the other scanners' launches are returned with the key None, and kept nowhere."""
    scanners = scanners_for(path)
    if idle:
        scanners = [s for s in scanners if s not in idle]
    if not wanted(scanners, data):
        return NOTHING, ()
    key = ScanStore.key(path, data)
    hit = _kept(key, store)
    if hit is not None:
        return key, hit
    partial = linkable is not None and any(s in BY_NAME for s in scanners) and not linkable(data)
    out: list[HostLaunch] = []
    for scanner in scanners:
        if partial and scanner in BY_NAME:
            continue
        try:
            out.extend(scanner(path, data))
        except Exception:
            continue
    if partial:
        return None, tuple(out)
    if len(_SCANNED) >= _SCANNED_MAX:
        _SCANNED.clear()
    got = _SCANNED[key] = tuple(out)
    if store is not None:
        store.put(key, got)
    return key, got


def _kept(key: str, store: ScanStore | None) -> tuple[HostLaunch, ...] | None:
    """The scan kept for a content key (in memory, or in ``store``), if any."""
    hit = _SCANNED.get(key)
    if hit is not None:
        if store is not None and key not in store.entries:
            store.put(key, hit)
        elif store is not None:
            store.used.add(key)
        return hit
    if store is not None:
        kept = store.get(key)
        if kept is not None:
            _SCANNED[key] = kept
            return kept
    return None


#: A word of C-family source (an identifier's text is one: a kernel name a launch records is one).
_IDENT = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*")
#: Every byte that is not a letter, digit or ``_`` -> a space (:func:`_names_any`).
_WORD_BYTES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
_SPACED = bytes(c if c in _WORD_BYTES else 0x20 for c in range(256))


def _names_any(data: bytes, names: set[bytes]) -> bool:
    """Whether a word of ``data`` (:data:`_IDENT`) is one of ``names`` (each a word). The runs of letters,
    digits and ``_`` are those words but where a run starts with digits (``9k``: the word is ``k``), so
    a name among the runs answers at C speed and only a file without one is searched word by word."""
    return not names.isdisjoint(data.translate(_SPACED).split()) or not names.isdisjoint(_IDENT.findall(data))


def _linkable_names(kernels: dict[str, tuple[str, str]], host_names: dict[str, set[str]], other_metal: list[str],
                    names_in: Callable[[str, str], set[str] | None]) -> set[bytes]:
    """The names a launch can link to (see :meth:`HostIndex.build`'s ``link``): defined as a kernel in
    exactly one file for CUDA, for Metal, or for both together (a ``reference`` record's languages)."""
    defs: dict[tuple[str, str], set[str]] = {}
    for key, (p, lang) in kernels.items():
        if lang == "glsl":
            continue
        got = host_names[key] if key in host_names and lang == "cuda" else names_in(p, lang)
        for name in got or ():
            defs.setdefault((name, lang), set()).add(key)
    for key, got in host_names.items():
        if key not in kernels:
            for name in got:
                defs.setdefault((name, "cuda"), set()).add(key)
    for mp in other_metal:
        for name in names_in(mp, "metal") or ():
            defs.setdefault((name, "metal"), set()).add(_norm(mp))
    out: set[bytes] = set()
    for name in {n for n, _ in defs}:
        cuda = defs.get((name, "cuda"), set())
        metal = defs.get((name, "metal"), set())
        if len(cuda) == 1 or len(metal) == 1 or len(cuda | metal) == 1:
            out.add(name.encode("utf-8", "surrogateescape"))
    return out


_CUDA_KERNEL = re.compile(rb"__global__\b")
_CUDA_NOISE = re.compile(rb"__launch_bounds__\s*\([^()]*\)|__attribute__\s*\(\([^;{}]*?\)\)|__declspec\s*\([^()]*\)")
_NAME_CALL = re.compile(rb"([A-Za-z_]\w*)\s*(?:<[^;{}()]*>\s*)?\(")
_METAL_KERNEL = re.compile(rb"(?:\bkernel|\[\[\s*kernel\s*\]\])\s+void\s+([A-Za-z_]\w*)\s*\(")


def kernel_names(data: bytes, language: str) -> set[str]:
    """Names defined as kernels in a file (a textual scan: a name it wrongly adds can only make a
    link ambiguous, which loses a fact, never adds one)."""
    out: set[str] = set()
    if language == "cuda":
        for m in _CUDA_KERNEL.finditer(data):
            head = _CUDA_NOISE.sub(b" ", data[m.end():m.end() + 400])
            got = _NAME_CALL.search(head)
            if got is not None and not _declaration_only(head, got.end()):
                out.add(got.group(1).decode("ascii", "replace"))
    elif language == "metal":
        out.update(m.group(1).decode("ascii", "replace") for m in _METAL_KERNEL.finditer(data))
    return out


def _declaration_only(text: bytes, after_open: int) -> bool:
    """The parameter list opened just before ``after_open`` closes and a ``;`` follows: a
    prototype (``__global__ void k(float*);`` in the launching file), not a definition. Unsure
    (the text ends first) counts as a definition."""
    depth = 1
    for m in _PAREN.finditer(text, after_open):  # (from parenthesis to parenthesis, not byte by byte)
        depth += 1 if text[m.start()] == 0x28 else -1
        if not depth:
            return text[m.end():].lstrip().startswith(b";")
    return False


_PAREN = re.compile(rb"[()]")


def _norm(path: str) -> str:
    return os.path.normcase(os.path.normpath(os.path.abspath(path)))


if os.name == "posix":  # (there ``abspath`` normalises and ``normcase`` changes nothing: called per file walked)
    _norm = os.path.abspath  # noqa: F811


def shader_candidates(literal: str) -> list[str]:
    """The shader sources a path literal may name: ``x.comp.spv`` -> ``x.comp``; ``x.spv`` ->
    ``x.comp``, ``x.glsl``; ``x.comp``/``x.glsl`` as written."""
    low = literal.lower()
    if low.endswith(".spv"):
        stem = literal[:-4]
        if stem.lower().endswith((".comp", ".glsl")):
            return [stem]
        return [stem + ".comp", stem + ".glsl"]
    if low.endswith((".comp", ".glsl")):
        return [literal]
    return []


def host_roots(paths: list[str], files: list[str], settings_for: Callable[[str], "Settings"]) -> list[str]:
    """Where a run reads host code (see the module): ``paths``, or the configuration directory of
    the project when ``paths`` are all files of one project that has a configuration file."""
    if not files or not paths or not all(os.path.isfile(p) for p in paths):
        return paths
    st = settings_for(files[0])
    if not st.config_path or not st.host_code:
        return paths
    root = st.base_dir()
    top = _norm(root)
    for f in files:
        g = settings_for(f)
        if g.config_path != st.config_path or not _norm(f).startswith(top + os.sep):
            return paths
    rel = os.path.relpath(root)  # (paths as the run writes them: relative under the current directory)
    return [rel if not rel.startswith("..") else root]


def within(path: str, paths: list[str]) -> bool:
    """Whether ``path`` is one of ``paths`` or under one of them."""
    p = _norm(path)
    for q in paths:
        nq = _norm(q)
        if p == nq or p.startswith(nq.rstrip(os.sep) + os.sep):
            return True
    return False


class HostIndex:
    """Host facts per kernel file for one run."""

    def __init__(self) -> None:
        self.by_file: dict[str, HostFacts] = {}
        #: Normalised kernel file -> its path as linted (for the files in :attr:`by_file` that are linted).
        self.paths: dict[str, str] = {}
        self.host_files = 0
        #: Launches read (not ``reference`` records); a host file whose bytes name no kernel a launch can
        #: link to is not read by the CUDA scanner (:meth:`build`): its launches are not counted.
        self.launches = 0
        self.linked = 0

    def facts_for(self, path: str) -> HostFacts | None:
        return self.by_file.get(_norm(path)) if self.by_file else None

    @classmethod
    def build(cls, paths: Iterable[str], kernel_files: Iterable[str], settings_for: Callable[[str], "Settings"],
              exclude: tuple[str, ...] = (), read: Callable[[str], bytes] | None = None,
              cache_dir: str | None = None, walked: list[str] | None = None) -> "HostIndex":
        """The index for linting ``kernel_files``, found under ``paths``; scan results are kept in
        ``cache_dir`` (the lint cache's directory) when given. ``walked``: the files a walk of
        ``paths`` with ``exclude`` (and the settings' exclusions) found that some host scanner reads or
        whose language is Metal, and every file named in ``paths``, in the walk's order (what the
        command line's own walk collected with :func:`shaderlint.discovery.discover`'s ``side``);
        None walks ``paths`` here. Never raises: an index that cannot be built is empty (host facts
        are an extra; the lint goes on without them)."""
        from shaderlint.collector import collector_paused

        stores: list[ScanStore] = []
        try:
            # (the collector paused, as over a file's analysis: the scans' allocations live until the run
            # ends, and the collections they would trigger traverse them and free nearly nothing)
            with collector_paused():
                return cls._build(paths, kernel_files, settings_for, exclude, read, cache_dir, stores, walked)
        except Exception:
            return cls()
        finally:
            for store in stores:
                store.save()

    @classmethod
    def _build(cls, paths: Iterable[str], kernel_files: Iterable[str], settings_for: Callable[[str], "Settings"],
               exclude: tuple[str, ...], read: Callable[[str], bytes] | None, cache_dir: str | None,
               stores: list[ScanStore], walked: list[str] | None = None) -> "HostIndex":
        from shaderlint.discovery import discover

        index = cls()
        # (a caller's reader may not give the disk's bytes: then every file is read through it)
        use_stat = cache_dir is not None and read is None and _STAT_TRUSTED
        read = read or _read
        by_dir: dict[str, "Settings"] = {}

        def settings(p: str) -> "Settings":
            d = p[:p.rfind(os.sep) + 1] if os.altsep is None else os.path.dirname(p)  # (its directory)
            st = by_dir.get(d)
            if st is None:
                st = by_dir[d] = settings_for(p)
            return st

        kernels: dict[str, tuple[str, str]] = {}  # normalised path -> (path, language)
        for p in kernel_files:
            st = settings(p)
            lang = st.language_for(p)
            if st.host_code and lang in ("cuda", "metal", "glsl"):
                kernels[_norm(p)] = (p, lang)
        if not kernels:
            return index
        load_scanners()
        paths = list(paths)
        found: list[tuple[str, HostLaunch]] = []
        host_names: dict[str, set[str]] = {}  # host files defining CUDA kernels -> their names
        other_metal: list[str] = []  # Metal files under the paths not linted: their kernel names count too
        summaries: list[tuple[str, dict]] = []  # Vulkan function summaries, linked across files below
        c_files: list[str] = []  # C and C++ host files (those not summarised are searched: _unseen)

        def host_or_metal(p: str) -> str | None:
            if has_scanners(p):
                return "host"
            return "metal" if _norm(p) not in kernels and settings(p).language_for(p) == "metal" else None

        if walked is None:
            walked = list(discover(paths, exclude, None, is_excluded=lambda p: settings(p).is_excluded(p),
                                   language_for=host_or_metal))
        # What the index is computed from, with the stat data of every host file to read: when all of it
        # is as a summary kept from an earlier run recorded it (RunSummary), so is the index.
        entries: list[tuple[str, os.stat_result]] = []  # host files to read, with their stat data
        ids: dict[int, int] = {}  # id of a settings object -> its number here
        used: list["Settings"] = []
        run = repr((RunSummary.FORMAT, os.getcwd(), paths, [os.path.isfile(p) for p in paths], exclude))
        parts = [repr(sorted(kernels.items()))]
        trusted = use_stat
        oldest = time.time_ns() - ScanStore.RACY_NS
        for hp in walked:
            if not has_scanners(hp):
                if _norm(hp) not in kernels:
                    other_metal.append(hp)
                    parts.append(f"m\0{hp}")
                continue
            s = settings(hp)
            if not s.host_code:
                continue
            sid = ids.get(id(s))
            if sid is None:
                sid = ids[id(s)] = len(used)
                used.append(s)
            try:
                st = os.stat(hp)
            except OSError:
                parts.append(f"e\0{hp}")
                continue
            entries.append((hp, st))
            if trusted and max(st.st_mtime_ns, st.st_ctime_ns) > oldest:
                trusted = False  # (changed too recently to tell a later change by its times)
            if trusted:  # (what a summary is keyed by: none is kept or read otherwise)
                parts.append(f"h\0{hp}\0{sid}\0{_stat_text(st)}")
        if trusted:
            parts.append(repr([(s.host_code, s.base_dir()) for s in used]))
        summary = RunSummary(cache_dir, run, "\n".join(parts)) if trusted else None  # type: ignore[arg-type]
        if summary is not None:
            kept = summary.load()
            if kept is not None:
                return kept
        consumed: list[tuple[str, str]] | None = [] if summary is not None else None  # files names_in reads
        store = ScanStore(cache_dir) if cache_dir else None
        if store is not None:
            stores.append(store)
        # Each host file's launches, in the walk's order. A file a by-name scanner (CUDA) must read is
        # read after the others (when every kernel definition of the run is known): where its bytes hold
        # no name a launch can link to (:func:`_linkable_names`), that scanner finds nothing the index
        # keeps, and is not run (the file's other scanners are; such a partial scan is not kept).
        rows: list[list] = []  # [host path, launches (None: to scan), kernel names, stat, data]
        by_ext: dict[str, list] = {}

        def by_name_of(p: str) -> list:
            """The by-name scanners of ``p`` (of :func:`scanners_for`, found once per extension)."""
            dot = p.rfind(".")
            ext = p[dot:].lower() if dot > p.rfind("/") else ""
            got = by_ext.get(ext)
            if got is None:
                got = by_ext[ext] = [s for s in scanners_for(p) if s in BY_NAME]
            return got
        for hp, st in entries:
            try:
                if st.st_size > MAX_HOST_BYTES:
                    continue
                launches = names = None
                got = store.known(hp, st) if use_stat else None  # type: ignore[union-attr]
                if got is not None:
                    launches = () if got[0] == NOTHING else _SCANNED.get(got[0])
                    if launches is None:
                        launches = store.get(got[0])  # type: ignore[union-attr]
                    names = None if got[1] is None else set(got[1])
                if launches is None:
                    data = read(hp)
                    names = kernel_names(data, "cuda") if b"__global__" in data else None
                    by_name = by_name_of(hp)
                    if by_name and wanted(by_name, data):
                        key = ScanStore.key(hp, data)
                        launches = _kept(key, store)
                        if launches is None:
                            rows.append([hp, None, names, st, data])
                            continue
                    else:
                        key, launches = _scan_keyed(hp, data, store, idle=by_name)
                    if use_stat:
                        store.remember(hp, st, key, names)  # type: ignore[union-attr]
            except OSError:
                continue
            rows.append([hp, launches, names, None, None])
        names_of: dict[tuple[str, str], set[str] | None] = {}  # (path, language) -> names_in's answer

        def names_in(p: str, lang: str) -> set[str] | None:
            """The kernels a file defines (recorded by its ``stat`` data, as host files' scans are)."""
            if (p, lang) not in names_of:
                names_of[p, lang] = _names_in(p, lang)
            return names_of[p, lang]

        def _names_in(p: str, lang: str) -> set[str] | None:
            st = None
            if use_stat:
                try:
                    st = os.stat(p)
                except OSError:
                    if consumed is not None:
                        consumed.append((p, ""))
                    return None
                if consumed is not None:
                    consumed.append((p, _stat_text(st)))
                    if max(st.st_mtime_ns, st.st_ctime_ns) > oldest:
                        consumed.append((p, "racy"))  # (never the stat data of a file: no summary kept)
                got = store.known(p, st, "kernels-" + lang)  # type: ignore[union-attr]
                if got is not None and got[1] is not None:
                    return set(got[1])
            try:
                data = read(p)
            except OSError:
                return None
            found_names = kernel_names(data, lang)
            if st is not None:
                store.remember(p, st, "", found_names, "kernels-" + lang)  # type: ignore[union-attr]
            return found_names

        for row in rows:
            if row[2] is not None:
                host_names[_norm(row[0])] = row[2]
        if any(row[1] is None for row in rows):
            linkable = _linkable_names(kernels, host_names, other_metal, names_in)
            for row in rows:
                if row[1] is None:
                    hp, _, got_names, st, data = row
                    key, row[1] = _scan_keyed(hp, data, store, linkable=lambda d: _names_any(d, linkable))
                    row[4] = None
                    if use_stat and key is not None:
                        store.remember(hp, st, key, got_names)  # type: ignore[union-attr]
        for hp, launches, _, _, _ in rows:
            index.host_files += 1
            if hp.lower().endswith(_C_EXTENSIONS):
                c_files.append(hp)
            for launch in launches:
                if isinstance(launch, VulkanSummary):
                    summaries.append((hp, launch.data))
                else:
                    found.append((hp, launch))

        def link() -> None:
            if not found and not summaries:
                return
            index.launches = sum(1 for _, l in found if l.api != "reference")
            linked: dict[str, dict[str, list[HostLaunch]]] = {}
            # kernels by name, for CUDA and Metal launches
            wanted = {l.kernel for _, l in found if l.kernel}
            defs: dict[tuple[str, str], set[str]] = {}  # (name, language) -> files

            if wanted:
                for key, (p, lang) in kernels.items():
                    if lang == "glsl":
                        continue
                    got_names = (host_names[key] if key in host_names and lang == "cuda"
                                 else names_in(p, lang))  # (a .cu is a host file too: its kernels may be known)
                    for name in (got_names or set()) & wanted:
                        defs.setdefault((name, lang), set()).add(key)
                for key, got_names in host_names.items():
                    if key not in kernels:  # kernels defined in a file not linted (a header) count for ambiguity
                        for name in got_names & wanted:
                            defs.setdefault((name, "cuda"), set()).add(key)
                for mp in other_metal:
                    for name in (names_in(mp, "metal") or set()) & wanted:
                        defs.setdefault((name, "metal"), set()).add(_norm(mp))
            roots = [os.path.dirname(p) if os.path.isfile(p) else p for p in paths] + [os.getcwd()]
            for hp, launch in found:
                if launch.api == "vulkan":
                    target = _shader_file(hp, launch, roots + [settings(hp).base_dir()], kernels)
                    if target is not None:
                        linked.setdefault(target, {}).setdefault("", []).append(
                            _with_shader(launch, kernels[target][0]))
                    continue
                if not launch.kernel:
                    continue
                langs = ("cuda",) if launch.api in CUDA_APIS else ("metal",) if launch.api in METAL_APIS \
                    else ("cuda", "metal") if launch.api == "reference" else ()
                files: set[str] = set()
                for lang in langs:
                    files |= defs.get((launch.kernel, lang), set())
                if len(files) == 1:
                    linked.setdefault(next(iter(files)), {}).setdefault(launch.kernel, []).append(launch)
            if summaries:
                try:
                    _link_summaries(summaries, linked, kernels, roots, settings, _unseen(summaries, c_files, read))
                except Exception:  # (an extra: the launches linked above stand)
                    pass
            for target, per_kernel in linked.items():
                if target in kernels:
                    index.paths[target] = kernels[target][0]
                index.by_file[target] = HostFacts(tuple(
                    (name, tuple(sorted(ls, key=lambda l: (l.at.path, l.at.start, l.api))))
                    for name, ls in sorted(per_kernel.items())))
                index.linked += sum(1 for ls in per_kernel.values() for l in ls if l.api not in ("reference", "vulkan-pipeline"))

        link()
        if summary is not None and consumed is not None and all(t != "racy" for _, t in consumed):
            summary.save(index, consumed)
        return index


#: Host files whose calls and assignments a Vulkan pipeline's trace may go through.
_C_EXTENSIONS = (".c", ".cc", ".cpp", ".cxx", ".h", ".hpp", ".cu", ".cuh", ".mm", ".m")


def _unseen(summaries: list[tuple[str, dict]], c_files: list[str], read: Callable[[str], bytes]):
    """For :func:`shaderlint.host._vulkan_summary.resolve`: which of some function names are called,
    and which fields assigned, in the C/C++ host files of the run that were not summarised (read
    only when a trace asks, once per run)."""
    done = {_norm(p) for p, _ in summaries}

    def search(functions: frozenset, fields: frozenset) -> tuple[set[str], set[str]]:
        def alternation(names) -> bytes:
            return b"|".join(re.escape(n.encode()) for n in sorted(names) if n)

        call = re.compile(rb"\b(" + alternation(functions) + rb")\s*(?:<[^;{}()]*>\s*)?\(") if functions else None
        store = re.compile(rb"(?:\.|->)\s*(" + alternation(fields) + rb")\s*=(?!=)") if fields else None
        calls: set[str] = set()
        stores: set[str] = set()
        for p in c_files:
            if _norm(p) in done:
                continue
            try:
                data = read(p)
            except OSError:
                continue
            if call is not None:
                calls.update(m.decode() for m in call.findall(data))
            if store is not None:
                stores.update(m.decode() for m in store.findall(data))
        return calls, stores

    return search


def _link_summaries(summaries: list[tuple[str, dict]], linked: dict[str, dict[str, list[HostLaunch]]],
                    kernels: dict[str, tuple[str, str]], roots: list[str], settings, unseen=None) -> None:
    """Vulkan pipelines and dispatches traced across functions and files
    (:func:`shaderlint.host._vulkan_summary.resolve`) added to ``linked``: a creation record per
    pipeline of a linted shader, and the dispatches bound to one. A dispatch the single-file
    reading already linked to the shader is not added twice."""
    from shaderlint.host._vulkan_summary import AMBIGUOUS, resolve

    glsl = [k for k, (_, lang) in kernels.items() if lang == "glsl"]

    def shader_for(host_path: str, literal: str, directory_known: bool) -> str | None:
        if directory_known:
            got = _shader_file(host_path, HostLaunch(at=Span(host_path, 0, 0, 1, 1), api="vulkan",
                                                     shader_literal=literal),
                               roots + [settings(host_path).base_dir()], kernels)
            if got is not None:
                return got
        # the directory is not a literal (a member, a setting): the file name must be unique. A literal
        # directory where no linted shader is (a build directory's SPIR-V): not known when the file
        # name is a linted shader's (it may be built from it), else not one of them
        found = set()
        for cand in shader_candidates(literal):
            name = os.path.basename(cand) if directory_known else cand
            tail = os.sep + os.path.normcase(os.path.normpath(name)).lstrip(os.sep)
            found.update(k for k in glsl if k.endswith(tail))
        if directory_known:
            return AMBIGUOUS if found else None
        return next(iter(found)) if len(found) == 1 else AMBIGUOUS if found else None

    for target, launch in resolve(summaries, shader_for, _launch_from_json, unseen):
        have = linked.setdefault(target, {}).setdefault("", [])
        if launch.api == "vulkan" and any(l.at == launch.at for l in have):
            continue
        if launch.api == "vulkan-pipeline" and any(l.specialization == launch.specialization for l in have):
            continue  # (the pipeline of dispatches linked already: it adds a location, not a fact)
        have.append(_with_shader(launch, kernels[target][0]))


def _with_shader(launch: HostLaunch, shader: str) -> HostLaunch:
    return dataclasses.replace(launch, shader=os.path.normpath(os.path.abspath(shader)))


def _shader_file(host_path: str, launch: HostLaunch, roots: list[str],
                 kernels: dict[str, tuple[str, str]]) -> str | None:
    lit = launch.shader_literal
    if not lit:
        return None
    bases = [os.path.dirname(host_path) or "."] + roots
    for cand in shader_candidates(lit):
        for base in bases:
            key = _norm(os.path.join(base, cand))
            if key in kernels and kernels[key][1] == "glsl":
                return key
    return None


def _read(path: str) -> bytes:
    with open(path, "rb", buffering=0) as fh:  # (the whole file at once: no buffer object in between)
        return fh.read()


# ---- facts -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Derived:
    """The facts every linked launch agrees on (None where they do not, or one is unknown)."""

    group: tuple[int, int, int] | None = None
    group_at: Span | None = None
    dispatch: str | None = None
    dispatch_at: Span | None = None
    grid: tuple[int, int, int] | None = None  # in threads
    grid_at: Span | None = None


def pipeline_specialization(facts: HostFacts | None) -> tuple[tuple[int, int], ...] | None:
    """The specialization constants every pipeline the host builds from a Vulkan shader file sets
    (the pipelines' creations where the host index traced them, else the linked dispatches'), when
    they all agree and set some; None when not linked, not read, none set, or they differ (then a
    compiler is given no host values: see :func:`shaderlint.estimate.spirv.reflect`)."""
    launches = facts.for_kernel("") if facts is not None else ()
    pipes = [l for l in launches if l.api == "vulkan-pipeline"] or [l for l in launches if l.api == "vulkan"]
    specs = {l.specialization for l in pipes}
    if len(specs) != 1:
        return None
    spec = next(iter(specs))
    return spec or None


def derive(launches: tuple[HostLaunch, ...] | list[HostLaunch],
           group_of: Callable[[HostLaunch], tuple[int, int, int] | None] | None = None) -> Derived:
    """What all ``launches`` agree on. ``group_of`` gives a launch's group size where the kernel
    file decides it (Vulkan specialization constants); default: :attr:`HostLaunch.group`."""
    if not launches:
        return Derived()
    group_of = group_of or (lambda l: l.group)
    groups = [group_of(l) for l in launches]
    group = groups[0] if all(g is not None and g == groups[0] for g in groups) else None
    first = launches[0]
    group_at = (first.group_at or first.at) if group is not None else None
    # (a pipeline's creation says which group size it runs with, not how it is dispatched)
    groups = [g for g, l in zip(groups, launches) if l.api != "vulkan-pipeline"]
    launches = [l for l in launches if l.api != "vulkan-pipeline"]
    if not launches:
        return Derived(group, group_at)
    first_dispatch = launches[0]
    modes = [l.dispatch for l in launches]
    dispatch = modes[0] if modes[0] in ("threads", "threadgroups") and all(m == modes[0] for m in modes) else None
    grids: list[tuple[int, int, int] | None] = []
    for l, g in zip(launches, groups):
        if l.grid is None or l.dispatch not in ("threads", "threadgroups"):
            grids.append(None)
        elif l.dispatch == "threads":
            grids.append(l.grid)
        else:
            grids.append(None if g is None else (l.grid[0] * g[0], l.grid[1] * g[1], l.grid[2] * g[2]))
    grid = grids[0] if all(x is not None and x == grids[0] for x in grids) else None
    return Derived(group, group_at, dispatch, first_dispatch.at if dispatch else None,
                   grid, (first_dispatch.grid_at or first_dispatch.at) if grid is not None else None)


def _dims_text(d: tuple[int, int, int]) -> str:
    xs = list(d)
    while len(xs) > 1 and xs[-1] == 1:
        xs.pop()
    return "x".join(str(x) for x in xs)


def apply(model: "FileModel", facts: HostFacts | None) -> None:
    """Give the model's kernels the facts host code establishes for them, below every fact the
    source itself states. Never raises."""
    if facts is None or not facts.launches:
        return
    try:
        if model.language == "glsl":
            # what a compiler measuring the shader must build its pipeline with (estimate/measured.py)
            model.pipeline_specialization = pipeline_specialization(facts)  # type: ignore[attr-defined]
        _apply(model, facts)
    except Exception:
        return


def _apply(model: "FileModel", facts: HostFacts) -> None:
    from shaderlint.model.kernel import GroupSize

    lang = model.language
    here = _norm(model.source.path)
    for f in model.functions:
        if lang == "glsl":
            if not (f.is_entry and f.name == "main"):
                continue
            launches = facts.for_kernel("")
            group_of = _glsl_group(model)
        else:
            if f.kind != "kernel":
                continue
            launches = facts.for_kernel(f.name)
            group_of = None
        if not launches:
            continue
        d = derive(launches, group_of)
        gs = f.group_size
        if gs is not None and gs.origin in ("launch", "dim3"):
            # The size every launch *in this file* agrees on is a fact about those launches only: the
            # kernel also runs with what launches elsewhere use. Kept only when all of them agree.
            elsewhere = [l for l in launches if _norm(l.at.path) != here]
            if elsewhere and any(l.group != gs.dims for l in elsewhere):
                f.group_size = None
                f.host_facts[LAUNCHES_DISAGREE] = ("", elsewhere[0].at)
            replaceable = False
        else:
            replaceable = gs is None or (lang == "glsl" and gs.origin == "local_size"
                                         and any(getattr(model, "workgroup_spec_ids", None) or ()))
        if d.group is not None and replaceable:
            f.group_size = GroupSize(d.group, f.name_node.start_byte, f.name_node.end_byte, "host", True,
                                     host=d.group_at)
        if f.template_params:  # instances launched in other files (this file's own the model reads)
            seen: list[tuple[str, ...]] = []
            for l in launches:
                if l.template_args and l.template_args not in seen and _norm(l.at.path) != here:
                    seen.append(l.template_args)
            f.host_template_args = tuple(seen)
        if d.dispatch is not None:
            f.host_facts["dispatch"] = (d.dispatch, d.dispatch_at)
        if d.grid == (1, 1, 1) and d.group == (1, 1, 1):
            f.host_one_thread = True  # every launch is `<<<1, 1>>>`: one thread on purpose, template or not
        if d.grid is not None and not f.template_params \
                and any(_norm(l.at.path) != here for l in launches):
            # (a template's instances each have their own launches: one grid says nothing of the
            # others; launches all in the kernel's own file are read by the model itself)
            f.host_facts["grid-size"] = (_dims_text(d.grid), d.grid_at)


def _glsl_group(model: "FileModel") -> Callable[[HostLaunch], tuple[int, int, int] | None]:
    """A dispatch's workgroup size: the shader's ``local_size``, with the pipeline's specialization
    constants where the shader takes a dimension from one (``layout(local_size_x_id = 0) in;``);
    None when unknown. (Only a size set by specialization replaces the model's: see :func:`_apply`.)"""
    ids = getattr(model, "workgroup_spec_ids", None)
    sizes = getattr(model, "workgroup_size", None)

    def group_of(l: HostLaunch) -> tuple[int, int, int] | None:
        if sizes is None:
            return None
        if not ids or not any(ids):  # the shader's own size (what the dispatch's grid is counted in)
            return (int(sizes[0]), int(sizes[1]), int(sizes[2])) if all(v for v in sizes) else None  # type: ignore[arg-type]
        if l.specialization is None:
            return None
        spec = dict(l.specialization)
        out: list[int] = []
        for i in range(3):
            v: int | None = sizes[i]
            if ids[i] is not None:
                try:
                    cid = int(str(ids[i]), 0)
                except ValueError:
                    return None
                if cid in spec:
                    v = spec[cid]
            if v is None or v <= 0:
                return None
            out.append(int(v))
        return out[0], out[1], out[2]

    return group_of
