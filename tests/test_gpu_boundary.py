"""The boundary on CUDA (issue 42): the program that broke the explorer on an H200, GPT-2
``generate()`` with a compiled forward under ``measure=True`` (an ``IndexError`` from linking
the profile reached the user), ends as a plain run ends. Whatever of the explorer's own work
fails is an error with its stage and traceback, printed for the coordinator's report.

Run on the GPU machine: ``pytest -m gpu tests/test_gpu_boundary.py -s``.
"""

from __future__ import annotations

import pytest
import torch

import compiler

pytestmark = pytest.mark.gpu

transformers = pytest.importorskip("transformers")


def _generate(calls: list[int]):
    torch.manual_seed(0)
    config = transformers.GPT2Config(n_layer=2, n_embd=128, n_head=4, vocab_size=512,
                                      n_positions=128, bos_token_id=0, eos_token_id=0)  # fmt: skip
    model = transformers.GPT2LMHeadModel(config).cuda().eval()
    model.forward = torch.compile(model.forward)
    ids = torch.randint(1, 512, (1, 12), device="cuda")

    def run():
        calls.append(1)
        with torch.no_grad():
            return model.generate(ids, max_new_tokens=8, do_sample=False, pad_token_id=0)

    return run


def test_generate_with_a_compiled_forward_under_measure_ends_as_a_plain_run():
    plain_calls: list[int] = []
    plain = _generate(plain_calls)()
    calls: list[int] = []
    run = _generate(calls)
    exp = compiler.explore(run, wrap=False, measure=True)
    assert calls == [1], "measure=True called generate() again"
    assert exp.compiles
    ours = [e for e in exp.errors if e.traceback]
    for e in ours:  # for the report: what the boundary caught on this machine
        print(f"boundary caught [{e.stage}] {e.message}\n{e.traceback[-1500:]}")
    assert all(e.stage and e.message.startswith("the explorer's own") for e in ours)
    # the run's own output is the plain run's: the same tokens (greedy decoding)
    again: list[int] = []
    assert torch.equal(_generate(again)(), plain)
