"""The advisor on real models built from transformers configs (no weights), compiled for
real: one finding per cause, located at torch's own line of the break with the chain from
the user's line, a fix the explorer tries itself, and nothing said about a clean model.

Expectations come from torch and the library, never from the advisor: where the break is
comes from transformers' source (the ``logger.warning_once`` call in
``PreTrainedModel.loss_function``, the line ``TORCH_LOGS=graph_breaks`` names), which
compiles broke from the compiles torch recorded, what a fix changes from Dynamo's own
graph-break counter in a plain ``torch.compile`` beside it.
"""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest
import torch

import compiler
from compiler.errors import OptionError
from compiler.remedy.tried import try_fixes

transformers = pytest.importorskip("transformers")


def _gpt2():
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(0)
    # one layer: the break is in the loss, not in the blocks; fewer blocks trace faster
    cfg = GPT2Config(n_layer=1, n_embd=64, n_head=2, vocab_size=512, n_positions=64)
    return GPT2LMHeadModel(cfg), torch.randint(0, 512, (2, 16))


def _warning_once_line() -> tuple[str, int]:
    """Where transformers' loss_function calls logger.warning_once: file and line."""
    from transformers import modeling_utils

    fn = modeling_utils.PreTrainedModel.loss_function.fget
    lines, first = inspect.getsourcelines(fn)
    offset = next(i for i, t in enumerate(lines) if "logger.warning_once(" in t)
    return str(Path(inspect.getsourcefile(fn) or "")), first + offset


@pytest.fixture(scope="module")
def gpt2_step():
    model, x = _gpt2()

    def step(x):
        loss = model(x, labels=x).loss  # the user's line
        loss.backward()
        return loss

    exp = compiler.explore(step, x, backend="aot_eager")
    return step, x, exp


def test_gpt2_training_step_gets_one_logging_finding_at_transformers_line_and_the_users_line(
    gpt2_step,
):
    step, _, exp = gpt2_step
    lib_file, lib_line = _warning_once_line()
    lines, first = inspect.getsourcelines(step)
    user_line = first + next(i for i, t in enumerate(lines) if "# the user's line" in t)
    logging = [f for f in exp.findings() if f.kind == "graph_break.logging"]
    assert len(logging) == 1
    f = logging[0]
    assert exp.findings()[0] is not None and exp.findings()[0].kind == "graph_break.logging"
    assert "transformers" in f.title and "modeling_utils.py" in f.title
    assert f"{lib_line}" in f.title and "loss_function" in f.title
    # the chain runs from the user's line to the library line, each a source key
    assert f.chain[0].src == f"{inspect.getsourcefile(step)}:{user_line}"
    assert f.chain[-1].src == f"{lib_file}:{lib_line}"
    # every compile torch recorded with this break is listed in the one finding
    broke = {
        c.key
        for c in exp.compiles
        if any(gb.location and gb.location.line == lib_line for gb in c.graph_breaks)
    }
    assert len(broke) > 1
    assert broke <= {e.compile for e in f.evidence}
    assert f"breaks {len(broke)} frames" in f.impact
    assert "ignore_logging_functions.add(logging.Logger.warning_once)" in f.suggestion
    assert "Not tried yet" in f.tried_note


def test_bert_inference_from_a_config_is_clean():
    from transformers import BertConfig, BertModel

    cfg = BertConfig(
        num_hidden_layers=2, hidden_size=64, num_attention_heads=2, intermediate_size=128
    )
    model = BertModel(cfg).eval()
    ids = torch.randint(0, cfg.vocab_size, (2, 16))
    with torch.no_grad():
        exp = compiler.explore(model, ids, backend="aot_eager")
    # torch's record: one frame, one graph, no break, no recompile
    assert exp.graph_breaks == () and exp.recompiles == ()
    assert [f for f in exp.findings() if f.severity in ("problem", "warning")] == []


def test_the_logging_fix_is_tried_end_to_end_and_matches_dynamos_own_count(gpt2_step):
    from torch._dynamo.utils import counters

    step, x, exp = gpt2_step
    before_config = set(torch._dynamo.config.ignore_logging_functions)
    tried = try_fixes(exp, step, x, runs=1)
    assert set(torch._dynamo.config.ignore_logging_functions) == before_config
    f = next(f for f in tried.findings() if f.kind == "graph_break.logging")
    assert f.tried is not None and not f.tried.error
    assert f.tried.after.graph_breaks < f.tried.before.graph_breaks
    assert f.tried.after.compiles < f.tried.before.compiles
    assert f.tried.before.ms is not None and f.tried.after.ms is not None
    # Dynamo's own counter, in a plain compile with the same setting: no logging break
    import logging

    torch.compiler.reset()
    counters.clear()
    with torch._dynamo.config.patch(ignore_logging_functions={logging.Logger.warning_once}):
        torch.compile(step, backend="aot_eager")(x)
    torch.compiler.reset()
    assert not any("logging.Logger" in reason for reason in counters["graph_break"])
    # the report carries the before/after
    from explorer.report import findings_markdown

    assert f"graph breaks {f.tried.before.graph_breaks} -> {f.tried.after.graph_breaks}" in (
        findings_markdown(tried.findings())
    )


def test_a_trace_says_its_fix_cannot_be_tried():
    exp = compiler.load_trace(Path(__file__).parent / "data" / "traces" / "graph_break_eager")
    first = exp.findings()[0]
    assert first.fix is not None and first.tried is None
    assert "loaded from a trace" in first.tried_note
    with pytest.raises(OptionError, match="cannot run its program again"):
        try_fixes(exp, print)


def _measured_on_the_h100(exp: compiler.Exploration, timing: compiler.CallTiming):
    import dataclasses

    on_gpu = dataclasses.replace(exp.environment, device="cuda (NVIDIA H100 80GB HBM3)")
    return dataclasses.replace(exp, environment=on_gpu, call_timing=timing)


def test_a_slow_cuda_graph_call_with_grad_in_inference_names_no_grad_as_the_fix():
    """The issue's H100 figures (timm resnet18 under reduce-overhead, grad enabled: eager
    4.2 ms, compiled 19.1 ms, 0.26 CUDA graph recordings per call, fewer replays than
    calls) on a real CPU compile of a small CNN with grad enabled, where torch made a
    training graph for a call that never runs backward. The parts add up to the call and
    the explanation is the grad mode, with torch.no_grad() as the fix."""
    import dataclasses

    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Conv2d(3, 8, 3), torch.nn.BatchNorm2d(8), torch.nn.ReLU(),
        torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(8, 10),
    ).eval()  # fmt: skip
    exp = compiler.explore(model, torch.randn(2, 3, 16, 16), backend="aot_eager")
    assert any("aot_joint_graph" in c.graphs for c in exp.compiles)  # torch's training graph
    timing = compiler.CallTiming(
        runs=20, eager_ms=4.2, compiled_ms=19.1, compiled_spread_ms=(1.9, 71.6),
        cudagraph_recordings=0.26, cudagraph_replays=0.5, device_ms=0.5, cpu_ms=3.0,
    )  # fmt: skip
    # the H100's timing: the exploration says where it was measured, as a recording does
    slow = _measured_on_the_h100(exp, timing)
    first = slow.findings()[0]
    assert first.kind == "gpu.slower_than_eager" and first.severity == "problem"
    assert first.fix is not None and first.fix.kind == "no_grad"
    assert "torch.no_grad()" in first.suggestion and "training graph" in first.suggestion
    shares = [float(p.split(" (")[0]) for p in first.impact.split(" = ")[1].split(" + ")]
    assert sum(shares) == pytest.approx(timing.compiled_ms, abs=0.01)
    # the timed calls, where kept, are split by whether they recorded
    calls = dataclasses.replace(
        timing, compiled_calls_ms=(1.9, 14.0, 71.6), compiled_call_events=("", "", "recording")
    )
    texts = [e.text for e in _measured_on_the_h100(exp, calls).findings()[0].evidence]
    assert "3 timed calls: 1 recorded a CUDA graph (mean 71.60 ms); the 2 that did not" in (
        " ".join(texts)
    )
    # without grad (an inference graph) the same timing gets no grad advice
    with torch.no_grad():
        plain = compiler.explore(model, torch.randn(2, 3, 16, 16), backend="aot_eager")
    assert not any("aot_joint_graph" in c.graphs for c in plain.compiles)
    other = _measured_on_the_h100(plain, timing).findings()[0]
    assert other.fix is None and "no_grad" not in other.suggestion


RECORDINGS = Path(__file__).parent / "advisor_corpus" / "recordings"


def _gpu(job: str) -> tuple[compiler.Exploration, dict]:
    """An H100 recording of scripts/record_advisor_models_gpu.py and torch's facts
    measured beside it (plain torch.compile, no explorer)."""
    import json

    path = RECORDINGS / f"advisor_model_{job}.json"
    facts_path = RECORDINGS / "advisor_models_gpu_facts.json"
    if not path.exists() or not facts_path.exists():
        pytest.skip(f"no H100 recording {path.name} yet (scripts/record_advisor_models_gpu.py)")
    facts = json.loads(facts_path.read_text())
    if job not in facts:
        pytest.skip(f"no facts for {job} in {facts_path.name}")
    return compiler.Exploration.from_json(path.read_text()), facts[job]


def test_h100_resnet18_with_grad_under_reduce_overhead_names_no_grad_and_its_tried_gain():
    exp, facts = _gpu("resnet18_grad_ro")
    # torch's facts: compiled slower than eager with grad, faster under no_grad
    assert facts["compiled_ms"] > facts["eager_ms"] > facts["compiled_no_grad_ms"]
    first = exp.findings()[0]
    assert first.kind == "gpu.slower_than_eager"
    assert first.fix is not None and first.fix.kind == "no_grad"
    t = exp.call_timing
    assert t is not None
    shares = [float(p.split(" (")[0]) for p in first.impact.split(" = ")[1].split(" + ")]
    assert sum(shares) == pytest.approx(t.compiled_mean_ms or t.compiled_ms, rel=0.01)
    assert "training graph" in first.suggestion
    if first.tried is None:
        # recorded before the rule proposed this fix: nothing was tried on the H100 then
        assert "Not tried" in first.tried_note
    else:
        assert not first.tried.error and first.tried.after.ms is not None
        assert first.tried.before.ms is not None
        assert first.tried.after.ms < first.tried.before.ms


def test_h100_resnet18_under_no_grad_is_clean():
    exp, facts = _gpu("resnet18_nograd_ro")
    assert facts["compiled_ms"] < facts["eager_ms"]  # torch's fact: compiling paid off
    assert [f for f in exp.findings() if f.severity in ("problem", "warning")] == []


def test_h100_gpt2_training_step_gets_one_logging_finding_at_the_library_line():
    exp, facts = _gpu("gpt2_train_step")
    assert any("logging.Logger" in reason for reason in facts["graph_breaks"])
    logging = [f for f in exp.findings() if f.kind == "graph_break.logging"]
    assert len(logging) == 1 and exp.findings()[0] == logging[0]
    assert "modeling_utils.py" in logging[0].title and logging[0].chain
