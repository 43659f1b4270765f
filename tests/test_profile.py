"""``compiler.attach_profile``: the user's own torch.profiler trace linked to the explored
kernels (issue 34). Expectations come from the profiler's own events (Inductor's C++
kernels record ``graph_<n>_<kernel>`` under ``cpp.enable_kernel_profile``; Triton kernels
run under their own names inside ``Torch-Compiled Region``/``CompiledFunctionBackward``)
and from the kernel names in Inductor's output code text."""

from __future__ import annotations

import gzip
import json
import re
import shutil
import sys
from collections import Counter
from pathlib import Path

import pytest
import torch

import compiler
from compiler.errors import TraceFormatError

DATA = Path(__file__).parent / "data" / "profiles"
_CPP_EVENT = re.compile(r"^graph_\d+_(cpp_\w+)$")


class Block(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.up = torch.nn.Linear(16, 32)
        self.down = torch.nn.Linear(32, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.nn.functional.gelu(self.up(x))
        h = h * torch.sigmoid(h) + 1.0
        return self.down(h).tanh()


def profiled_run(trace: Path) -> compiler.Exploration:
    """A user's loop: a compiled block's training step, then two steps under torch.profiler,
    explored as it runs (``wrap=False``)."""
    import torch._inductor.config as inductor_config

    torch.manual_seed(0)
    block, x = Block(), torch.randn(8, 16)
    compiled = torch.compile(block)

    def run() -> None:
        with inductor_config.patch({"cpp.enable_kernel_profile": True}):
            compiled(x).sum().backward()
            acts = [torch.profiler.ProfilerActivity.CPU]
            with torch.profiler.profile(activities=acts) as prof:
                for _ in range(2):
                    compiled(x).sum().backward()
        prof.export_chrome_trace(str(trace))

    return compiler.explore(run, wrap=False)


def _trace_events(path: Path) -> list[dict[str, object]]:
    raw = path.read_bytes()
    doc = json.loads(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw)
    return [e for e in doc["traceEvents"] if e.get("ph") == "X"]


def _output_code_kernels(exp: compiler.Exploration, prefix: str) -> set[str]:
    """Kernel names as Inductor's output code text defines them (not our split)."""
    pat = re.compile(rf"\b({prefix}_\w+)\b")
    return {m for c in exp.compiles for oc in c.output_code for m in pat.findall(oc.text)}


def _library_calls(exp: compiler.Exploration, trace: Path) -> int:
    """Library calls the compiled regions made: the output code's ``extern_kernels.*``
    call lines times how often the trace's regions ran that code."""
    regions = Counter(str(e["name"]) for e in _trace_events(trace))
    total = 0
    for c in exp.compiles:
        for oc in c.output_code:
            calls = len(re.findall(r"^\s+\w+ = extern_kernels\.|^\s+extern_kernels\.", oc.text,
                                   re.M))  # fmt: skip
            region = "CompiledFunctionBackward" if oc.key.startswith("backward") else (
                f"Torch-Compiled Region: {c.compile_id}")  # fmt: skip
            total += calls * regions[region]
    return total


def _check_cpu(exp: compiler.Exploration, trace: Path) -> compiler.Profile:
    events = [e for e in _trace_events(trace) if _CPP_EVENT.match(str(e["name"]))]
    names = {_CPP_EVENT.match(str(e["name"]))[1] for e in events}  # type: ignore[index]
    assert events and names <= _output_code_kernels(exp, "cpp_fused")
    p = compiler.attach_profile(exp, trace).profile
    assert p is not None and p.device == "cpu"
    # every kernel event of the compiled region links to the kernel of its name, and every
    # library call (``aten::addmm`` under the wrapper's ``extern_kernels.addmm``) to its
    library = _library_calls(exp, trace)
    assert library > 0
    seen = len(events) + library
    assert (p.kernel_events, p.linked_events, p.unlinked) == (seen, seen, {})
    cpp = [k for k in p.kernels if k.name.startswith("cpp_")]
    assert {k.name for k in cpp} == names
    assert sum(k.events for k in cpp) == len(events)
    called = {m for c in exp.compiles for oc in c.output_code
              for m in re.findall(r"\b(extern_kernels\.\w+)\(", oc.text)}  # fmt: skip
    assert {k.name for k in p.kernels} - names <= called
    durations = [float(e["dur"]) for e in events]  # type: ignore[arg-type]
    assert sum(k.total_us for k in cpp) == pytest.approx(sum(durations))
    ids = {k.id for c in exp.compiles for k in c.kernels()}
    assert {k.kernel for k in p.kernels} <= ids
    return p


def triton_events(exp: compiler.Exploration, trace: Path) -> list[dict[str, object]]:
    """The device kernel events of Triton kernels Inductor's output code defines."""
    names = {
        m
        for c in exp.compiles
        for oc in c.output_code
        for m in re.findall(r"^def (triton_\w+)\(", oc.text, re.M)
    }
    return [e for e in _trace_events(trace) if e.get("cat") == "kernel" and e["name"] in names]


def check_triton(exp: compiler.Exploration, trace: Path) -> compiler.Profile:
    """Every Triton kernel event of the compiled region links to its kernel."""
    events = triton_events(exp, trace)
    p = compiler.attach_profile(exp, trace).profile
    assert events and p is not None and p.device == "cuda"
    linked = Counter({k.name: k.events for k in p.kernels})
    seen = Counter(str(e["name"]) for e in events)
    assert all(linked[n] >= k for n, k in seen.items()), (seen - linked, p.unlinked)
    assert not any(n in p.unlinked for n in seen)
    return p


@pytest.mark.slow
def test_a_live_cpu_profile_links_every_cpp_kernel_event(tmp_path: Path) -> None:
    trace = tmp_path / "trace.json"
    exp = profiled_run(trace)
    p = _check_cpu(exp, trace)
    # the forward kernel ran this file's lines, and both modules
    fwd = [k for k in p.kernels if k.kernel.startswith("forward/")]
    assert fwd and any(pl.loc and pl.loc.filename == __file__ for pl in p.lines)


def test_a_committed_cpu_profile_replays_linked() -> None:
    exp = compiler.Exploration.from_json((DATA / "cpu_mlp.exploration.json").read_text())
    p = _check_cpu(exp, DATA / "cpu_mlp.trace.json.gz")
    # Block.forward's gelu fused with the sigmoid line after it, in module ``up``
    fused = next(k for k in p.kernels if k.kernel.startswith("forward/") and "gelu" in k.name)
    assert "sigmoid" in fused.name and fused.module == "up"
    by_code = {pl.loc.code: pl for pl in p.lines if pl.loc}
    gelu = by_code["h = torch.nn.functional.gelu(self.up(x))"]
    assert fused.kernel in gelu.kernels and gelu.total_us >= fused.total_us
    again = compiler.Exploration.from_json(
        compiler.attach_profile(exp, DATA / "cpu_mlp.trace.json.gz").to_json()
    )
    assert again.profile == p


def test_a_folder_reads_its_newest_trace_and_junk_is_refused(tmp_path: Path) -> None:
    exp = compiler.Exploration.from_json((DATA / "cpu_mlp.exploration.json").read_text())
    with pytest.raises(TraceFormatError, match="no profiler trace"):
        compiler.attach_profile(exp, tmp_path)
    (tmp_path / "junk.json").write_text("{not json")
    with pytest.raises(TraceFormatError, match="not a readable profiler trace"):
        compiler.attach_profile(exp, tmp_path / "junk.json")
    shutil.copy(DATA / "cpu_mlp.trace.json.gz", tmp_path / "w.pt.trace.json.gz")
    p = compiler.attach_profile(exp, tmp_path).profile
    assert p is not None and p.linked_events > 0 and p.notes[0].startswith(str(tmp_path))


def test_explorer_load_takes_a_profile_and_the_report_says_what_linked() -> None:
    import explorer
    from explorer.report import summarize

    w = explorer.load(DATA / "cpu_mlp.exploration.json", profile=DATA / "cpu_mlp.trace.json.gz")
    p = w.exploration.profile
    assert p is not None and p.linked_events == p.kernel_events > 0
    text = summarize(w.exploration)
    head = f"{p.linked_events} of {p.kernel_events} kernel events in compiled regions linked"
    assert "## Profiled run" in text and head in text
    assert f"`{p.kernels[0].kernel}`" in text


def test_the_profile_pane_links_each_kernel_to_its_output_code() -> None:
    from explorer.panes import build_index, build_pane

    exp = compiler.Exploration.from_json((DATA / "cpu_mlp.exploration.json").read_text())
    exp = compiler.attach_profile(exp, DATA / "cpu_mlp.trace.json.gz")
    idx = build_index(exp)
    assert "profile" in [r.id for r in idx.compiles[0].panes]
    pane = build_pane(exp, None, "profile")
    assert pane.kind == "profile" and len(pane.kernels) == len(exp.profile.kernels)
    for row in pane.kernels:
        c = exp.compile(row.link.compile)
        (oc,) = [o for o in c.output_code if any(k.id == row.link.kernel for k in o.kernels)]
        code = build_pane(exp, c.key, row.link.stage)
        assert code.kind == "output_code" and code.stage == "inductor_output_code"
        assert row.link.stage.startswith(oc.key + "/")
    assert sum(r.share for r in pane.kernels) == pytest.approx(1.0)
    assert all(r.link.src for r in pane.lines)
    assert "profile" not in [r.id for r in build_index(compiler.Exploration.from_json(
        (DATA / "cpu_mlp.exploration.json").read_text())).compiles[0].panes]


def test_the_exported_profile_pane_shows_the_run_and_opens_a_kernel(open_page, tmp_path):
    from playwright.sync_api import expect

    from explorer.export import to_html

    exp = compiler.Exploration.from_json((DATA / "cpu_mlp.exploration.json").read_text())
    exp = compiler.attach_profile(exp, DATA / "cpu_mlp.trace.json.gz")
    path = tmp_path / "profile.html"
    to_html(exp, path)
    page, problems = open_page(path)
    page.locator('.tce-tab[data-stage="profile"]').click()
    seen = exp.profile.kernel_events  # the C++ kernels' and the library calls' events
    expect(page.locator(".tce-profile-summary")).to_contain_text(f"{seen} of {seen} kernel events")
    tables = page.locator("table.tce-profile")
    expect(tables).to_have_count(3)  # kernels, source lines, modules
    expect(tables.nth(0).locator(".tce-profile-row")).to_have_count(len(exp.profile.kernels))
    gelu = next(k for k in exp.profile.kernels if "gelu" in k.name and "forward/" in k.kernel)
    tables.nth(0).get_by_role("button", name=gelu.name, exact=True).click()
    expect(page.locator(".tce-tab.tce-current")).to_have_attribute(
        "data-stage", "forward/inductor_output_code"
    )
    expect(page.locator(".tce-details")).to_contain_text(f"kernel {gelu.name}")
    assert problems == []


if __name__ == "__main__":  # regenerate the committed CPU profile
    raw = Path("/tmp/cpu_mlp.trace.json")
    exp = profiled_run(raw)
    (DATA / "cpu_mlp.exploration.json").write_text(exp.to_json())
    with raw.open("rb") as a, gzip.open(DATA / "cpu_mlp.trace.json.gz", "wb") as b:
        shutil.copyfileobj(a, b)
    sys.exit(0)


def test_a_committed_gpt2_profile_from_an_h100_links_every_triton_kernel_event() -> None:
    # recorded by scripts/record_profile_gpu.py on an H100 (torch 2.11): the user's own
    # torch.profiler run of three training steps after explore(wrap=False)
    text = gzip.decompress((DATA / "gpt2_train_step.exploration.json.gz").read_bytes())
    exp = compiler.Exploration.from_json(text.decode())
    trace = DATA / "gpt2_train_step.trace.json.gz"
    p = check_triton(exp, trace)
    # torch's own count of the trace's device kernels, written when it was recorded
    facts = json.loads((DATA / "gpt2_train_step.facts.json").read_text())
    kernels = sum(1 for e in _trace_events(trace) if e.get("cat") == "kernel")
    assert kernels == facts["kernel_events"]
    assert p.lines and p.kernels


def _gpt2() -> tuple[compiler.Exploration, Path]:
    text = gzip.decompress((DATA / "gpt2_train_step.exploration.json.gz").read_bytes())
    return compiler.Exploration.from_json(text.decode()), DATA / "gpt2_train_step.trace.json.gz"


_LIBRARY = ("gemm", "splitKreduce", "fmha_", "cutlass")  # cuBLAS, cuBLASLt, attention


def test_library_kernels_of_the_gpt2_step_link_to_the_wrapper_call_that_launched_them() -> None:
    exp, trace = _gpt2()
    p = compiler.attach_profile(exp, trace).profile
    assert p is not None
    # every library kernel the device ran in a compiled region is linked (torch's names)
    library = [e for e in triton_events_all(trace) if any(w in str(e["name"]) for w in _LIBRARY)]
    assert library and not [n for n in p.unlinked if any(w in n for w in _LIBRARY)]
    linked = {k.name: k for k in p.kernels}
    # a library kernel (cuBLAS's GEMM and split-K reduction) counts under its op's call
    assert {"extern_kernels.mm", "extern_kernels.addmm"} <= set(linked)
    assert p.linked_events >= 180 + len(library) // 2
    # what is left unlinked ran under an op the output code does not call as a library
    # call, and the profile says why
    assert any("unlinked kernels ran" in n for n in p.notes)


def triton_events_all(trace: Path) -> list[dict[str, object]]:
    return [e for e in _trace_events(trace) if e.get("cat") == "kernel"]


def test_gpt2_time_per_line_counts_innermost_lines_and_backward_kernels_have_modules() -> None:
    exp, trace = _gpt2()
    p = compiler.attach_profile(exp, trace).profile
    assert p is not None and p.lines
    # the frames every forward kernel's stack (torch's provenance) passes through, such as
    # the LM head's call of the transformer, are outer frames: no kernel is counted there
    stacks = [
        {(loc.filename, loc.line) for loc in k.user_stack}
        for c in exp.compiles
        for k in c.kernels()
        if k.id.startswith("forward/triton") and k.user_stack and len(c.kernels()) > 10
    ]
    outer = set.intersection(*stacks)
    assert len(stacks) > 5 and outer
    assert not outer & {(pl.loc.filename, pl.loc.line) for pl in p.lines if pl.loc}
    # a backward kernel fused from tanh's backward (GELU) sits in an MLP's activation
    tanh = [k for k in p.kernels if k.kernel.startswith("backward/") and "tanh_backward" in k.name]
    assert tanh and all(k.module for k in tanh), tanh
    shared = [pl.place for pl in p.modules if ".mlp" in pl.place]
    assert shared, [pl.place for pl in p.modules]


def test_own_run_timing_of_the_gpt2_step_leaves_out_each_regions_first_call() -> None:
    from compiler.profile.chrome import read_spans
    from compiler.profile.own_run import OwnRun, own_times, with_own_times

    exp, trace = _gpt2()
    facts = json.loads((DATA / "gpt2_train_step.facts.json").read_text())
    assert set(facts["compiled_regions"].values()) == {3}  # torch's regions: 3 steps
    times = own_times(exp, OwnRun(cuda=True, spans=read_spans(trace)))
    timed = with_own_times(exp, times, peak=None)
    per_name = Counter(str(e["name"]) for e in triton_events(exp, trace))
    kernels = [k for c in timed.compiles for k in c.kernels() if k.name in per_name]
    assert kernels
    for k in kernels:  # steps 2 and 3 of each kernel's 3
        assert k.timing is not None and k.timing.calls == per_name[k.name] * 2 // 3, k.name
    assert "1/0 calls 2..3" in times.note() and timed.profile == times.profile
