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


def test_the_corpora_script_runs_at_most_the_workers_asked_and_lists_the_unstarted(
    tmp_path, subprocess_env
):
    # --workers 1: the team's worker runs first (--sets order among sets of one shard); the
    # budget ends during it, so the oracle's never starts and its program is not reached
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "-o", str(tmp_path), "--budget-s", "1", "--workers",
         "1", "--sets", "team,oracle", "--names", "item", "clean_mlp"],
        env=subprocess_env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    doc = json.loads(next(tmp_path.glob("corpora_torch*.json")).read_text())
    assert {(r["set"], r["program"]) for r in doc["rows"]} == {
        ("oracle", "item"), ("team", "clean_mlp")}  # fmt: skip
    assert all(r["agree"] is None for r in doc["rows"]), doc["rows"]
    assert (tmp_path / "worker_team_0.log").exists()
    assert not (tmp_path / "worker_oracle_0.log").exists()  # never started


def test_the_corpora_script_keeps_every_findings_kind_and_cause_key(tmp_path, subprocess_env):
    # two torch versions' runs are compared on each finding's cause key, not only the first
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "-o", str(tmp_path), "--budget-s", "240", "--workers",
         "1", "--sets", "oracle", "--names", "item"],
        env=subprocess_env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    (row,) = json.loads(next(tmp_path.glob("corpora_torch*.json")).read_text())["rows"]
    kind, cause, title = row["findings"][0]
    assert kind == "graph_break.scalar_output" and cause.startswith("break|GB0124|"), row
    assert title and row["first"].startswith(kind)
