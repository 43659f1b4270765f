"""Several ranks: real DDP and FSDP2 training steps on gloo, two processes on the CPU, each
writing its TORCH_TRACE log; what the explorer finds is checked against the raw logs.

The expectations come from torch's own records: which compile ids each rank's log
starts (its ``dynamo_start`` lines), and which source files define DDP and FSDP2.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import open_html

import compiler
from compiler.ranks.wrappers import wrappers

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "examples" / "distributed_step.py"
_HEADER = re.compile(r"^\S+ \S+ +\d+ [^\]]*\] (\{.*)$")


def _run(folder: Path, env: dict, *args: str, nproc: int = 2) -> Path:
    """Run the example on ``nproc`` ranks (torch.multiprocessing) with TORCH_TRACE=folder;
    the eager backend: what is compared across ranks is Dynamo's work."""
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--nproc", str(nproc), "--backend", "eager", *args],
        env={**env, "TORCH_TRACE": str(folder)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return folder


def _compile_ids_by_rank(folder: Path) -> dict[int, set[str]]:
    """Each rank's compile ids, read from the raw log: torch writes one ``dynamo_start``
    per compile, with its rank and frame ids in the line's JSON."""
    out: dict[int, set[str]] = {}
    for log in folder.glob("*.log"):
        for line in log.read_text().splitlines():
            m = _HEADER.match(line)
            if not m or '"dynamo_start"' not in line:
                continue
            rec = json.loads(m[1])
            out.setdefault(rec["rank"], set()).add(f"{rec['frame_id']}/{rec['frame_compile_id']}")
    return out


@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    root = tmp_path_factory.mktemp("ranks")
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    # three DDP ranks, rank 1 planted: ranks 0 and 2 are a real pair of identical ranks
    ddp = _run(root / "ddp_plant", env, "--strategy", "ddp", "--plant", nproc=3)
    same = root / "ddp_same"
    same.mkdir()
    for log in ddp.glob("*.log"):
        if "rank_1_" not in log.name:
            shutil.copy(log, same / log.name)
    return {
        "ddp_plant": ddp,
        "ddp_same": same,
        "fsdp_plant": _run(root / "fsdp_plant", env, "--strategy", "fsdp", "--plant"),
    }


@pytest.mark.parametrize("name", ["ddp_plant", "fsdp_plant"])
def test_the_compile_only_one_rank_made_is_found_as_a_divergence(traces, name):
    folder = traces[name]
    ids = _compile_ids_by_rank(folder)
    only_on_1 = ids[1] - ids[0]
    assert only_on_1 and not ids[0] - ids[1]  # the plant worked: rank 1 recompiled alone
    others = sorted(set(ids) - {1})

    exp = compiler.load_trace(folder)
    assert set(exp.ranks) == set(ids)
    div = compiler.divergence(exp)
    found = {i.compile_id for i in div.items if i.kind == "compiles"}
    assert found == only_on_1
    for item in div.items:
        sides = {s.rank: s for s in item.ranks}
        assert sides[1].compile == exp.compile(item.compile_id, rank=1).key
        assert sides[1].stage == "recompile_reasons"  # why it recompiled, on that rank
        assert all(sides[r].compile is None for r in others)
    assert "rank 1 only" in div.summary and len(div.summary.splitlines()) == 1
    first = exp.findings()[0]
    assert (first.kind, first.severity) == ("ranks.divergence", "problem")
    assert {e.compile for e in first.evidence} >= {
        exp.compile(cid, rank=1).key for cid in only_on_1
    }


def test_identical_ranks_give_no_divergence(traces):
    exp = compiler.load_trace(traces["ddp_same"])
    ids = _compile_ids_by_rank(traces["ddp_same"])
    assert sorted(ids) == [0, 2] and ids[0] == ids[2]
    div = compiler.divergence(exp)
    assert div.items == () and not div
    assert "compiled the same" in div.summary
    assert all(f.kind != "ranks.divergence" for f in exp.findings())


@pytest.mark.parametrize("name", ["ddp_same", "fsdp_plant"])
def test_ddp_and_fsdp_runs_load_with_every_rank_and_their_own_breaks_are_explained(traces, name):
    exp = compiler.load_trace(traces[name])
    ids = _compile_ids_by_rank(traces[name])
    assert set(exp.ranks) == set(ids)
    for rank in ids:
        assert {str(c.compile_id) for c in exp.compiles if c.rank == rank} == ids[rank]
    # torch's own source says which files are the wrapper's
    wrapper = "DDP" if name.startswith("ddp") else "FSDP2"
    files = next(w.files for w in wrappers() if w.name == wrapper)
    in_wrapper = [
        c
        for c in exp.compiles
        for gb in c.graph_breaks
        if any(f in loc.filename for loc in (gb.location, *gb.user_stack) if loc for f in files)
    ]
    assert in_wrapper
    kinds = {f.kind: f for f in exp.findings()}
    explained = kinds[f"graph_break.{wrapper.lower()}"]
    assert explained.severity == "info" and "not your code" in explained.title
    # the break's own evidence (the resume functions compiled around it are evidence too)
    at_break = {e.compile for e in explained.evidence
                if e.stage is not None and "graph_break" in str(e.stage)}  # fmt: skip
    assert at_break and at_break <= {c.key for c in in_wrapper}


def test_a_truncated_rank_says_so_and_the_other_rank_loads_in_full(traces, tmp_path):
    folder = shutil.copytree(traces["ddp_same"], tmp_path / "cut")
    whole = compiler.load_trace(folder)
    log1 = next(folder.glob("*rank_2_*.log"))
    text = log1.read_bytes()
    log1.write_bytes(text[: len(text) * 2 // 3])
    exp = compiler.load_trace(folder)
    messages = " ".join(e.message for e in exp.errors)
    assert "rank 2's log" in messages and "cut short" in messages
    assert [c for c in exp.compiles if c.rank == 0] == [c for c in whole.compiles if c.rank == 0]
    cut = [c for c in exp.compiles if c.rank == 2]
    assert {str(c.compile_id) for c in cut} == _compile_ids_by_rank(folder)[2]
    assert cut != [c for c in whole.compiles if c.rank == 2]  # what was cut off is gone


def test_a_missing_rank_is_named_and_the_others_load(traces, tmp_path):
    folder = shutil.copytree(traces["ddp_plant"], tmp_path / "gap")
    next(folder.glob("*rank_1_*.log")).unlink()  # ranks 0 and 2 of three
    exp = compiler.load_trace(folder)
    assert set(exp.ranks) == {0, 2}
    assert any(e.message.startswith("no log for rank 1:") for e in exp.errors)
    whole = compiler.load_trace(traces["ddp_plant"])
    assert exp.compiles == tuple(c for c in whole.compiles if c.rank != 1)


def test_collectives_of_different_sizes_are_a_divergence(tmp_path, subprocess_env):
    folder = _run(tmp_path / "ar", subprocess_env, "--strategy", "allreduce", "--plant")
    exp = compiler.load_trace(folder)
    items = [i for i in compiler.divergence(exp).items if i.kind == "collectives"]
    assert len(items) == 1
    sides = {s.rank: s.text for s in items[0].ranks}
    # the sizes torch traced: each rank's input to all_reduce, as its graph prints it
    for rank, c in ((r, exp.compile("0/0", rank=r)) for r in (0, 1)):
        graph = c.graphs["dynamo_output_graph"].text
        assert re.search(r"f32\[(\d+), 16\]", graph)[1] in sides[rank]
    assert sides[0] != sides[1]


def test_the_offline_page_keeps_every_rank_and_shows_them_side_by_side(traces, tmp_path, browser):
    from playwright.sync_api import expect

    from explorer.export import to_html

    folder = traces["ddp_plant"]
    ids = _compile_ids_by_rank(folder)
    exp = compiler.load_trace(folder)
    page_file = tmp_path / "ranks.html"
    to_html(exp, page_file)
    page, problems = open_html(browser, page_file, height=900)
    # every compile of every rank is in the compile tree of the one file
    expect(page.locator(".tce-compiles .tce-compile")).to_have_count(
        sum(len(v) for v in ids.values())
    )
    page.locator('[role="tab"][data-stage="ranks"]').first.click()
    table = page.locator(".tce-ranks")
    expect(table.locator("thead th")).to_have_text(
        ["compile", "frame", "rank 0", "rank 1", "rank 2"]
    )
    only_on_1 = sorted(ids[1] - ids[0])
    expect(table.locator("tbody tr.tce-diverges")).to_have_count(len(only_on_1))
    for cid in only_on_1:
        row = table.locator(f'tr[data-compile-id="{cid}"]')
        expect(row.locator("td.tce-absent")).to_have_count(2)  # ranks 0 and 2 lack it
    # a click on rank 1's side opens that compile, at its recompile reasons
    key = exp.compile(only_on_1[-1], rank=1).key
    table.locator(f'td[data-compile="{key}"] button').click()
    expect(page.locator(f'.tce-compile[data-compile="{key}"]')).to_have_class(
        re.compile(r"\btce-current\b")
    )
    expect(page.locator('[role="tab"][aria-selected="true"]')).to_have_attribute(
        "data-stage", "recompile_reasons"
    )
    assert problems == []
    page.close()


@pytest.mark.parametrize("name", ["ddp_plant", "fsdp_plant"])
def test_the_outline_finds_what_the_full_load_finds_without_reading_graphs(traces, name):
    from compiler.ranks.scan import OUTLINE_MARK, scan_ranks

    outline = scan_ranks(traces[name]).exploration
    full = compiler.load_trace(traces[name])
    assert [c.key for c in outline.compiles] == [c.key for c in full.compiles]
    for o, f in zip(outline.compiles, full.compiles, strict=True):
        assert (o.code_name, o.recompile_reasons, o.graph_breaks) == (
            f.code_name,
            f.recompile_reasons,
            f.graph_breaks,
        )
        assert set(o.graphs) <= set(f.graphs)
        assert all(g.text.startswith(OUTLINE_MARK) for g in o.graphs.values())  # none read
    # the same places, by kind and compile id
    found = {(i.kind, i.compile_id) for i in compiler.divergence(outline).items}
    assert found == {(i.kind, i.compile_id) for i in compiler.divergence(full).items}


def test_the_outline_is_the_same_whatever_the_pieces_the_logs_are_read_in(traces, monkeypatch):
    # pieces far smaller than a graph or a guard tree: every payload is streamed past
    # over many pieces (guards digested piece by piece), and headers cut at any byte
    from compiler.ranks import scan

    whole = scan.scan_ranks(traces["fsdp_plant"]).exploration.to_json(compact=False)
    for piece in (65536, 4096, 997):
        monkeypatch.setattr(scan, "_PIECE", piece)
        cut = scan.scan_ranks(traces["fsdp_plant"]).exploration.to_json(compact=False)
        assert cut == whole, piece


def test_the_scan_says_which_rank_it_reads_as_it_goes(traces):
    # what explorer.load shows under the cell while a large directory is scanned
    from compiler.ranks.scan import scan_ranks

    said: list[str] = []
    files = scan_ranks(traces["ddp_plant"], progress=said.append).files
    assert len(said) == len(files) == 3
    for i, (line, f) in enumerate(zip(said, files, strict=True)):
        assert f"rank {f.rank} ({i + 1} of 3)" in line and Path(f.path).name in line


def test_a_multi_rank_directory_opens_in_outline_and_reads_a_rank_when_its_pane_opens(traces):
    import explorer
    from explorer.ranks_widget import RanksWidget

    folder = traces["ddp_plant"]
    w = explorer.load(folder, lazy=True)
    assert isinstance(w, RanksWidget) and w.open_rank is None
    ranks = w.pane(None, "ranks")
    assert [r["compile_id"] for r in ranks["rows"] if r["kinds"]] == sorted(
        _compile_ids_by_rank(folder)[1] - _compile_ids_by_rank(folder)[0]
    )
    full = explorer.load(folder, lazy=False)
    whole = next(c for c in full.exploration.compiles if c.rank == 2 and c.graphs)
    key = whole.key
    assert w.pane(key, "dynamo_output_graph") == full.pane(key, "dynamo_output_graph")
    assert w.open_rank == 2
    # the open rank's compiles are the full ones; the others stay in outline
    opened = {c.key: c for c in w.exploration.compiles}
    assert opened[key] == whole
    assert w.pane(None, "ranks") == ranks  # judged on the outline, whatever is open


def test_compiler_report_launches_a_script_on_ranks_and_says_where_they_diverge(tmp_path):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.getenv("PYTHONPATH", "")])}
    proc = subprocess.run(
        [sys.executable, "-m", "compiler", "report", str(SCRIPT), "--nproc", "2", "-o",
         str(tmp_path / "out"), "--", "--strategy", "ddp", "--plant", "--backend", "eager"],
        env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    exp = compiler.Exploration.from_json((tmp_path / "out" / "exploration.json").read_text())
    assert set(exp.ranks) == {0, 1}
    assert f"compiler: {compiler.divergence(exp).summary}" in proc.stderr
    assert "rank 1 only" in proc.stderr
