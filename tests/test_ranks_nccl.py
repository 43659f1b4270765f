"""Several GPUs for real: six runs of a GPT-2 training step on two GPUs of one host with
NCCL (2 x H200, torch 2.11) and the same six on four (4 x H200), recorded by
``scripts/record_ranks_gpu.py --nproc 2|4`` under ``TORCH_TRACE`` and committed as
``tests/data/traces/nccl/<run>/*.log.xz`` and ``tests/data/traces/nccl4/<run>/``:
``ddp_*`` is ``torch.compile(DDP(model))``, ``fsdp_*`` FSDP2 (``fully_shard``);
``*_same`` every rank alike, ``*_plant`` rank 1's last batch 32 -> 64 tokens, ``*_skew``
rank 0's Inductor cache filled by an untraced run just before.

The expectations are read from torch's own records in the raw logs: which compile ids each
rank started (``dynamo_start``), which cache events each compile logged, the compile times
in ``compilation_metrics``, the device each rank printed.
"""

from __future__ import annotations

import functools
import inspect
import json
import lzma
import re
from collections import Counter
from pathlib import Path

import pytest
import torch
from conftest import open_html

import compiler
from compiler.parse.words import per_process
from compiler.parse.words.per_process import normalized
from compiler.ranks.skew import SLOW_RATIO, SLOW_SECONDS

TRACES = Path(__file__).resolve().parent / "data" / "traces"
NCCL = TRACES / "nccl"
_NAMES = ("ddp_same", "ddp_plant", "ddp_skew", "fsdp_same", "fsdp_plant", "fsdp_skew")
# 2 GPUs, then 4: "nccl/ddp_same", ..., "nccl4/fsdp_skew"
RUNS = tuple(f"{folder}/{name}" for folder in ("nccl", "nccl4") for name in _NAMES)
_HEADER = re.compile(r"^\S+ \S+ +\d+ [^\]]*\] (\{.*)$")


@functools.cache
def _records(run: str) -> dict[int, list[dict]]:
    """Every header record of each rank's raw log (JSON, as torch wrote it)."""
    out: dict[int, list[dict]] = {}
    for log in sorted((TRACES / run).glob("*.log.xz")):
        rank = int(re.search(r"rank_(\d+)", log.name)[1])
        with lzma.open(log, "rt") as fh:
            out[rank] = [json.loads(m[1]) for line in fh if (m := _HEADER.match(line))]
    return out


def _cid(rec: dict) -> str:
    return f"{rec['frame_id']}/{rec['frame_compile_id']}"


def _compile_ids(run: str) -> dict[int, set[str]]:
    return {
        rank: {_cid(r) for r in recs if "dynamo_start" in r}
        for rank, recs in _records(run).items()
    }


def _cache_events(run: str) -> dict[int, dict[str, set[str]]]:
    """Per rank, per compile id, the names of the cache artifacts torch logged."""
    out: dict[int, dict[str, set[str]]] = {}
    for rank, recs in _records(run).items():
        for r in recs:
            name = r.get("artifact", {}).get("name", "")
            if name.endswith(("_cache_hit", "_cache_miss")):
                out.setdefault(rank, {}).setdefault(_cid(r), set()).add(name)
    return out


def _compile_seconds(run: str) -> dict[int, dict[str, float]]:
    """Per rank, per compile id: ``entire_frame_compile_time_s`` plus the backward's
    ``inductor_compile_time_s``, from torch's metrics records."""
    out: dict[int, dict[str, float]] = {}
    for rank, recs in _records(run).items():
        for r in recs:
            for key, field in (("compilation_metrics", "entire_frame_compile_time_s"),
                               ("bwd_compilation_metrics", "inductor_compile_time_s")):  # fmt: skip
                if key in r:
                    cid = r[key].get("compile_id") or _cid(r)
                    seconds = out.setdefault(rank, {})
                    seconds[cid] = seconds.get(cid, 0.0) + (r[key].get(field) or 0.0)
    return out


@pytest.fixture(scope="module")
def runs():
    return {run: compiler.load_trace(TRACES / run) for run in RUNS}


def test_each_rank_ran_on_its_own_gpu_and_printed_it(runs):
    # the noise is real: torch printed each rank's own device into its graphs and guards
    for run in ("nccl/ddp_same", "nccl4/fsdp_same"):
        exp = runs[run]
        for rank in exp.ranks:
            c = next(c for c in exp.compiles if c.rank == rank and c.guards and c.output_code)
            assert f"device={rank}" in c.guards.tree
            graph = c.graphs["dynamo_output_graph"].text
            assert f"cuda:{rank}" in graph
            assert not [r for r in exp.ranks if r != rank and f"cuda:{r}" in graph]


@pytest.mark.parametrize("run", [r for r in RUNS if r.endswith("_same")])
def test_identical_ranks_on_two_and_four_gpus_give_no_divergence(runs, run):
    ids = _compile_ids(run)
    assert sorted(ids) == list(range(len(ids))) and all(v == ids[0] for v in ids.values())
    exp = runs[run]
    div = compiler.divergence(exp)
    assert div.items == () and not div, [i.text for i in div.items]
    assert "compiled the same" in div.summary
    assert not [f for f in exp.findings() if f.kind.startswith("ranks.")]


def test_the_device_masks_keep_a_real_size_change():
    exp = compiler.load_trace(NCCL / "ddp_plant")
    before, after = exp.compile("5/0", rank=1), exp.compile("5/1", rank=1)
    other = exp.compile("5/0", rank=0)
    # what torch printed on the two GPUs differs by the device alone
    a, b = other.graphs["dynamo_output_graph"].text, before.graphs["dynamo_output_graph"].text
    assert a != b and normalized(a) == normalized(b)
    assert normalized(other.guards.tree) == normalized(before.guards.tree)
    # the recompile at 64 tokens on the same GPU still differs after masking
    grown = after.graphs["dynamo_output_graph"].text
    assert "64" in grown and normalized(grown) != normalized(b)
    assert normalized(b.replace("[4, 32]", "[4, 64]")) != normalized(b)


def _one_pass(text: str) -> str:
    """``normalized`` as one pass of each whole-text expression (its form before it ran
    them on the lines and spellings that can match only): the reference it must equal."""
    masked = per_process._OBJ_ID.sub(r"\1#", per_process._PER_PROCESS.sub("#", text))
    return per_process._DEVICE_TEXT.sub(r"\1#", per_process._RANK_NAMES.sub("rank#", masked))


def test_the_masks_run_where_they_can_match_and_mask_as_one_pass_did(runs):
    texts = [
        text
        for exp in runs.values()
        for c in exp.compiles
        for text in (
            *(g.text for g in c.graphs.values()),
            *(g.text for oc in c.output_code for g in oc.graphs.values()),
            *(oc.text for oc in c.output_code),
            *(k.source for k in c.kernels()),
            c.guards.tree if c.guards else "",
        )
    ]
    assert sum(map(len, texts)) > 10_000_000  # every rank's graphs, code and guards
    # and what torch does not print: a stream name inside type='...', Unicode digits,
    # a mask at a line's end, spellings glued to words, lines of nothing to mask
    texts += [
        "type='stream1', index=1 stream2", "x" + "\u0663" * 9 + " " + "\u0661" * 10,
        "a 1234567890\nb",
        "/tmp/agraph id: 5\n0x1graph id", "xcuda:1 cuda:1x cuda:12 device=3,_DeviceGuard(0)",
        "rank_3 ___check_obj_id(L['x'], 42)\nGuard latency = 9 us", "no digits\n\n",
    ]  # fmt: skip
    assert [normalized(t) for t in texts] == [_one_pass(t) for t in texts]


@pytest.mark.parametrize("run", [r for r in RUNS if r.endswith("_plant")])
def test_the_planted_size_divergence_gives_exactly_the_compiles_that_differ(runs, run):
    ids = _compile_ids(run)
    only_on_1 = ids[1] - ids[0]
    assert only_on_1 and not ids[0] - ids[1]
    assert all(ids[r] == ids[0] for r in ids if r != 1)
    exp = runs[run]
    div = compiler.divergence(exp)
    assert {(i.kind, i.compile_id) for i in div.items} == {("compiles", c) for c in only_on_1}
    assert "rank 1 only" in div.summary
    # the first is the first compile rank 1 made alone, with torch's reason: 32 -> 64
    started = [_cid(r) for r in _records(run)[1] if "dynamo_start" in r]
    first = next(c for c in started if c in only_on_1)
    assert div.items[0].compile_id == first
    assert "expected 32, actual 64" in div.items[0].text
    kinds = [f.kind for f in exp.findings()]
    assert "ranks.divergence" in kinds and "ranks.compile_skew" not in kinds


@pytest.mark.parametrize("run", [r for r in RUNS if r.endswith("_skew")])
def test_the_planted_skew_is_flagged(runs, run):
    events = _cache_events(run)
    cold = sorted(set(events) - {0})
    # the plant worked: rank 0 logged hits only where the other ranks logged misses
    split = {
        cid for cid, names in events[0].items()
        if not any(n.endswith("_miss") for n in names)
        and all(any(n.endswith("_miss") for n in events[r].get(cid, ())) for r in cold)
    }  # fmt: skip
    assert split
    seconds = _compile_seconds(run)
    shared = set.intersection(*(set(s) for s in seconds.values()))
    totals = {r: sum(seconds[r][c] for c in shared) for r in seconds}
    fastest = min(totals.values())
    slow = {
        r for r, t in totals.items() if t >= SLOW_RATIO * fastest and t - fastest >= SLOW_SECONDS
    }
    slowest = max(totals, key=lambda r: totals[r])

    exp = runs[run]
    div = compiler.divergence(exp)
    assert {i.compile_id for i in div.items if i.kind == "caches"} == split
    timed = [i for i in div.items if i.kind == "compile_time"]
    assert bool(timed) == bool(slow)
    assert {i.kind for i in div.items} <= {"caches", "compile_time"}  # nothing else differs
    if timed:
        assert f"{totals[slowest]:.1f} s" in timed[0].text
        assert f"{fastest:.1f} s" in timed[0].text
        from compiler.ranks.skew import skew as skew_of

        assert set(skew_of(exp).slow) == slow
    (skew,) = [f for f in exp.findings() if f.kind == "ranks.compile_skew"]
    assert skew.severity == "warning" and skew.cause == "ranks|compile_skew"
    assert f"{totals[slowest] - fastest:.1f} s" in skew.impact
    # each rank's side of the first places, linked to the compile
    linked = {e.compile for e in skew.evidence}
    first = next(i for i in div.items if i.kind == "caches").compile_id
    assert {exp.compile(first, rank=r).key for r in totals} <= linked
    longest = [s.compile for i in timed for s in i.ranks]
    assert linked <= {exp.compile(c, rank=r).key for c in split for r in totals} | set(longest)
    # the fixes it names are torch's: the process group's timeout and the mega-cache
    assert "timeout" in inspect.signature(torch.distributed.init_process_group).parameters
    assert callable(torch.compiler.save_cache_artifacts)
    assert callable(torch.compiler.load_cache_artifacts)
    for words in ("NCCL", "init_process_group", "save_cache_artifacts", "TORCHINDUCTOR_CACHE_DIR"):
        assert words in skew.suggestion


def test_the_ddp_skew_figures(runs):
    # rank 0 warm, rank 1 cold, on 2 x H200: torch's metrics, summed over shared compiles
    seconds = _compile_seconds("nccl/ddp_skew")
    shared = set(seconds[0]) & set(seconds[1])
    totals = {r: sum(seconds[r][c] for c in shared) for r in (0, 1)}
    assert totals[1] > 3 * totals[0]
    from compiler.ranks.skew import skew

    found = skew(runs["nccl/ddp_skew"])
    assert found.slow == (1,)
    assert found.totals == pytest.approx(totals)
    assert found.wait == pytest.approx(totals[1] - totals[0])


@pytest.mark.parametrize("run", RUNS)
def test_no_finding_appears_twice_in_a_multi_rank_run(runs, run):
    found = runs[run].findings()
    assert found
    causes = Counter(f.cause for f in found)
    titles = Counter((f.kind, f.title) for f in found)
    assert [c for c, n in causes.items() if n > 1] == []
    assert [t for t, n in titles.items() if n > 1] == []


def test_a_cause_both_ranks_report_keeps_the_evidence_of_both(runs):
    # torch logged the same AOTAutograd bypass on both ranks: one finding, two ranks
    exp = runs["nccl/ddp_same"]
    bypassed = {
        rank for rank, recs in _records("nccl/ddp_same").items()
        for r in recs if r.get("artifact", {}).get("name") == "aotautograd_cache_bypass"
    }  # fmt: skip
    assert bypassed == {0, 1}
    (bypass,) = [f for f in exp.findings() if f.kind == "cache.bypass"]
    ranks = {c.rank for e in bypass.evidence for c in exp.compiles if c.key == e.compile}
    assert ranks == {0, 1}


@pytest.mark.parametrize("run", RUNS)
def test_the_outline_of_an_nccl_run_finds_what_the_full_load_finds(runs, run, tmp_path):
    from compiler.ranks.scan import scan_ranks

    for log in (TRACES / run).glob("*.log.xz"):  # the outline reads plain logs
        (tmp_path / log.name[: -len(".xz")]).write_bytes(lzma.decompress(log.read_bytes()))
    outline = scan_ranks(tmp_path).exploration
    found = {(i.kind, i.compile_id) for i in compiler.divergence(outline).items}
    assert found == {(i.kind, i.compile_id) for i in compiler.divergence(runs[run]).items}


def test_the_ranks_pane_shows_compile_time_per_rank_and_per_compile(runs):
    from explorer.panes.ranks import build_ranks

    exp = runs["nccl/ddp_skew"]
    seconds = _compile_seconds("nccl/ddp_skew")
    pane = build_ranks(exp, None, "ranks")
    for row in pane.rows:
        for rank, cell in zip((0, 1), row.cells, strict=True):
            assert cell.seconds == pytest.approx(seconds[rank][row.compile_id], abs=1e-3)
    split = {i.compile_id for i in compiler.divergence(exp).items if i.kind == "caches"}
    for row in pane.rows:
        states = [c.cache for c in row.cells]
        assert (states == ["hit", "miss"]) == (row.compile_id in split)
        assert ("caches" in row.kinds) == (row.compile_id in split)
    assert pane.slow == (False, True) and pane.totals[1] > 3 * pane.totals[0]
    assert pane.longest == pytest.approx(max(max(s.values()) for s in seconds.values()), abs=1e-3)


def test_the_offline_page_shows_the_skew_at_a_glance(runs, tmp_path, browser):
    from playwright.sync_api import expect

    from explorer.export import to_html
    from explorer.panes.ranks import build_ranks

    exp = runs["nccl/ddp_skew"]
    pane = build_ranks(exp, None, "ranks")
    page_file = tmp_path / "skew.html"
    to_html(exp, page_file)
    page, problems = open_html(browser, page_file, height=900)
    page.locator('[role="tab"][data-stage="ranks"]').first.click()
    table = page.locator(".tce-ranks")
    totals = table.locator("tfoot td.tce-rank-cell")
    expect(totals).to_have_text([f"{t:.2f} s" for t in pane.totals])
    expect(totals.nth(1)).to_have_class(re.compile(r"\btce-slow\b"))
    expect(totals.nth(0)).not_to_have_class(re.compile(r"\btce-slow\b"))
    for cid in {i.compile_id for i in compiler.divergence(exp).items if i.kind == "caches"}:
        cells = table.locator(f'tr[data-compile-id="{cid}"] .tce-rank-seconds')
        expect(cells).to_have_text([re.compile(r" · hit$"), re.compile(r" · miss$")])
    # the bars are drawn to scale: the slow rank's total bar is the full width
    widths = totals.locator(".tce-rank-bar").evaluate_all("bs => bs.map(b => b.style.width)")
    assert widths[1] == "100%" and float(widths[0][:-1]) < 50
    assert problems == []
    page.close()
