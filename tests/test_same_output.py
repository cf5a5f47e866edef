"""bench/same_output.py's comparison on synthetic outputs (no corpus)."""

from __future__ import annotations

import importlib.util
import json
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_spec = importlib.util.spec_from_file_location("same_output", os.path.join(ROOT, "bench", "same_output.py"))
same_output = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(same_output)

STOPPED = "shaderlint: /src/big.cu: estimates stopped: the per-file time budget of 6.76 s was exceeded\n"


def write(d, rows_by_name, errs=None):
    os.makedirs(d, exist_ok=True)
    for name in same_output.OUTPUTS:
        with open(os.path.join(d, name), "w") as fh:
            json.dump(rows_by_name.get(name, []), fh)
    for name, text in (errs or {}).items():
        with open(os.path.join(d, name + ".err"), "w") as fh:
            fh.write(text)
    return str(d)


ROWS = [{"path": "/src/a.cu", "kernel": "k", "registers": 40}, {"path": "/src/big.cu", "kernel": "m<0>", "registers": 90}]


def test_identical_outputs_pass(tmp_path, capsys):
    a = write(tmp_path / "a", {"report80.json": ROWS})
    b = write(tmp_path / "b", {"report80.json": ROWS})
    assert same_output.compare(a, b) == 0
    assert capsys.readouterr().out.count("IDENTICAL") == 3


def test_a_changed_estimate_fails(tmp_path, capsys):
    a = write(tmp_path / "a", {"report80.json": ROWS})
    b = write(tmp_path / "b", {"report80.json": [dict(ROWS[0], registers=41), ROWS[1]]})
    assert same_output.compare(a, b) == 1
    assert "report80.json DIFFERENT: 1 row(s) only in" in capsys.readouterr().out


def test_a_reordered_output_fails(tmp_path, capsys):
    a = write(tmp_path / "a", {"all.json": ROWS})
    b = write(tmp_path / "b", {"all.json": ROWS[::-1]})
    assert same_output.compare(a, b) == 1
    assert "another order" in capsys.readouterr().out


def test_rows_of_a_file_stopped_at_its_budget_are_set_apart(tmp_path, capsys):
    more = ROWS + [{"path": "/src/big.cu", "kernel": "m<1>", "registers": 91}]
    a = write(tmp_path / "a", {"report90.json": ROWS}, {"report90.json": STOPPED})
    b = write(tmp_path / "b", {"report90.json": more}, {"report90.json": STOPPED})
    assert same_output.compare(a, b) == 0
    assert "but for 1 row(s) of file(s) whose estimates stopped at the time budget: /src/big.cu" \
        in capsys.readouterr().out


def test_a_difference_outside_the_stopped_file_still_fails(tmp_path):
    a = write(tmp_path / "a", {"report90.json": ROWS}, {"report90.json": STOPPED})
    b = write(tmp_path / "b", {"report90.json": [dict(ROWS[0], registers=39), ROWS[1]]}, {"report90.json": STOPPED})
    assert same_output.compare(a, b) == 1


def test_without_a_stop_on_stderr_nothing_is_set_apart(tmp_path):
    more = ROWS + [{"path": "/src/big.cu", "kernel": "m<1>", "registers": 91}]
    a = write(tmp_path / "a", {"report90.json": ROWS})
    b = write(tmp_path / "b", {"report90.json": more})
    assert same_output.compare(a, b) == 1


def test_an_output_still_being_written_is_not_compared_and_fails(tmp_path, capsys):
    """A run that has not finished (or failed) leaves an empty output: the comparison says so and
    fails, instead of a traceback."""
    a = write(tmp_path / "a", {"report90.json": ROWS})
    b = write(tmp_path / "b", {"report90.json": ROWS})
    open(os.path.join(b, "report90.json"), "w").close()
    assert same_output.compare(a, b) == 1
    out = capsys.readouterr().out
    assert f"report90.json NOT COMPARED: not JSON in {b}" in out and out.count("IDENTICAL") == 2
