"""The extension table in shaderlint.languages is written out (so a cached run need not load the
front ends): it must stay what the front ends declare."""

import subprocess
import sys

import shaderlint.languages as languages


def test_extension_table_matches_the_front_ends():
    derived = {ext: fe.name for fe in languages.FRONT_ENDS.values() for ext in fe.extensions}
    assert languages.EXTENSIONS == derived
    assert list(languages.EXTENSIONS) == list(derived)  # (same order: metal, cuda, glsl)


def test_front_end_names_resolve_lazily():
    from shaderlint.languages import FrontEnd, Mask, Parsed
    from shaderlint.languages.base import FrontEnd as F, Mask as M, Parsed as P

    assert (FrontEnd, Mask, Parsed) == (F, M, P)
    assert set(languages.FRONT_ENDS) == {"metal", "cuda", "glsl"}
    try:
        languages.no_such_name  # noqa: B018
    except AttributeError:
        pass
    else:
        raise AssertionError("unknown names must raise AttributeError")


def test_the_extension_table_does_not_load_the_front_ends():
    code = ("import sys, shaderlint.discovery, shaderlint.config as c; "
            "c.Settings().language_for('k.cu'); "
            "print(sorted(m for m in sys.modules if m.startswith('shaderlint.languages.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
