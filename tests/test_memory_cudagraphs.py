"""Issue 35, memory and CUDA graphs: ``compiler.memory`` against torch's own backward
graph, and the GPU recordings of ``scripts/record_pain_gpu.py`` replayed on a CPU."""

from __future__ import annotations

import dataclasses
import gzip
import json
import re
from pathlib import Path
from typing import Any

import pytest
import torch
from torch._inductor.custom_graph_pass import CustomGraphPass

import compiler
from compiler.measure.memory_peak import PeakMemory, as_counters


class SavedInputs(CustomGraphPass):
    """Inductor post-grad pass: per backward graph, the bytes of its placeholders that are
    not tangents, from torch's fake tensors (what the backward receives as saved)."""

    def __init__(self) -> None:
        self.totals: list[int] = []
        self.names: list[set[str]] = []

    def __call__(self, graph: torch.fx.Graph) -> None:
        placeholders = [n for n in graph.nodes if n.op == "placeholder"]
        if not any(n.name.startswith("tangents") for n in placeholders):
            return
        saved = [
            n
            for n in placeholders
            if not n.name.startswith("tangents") and isinstance(n.meta.get("val"), torch.Tensor)
        ]
        self.totals.append(sum(n.meta["val"].numel() * n.meta["val"].element_size() for n in saved))
        self.names.append({n.name for n in saved})

    def uuid(self) -> Any:
        return None


class Block(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.ln = torch.nn.LayerNorm(32)
        self.a = torch.nn.Linear(32, 64)
        self.b = torch.nn.Linear(64, 32)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.b(torch.nn.functional.gelu(self.a(self.ln(x)))).softmax(-1)


def test_saved_for_backward_matches_torchs_backward_placeholders():
    rec = SavedInputs()
    model = Block()
    compiled = torch.compile(model, options={"post_grad_custom_pre_pass": rec})

    def step(x: torch.Tensor) -> None:
        compiled(x).pow(2).mean().backward()

    exp = compiler.explore(step, torch.randn(4, 8, 32))
    mem = compiler.memory(exp)
    assert len(rec.totals) == 1 and len(mem.compiles) == 1
    (cm,) = mem.compiles
    assert cm.total_bytes == rec.totals[0] > 0
    assert {s.node for s in cm.saved if s.kind != "symint"} == rec.names[0]
    # activations carry the user's line; parameters are told apart from the input
    acts = [s for s in cm.saved if s.kind == "activation"]
    assert acts and all(s.source is not None for s in acts)
    assert any(s.kind == "parameter" and s.module == "a" for s in cm.saved)
    assert any(s.kind == "input" for s in cm.saved)
    assert "| 0/0 |" in mem.table()


def test_measured_peaks_survive_json_and_raise_above_eager():
    exp = compiler.Exploration(source="live")
    mib = 2**20
    peaks = [PeakMemory("eager", 100 * mib, 300 * mib, 0), PeakMemory("compiled", 90 * mib,
                                                                       400 * mib, 0)]
    exp = compiler.Exploration(source="live", counters=as_counters(peaks))
    back = compiler.Exploration.from_json(exp.to_json())
    assert compiler.memory(back).peaks == tuple(sorted(peaks, key=lambda p: p.label))
    found = [f for f in back.findings() if f.kind == "memory.above_eager"]
    assert [f.cause for f in found] == ["memory|above_eager|backward"]
    assert "activation_memory_budget" in found[0].suggestion


def test_activation_memory_budget_is_torchs_config():
    # the advice names torch's own knobs: they must exist in this torch
    import torch._functorch.config as fconfig
    import torch._inductor.config as iconfig

    assert 0 < fconfig.activation_memory_budget <= 1
    assert iconfig.triton.cudagraph_skip_dynamic_graphs is False
    assert callable(torch.compiler.cudagraph_mark_step_begin)


def test_skip_reason_in_torchs_words_links_the_users_line_and_node():
    # the reason as torch formats it (cudagraph_utils), with a stack Dynamo recorded
    from torch._inductor.cudagraph_utils import format_default_skip_message

    def mutated(x: torch.Tensor, buf: torch.Tensor) -> torch.Tensor:
        buf.add_(1)
        return (x * buf).sin()

    exp = compiler.explore(mutated, torch.randn(8), torch.zeros(8), backend="eager")
    (c,) = exp.compiles
    node = next(n for n in c.graphs["dynamo_output_graph"].nodes if "add_" in n.target)
    assert node.source is not None
    where = f'File "{node.source.filename}", line {node.source.line}, in mutated'
    stack = f"  {where}\n    buf.add_(1)\n"
    reason = format_default_skip_message(f"mutated inputs (1 instances). Found from : \n {stack}")
    metrics = dataclasses.replace(c.metrics, cudagraph_skip_reason=reason)
    exp = dataclasses.replace(exp, compiles=(dataclasses.replace(c, metrics=metrics),))
    (site,) = compiler.cudagraphs(exp).sites
    assert site.status == "skipped" and site.skip is not None and site.skip.cause == "mutated"
    assert site.nodes == (node.name,)
    found = [f for f in exp.findings() if f.kind == "cudagraph.skipped"]
    assert len(found) == 1 and "buf.add_(1)" in found[0].title
    assert found[0].evidence[0].node == node.name


# -- GPU recordings (scripts/record_pain_gpu.py on an H100, torch 2.11), replayed on a CPU --

RECORDINGS = Path(__file__).parent / "data" / "recordings"


def _recording(name: str) -> compiler.Exploration:
    text = gzip.decompress((RECORDINGS / name).read_bytes()).decode()
    return compiler.Exploration.from_json(text)


def test_gpt2_step_memory_table_eager_against_compiled():
    exp = _recording("pain_gpt2_step.json.gz")
    mem = compiler.memory(exp)
    eager, compiled = mem.peak("eager"), mem.peak("compiled")
    assert eager is not None and compiled is not None
    assert eager.backward_bytes and compiled.backward_bytes
    assert sum(c.total_bytes for c in mem.compiles) > 0
    table = mem.table()
    assert "| eager |" in table and "| compiled |" in table


# torch's own records of the same run (scripts/record_pain_gpu.py's pain_logs.jsonl.gz):
# each as torch formatted it, with torch's own compile ids, tagged with the job


def _torch_said(job: str) -> list[str]:
    lines = gzip.decompress((RECORDINGS / "pain_logs.jsonl.gz").read_bytes()).decode()
    return [r["message"] for r in map(json.loads, lines.splitlines()) if r["job"] == job]


def test_cycling_batches_one_tree_per_distinct_size_as_torch_logged():
    exp = _recording("pain_cycling.json.gz")
    said = _torch_said("pain_cycling")
    keys = [m.rsplit(" ", 1)[1] for m in said if "Recording cudagraph tree for symint key" in m]
    # torch's recordings name torch's compile id, which the capture renumbered to its own
    ours = {old: new for new, old in re.findall(r"(\d+/\d+) = (\d+/\d+)", " ".join(exp.notes))}
    recorded = [m for m in said if re.match(r"\[\d+/\d+\] Recording function=", m)]
    (torch_id,) = {m[1 : m.index("]")] for m in recorded}
    assert keys == ["8", "16", "4"] and recorded
    graphs = compiler.cudagraphs(exp)
    (site,) = graphs.sites
    assert site.compile_id == ours.get(torch_id, torch_id) == "0/0" and site.status == "recorded"
    assert list(site.keys) == keys and site.recordings == len(recorded)
    # one recording per distinct size, each for inputs of that batch
    summary = json.loads(gzip.decompress((RECORDINGS / "pain_summary.json.gz").read_bytes()))
    sizes = list(dict.fromkeys(c["batch"] for c in summary["cycling_calls"]))
    assert [sh.key for sh in site.shapes] == [str(b) for b in sizes]
    for sh in site.shapes:
        assert sh.recordings == 1 and sh.sizes[0].startswith(f"{sh.key}, ")
        assert sh.calls_ms == tuple(
            c["ms"] for c in summary["cycling_calls"] if str(c["batch"]) == sh.key
        )
    assert graphs.pool_bytes == max(c["pool_bytes"] for c in summary["cycling_calls"]) > 0
    (found,) = [f for f in exp.findings() if f.kind == "cudagraph.per_shape"]
    assert found.cause == "cudagraph|shapes|0/0" and "pad or bucket" in found.suggestion.lower()


def test_mutated_input_skip_names_torchs_reason_line_and_node():
    exp = _recording("pain_mutated_input.json.gz")
    (said,) = [m for m in _torch_said("pain_mutated_input") if "skipping cudagraphs" in m]
    (site,) = compiler.cudagraphs(exp).sites
    assert site.status == "skipped" and site.skip is not None
    assert said.startswith(site.skip.reason) and site.skip.cause == "mutated"
    (frame,) = site.skip.frames
    assert frame.code == "buf.add_(1)" and f'line {frame.line}, in mutated\n    buf.add_(1)' in said
    (c,) = exp.compiles
    node = next(n for n in c.graphs["dynamo_output_graph"].nodes if n.name in site.nodes)
    assert node.source is not None and node.source.line == frame.line
    (found,) = [f for f in exp.findings() if f.kind == "cudagraph.skipped"]
    assert found.cause == f"cudagraph|skip|mutated|record_pain_gpu.py:{frame.line}"
    assert found.evidence[0].node == node.name


def test_a_mutated_input_skip_names_the_users_parameter_not_aots_placeholder():
    # torch's skip is about the AOT graph's `copy_` into `arg0_1`; the finding names the
    # parameter the user wrote (`buf`) and the line that mutates it
    from compiler.costs.cudagraphs import mutated_inputs

    exp = _recording("pain_mutated_input.json.gz")
    (c,) = exp.compiles
    aot = c.graphs["aot_inference_graph"]
    assert any("copy_" in n.target and n.inputs[0] == "arg0_1" for n in aot.nodes)
    assert mutated_inputs(c) == ("buf",)
    (site,) = compiler.cudagraphs(exp).sites
    assert site.mutated == ("buf",)
    (frame,) = site.skip.frames
    (found,) = [f for f in exp.findings() if f.kind == "cudagraph.skipped"]
    assert "the input `buf` is changed in place by `buf.add_(1)`" in found.title
    assert f"record_pain_gpu.py:{frame.line}" in found.title and "arg0_1" not in found.title


def test_mutated_inputs_are_the_users_parameters_of_a_real_aot_graph():
    def accumulate(x: torch.Tensor, buf: torch.Tensor, total: torch.Tensor) -> torch.Tensor:
        buf.add_(x)
        total.mul_(2)
        return (x * buf).sin()

    args = (torch.randn(8), torch.zeros(8), torch.ones(8))
    exp = compiler.explore(accumulate, *args, backend="aot_eager")
    (c,) = exp.compiles
    from compiler.costs.cudagraphs import mutated_inputs

    assert set(mutated_inputs(c)) == {"buf", "total"}


def test_a_compiled_functions_stack_ends_at_the_line_that_called_it():
    # torch's own record (log_dynamo_start) drops one frame too many: the line that called
    # a compiled function is lost, and a finding's "passed at" named the explore() call
    # (found on the H200 with a reduce-overhead function); the capture's stack keeps it
    from compiler.link.user_code import callers

    def accumulate(buf: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        buf.add_(x)
        return buf.sin()

    compiled = torch.compile(accumulate, backend="aot_eager")

    def run() -> None:
        compiled(torch.zeros(4), torch.ones(4))  # THE CALL

    exp = compiler.explore(run, wrap=False)
    (c,) = exp.compiles
    call = next(i for i, t in enumerate(Path(__file__).read_text().splitlines(), 1)
                if t.endswith("# THE CALL"))  # fmt: skip
    *_, last = callers(c)
    assert (last.function, last.line) == ("run", call), c.stack
    assert c.stack[-1].function == "accumulate"


def test_cpu_op_partition_keeps_out_the_ops_torch_named_at_the_users_line():
    exp = _recording("pain_cpu_op.json.gz")
    said = _torch_said("pain_cpu_op")
    assert "Created 3 graph partitions: 2 cudagraphable, 1 non-cudagraphable" in said
    named = [m.split(":")[0].strip() for m in said if "reason=cpu ops" in m]
    lines = {int(n) for m in said for n in re.findall(r'record_pain_gpu.py", line (\d+)', m)}
    (site,) = compiler.cudagraphs(exp).sites
    assert site.status == "partitioned" and site.partitions == ((3, 2, 1),)
    kept = [op.buffer for op in site.kept_out]
    assert named and set(named) <= set(kept)
    assert {f.line for op in site.kept_out for f in op.frames} == lines
    # the op that moves the activation to the CPU, at the user's line, with torch's code
    op = next(op for op in site.kept_out if op.buffer == named[0])
    (frame,) = op.frames
    assert "y.cpu()" in frame.code and "device_put" in op.fx
    (c,) = exp.compiles
    cpu_nodes = [n.name for n in c.graphs["dynamo_output_graph"].nodes
                 if n.source is not None and n.source.line in lines]  # fmt: skip
    assert list(site.nodes) == cpu_nodes and cpu_nodes
    # one cause: the op that moves data to the CPU and the one that moves it back
    # (torch's "cpu ops" and "DeviceCopy ops") are one finding naming both lines
    (found,) = [f for f in exp.findings() if f.kind == "cudagraph.partition"]
    assert found.cause == f"cudagraph|partition|cpu ops|record_pain_gpu.py:{frame.line}"
    assert {e.src.rsplit(":", 1)[1] for e in found.evidence if e.src} == {str(n) for n in lines}
    assert "y.cpu()" in found.title


def _overwritten_text() -> str:
    """torch's RuntimeError as the H100/H200 run raised it (its traceback, kept)."""
    text = (RECORDINGS / "pain_cycling_grad_pitfall.error.txt").read_text()
    said = next(line for line in text.splitlines() if line.startswith("RuntimeError: Error"))
    return said + "\n" + text.split(said, 1)[1].split("\n\n", 1)[0]


def test_overwritten_output_error_becomes_the_advisors_finding_with_torchs_fix():
    # the loop without zero_grad: the second step's backward accumulates into .grad
    # tensors the first step's CUDA graph wrote into its pool; the recording keeps what
    # ran before torch raised, and torch's error
    exp = _recording("pain_cycling_grad_pitfall.json.gz")
    said = _overwritten_text()
    line = int(re.search(r'Stack trace: File "[^"]+", line (\d+)', said)[1])
    first = said.split("\n")[0].removeprefix("RuntimeError: ")
    assert [e.stage for e in exp.errors if first in e.message] == ["run", "run"]
    graphs = compiler.cudagraphs(exp)
    assert graphs.overwritten is not None and graphs.overwritten.frame.line == line
    (found,) = [f for f in exp.findings() if f.kind == "cudagraph.overwritten"]
    assert found.cause == f"cudagraph|overwritten|record_pain_gpu.py:{line}"
    assert "cudagraph_mark_step_begin()" in found.suggestion and ".clone()" in found.suggestion
    assert "zero_grad" in found.suggestion
    advice = said[said.index("To prevent") :].split("\n")[0].strip()
    assert any(e.text == f"torch's advice: {advice}" for e in found.evidence)
    # the node on the line torch named, in the graph it recorded
    assert found.evidence[0].node in {n for _, n in graphs.overwritten_nodes}
    # the same loop clearing gradients each step ran through, marked or not
    for name in ("pain_cycling_grad.json.gz", "pain_cycling_grad_plain.json.gz"):
        assert compiler.cudagraphs(_recording(name)).overwritten is None


def test_cycling_with_grad_records_forward_and_backward_per_distinct_size():
    for job in ("pain_cycling_grad", "pain_cycling_grad_plain"):
        exp = _recording(f"{job}.json.gz")
        said = _torch_said(job)
        keys = [m.rsplit(" ", 1)[1] for m in said if "Recording cudagraph tree for symint" in m]
        recorded = [m for m in said if re.match(r"\[\d+/\d+\] Recording function=", m)]
        (site,) = compiler.cudagraphs(exp).sites
        distinct = list(dict.fromkeys(keys))
        assert distinct == ["8", "16", "4"] and [sh.key for sh in site.shapes] == distinct
        # a tree and a recording each for the forward and the backward of every size
        assert [sh.trees for sh in site.shapes] == [keys.count(k) for k in distinct] == [2] * 3
        assert sum(sh.recordings for sh in site.shapes) == len(recorded) == 6
        summary = json.loads(gzip.decompress((RECORDINGS / "pain_summary.json.gz").read_bytes()))
        calls = summary[f"{job.removeprefix('pain_')}_calls"]
        assert compiler.cudagraphs(exp).pool_bytes == max(c["pool_bytes"] for c in calls) > 0


def test_recordings_that_kept_torchs_ids_in_their_notes_still_replay():
    # recorded before capture kept CUDA graph messages per compile: torch's messages are
    # in the notes with torch's ids ([2/0]), mapped through the capture's id note
    exp = _recording("pain_cycling_legacy_notes.json.gz")
    raw = [n.partition(": ")[2] for n in exp.notes if n.startswith("__cudagraphs: ")]
    tagged = {m[1 : m.index("]")] for m in raw if re.match(r"\[\d+/\d+\] Recording function", m)}
    keys = [m.rsplit(" ", 1)[1] for m in raw if "Recording cudagraph tree for symint" in m]
    assert tagged == {"2/0"} and any("0/0 = 2/0" in n for n in exp.notes)
    (site,) = compiler.cudagraphs(exp).sites
    assert site.compile_id == "0/0" and list(site.keys) == keys == ["8", "16", "4"]
    assert site.recordings == sum(1 for m in raw if "Recording function" in m) == 3


def test_capture_keeps_torchs_cudagraph_messages_under_its_own_compile_ids():
    # torch's own loggers and message formats, from a backend that speaks as Inductor's
    # CUDA graph code does: a skip in the compile, a tree and a recording at run time
    from torch._guards import CompileContext
    from torch._inductor import cudagraph_trees
    from torch._inductor.cudagraph_utils import log_cudagraph_skip_and_bump_counter

    torch_ids: list[str] = []

    def backend(gm: torch.fx.GraphModule, _inputs: list[Any]) -> Any:
        torch_id = CompileContext.current_compile_id()
        torch_ids.append(str(torch_id))
        log_cudagraph_skip_and_bump_counter(
            "skipping cudagraphs due to mutated inputs (1 instances)"
        )

        def run(*args: Any) -> Any:
            cudagraph_trees.log.info("Recording cudagraph tree for symint key %s", 8)
            cudagraph_trees.log.debug(
                "[%s] Recording function=%s, mode=%s, cuda_graph_id=%d, inputs: %s",
                torch_id, "partition_0", "FORWARD", 0, "[0]: Tensor(size=[8, 4])",
            )  # fmt: skip
            return gm.forward(*args)

        return run

    from compiler import _compat

    def state() -> list[tuple[str, int, bool, int]]:
        return [(lg.name, lg.level, lg.propagate, len(lg.handlers))
                for lg in _compat.cudagraph_loggers()]  # fmt: skip

    torch.compile(torch.sin, backend="eager")(torch.ones(2))  # torch's frame 0, before
    f = torch.compile(lambda x: x.cos() + 1, backend=backend)
    before = state()
    exp = compiler.explore(lambda: f(torch.ones(8, 4)), wrap=False, decompile=False)
    assert state() == before  # capture leaves torch's loggers as it found them
    (c,) = exp.compiles
    assert str(c.compile_id) == "0/0" and torch_ids == ["1/0"]
    assert any("0/0 = 1/0" in n for n in exp.notes)
    said = json.loads(c.artifacts["cudagraphs_log"])
    assert said == [
        "cudagraphs: skipping cudagraphs due to mutated inputs (1 instances)",
        "cudagraphs: Recording cudagraph tree for symint key 8",
        "cudagraphs: Recording function=partition_0, mode=FORWARD, cuda_graph_id=0, "
        "inputs: [0]: Tensor(size=[8, 4])",
    ]
    (site,) = compiler.cudagraphs(exp).sites
    assert site.compile_id == "0/0" and site.status == "skipped" and site.recordings == 1
    assert site.keys == ("8",) and site.shapes[0].sizes == ("8, 4",)
    back = compiler.Exploration.from_json(exp.to_json())
    assert compiler.cudagraphs(back) == compiler.cudagraphs(exp)


# -- the CUDA-graph pane and the report, from the replayed recordings ----------------------


def test_the_cudagraphs_pane_lists_sites_shapes_and_links_torchs_reason():
    from explorer.panes import build_index, build_pane, pane_json

    exp = _recording("pain_mutated_input.json.gz")
    assert "cudagraphs" in [r.id for r in build_index(exp).compiles[0].panes]
    pane = build_pane(exp, None, "cudagraphs")
    (site,) = pane.sites
    (said,) = [m for m in _torch_said("pain_mutated_input") if "skipping cudagraphs" in m]
    assert site.status == "skipped" and site.reason is not None
    assert said.startswith(site.reason.text.split(" at `")[0]) and "buf.add_(1)" in site.reason.text
    # the link names a node of the graph pane it opens, on the line torch named
    graph = build_pane(exp, site.reason.compile, site.reason.stage)
    node = next(n for n in exp.compiles[0].graphs["dynamo_output_graph"].nodes
                if n.name == site.reason.node)  # fmt: skip
    assert graph.kind == "graph" and f"{node.source.filename}:{node.source.line}" == site.reason.src
    cycling = build_pane(_recording("pain_cycling.json.gz"), None, "cudagraphs")
    keys = [m.rsplit(" ", 1)[1] for m in _torch_said("pain_cycling") if "symint key" in m]
    assert [s.key for s in cycling.sites[0].shapes] == keys
    assert cycling.pool_mib > 0 and len(cycling.calls) == 8
    assert pane_json(cycling)["sites"][0]["shapes"][0]["recordings"] == 1
    # a recording where torch said nothing about CUDA graphs lists no such pane
    plain = compiler.Exploration.from_json((RECORDINGS / "cuda_pointwise.json").read_text())
    assert "cudagraphs" not in [r.id for r in build_index(plain).compiles[0].panes]


def test_the_report_shows_each_shapes_recordings_and_the_cause():
    from explorer.report import summarize

    text = summarize(_recording("pain_cycling.json.gz"))
    assert "## CUDA graphs" in text
    for key in ("8", "16", "4"):
        assert f"symint key {key}: 1 trees, 1 warm-ups, 1 recordings" in text
    text = summarize(_recording("pain_mutated_input.json.gz"))
    assert "**skipped**, skipping cudagraphs due to mutated inputs" in text
    assert "`buf.add_(1)`" in text


@pytest.mark.slow
def test_the_exported_cudagraphs_pane_opens_the_node_torch_blamed(open_page, tmp_path):
    from playwright.sync_api import expect

    from explorer.export import to_html

    exp = _recording("pain_mutated_input.json.gz")
    (said,) = [m for m in _torch_said("pain_mutated_input") if "skipping cudagraphs" in m]
    path = tmp_path / "cudagraphs.html"
    to_html(exp, path)
    page, problems = open_page(path)
    page.locator('.tce-tab[data-stage="cudagraphs"]').click()
    expect(page.locator(".tce-cg-summary")).to_contain_text("1 skipped")
    site = page.locator(".tce-cg-site")
    expect(site).to_have_count(1)
    expect(site.locator(".tce-cg-status")).to_have_text("skipped")
    reason = site.locator(".tce-cg-reason")
    expect(reason).to_contain_text(said.split(".")[0])
    expect(reason).to_contain_text("`buf.add_(1)`")
    expect(site.locator(".tce-cg-shape")).to_have_count(1)
    reason.click()
    current = page.locator(".tce-tab.tce-current")
    expect(current).to_have_attribute("data-stage", "dynamo_output_graph")
    expect(page.locator(".gc-side-name")).to_have_text("add_")
    assert problems == []
