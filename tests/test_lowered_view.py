"""The Triton lowering pane: TTIR, TTGIR, LLVM IR, PTX and SASS linked to the kernel source."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from conftest import built_view

import compiler
from compiler.gpu.lowered_lines import with_source_lines
from compiler.model import Derived, LoweredStage
from explorer.panes.kernels.lowering import NO_LINES_SASS
from explorer.panes.labels import STAGE_LABELS

RECORDING = Path(__file__).parent / "data" / "recordings" / "cuda_pointwise.json"
KERNEL = "triton_poi_fused_add_mul_relu_sin_0"
PANE_ID = f"inference/{KERNEL}/lowered"


@pytest.fixture(scope="module")
def exp() -> compiler.Exploration:
    return compiler.Exploration.from_json(RECORDING.read_text())


def _with_kernel(exp: compiler.Exploration, **changes) -> compiler.Exploration:
    """The recording with its one Triton kernel changed."""
    (c,) = exp.compiles
    (oc,) = c.output_code
    (k,) = oc.kernels
    # the lowered-line maps are the compiler's: derive them again for the changed kernel
    changed = with_source_lines(dataclasses.replace(k, **changes), Derived())
    oc = dataclasses.replace(oc, kernels=(changed,))
    return dataclasses.replace(exp, compiles=(dataclasses.replace(c, output_code=(oc,)),))


def _lowering(view: dict) -> dict:
    panes = view["compiles"][0]["panes"]
    found = [p for p in panes if p["id"] == PANE_ID]
    assert found, f"no pane {PANE_ID}; panes: {[p['id'] for p in panes]}"
    return found[0]


def _joined(text: str) -> list[str]:
    return text.split("\n")


def _stage(variant: dict, name: str) -> dict:
    return next(s for s in variant["stages"] if s["stage"] == name)


def _source_line(pane: dict, text: str) -> int:
    """1-based line of the kernel source holding ``text``."""
    return next(i for i, line in enumerate(_joined(pane["source"]), 1) if text in line)


def _mapped(stage: dict, text: str, after: str = "") -> int | None:
    """The kernel-source line of the first stage line holding ``text`` (after ``after``)."""
    lines = _joined(stage["text"])
    start = next(i for i, line in enumerate(lines) if after in line) if after else 0
    i = next(i for i in range(start, len(lines)) if text in lines[i])
    return stage["source_line"][i]


def test_the_triton_kernel_gets_a_lowering_pane_after_its_output_code(exp):
    view = built_view(exp)
    ids = [p["id"] for p in view["compiles"][0]["panes"]]
    assert ids.index(PANE_ID) == ids.index("inference/inductor_output_code") + 1
    pane = _lowering(view)
    assert pane["kind"] == "triton_lowering"
    assert pane["label"] == f"{STAGE_LABELS['triton_lowering']} · {KERNEL}"
    assert pane["kernel"] == f"inference/{KERNEL}"
    assert _joined(pane["source"]) == exp.compiles[0].kernels()[0].source.split("\n")
    assert dict(pane["info"])["autotune cache"] == "miss"
    json.dumps(view)


def test_the_chosen_variant_is_the_default_and_keeps_its_config_and_target(exp):
    pane = _lowering(built_view(exp))
    assert len(pane["variants"]) == 2
    chosen = pane["variants"][pane["default_variant"]]
    assert chosen["chosen"] is True
    assert chosen["config"]["XBLOCK"] == "256"
    assert chosen["target"] == "cuda sm90 warp32"
    assert [s["stage"] for s in chosen["stages"]] == ["ttir", "ttgir", "llir", "ptx", "sass"]
    assert [s["label"] for s in chosen["stages"]] == ["TTIR", "TTGIR", "LLVM IR", "PTX", "SASS"]


def test_every_stage_of_every_variant_reassembles_to_the_exact_text(exp):
    pane = _lowering(built_view(exp))
    kernel = exp.compiles[0].kernels()[0]
    for v, variant in zip(kernel.variants, pane["variants"], strict=True):
        for s in v.stages:
            shown = _stage(variant, s.stage)
            assert _joined(shown["text"]) == s.text.split("\n"), (v.hash, s.stage)
            assert len(shown["source_line"]) == len(_joined(shown["text"]))
            assert shown["language"] == {"ttir": "mlir", "ttgir": "mlir", "llir": "llvm"}.get(
                s.stage, s.stage
            )


def test_module_line_numbers_are_one_more_than_kernel_source_lines(exp):
    """The locations name the kernel's module file, which Inductor writes from the
    string ``'''\\n<source>'''``: one leading newline that ``Kernel.source`` lacks."""
    pane = _lowering(built_view(exp))
    chosen = pane["variants"][pane["default_variant"]]
    def_line = _source_line(pane, f"def {KERNEL}(")
    assert pane["def_line"] == def_line == 17
    ttir = _stage(chosen, "ttir")
    assert _mapped(ttir, "tt.func public") == def_line
    assert f'.py":{def_line + 1}:0)' in _joined(ttir["text"])[0]


def test_lowered_lines_map_to_the_kernel_source_line_they_came_from(exp):
    pane = _lowering(built_view(exp))
    load = _source_line(pane, "tl.load(")
    store = _source_line(pane, "tl.store(")
    maximum = _source_line(pane, "triton_helpers.maximum(")
    for variant in pane["variants"]:
        ttir, ttgir = _stage(variant, "ttir"), _stage(variant, "ttgir")
        assert _mapped(ttir, "tt.load") == load
        assert _mapped(ttgir, "tt.load") == load
        assert _mapped(ttir, "tt.store") == store
        # loc(callsite(triton_helpers.py:119 at <module>:31)): the call in the kernel
        assert _mapped(ttir, "arith.select") == maximum
        assert _mapped(ttir, "loc(unknown)") is None
        llir = _stage(variant, "llir")
        assert _mapped(llir, "ld.global") == load
        assert _mapped(llir, "st.global") == store
        ptx = _stage(variant, "ptx")
        # `.loc 1 24 35` (module line 24 = source line 23) applies to the instructions
        # after it, up to the next .loc
        assert _mapped(ptx, "ld.global", after=f".loc\t1 {load + 1} ") == load
        assert _mapped(ptx, "st.global") == store
        # .loc 2 116 15 in triton_helpers.py, inlined at the maximum(...) call
        assert _mapped(ptx, ".loc\t2 116") == maximum
        assert _mapped(ptx, ".param .u64") is None  # before the first .loc
        sass = _stage(variant, "sass")
        assert set(sass["source_line"]) == {None}
        assert sass["note"] == NO_LINES_SASS


def test_the_offset_is_measured_from_the_def_line_not_assumed(exp):
    kernel = exp.compiles[0].kernels()[0]
    view = built_view(_with_kernel(exp, source="# one\n# two\n" + kernel.source))
    pane = _lowering(view)
    chosen = pane["variants"][pane["default_variant"]]
    assert _mapped(_stage(chosen, "ttir"), "tt.load") == _source_line(pane, "tl.load(")
    assert _mapped(_stage(chosen, "ptx"), "st.global") == _source_line(pane, "tl.store(")


def test_inline_fused_and_named_mlir_locations_resolve_to_the_kernel_module():
    from compiler.parse.triton.stage_locations import _mlir

    lines = [
        '#loc = loc("/k/m.py":5:0)',
        '#loc1 = loc("/other/helpers.py":9:1)',
        '%a = arith.addf %x, %y : f32 loc("/k/m.py":7:3)',
        '%b = arith.mulf %a, %a : f32 loc(fused[#loc1, "b"("/k/m.py":8:2)])',
        '%c = tt.call @f() : () -> f32 loc(callsite(#loc1 at "/k/m.py":9:4))',
        '%d = arith.constant 0 : i32 loc("d")',
    ]
    per_line, func = _mlir(lines)
    assert func is None  # no tt.func here
    assert per_line[2] == [("/k/m.py", 7)]
    assert per_line[3] == [("/other/helpers.py", 9), ("/k/m.py", 8)]
    assert per_line[4] == [("/other/helpers.py", 9), ("/k/m.py", 9)]
    assert per_line[5] == []


def test_a_stage_that_failed_shows_its_error_instead_of_text(exp):
    kernel = exp.compiles[0].kernels()[0]
    message = "cuobjdump -sass failed: cuobjdump not found"
    broken = tuple(
        dataclasses.replace(
            v,
            stages=tuple(
                LoweredStage(stage="sass", error=message) if s.stage == "sass" else s
                for s in v.stages
            ),
        )
        for v in kernel.variants
    )
    pane = _lowering(built_view(_with_kernel(exp, variants=broken)))
    sass = _stage(pane["variants"][pane["default_variant"]], "sass")
    assert sass["error"] == message
    assert _joined(sass["text"]) == [""]
    assert _stage(pane["variants"][0], "ptx")["error"] == ""


def test_a_triton_kernel_without_variants_gets_no_lowering_pane(exp):
    view = built_view(_with_kernel(exp, variants=()))
    assert not [p for p in view["compiles"][0]["panes"] if p["kind"] == "triton_lowering"]


def test_line_maps_are_made_on_first_read_and_equal_the_recorded_ones(exp):
    (k,) = exp.compiles[0].output_code[0].kernels
    recorded = [[s.source_lines for s in v.stages] for v in k.variants]
    assert any(any(n is not None for n in lines) for v in recorded for lines in v)
    bare = dataclasses.replace(
        k,
        variants=tuple(
            dataclasses.replace(
                v, stages=tuple(dataclasses.replace(s, derived=None) for s in v.stages)
            )
            for v in k.variants
        ),
    )
    assert all(s.source_lines == () for v in bare.variants for s in v.stages)
    cache = Derived()
    mapped = with_source_lines(bare, cache)
    assert not cache.counts, "mapping waits for a reader"
    assert [[s.source_lines for s in v.stages] for v in mapped.variants] == recorded
    stages = sum(len(v.stages) for v in k.variants)
    assert cache.counts["lowered_lines"] == stages and not cache.pending()
    assert mapped == k
