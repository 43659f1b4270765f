"""scripts/corpora_on_gpu.py, the coordinator's one command for the three corpora on the GPU
machine, run here on the CPU over a few programs of two corpora."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "corpora_on_gpu.py"


def test_the_corpora_script_prints_one_row_per_program_and_writes_its_json(
    tmp_path, subprocess_env
):
    names = ["clean_mlp", "recording:graph_break", "list_length", "no_such_program"]
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "-o", str(tmp_path), "--budget-s", "240",
         "--sets", "team,oracle", "--names", *names],
        env=subprocess_env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = [line for line in proc.stdout.splitlines() if line.startswith("| team")
            or line.startswith("| oracle")]  # fmt: skip
    assert len(rows) == 3, proc.stdout
    assert all(row.split("|")[5].strip() == "yes" for row in rows), proc.stdout
    (written,) = tmp_path.glob("corpora_torch*.json")
    doc = json.loads(written.read_text())
    assert doc["summary"]["team"] == {"programs": 2, "judged": 2, "agree": 2}
    assert doc["summary"]["oracle"] == {"programs": 1, "judged": 1, "agree": 1}
    assert {r["program"] for r in doc["rows"]} == set(names[:3])
    assert doc["versions"]["torch"] and doc["wall_s"] < 240


def test_the_corpora_script_stops_its_workers_at_the_budget(tmp_path, subprocess_env):
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "-o", str(tmp_path), "--budget-s", "1",
         "--sets", "oracle", "--names", "item", "print"],
        env=subprocess_env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    doc = json.loads(next(tmp_path.glob("corpora_torch*.json")).read_text())
    # the worker was stopped at the budget (importing torch alone takes longer), and what
    # it had not finished is listed as not reached, never judged
    assert doc["wall_s"] < 15
    assert all(r["agree"] is None for r in doc["rows"]), doc["rows"]
