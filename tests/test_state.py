"""Capture leaves torch as it found it: loggers, configs, hooks; also when code raises."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import programs
import pytest
import torch
from conftest import torch_state

import compiler


def test_explore_restores_loggers_configs_and_hooks():
    before = torch_state()
    compiler.explore(programs.pointwise, torch.randn(3), backend="aot_eager")
    assert torch_state() == before


def test_explore_restores_state_when_the_target_raises():
    before = torch_state()

    def broken(x):
        raise RuntimeError("user bug")

    with pytest.raises(compiler.ExploreError):
        compiler.explore(broken, torch.randn(3), backend="eager")
    assert torch_state() == before


def test_recording_restores_state_when_the_block_raises():
    before = torch_state()
    with pytest.raises(KeyError), compiler.recording():
        raise KeyError("inside the block")
    assert torch_state() == before


def test_user_config_values_survive_capture():
    import torch._inductor.config as ic

    with ic.patch({"fx_graph_cache": True, "trace.provenance_tracking_level": 0}):
        compiler.explore(programs.pointwise, torch.randn(3), backend="eager")
        assert ic.fx_graph_cache is True
        assert ic.trace.provenance_tracking_level == 0


def _scaled_tanh(x):
    return torch.tanh(x) * 3 + x


def test_plain_compiles_before_and_after_capture_of_the_same_code_keep_working():
    """The user's own compiles, FX graph cache on (their default), around two captures."""
    import torch._inductor.config as ic

    x = torch.randn(64)
    expected = _scaled_tanh(x)
    before = torch_state()
    with ic.patch({"fx_graph_cache": True}):
        for _ in range(2):
            torch.testing.assert_close(torch.compile(_scaled_tanh)(x), expected)
            torch.compiler.reset()
            exp = compiler.explore(_scaled_tanh, x)
            kernels = [k for k in exp.compiles[0].kernels() if k.language == "cpp"]
            assert kernels and all(k.source for k in kernels), exp.compiles[0].kernels()
            torch.compiler.reset()
            torch.testing.assert_close(torch.compile(_scaled_tanh)(x), expected)
            torch.compiler.reset()
    assert torch_state() == before


_USER_SCRIPT = textwrap.dedent(
    """
    import os, sys, torch, compiler, programs
    exp = compiler.explore(programs.pointwise, torch.randn(4), backend="aot_eager")
    assert exp.compiles and "dynamo_output_graph" in exp.compiles[0].graphs, exp
    print("COMPILES", len(exp.compiles))
    """
)


def test_capture_works_with_user_torch_logs_and_torch_trace(tmp_path, subprocess_env):
    env = dict(
        subprocess_env, TORCH_LOGS="graph_breaks,recompiles", TORCH_TRACE=str(tmp_path / "trace")
    )
    proc = subprocess.run([sys.executable, "-c", _USER_SCRIPT], env=env, capture_output=True,
                          text=True, timeout=300)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "COMPILES 1" in proc.stdout
    # the user's own TORCH_TRACE still received the compile
    logs = list((tmp_path / "trace").glob("*.log"))
    assert logs and "dynamo_output_graph" in logs[0].read_text()
    # and our capture did not leak Inductor's fusion IR into the user's stderr
    assert "AFTER FUSION" not in proc.stderr
