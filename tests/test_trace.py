"""Loading TORCH_TRACE logs: fidelity with live capture and with tlparse, bad input, ranks."""

from __future__ import annotations

import gzip
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import programs
import pytest
import torch

import compiler

TRACES = Path(__file__).parent / "data" / "traces"

# Same settings explore() uses, so both runs compile the same way.
_TRACED_RUN = textwrap.dedent(
    """
    import torch, programs
    import torch._inductor.config as ic, torch._functorch.config as fc
    ic.trace.provenance_tracking_level = 1
    ic.fx_graph_cache = False
    fc.enable_autograd_cache = False
    f = torch.compile(programs.{name}, backend={backend!r})
    f(torch.randn(16, 16))
    """
)


def _traced(tmp_path: Path, env: dict, name: str, backend: str) -> Path:
    out = tmp_path / "trace"
    code = _TRACED_RUN.format(name=name, backend=backend)
    proc = subprocess.run([sys.executable, "-c", code], env=dict(env, TORCH_TRACE=str(out)),
                          capture_output=True, text=True, timeout=600)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


def _normalised(text: str) -> str:
    """Graph text with Python object ids (``graph id: 1397...``) masked: they differ per process."""
    return re.sub(r"graph id: \d+", "graph id: <id>", text)


def _assert_same_stages(traced: compiler.Exploration, live: compiler.Exploration) -> None:
    assert [str(c.compile_id) for c in traced.compiles] == [
        str(c.compile_id) for c in live.compiles
    ]
    for t, lv in zip(traced.compiles, live.compiles, strict=True):
        assert t.code_name == lv.code_name
        assert sorted(t.graphs) == sorted(lv.graphs), t.compile_id
        for stage in t.graphs:
            assert _normalised(t.graphs[stage].text) == _normalised(lv.graphs[stage].text), (
                t.compile_id, stage)  # fmt: skip
            assert t.graphs[stage].nodes == lv.graphs[stage].nodes, (t.compile_id, stage)
        assert [gb.location for gb in t.graph_breaks] == [gb.location for gb in lv.graph_breaks]
        assert [g.kind for g in t.guards.guards] == [g.kind for g in lv.guards.guards]
        assert len(t.output_code) == len(lv.output_code)
        for to, lo in zip(t.output_code, lv.output_code, strict=True):
            assert sorted(to.graphs) == sorted(lo.graphs)
            assert [(k.name, k.language, k.source) for k in to.kernels] == [
                (k.name, k.language, k.source) for k in lo.kernels
            ]
            assert to.provenance == lo.provenance


def test_trace_and_live_capture_hold_the_same_stages_with_a_graph_break(tmp_path, subprocess_env):
    trace_dir = _traced(tmp_path, subprocess_env, "with_print", "aot_eager")
    traced = compiler.load_trace(trace_dir, strict=True)
    live = compiler.explore(programs.with_print, torch.randn(16, 16), backend="aot_eager")
    assert len(live.compiles) == 2 and live.compiles[1].is_resume
    _assert_same_stages(traced, live)
    # what the trace cannot hold is labelled, not silently missing
    assert any(e.stage == "bytecode" for e in traced.compiles[0].errors)
    assert live.compiles[0].bytecode is not None


@pytest.mark.slow
def test_trace_and_live_capture_hold_the_same_inductor_kernels(tmp_path, subprocess_env):
    trace_dir = _traced(tmp_path, subprocess_env, "pointwise", "inductor")
    traced = compiler.load_trace(trace_dir, strict=True)
    live = compiler.explore(programs.pointwise, torch.randn(16, 16))
    _assert_same_stages(traced, live)
    (out,) = traced.compiles[0].output_code
    assert out.kernels and out.kernels[0].post_grad_nodes
    assert any(e.stage == "schedule" for e in out.errors)
    assert live.compiles[0].output_code[0].schedule is not None


def test_tlparse_reads_the_same_graphs_from_the_fixture(tmp_path):
    tlparse = shutil.which("tlparse") or str(Path(sys.executable).parent / "tlparse")
    if not Path(tlparse).exists():
        pytest.skip("tlparse is not installed (pip install tlparse)")
    log = TRACES / "graph_break_eager" / "trace.log"
    out = tmp_path / "tlparse"
    subprocess.run([tlparse, str(log), "-o", str(out), "--no-browser"], check=True,
                   capture_output=True, timeout=120)  # fmt: skip
    exp = compiler.load_trace(log, strict=True)
    theirs = {}
    for path in out.glob("-_*_*_*/dynamo_output_graph_*.txt"):
        _, frame, fcid, _attempt = path.parent.name.split("_")
        theirs[f"{frame}/{fcid}"] = path.read_text()
    ours = {str(c.compile_id): c.graphs["dynamo_output_graph"].text for c in exp.compiles}
    assert theirs.keys() == ours.keys()
    for cid, text in ours.items():
        assert theirs[cid].rstrip("\n") == text.rstrip("\n"), cid


def test_fixture_loads_strictly_with_graph_breaks_and_a_recompile():
    exp = compiler.load_trace(TRACES / "graph_break_eager", strict=True)
    assert [str(c.compile_id) for c in exp.compiles] == ["0/0", "1/0", "0/1", "1/1"]
    assert len(exp.graph_breaks) == 2
    assert exp.compile("0/1").recompile_reasons
    assert exp.environment.torch
    assert exp.source == "trace"


def test_corrupted_trace_counts_bad_lines_and_keeps_the_good_ones():
    exp = compiler.load_trace(TRACES / "corrupted.log")
    bad = [e for e in exp.errors if e.stage == "trace"]
    assert any(":4: not a structured trace line" in e.message for e in bad)
    assert any("bad JSON" in e.message for e in bad)
    assert any("md5" in e.message for e in bad)
    assert len(exp.compiles) == 4, "events after the damage still load"
    with pytest.raises(compiler.TraceFormatError, match=r"\d+ bad line\(s\) in .*corrupted\.log"):
        compiler.load_trace(TRACES / "corrupted.log", strict=True)


def test_gzip_and_several_ranks_are_kept_apart(tmp_path):
    src = (TRACES / "graph_break_eager" / "trace.log").read_bytes()
    (tmp_path / "dedicated_log_torch_trace_rank_0_abc.log").write_bytes(src)
    with gzip.open(tmp_path / "dedicated_log_torch_trace_rank_1_def.log.gz", "wb") as fh:
        fh.write(src)
    exp = compiler.load_trace(tmp_path, strict=True)
    assert exp.ranks == (0, 1)
    assert len(exp.compiles) == 8
    assert exp.compile("0/1", rank=1).rank == 1


def test_loading_a_trace_never_executes_its_code(tmp_path):
    marker = tmp_path / "pwned"
    text = (TRACES / "graph_break_eager" / "trace.log").read_text()
    evil = f"__import__('pathlib').Path({str(marker)!r}).write_text('x')"
    # a graph payload that would run code if anything exec'd it; its md5 is stale, so
    # load non-strictly: the point is that parsing it must not run it
    text = text.replace(
        "class GraphModule(torch.nn.Module):", f"class GraphModule(torch.nn.Module):\n\t{evil}", 1
    )
    (tmp_path / "t.log").write_text(text)
    compiler.load_trace(tmp_path / "t.log")
    assert not marker.exists()


@pytest.mark.parametrize("name", ["corrupted.log", "graph_break_eager/trace.log"])
def test_a_trace_read_in_small_pieces_gives_the_same_events_and_bad_lines(name):
    from compiler.trace.events import ParseStats, parse_trace_chunks

    text = (TRACES / name).read_text()

    def read(size):
        stats = ParseStats()
        pieces = [text[i : i + size] for i in range(0, len(text), size)]
        events = [(e.key, e.payload, e.line, e.metadata) for e in parse_trace_chunks(pieces, stats)]
        return events, stats

    whole, whole_stats = read(len(text))
    assert whole
    for size in (5, 333, 4096):
        events, stats = read(size)
        assert events == whole
        assert (stats.lines, stats.events, stats.bad) == (
            whole_stats.lines,
            whole_stats.events,
            whole_stats.bad,
        )


@pytest.mark.parametrize("name", ["corrupted.log", "graph_break_eager/trace.log"])
@pytest.mark.parametrize("cut_end", [0, 1, 30])
def test_the_skip_payload_mode_reads_what_the_full_mode_reads(name, cut_end):
    # one reader, two modes: asked to read every event (its text whole), the skip-payload
    # mode gives the full mode's events, line numbers and bad lines, in pieces of any size,
    # a file cut mid-event too; asked to read a few, it counts the same lines and every
    # bad line it sees is one the full mode counts
    from compiler.ranks.scan import _SKIM
    from compiler.trace.events import ParseStats, Skim, parse_trace_chunks, skim_trace

    raw = (TRACES / name).read_bytes()
    raw = raw[: len(raw) - cut_end]
    full = ParseStats()
    events = list(parse_trace_chunks([raw.decode("utf-8", errors="replace")], full))
    every = Skim(heads=(b"{",), texts=frozenset(e.name for e in events) | {"artifact"})

    def shown(found):
        return [(e.key, e.name, e.payload, e.line, e.metadata) for e in found]

    for size in (len(raw), 997, 7):
        pieces = [raw[i : i + size] for i in range(0, len(raw), size)]
        stats = ParseStats()
        assert shown(skim_trace(pieces, stats, every)) == shown(events)
        assert (stats.lines, stats.events, stats.bad, stats.last_event_line) == (
            full.lines, full.events, full.bad, full.last_event_line
        )  # fmt: skip
        few = ParseStats()
        list(skim_trace(pieces, few, _SKIM))
        assert few.lines == full.lines and set(few.bad) <= set(full.bad)


def test_the_rank_outline_reports_the_bad_lines_it_reads_past():
    from compiler.ranks.scan import scan_ranks

    errors = [e.message for e in scan_ranks(TRACES / "corrupted.log").exploration.errors]
    assert any(m.endswith("corrupted.log:4: not a structured trace line") for m in errors)
    assert any(m.endswith(":5: payload line with no event before it") for m in errors)


def test_every_stage_the_table_folds_has_a_fold_and_events_dispatch_through_it():
    from compiler.model.stages import STAGES
    from compiler.trace import fold

    assert {s.fold for s in STAGES if s.fold} == set(fold._FOLD)
    # the table says which events may come as artifacts: a pre-grad graph artifact is a
    # graph; an artifact named like the guards (taken by their key only) stays an artifact
    from compiler.model import CompileId
    from compiler.trace.build import build_compiles
    from compiler.trace.events import Event

    cid = CompileId(frame_id=0, frame_compile_id=0)

    def artifact(name):
        return Event(key="artifact", metadata={"name": name}, payload="text", compile_id=cid)

    events = [
        Event(key="dynamo_cpp_guards_str", metadata={}, payload="tree", compile_id=cid),
        artifact("before_pre_grad_graph"),
        artifact("dynamo_cpp_guards_str"),
    ]
    c = build_compiles(events, source="trace").compiles[0]
    assert c.guards is not None and c.guards.tree == "tree"
    assert list(c.graphs) == ["before_pre_grad_graph"]
    assert c.artifacts == {"dynamo_cpp_guards_str": "text"}
