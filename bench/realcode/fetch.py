"""Download the pinned sdists of packages.tsv into the real-code cache and extract them.

The cache lives outside the repository: ``$SHADERLINT_REALCODE_CACHE`` or
``/work/realcode-cache``. Each package ends up in ``<cache>/src/<name>-<version>/``
(the sdist's top directory stripped); ``<cache>/READY`` is touched once every
package of the list is there.

Downloads go through pip in hash-checking mode (``--require-hashes`` with the
pinned sha256), so pip refuses an archive whose hash differs before unpacking it.
``pip download`` prepares an sdist's metadata after downloading it, which runs the
package's build backend; most CUDA packages need torch for that and fail. When it
succeeds, the archive is kept in ``<cache>/sdist/`` and its sha256 is checked
again here before extracting; when it fails, the tree pip already unpacked (and
kept with ``--no-clean``) is taken, after checking its PKG-INFO names the pinned
version. Build isolation is off, so that a failing backend fails fast instead of
installing torch.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from dataclasses import dataclass

DEFAULT_CACHE = "/work/realcode-cache"
HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGES = os.path.join(HERE, "packages.tsv")


@dataclass(frozen=True)
class Package:
    name: str
    version: str
    sha256: str
    prune: tuple[str, ...] = ()  # paths inside the sdist removed after extraction
    note: str = ""

    @property
    def dirname(self) -> str:
        return f"{self.name}-{self.version}"


def cache_dir() -> str:
    return os.environ.get("SHADERLINT_REALCODE_CACHE") or DEFAULT_CACHE


def parse_packages(text: str) -> list[Package]:
    """Rows ``name<TAB>version<TAB>sha256<TAB>prune<TAB>note``; '#' starts a comment line.

    ``prune`` is ``-`` or comma-separated paths inside the sdist (vendored copies
    of code another package already brings, test suites of vendored libraries)
    that are deleted after extraction, so that ``<cache>/src`` is the corpus.
    """
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        cols = [c.strip() for c in line.split("\t")]
        if len(cols) < 3 or not re.fullmatch(r"[0-9a-f]{64}", cols[2]):
            raise ValueError(f"packages.tsv:{n}: expected name, version, sha256 (64 hex digits)")
        prune = tuple(p.strip().strip("/") for p in cols[3].split(",") if p.strip() not in ("", "-")) \
            if len(cols) > 3 else ()
        for p in prune:
            if os.path.isabs(p) or ".." in p.split("/"):
                raise ValueError(f"packages.tsv:{n}: prune path {p!r} leaves the package")
        out.append(Package(cols[0], cols[1], cols[2], prune, cols[4] if len(cols) > 4 else ""))
    return out


def load_packages(path: str = PACKAGES) -> list[Package]:
    with open(path, encoding="utf-8") as fh:
        return parse_packages(fh.read())


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def sha256_of(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _pip(pkg: Package, download_dir: str, work: str, hashes: bool = True) -> subprocess.CompletedProcess:
    req = os.path.join(work, "requirements.txt")
    with open(req, "w", encoding="utf-8") as fh:
        fh.write(f"{pkg.name}=={pkg.version}" + (f" --hash=sha256:{pkg.sha256}\n" if hashes else "\n"))
    tmp = os.path.join(work, "tmp")
    os.makedirs(tmp, exist_ok=True)
    env = dict(os.environ, TMPDIR=tmp)
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:", "--no-build-isolation",
           "--no-clean", "--require-hashes", "--progress-bar", "off", "-d", download_dir, "-r", req]
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=1800)


def _archive_for(pkg: Package, download_dir: str) -> str | None:
    want = _norm(pkg.name)
    for f in os.listdir(download_dir):
        m = re.match(r"(.+?)-(\d[^-]*?)(\.tar\.gz|\.tgz|\.tar\.bz2|\.tar\.xz|\.zip)$", f)
        if m and _norm(m.group(1)) == want and m.group(2) == pkg.version:
            return os.path.join(download_dir, f)
    return None


def _pkg_info_version(tree: str) -> str | None:
    try:
        with open(os.path.join(tree, "PKG-INFO"), encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.startswith("Version:"):
                    return line.split(":", 1)[1].strip()
                if not line.strip():
                    break
    except OSError:
        return None
    return None


def _unpacked_by_pip(pkg: Package, tmp: str) -> str | None:
    """The source tree pip unpacked under ``tmp`` (``pip-download-*/<name>_<hash>/``)."""
    want = _norm(pkg.name)
    for top in os.listdir(tmp):
        base = os.path.join(tmp, top)
        if not (top.startswith("pip-") and os.path.isdir(base)):
            continue
        for sub in os.listdir(base):
            tree = os.path.join(base, sub)
            if _norm(sub.rsplit("_", 1)[0]) == want and _pkg_info_version(tree) == pkg.version:
                return tree
    return None


def _extract(archive: str, dest: str) -> None:
    """Extract ``archive`` into ``dest`` without its single top directory."""
    stage = tempfile.mkdtemp(dir=os.path.dirname(dest), prefix=".extract-", suffix="-" + os.path.basename(dest))
    try:
        if archive.endswith(".zip"):
            with zipfile.ZipFile(archive) as z:
                for info in z.infolist():
                    target = os.path.realpath(os.path.join(stage, info.filename))
                    if not target.startswith(os.path.realpath(stage) + os.sep):
                        raise ValueError(f"{archive}: member {info.filename!r} escapes the directory")
                z.extractall(stage)
        else:
            with tarfile.open(archive) as t:
                t.extractall(stage, filter="data")
        entries = os.listdir(stage)
        root = os.path.join(stage, entries[0]) if len(entries) == 1 and os.path.isdir(
            os.path.join(stage, entries[0])) else stage
        os.replace(root, dest)
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def _finish(pkg: Package, stage: str, dest: str) -> None:
    for rel in pkg.prune:
        path = os.path.join(stage, rel)
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        elif os.path.lexists(path):
            os.remove(path)
        else:
            raise RuntimeError(f"{pkg.dirname}: prune path {rel!r} is not in the sdist")
    os.replace(stage, dest)


def fetch(pkg: Package, cache: str, log=print) -> str:
    """Make ``<cache>/src/<name>-<version>`` exist; returns its path. Raises RuntimeError on failure."""
    src = os.path.join(cache, "src")
    sdist = os.path.join(cache, "sdist")
    os.makedirs(src, exist_ok=True)
    os.makedirs(sdist, exist_ok=True)
    dest = os.path.join(src, pkg.dirname)
    if os.path.isdir(dest):
        return dest
    stage = os.path.join(cache, ".stage", pkg.dirname)  # outside src/: never seen half-made
    shutil.rmtree(stage, ignore_errors=True)
    os.makedirs(os.path.dirname(stage), exist_ok=True)
    archive = _archive_for(pkg, sdist)
    if archive and sha256_of(archive) == pkg.sha256:
        _extract(archive, stage)
        _finish(pkg, stage, dest)
        log(f"  {pkg.dirname}: extracted from {os.path.basename(archive)}")
        return dest
    work = tempfile.mkdtemp(dir=cache, prefix=".pip-")
    try:
        t0 = time.monotonic()
        proc = _pip(pkg, sdist, work)
        out = proc.stdout + proc.stderr
        if "DO NOT MATCH THE HASHES" in out:
            raise RuntimeError(f"{pkg.dirname}: the downloaded sdist does not have the pinned sha256:\n{out[-1500:]}")
        archive = _archive_for(pkg, sdist)
        if proc.returncode == 0 and archive:
            digest = sha256_of(archive)
            if digest != pkg.sha256:
                os.remove(archive)
                raise RuntimeError(f"{pkg.dirname}: {os.path.basename(archive)} has sha256 {digest}, "
                                   f"pinned {pkg.sha256}")
            _extract(archive, stage)
            how = f"downloaded {os.path.basename(archive)}, sha256 checked"
        else:
            tree = _unpacked_by_pip(pkg, os.path.join(work, "tmp"))
            if tree is None:
                raise RuntimeError(f"{pkg.dirname}: pip download failed before unpacking the sdist:\n{out[-1500:]}")
            shutil.move(tree, stage)
            how = "sdist hash checked by pip, its metadata build failed (kept pip's unpacked tree)"
        _finish(pkg, stage, dest)
        log(f"  {pkg.dirname}: {how} ({time.monotonic() - t0:.0f} s)")
        return dest
    finally:
        shutil.rmtree(work, ignore_errors=True)


def fetch_all(packages: list[Package], cache: str, log=print) -> list[str]:
    """Fetch every package; returns the failures' messages. Touches READY when none failed."""
    failures = []
    for pkg in packages:
        try:
            fetch(pkg, cache, log)
        except (RuntimeError, OSError, ValueError, subprocess.SubprocessError, tarfile.TarError,
                zipfile.BadZipFile) as e:
            failures.append(str(e))
            log(f"  FAILED {e}")
    if not failures:
        with open(os.path.join(cache, "READY"), "w", encoding="utf-8") as fh:
            fh.write(f"{len(packages)} packages\n")
    return failures


def pin(spec: str) -> str:
    """A packages.tsv row for ``name==version``: pip downloads the sdist and prints its sha256."""
    name, _, version = spec.partition("==")
    if not version:
        raise ValueError("pin needs name==version")
    work = tempfile.mkdtemp(prefix="realcode-pin-")
    try:
        proc = _pip(Package(name, version, "0" * 64), os.path.join(work, "dl"), work, hashes=False)
        out = proc.stdout + proc.stderr
        m = re.search(r"--hash=sha256:([0-9a-f]{64})", out)
        if not m:
            raise RuntimeError(f"{spec}: no sdist found or download failed:\n{out[-1500:]}")
        return f"{name}\t{version}\t{m.group(1)}"
    finally:
        shutil.rmtree(work, ignore_errors=True)
