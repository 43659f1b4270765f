"""The advisor over a corpus of real programs that each plant one known problem.

Each case compiles for real (mostly ``eager``/``aot_eager``, a few Inductor on CPU); GPU
cases come from the H100 recordings. The planted problem must be the first finding, its
evidence must point at a compile, pane, source line, node or kernel that exists, and the
clean programs must get no problem or warning.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from advisor_corpus import CASES, INDUCTOR
from advisor_corpus.check import (
    GPU_ALSO,
    GPU_RECORDINGS,
    evidence_errors,
    load_case,
    load_recording,
    pane_ids,
    planted_src,
    recorded_planted_line,
)

import compiler
from compiler.advise.findings import SEVERITIES, Finding
from explorer.report import findings_markdown


def _alarms(findings: tuple[Finding, ...]) -> list[Finding]:
    return [f for f in findings if f.severity in ("problem", "warning")]


def _assert_ranked(findings: tuple[Finding, ...]) -> None:
    order = [SEVERITIES.index(f.severity) for f in findings]
    assert order == sorted(order), [f.severity for f in findings]


def _cases(clean: bool) -> list[object]:
    return [
        pytest.param(c, marks=pytest.mark.slow) if c in INDUCTOR else c
        for c in CASES
        if c.startswith("clean_") == clean
    ]


@pytest.mark.parametrize("name", _cases(clean=False))
def test_planted_problem_is_the_first_finding_and_its_evidence_resolves(name):
    case = load_case(name)
    exp = case.run()
    findings = exp.findings()
    assert findings, f"{name}: no finding at all"
    first = findings[0]
    assert first.kind == case.EXPECT, [f.kind for f in findings]
    assert first.severity in ("problem", "warning")
    assert first.suggestion and first.title
    assert [f.kind for f in _alarms(findings) if f.kind != case.EXPECT] == []
    _assert_ranked(findings)
    assert evidence_errors(exp, first, pane_ids(exp)) == []
    where = planted_src(case)
    if where is not None:
        assert where in {e.src for e in first.evidence}, first.evidence


@pytest.mark.parametrize("name", _cases(clean=True))
def test_clean_program_gets_no_problem_or_warning(name):
    case = load_case(name)
    assert case.EXPECT is None
    findings = case.run().findings()
    assert _alarms(findings) == []


@pytest.mark.parametrize("name", sorted(GPU_RECORDINGS))
def test_gpu_recording_gets_its_finding_first_or_no_alarm(name):
    exp = load_recording(name)
    findings = exp.findings()
    expect = GPU_RECORDINGS[name]
    if expect is None:
        assert _alarms(findings) == []
        return
    assert findings[0].kind == expect, [f.kind for f in findings]
    assert evidence_errors(exp, findings[0], pane_ids(exp)) == []
    also = GPU_ALSO.get(name, set())
    assert [f.kind for f in _alarms(findings) if f.kind not in {expect, *also}] == []
    line = recorded_planted_line(name)
    if line is not None:
        # recorded elsewhere: the path differs, the script's line does not
        srcs = {e.src for e in findings[0].evidence if e.src}
        assert any(s.endswith(f"record_advisor_gpu.py:{line}") for s in srcs), srcs


def test_fp32_matmul_finding_goes_away_once_tf32_is_allowed_in_the_guards():
    import dataclasses

    # without the call's timing nothing says the call is host-bound: the matmuls count
    exp = dataclasses.replace(load_recording("transformer_block"), call_timing=None)
    assert "gpu.fp32_matmul" in [f.kind for f in exp.findings()]
    c = exp.compiles[0]
    assert c.guards is not None
    tree = c.guards.tree.replace('"allow_tf32":false', '"allow_tf32":true')
    guards = dataclasses.replace(c.guards, tree=tree)
    tf32 = dataclasses.replace(exp, compiles=(dataclasses.replace(c, guards=guards),))
    kinds = [f.kind for f in tf32.findings()]
    assert "gpu.fp32_matmul" not in kinds
    assert "gpu.library_dominates" in kinds


def test_fp32_matmuls_of_a_host_bound_call_are_only_a_note():
    exp = load_recording("transformer_block")  # 0.098 ms of its 0.403 ms on the device
    assert exp.call_timing is not None
    assert exp.call_timing.device_ms is not None
    assert exp.call_timing.device_ms < 0.25 * exp.call_timing.compiled_ms
    kinds = [f.kind for f in exp.findings()]
    assert "gpu.fp32_matmul" not in kinds and "gpu.library_dominates" in kinds


def test_compiled_slower_than_eager_names_the_host_side_from_call_timing():
    """A measured call (the pointwise recording's compile) where the compiled call spends
    most of its time on the host: the finding is a problem and says so."""
    import dataclasses

    exp = load_recording("pointwise")
    timing = compiler.CallTiming(
        runs=20,
        eager_ms=0.020,
        compiled_ms=0.045,
        eager_spread_ms=(0.019, 0.022),
        compiled_spread_ms=(0.043, 0.050),
        device_ms=0.008,
        cpu_ms=0.037,
    )
    slow = dataclasses.replace(exp, call_timing=timing)
    first = slow.findings()[0]
    assert first.kind == "gpu.slower_than_eager" and first.severity == "problem"
    assert "host side" in first.title
    assert 'mode="reduce-overhead"' in first.suggestion
    assert evidence_errors(slow, first, pane_ids(slow)) == []


def test_findings_survive_a_json_round_trip():
    exp = load_case("gb_print").run()
    again = compiler.Exploration.from_json(exp.to_json())
    assert again.findings() == exp.findings()


def test_markdown_lists_findings_with_their_links_and_snippets():
    exp = load_case("gb_data_branch").run()
    text = findings_markdown(exp.findings())
    assert text.startswith("## Findings\n")
    assert "1. **Problem** A branch on tensor data breaks the graph" in text
    assert "`dynamo_graph_break_reason`" in text and "torch.cond" in text
    assert findings_markdown(()).startswith("## Findings\n\nNo problems found")


def test_report_starts_with_the_findings():
    from explorer.report import summarize

    text = summarize(load_case("gb_print").run())
    head, _, _ = text.partition("\n## ")
    assert text.index("## Findings") < text.index("## Compile")
    assert head.startswith("# torch.compile report:")


def test_a_torch_trace_log_gets_the_graph_break_first_with_working_links():
    """The committed TORCH_TRACE log (tests/programs.py::with_print at two shapes)."""
    from pathlib import Path

    exp = compiler.load_trace(Path(__file__).parent / "data" / "traces" / "graph_break_eager")
    findings = exp.findings()
    first = findings[0]
    assert first.kind == "graph_break.logging" and first.severity == "problem"
    assert evidence_errors(exp, first, pane_ids(exp)) == []
    programs = (Path(__file__).parent / "programs.py").read_text().splitlines()
    line = next(i for i, t in enumerate(programs, 1) if 'print("halfway there")' in t)
    assert any(e.src and e.src.endswith(f"programs.py:{line}") for e in first.evidence)
    assert "2 graphs instead of one per call" in first.impact
    # the second shape recompiles the frame and its resume function with the same size
    # change (4 -> 8): one finding that lists both
    assert [(f.kind, f.severity) for f in findings[1:]] == [("recompile.size", "warning")]
    recompiled = {c.key for c in exp.compiles if c.recompile_reasons}
    assert len(recompiled) == 2 and recompiled <= {e.compile for e in findings[1].evidence}


def test_max_autotune_choice_beaten_by_a_candidate_is_a_warning_on_the_autotuning_pane():
    """The recorded max-autotune matmul, with the choice moved to a slower candidate (as a
    stale autotune cache would leave it): the rule names both and links the pane."""
    import dataclasses

    # the capture without call timing: nothing else to find in it
    fixture = Path(__file__).parent / "data" / "recordings" / "cuda_matmul_max_autotune.json"
    exp = compiler.Exploration.from_json(fixture.read_text())
    assert exp.findings() == () or all(f.severity == "info" for f in exp.findings())
    c = exp.compiles[0]
    (tuning,) = c.autotuning
    slower = max((ch for ch in tuning.choices if ch.ms is not None), key=lambda ch: ch.ms or 0)
    stale = dataclasses.replace(tuning, chosen=slower.name, chosen_kernel=None)
    exp2 = dataclasses.replace(exp, compiles=(dataclasses.replace(c, autotuning=(stale,)),))
    first = exp2.findings()[0]
    assert first.kind == "gpu.autotune_not_fastest" and first.severity == "warning"
    assert slower.name in first.title
    assert evidence_errors(exp2, first, pane_ids(exp2)) == []


@pytest.mark.parametrize(
    ("fields", "said"),
    [
        ({"cudagraph_recordings": 0.5, "recording_ms": 2.0}, "CUDA graph recordings per call"),
        ({"input_copy_bytes": 4e9}, "MB of input copies per call"),
    ],
)
def test_slower_than_eager_names_the_largest_measured_part(fields, said):
    """The parts of the mean compiled call add up to it; the largest is the cause."""
    import dataclasses

    exp = load_recording("advisor_slower_than_eager")
    t = exp.call_timing
    assert t is not None and exp.environment.peak_copy_gbps
    timing = dataclasses.replace(t, **fields)
    copies = timing.input_copy_bytes / (exp.environment.peak_copy_gbps * 1e6)
    mean = t.compiled_ms + timing.cudagraph_recordings * (timing.recording_ms or 0.0) + copies
    timing = dataclasses.replace(timing, compiled_mean_ms=mean)
    first = dataclasses.replace(exp, call_timing=timing).findings()[0]
    assert first.kind == "gpu.slower_than_eager"
    assert said in first.title
    # the parts named in the impact add up to the mean compiled call
    shares = [float(p.split(" (")[0]) for p in first.impact.split(" = ")[1].split(" + ")]
    assert sum(shares) == pytest.approx(mean, abs=0.01)


def test_a_recompile_is_one_rule_also_where_the_trace_kept_no_reason():
    import dataclasses

    import torch

    def g(x):
        return x.cos()

    def two_shapes():
        h = torch.compile(g, backend="eager", dynamic=False)
        h(torch.randn(2))
        h(torch.randn(3))

    exp = compiler.explore(two_shapes, wrap=False)
    first, second = exp.compiles
    assert second.recompile_reasons and exp.recompiles == (second,)
    # a trace that logged no recompile reason: the second compile of the frame is one still
    bare = dataclasses.replace(second, recompile_reasons=())
    stripped = dataclasses.replace(exp, compiles=(first, bare))
    assert not first.is_recompile and bare.is_recompile
    assert stripped.recompiles == (bare,)
