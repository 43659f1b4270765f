"""Issue 35, point 2: the kernel caches (Triton's, the autotune cache, Inductor's C++ one)
in ``cache_diff``, kernel by kernel.

torch logs no key for them; the expectations come from torch's own records beside them:
its FX graph cache key (which changes when a kernel's source does), the kernels of its
output code, and on the GPU recordings its ``triton_kernel_info`` and counters.
"""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest
import torch

import compiler
from compiler.costs.caches import cache_records
from compiler.parse.words.kernel_keys import kernel_components

RECORDINGS = Path(__file__).parent / "data" / "recordings"


# two kernels around a library matmul: the constant lives in the first only. Two functions
# (two code objects): a closure over the constant would recompile one code object, and
# Dynamo's automatic dynamic would pass the changed float in as an input.
def _twice(x):
    a = torch.sin(x) * 2.0
    return torch.cos(a @ x) + 1


def _thrice(x):
    a = torch.sin(x) * 3.0
    return torch.cos(a @ x) + 1


@pytest.mark.slow  # two C++ builds: about 13 s on 2 cores
def test_two_runs_that_differ_in_one_constant_name_the_kernel_whose_key_changed():
    x = torch.randn(16, 16)
    a = compiler.explore(_twice, x, keep_caches=True, decompile=False)
    b = compiler.explore(_thrice, x, keep_caches=True, decompile=False)
    diff = compiler.cache_diff(a, b)
    (row,) = diff.compiles
    # torch's own FX graph keys differ: the program changed
    # (a hit or a miss, as earlier runs left torch's cache)
    ka, kb = ([r.key for r in cache_records(e.compiles[0]) if r.cache == "fx_graph"]
              for e in (a, b))  # fmt: skip
    assert ka and kb and ka != kb
    # the kernel whose source holds the constant (torch's output code says which) changed
    # in its body, as a constant; every other C++ kernel kept its key
    cpp = [k for k in b.compiles[0].kernels() if k.language == "cpp"]
    holding = {k.name for k in cpp if "3.0" in k.source}
    assert len(holding) == 1 and len(cpp) >= 2
    changed = {k.kernel for k in row.kernels if k.state == "key changed"}
    assert changed == holding
    (k,) = [k for k in row.kernels if k.kernel in holding]
    assert [(c.name, c.kind) for c in k.changes] == [("kernel body", "constant")]
    assert all(k.state == "same key" for k in row.kernels if k.kernel not in holding)
    text = str(diff)
    assert f"{next(iter(holding))}: C++ key changed" in text
    assert "derived from both Explorations" in text


def test_triton_kernel_parts_come_from_its_decorator_and_body():
    rec = compiler.Exploration.from_json((RECORDINGS / "cuda_mlp_block_timed.json").read_text())
    k = next(k for k in rec.compiles[0].kernels() if k.language == "triton")
    parts = {c.name: c.value for c in kernel_components("triton", k.source)}
    # the device Inductor compiled for, and the kernel's name, as torch wrote them
    assert "cc=90" in parts["triton_meta[device]"]
    assert parts["inductor_meta[kernel_name]"] == repr(k.name)
    assert parts["kernel body"].startswith("@triton.jit") or "def " + k.name in parts["kernel body"]
    # the same recording against itself: every kernel keeps its key, and the autotune
    # states shown are torch's (triton_kernel_info)
    (row,) = compiler.cache_diff(rec, rec).compiles or [None]
    assert row is not None
    assert {r.state for r in row.kernels} == {"same key"}
    states = {r.kernel: r.autotune[1] for r in row.kernels}
    assert states == {k.name: k.info.get("autotune_cache_state", "")
                      for k in rec.compiles[0].kernels() if k.language == "triton"}  # fmt: skip


def test_a_gpu_compile_shows_its_triton_build_from_torchs_span():
    # an H100 capture with a fresh cache (tests/data/recordings/README.md): torch timed the
    # Triton build in this process as ``async_compile.precompile``
    rec = compiler.Exploration.from_json((RECORDINGS / "cuda_pointwise.json").read_text())
    (c,) = rec.compiles
    spans = [p.seconds for p in c.metrics.phases if p.name == "async_compile.precompile"]
    assert spans
    (row,) = compiler.compile_time(rec).compiles
    assert row.phase("C++/Triton build") == pytest.approx(sum(spans))


# A 2-layer GPT-2 explored on an H200 (torch 2.11, Triton 3.6) in four fresh processes
# sharing one empty cache folder: scripts/record_compile_gpu.py (tests/data/recordings).
# tests/data/compile_metrics/gpu_gpt2_compile.json holds torch's compilation_metrics of each.
def _gpu(job: str) -> compiler.Exploration:
    raw = (RECORDINGS / f"gpu_gpt2_compile_{job}.json.gz").read_bytes()
    return compiler.Exploration.from_json(gzip.decompress(raw).decode())


def _metrics(job: str) -> dict:
    path = RECORDINGS.parent / "compile_metrics" / "gpu_gpt2_compile.json"
    (record,) = json.loads(path.read_text())[job]
    return record


def test_gpu_warm_process_loads_every_triton_kernel_from_the_fx_graph_entry():
    cold, warm = _gpu("cold"), _gpu("warm")
    (row,) = compiler.cache_diff(cold, warm).compiles
    # torch: the FX graph and AOTAutograd caches hit, and the entry's bundle named kernels
    assert _metrics("warm")["inductor_fx_local_cache_hit_count"] == 1
    assert row.states("b") == {"fx_graph": "hit", "aotautograd": "hit"}
    hit = json.loads(warm.compiles[0].artifacts["fx_graph_cache_hit"])
    bundled = set(re.findall(r"'(triton_\w+)'", hit["triton_bundler_meta"]))
    triton = {k.name for k in warm.compiles[0].kernels() if k.language == "triton"}
    assert bundled == triton
    assert warm.counters["inductor.triton_bundler_load_static_autotuner"] == len(triton)
    assert {r.kernel for r in row.kernels if r.state == "hit (FX bundle)"} == triton
    text = str(compiler.cache_diff(cold, warm))
    assert f"{len(triton)} hit (FX bundle)" in text
    aot = json.loads(warm.compiles[0].artifacts["aotautograd_cache_hit"])
    assert f"hit saved: {aot['time_saved_ms'] / 1000:.2f} s" in text


def test_gpu_rebuilt_kernels_keep_their_keys_and_triton_and_autotune_caches_hit():
    cold, nofx = _gpu("cold"), _gpu("nofx")
    (row,) = compiler.cache_diff(cold, nofx).compiles
    # derived: every Triton kernel's source, triton_meta and Triton version are the same
    assert row.kernels and {r.state for r in row.kernels} == {"same key"}
    # torch: building them again took a small part of the cold build (Triton's cache hit)
    cold_us, warm_us = _metrics("cold")["triton_compile_time_us"], _metrics("nofx")[
        "triton_compile_time_us"]  # fmt: skip
    assert warm_us < 0.05 * cold_us
    # torch: every kernel that missed the autotune cache cold hit it in the new process
    missed = {r.kernel for r in row.kernels if r.autotune[0] == "miss"}
    assert missed and all(r.autotune[1] == "hit" for r in row.kernels if r.kernel in missed)
    assert f"{len(missed)} miss -> hit" in str(compiler.cache_diff(cold, nofx))


def test_gpu_compile_time_shows_torchs_triton_build_and_autotuning():
    for job in ("cold", "autotune"):
        (row,) = compiler.compile_time(_gpu(job)).compiles
        m = _metrics(job)
        assert row.phase("C++/Triton build") == pytest.approx(
            m["triton_compile_time_us"] / 1e6, abs=0.01)  # fmt: skip
        assert row.phase("autotuning") == pytest.approx(
            (m.get("compile_time_autotune_time_us") or 0) / 1e6, abs=0.01)  # fmt: skip
        assert sum(s for _, s in row.phases) == pytest.approx(m["entire_frame_compile_time_s"])
    # max-autotune against the default: torch's key names the config, and its GEMM
    # autotunings ran only in the max-autotune process
    cold, tuned = _gpu("cold"), _gpu("autotune")
    diff = compiler.cache_diff(cold, tuned)
    assert "inductor_config[max_autotune]" in {ch.name for ch in diff.compiles[0].changes}
    (na, _), (nb, _) = diff.compiles[0].tuned
    assert (na, nb) == (0, tuned.counters["inductor.select_algorithm_autotune"])


def test_the_warm_cache_advice_quotes_torchs_own_figures_of_these_runs():
    from compiler.advise.costs.slow_compile import WARM_MEASURED

    cold, warm = (_metrics(j)["entire_frame_compile_time_s"] for j in ("cold", "warm"))
    assert f"{cold:.1f} s cold and {warm:.1f} s in a second process" in WARM_MEASURED
    cpu = [_load_cpu(j).compiles[0].metrics.entire_frame_seconds for j in ("cold", "warm")]
    assert f"({cpu[0]:.1f} s and {cpu[1]:.1f} s on the CPU" in WARM_MEASURED


def _load_cpu(job: str) -> compiler.Exploration:
    raw = (RECORDINGS / f"cpu_gpt2_compile_{job}.json.gz").read_bytes()
    return compiler.Exploration.from_json(gzip.decompress(raw).decode())
