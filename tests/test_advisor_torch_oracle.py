"""The advisor against torch's own tests (``benchmarks/advisor_torch_oracle.py``): for a
subset of the cases, our program mirroring one torch test makes torch record what that
test says it prints, and the advisor's first finding names that cause and its kind.
``python benchmarks/advisor_torch_oracle.py`` runs every case and prints the table.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCH))

from advisor_torch_oracle import CASES, judge  # noqa: E402

SUBSET = ("item", "print", "disable", "dtype", "type", "list_length", "resume_function")


@pytest.mark.parametrize("name", SUBSET)
def test_the_first_finding_names_the_cause_torchs_own_test_describes(name):
    (case,) = [c for c in CASES if c.name == name]
    outcome = judge(case)
    assert outcome.torch_agrees, (case.torch_says, outcome.expected)  # torch's record
    assert outcome.agrees, (case.mirrors, outcome.expected, outcome.first)
