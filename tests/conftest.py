import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import pytest  # noqa: E402


@pytest.fixture
def fixpoint_runs(monkeypatch):
    """A list that gets an entry each time a kernel model computes its thread-dependence fixpoint
    (``_Builder.compute_dependence``), for tests of which questions ask for it."""
    import shaderlint.model.build as build

    count = []
    original = build._Builder.compute_dependence

    def counted(self):
        count.append(1)
        return original(self)

    monkeypatch.setattr(build._Builder, "compute_dependence", counted)
    return count
