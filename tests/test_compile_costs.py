"""Issue 35, points 1 and 2: where compile time went, and why a cache missed.

The committed logs under tests/data/traces/cache_config are what ``TORCH_TRACE`` wrote for
``benchmarks/cache_diff_kinds.py``'s program in two processes sharing one Inductor cache
folder, the second with ``torch._inductor.config.max_fusion_size = 32``
(``benchmarks/cache_diff_kinds.py --only config --keep DIR``; ``b``'s log without its
``chromium_event`` records, to keep it small).
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
import torch

import compiler
from compiler.advise.costs import time_phases
from compiler.costs.caches import cache_records, uncacheable

# torch's chromium spans a warm process runs again: Dynamo's, and the hashing of torch's
# own sources for the cache keys (codecache.py ``torch_key``, ``CacheBase.get_system``)
_WARM_SPANS = (
    "bytecode_tracing", "build_guards", "inductor_codecache_torch_key",
    "CacheBase.get_system.triton_key",
)  # fmt: skip
TRACES = Path(__file__).parent / "data" / "traces" / "cache_config"


@pytest.fixture(scope="module")
def runs() -> tuple[compiler.Exploration, compiler.Exploration]:
    return compiler.load_trace(TRACES / "a"), compiler.load_trace(TRACES / "b")


def _fx_payload(exp: compiler.Exploration) -> dict:
    return json.loads(exp.compiles[0].artifacts["fx_graph_cache_miss"])


def test_cache_diff_names_the_changed_inductor_config_value(runs):
    a, b = runs
    diff = compiler.cache_diff(a, b)
    # torch's own keys differ, and the one component whose hash differs is the config value
    assert _fx_payload(a)["key"] != _fx_payload(b)["key"]
    (row,) = diff.compiles
    assert row.states("b") == {"fx_graph": "miss", "aotautograd": "miss"}
    fx = [ch for ch in row.changes if ch.cache == "fx_graph"]
    assert [(ch.name, ch.kind) for ch in fx] == [("inductor_config[max_fusion_size]", "config")]
    default = torch._inductor.config.get_config_copy()["max_fusion_size"]
    assert (fx[0].a, fx[0].b) == (str(default), "32")
    assert "inductor_config[max_fusion_size]" in str(diff)
    # the same run against itself: the keys match, nothing changed
    assert not compiler.cache_diff(a, a).kinds()


def test_compile_time_phases_add_up_to_torchs_metrics(runs):
    a, _ = runs
    (c,) = a.compiles
    times = compiler.compile_time(a)
    (row,) = times.compiles
    total = c.metrics.entire_frame_seconds
    assert total and row.seconds == pytest.approx(total)
    assert sum(s for _, s in row.phases) == pytest.approx(total, rel=1e-6)
    # torch's chromium span of the whole frame agrees with its compilation_metrics
    (span,) = [p.seconds for p in c.metrics.phases if p.name == "entire_frame_compile"]
    assert span == pytest.approx(total, rel=0.05)
    # the C++ build sits inside torch's code_gen time, which sits inside Inductor's
    assert row.phase(time_phases.BUILD) <= (c.metrics.code_gen_seconds or 0) + 1e-6
    assert (c.metrics.code_gen_seconds or 0) <= (c.metrics.inductor_seconds or 0)
    assert row.phases == tuple(sorted(row.phases, key=lambda kv: -kv[1]))
    assert times.warm_seconds == pytest.approx(
        sum(p.seconds for p in c.metrics.phases if p.name in _WARM_SPANS)
    )


def test_an_outlier_compile_is_flagged_once(runs):
    a, _ = runs
    (real,) = a.compiles
    quick = replace(real.metrics, entire_frame_seconds=0.2, phases=())
    small = [
        replace(real, compile_id=replace(real.compile_id, frame_id=i), key=f"{i}/0", metrics=quick)
        for i in (1, 2, 3)
    ]
    exp = replace(a, compiles=(real, *small))
    outliers = [f for f in exp.findings() if f.kind == "compile_time.outlier"]
    assert len(outliers) == 1
    assert "0/0" in outliers[0].title and outliers[0].cause.startswith("compile_time.outlier|")


def test_report_shows_where_compile_time_went(runs):
    from explorer.report import summarize

    a, _ = runs
    text = summarize(a)
    section = text[text.index("## Where compile time went") :]
    assert f"{a.compiles[0].metrics.entire_frame_seconds:.2f} s in 1 compile" in section
    assert "| C++/Triton build |" in section


def test_metrics_pane_lists_the_compiles_phases(runs):
    from explorer.panes.costs.metrics import build_metrics

    a, _ = runs
    (c,) = a.compiles
    pane = build_metrics(a, str(c.key), "p")
    rows = [(k, v) for k, v in pane.summary if k.startswith("time: ")]
    assert rows[0][0] == "time: C++/Triton build"  # the biggest: torch built C++ kernels
    total = sum(float(v.split(" s")[0]) for _, v in rows)
    assert total == pytest.approx(c.metrics.entire_frame_seconds, abs=0.01)


@pytest.mark.slow
def test_live_capture_names_a_compile_torch_cannot_cache():
    def plain_pass(graph):  # a plain function: torch cannot hash it into the key
        return None

    def f(x):
        return torch.sin(x * 2.0) + 1

    with torch._inductor.config.patch(post_grad_custom_post_pass=plain_pass):
        exp = compiler.explore(f, torch.randn(8, 8), keep_caches=True)
    records = [r for c in exp.compiles for r in cache_records(c)]
    assert [r.state for r in records if r.cache == "fx_graph"] == ["bypass"]
    (u,) = [u for u in uncacheable(exp) if u.cache == "fx_graph"]
    # torch's words for it (codecache.py: "Unsupported post grad custom pass")
    assert "custom pass" in u.reason
    bypass = [f for f in exp.findings() if f.kind == "cache.bypass"]
    assert len(bypass) == 1 and u.reason in bypass[0].cause


def test_a_slow_frame_is_one_outlier_whichever_phase_led_each_compile(runs):
    # the dominant phase is a measurement: on torch 2.13 and 2.14.1 the same transformers
    # frame (Reformer's forward) led with "other" in one run and "Dynamo tracing" in the
    # other, so a key holding the phase made two causes of one slow frame
    a, _ = runs
    (real,) = a.compiles
    top = time_phases.compile_time(a).compiles[0].phases[0][0]
    assert top != time_phases.OTHER
    # the frame compiled again, as slow, with none of its time in a named phase ("other")
    again = replace(real, compile_id=replace(real.compile_id, frame_compile_id=1), key="0/1",
                    metrics=replace(real.metrics, phases=()))  # fmt: skip
    quick = replace(real.metrics, entire_frame_seconds=0.2, phases=())
    small = [
        replace(real, compile_id=replace(real.compile_id, frame_id=i), key=f"{i}/0", metrics=quick)
        for i in (1, 2, 3, 4)
    ]
    exp = replace(a, compiles=(real, again, *small))
    outliers = [f for f in exp.findings() if f.kind == "compile_time.outlier"]
    assert [f.cause for f in outliers] == [f"compile_time.outlier|{real.code_name}"], outliers
