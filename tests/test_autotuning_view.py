"""The Autotuning pane (max-autotune candidates and their times) and the kernel grid."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest
from conftest import built_view
from test_export import ARTIFACTS

import compiler
from compiler.link.autotuning import chosen_kernel, parse_config
from explorer.export import to_html
from explorer.panes.labels import STAGE_LABELS
from explorer.panes.runtime import config_text

RECORDINGS = Path(__file__).resolve().parent.parent / "notebooks" / "recordings"
# the candidates and times pinned below are those of this capture (notebooks/recordings/
# holds a newer recording of the same program, with call_timing)
AUTOTUNED = (
    Path(__file__).resolve().parent / "data" / "recordings" / "cuda_matmul_max_autotune.json"
)
POINTWISE = RECORDINGS / "pointwise.json"
TEMPLATE = "inference/triton_tem_fused_mm_relu_0"


@pytest.fixture(scope="module")
def exp() -> compiler.Exploration:
    return compiler.Exploration.from_json(AUTOTUNED.read_text())


def _panes(view: dict) -> dict[str, dict]:
    return {p["id"]: p for p in view["compiles"][0]["panes"]}


def _with_autotuning(exp: compiler.Exploration, change) -> compiler.Exploration:
    (c,) = exp.compiles
    (a,) = c.autotuning
    a = change(a)
    # the winner's kernel is the compiler's fact: derive it again for the changed record
    a = dataclasses.replace(a, chosen_kernel=chosen_kernel(a, c.kernels()))
    c = dataclasses.replace(c, autotuning=(a,))
    return dataclasses.replace(exp, compiles=(c,))


def test_autotuning_pane_lists_candidates_fastest_first_with_the_models_numbers(exp):
    view = built_view(exp)
    panes = _panes(view)
    ids = list(panes)
    # a compile-time choice: in the Inductor group, right before the output code
    assert ids.index("autotuning") == ids.index("inference/inductor_output_code") - 1
    assert ids[ids.index("autotuning") - 1] == "inference/ir_post_fusion"
    pane = panes["autotuning"]
    assert pane["label"] == STAGE_LABELS["autotuning"] == "Autotuning"
    assert STAGE_LABELS[pane["group"]] == "Inductor" and pane["kind"] == "autotuning"
    ((a,),) = [c.autotuning for c in exp.compiles]
    (op,) = pane["ops"]
    assert (op["op"], op["input_sizes"], op["chosen"]) == ("mm", ["1024x1024"] * 2, "triton_mm_14")
    rows = op["rows"]
    assert len(rows) == len(a.choices) == 17
    fastest_first = sorted(a.choices, key=lambda ch: ch.ms)
    assert [r["name"] for r in rows] == [ch.name for ch in fastest_first]
    assert [r["ms"] for r in rows] == [ch.ms for ch in fastest_first]
    assert [r["name"] for r in rows if r["chosen"]] == ["triton_mm_14"] == [rows[0]["name"]]
    fastest, slowest = fastest_first[0].ms, fastest_first[-1].ms
    assert (op["fastest_ms"], op["slowest_ms"]) == (fastest, slowest)
    for r, ch in zip(rows, fastest_first, strict=True):
        assert r["ms_text"] == f"{ch.ms:.4f}"
        assert r["relative"] == pytest.approx(ch.ms / fastest)
        assert r["description"] == ch.description
    assert rows[0]["ms_text"] == "0.0585" and rows[0]["relative_text"] == "1.00x"
    assert rows[1]["relative_text"] == "1.02x slower"
    aten = next(r for r in rows if r["name"] == "mm")
    assert (aten["kind"], aten["config"], aten["relative_text"]) == ("extern", [], "1.06x slower")
    # what all Triton candidates share is said once; each row shows what differs
    assert op["common_text"] == (
        "ACC_TYPE=tl.float32 · ALLOW_TF32=False · EVEN_K=True · GROUP_M=8 · USE_FAST_ACCUM=False"
    )
    assert rows[0]["config_text"] == "BLOCK 128x64x32 (MxNxK) · 4 stages · 8 warps"
    assert next(r for r in rows if r["name"] == "triton_mm_0")["config_text"] == (
        "BLOCK 32x32x16 (MxNxK) · 1 stage · 2 warps"
    )
    assert dict(rows[0]["config"]) == {
        "ACC_TYPE": "tl.float32",
        "ALLOW_TF32": "False",
        "BLOCK_K": "32",
        "BLOCK_M": "128",
        "BLOCK_N": "64",
        "EVEN_K": "True",
        "GROUP_M": "8",
        "USE_FAST_ACCUM": "False",
        "num_stages": "4",
        "num_warps": "8",
    }
    # triton_mm_14's config is the template kernel's constexprs, stages and warps
    assert op["kernel"] == rows[0]["kernel"] == TEMPLATE
    assert all(r["kernel"] is None for r in rows[1:])
    assert TEMPLATE in {k["id"] for k in panes["inference/inductor_output_code"]["kernels"]}
    assert json.loads(json.dumps(view)) == view


def test_a_chosen_candidate_is_linked_only_when_a_kernel_is_proven_to_run_it(exp):
    # triton_mm_10 (same stages and warps, other block sizes) matches no kernel
    other = _with_autotuning(exp, lambda a: dataclasses.replace(a, chosen="triton_mm_10"))
    (op,) = _panes(built_view(other))["autotuning"]["ops"]
    assert op["kernel"] is None
    assert [r["name"] for r in op["rows"] if r["chosen"]] == ["triton_mm_10"]
    assert all(r["kernel"] is None for r in op["rows"])
    # the aten choice links to its extern kernel only if the output code calls it
    aten = _with_autotuning(exp, lambda a: dataclasses.replace(a, chosen="mm"))
    (op,) = _panes(built_view(aten))["autotuning"]["ops"]
    assert op["kernel"] is None


def test_untimed_candidates_go_last_and_say_so(exp):
    def fail_one(a):
        choices = tuple(
            dataclasses.replace(ch, ms=float("inf")) if ch.name == "triton_mm_10" else ch
            for ch in a.choices
        )
        return dataclasses.replace(a, choices=choices)

    view = built_view(_with_autotuning(exp, fail_one))
    (op,) = _panes(view)["autotuning"]["ops"]
    last = op["rows"][-1]
    assert (last["name"], last["ms"], last["ms_text"], last["relative_text"]) == (
        "triton_mm_10",
        None,
        "-",
        "not timed",
    )
    assert json.loads(json.dumps(view)) == view


def test_descriptions_split_into_a_readable_config():
    pairs = parse_config("KERNEL=(3, 3), STRIDE=(1, 1), ALLOW_TF32=True, num_stages=2, num_warps=4")
    assert pairs == [
        ("KERNEL", "(3, 3)"),
        ("STRIDE", "(1, 1)"),
        ("ALLOW_TF32", "True"),
        ("num_stages", "2"),
        ("num_warps", "4"),
    ]
    assert config_text(pairs) == (
        "2 stages · 4 warps · KERNEL=(3, 3) · STRIDE=(1, 1) · ALLOW_TF32=True"
    )
    assert parse_config("") == [] and parse_config("cublas gemm") == []


def test_no_autotuning_pane_without_autotuning_records(exp):
    pointwise = compiler.Exploration.from_json(POINTWISE.read_text())
    assert "autotuning" not in _panes(built_view(pointwise))
    stripped = dataclasses.replace(
        exp, compiles=tuple(dataclasses.replace(c, autotuning=()) for c in exp.compiles)
    )
    assert "autotuning" not in _panes(built_view(stripped))


def test_kernel_details_carry_the_launch_grid():
    pointwise = compiler.Exploration.from_json(POINTWISE.read_text())
    (k,) = pointwise.compiles[0].kernels()
    assert k.grid == (8192,)
    panes = _panes(built_view(pointwise))
    (kernel,) = panes["inference/inductor_output_code"]["kernels"]
    assert kernel["grid"] == [8192]
    # ... and the Triton lowering pane's facts about the kernel
    assert ["grid", "(8192,)"] in panes[f"inference/{k.name}/lowered"]["info"]


def test_exported_autotuning_pane_shows_17_candidates_with_bars_and_the_chosen_one(
    open_page,
    tmp_path,
    exp,
):
    from playwright.sync_api import expect

    path = tmp_path / "matmul_max_autotune.html"
    to_html(exp, path)
    page, problems = open_page(path)
    page.locator('.tce-tab[data-stage="autotuning"]').click()
    expect(page.locator(".tce-pane-title")).to_contain_text("Autotuning")
    expect(page.locator(".tce-at .tce-block-title, .tce-block-title").first).to_contain_text(
        "mm · inputs 1024x1024, 1024x1024 · 17 candidates"
    )
    rows = page.locator(".tce-at .tce-at-row")
    expect(rows).to_have_count(17)
    for i in range(17):
        expect(rows.nth(i)).to_be_visible()
    chosen = page.locator(".tce-at-row.tce-at-chosen")
    expect(chosen).to_have_count(1)
    expect(chosen).to_have_attribute("data-choice", "triton_mm_14")
    expect(rows.nth(0)).to_have_class(re.compile(r"\btce-at-chosen\b"))
    expect(chosen.locator(".tce-chosen")).to_have_text("chosen")
    expect(chosen.locator(".tce-at-rel")).to_have_text("1.00x")
    expect(rows.nth(2)).to_contain_text("mm")
    expect(rows.nth(2)).to_contain_text("library call")
    expect(page.locator(".tce-at-common")).to_contain_text("ALLOW_TF32=False")
    widths = [
        rows.nth(i).locator(".tce-kt-fill").bounding_box()["width"] for i in range(rows.count())
    ]
    track = rows.nth(16).locator(".tce-kt-track").bounding_box()["width"]
    assert all(w > 1 for w in widths), widths
    assert widths == sorted(widths)  # fastest first, so the bars grow
    assert widths[-1] == pytest.approx(track, abs=1)  # the slowest fills its track
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "autotuning.png"))
    page.emulate_media(color_scheme="dark")
    page.screenshot(path=str(ARTIFACTS / "autotuning_dark.png"))
    page.emulate_media(color_scheme="light")
    # the chosen candidate's name selects the template kernel that runs it
    chosen.locator("button.tce-at-name").click()
    expect(page.locator(".tce-tab.tce-current")).to_have_attribute(
        "data-stage", "inference/inductor_output_code"
    )
    expect(page.locator(".tce-details")).to_contain_text("kernel triton_tem_fused_mm_relu_0")
    assert page.locator(".tce-at-row button.tce-at-name").count() == 0  # pane was left
    assert problems == []
