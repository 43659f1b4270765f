"""Schema 2.1's compact JSON: the same Exploration back, in a fraction of the bytes."""

from __future__ import annotations

import dataclasses
import itertools
import json
import types
import typing
from pathlib import Path

import pytest
import torch

import compiler
from compiler import model
from compiler.model import SCHEMA_VERSION
from compiler.store import compact

ROOT = Path(__file__).resolve().parent.parent
RECORDINGS = sorted(
    p
    for p in (
        *(ROOT / "notebooks/recordings").glob("*.json"),
        *(ROOT / "tests/data/recordings").glob("*.json"),
    )
    if p.name != "environment.json"
)
REDUCE_OVERHEAD_2_0 = ROOT / "tests/data/recordings/cuda_reduce_overhead_2_0.json"


def _load(path: Path) -> compiler.Exploration:
    return compiler.Exploration.from_json(path.read_text())


@pytest.mark.parametrize("path", RECORDINGS, ids=lambda p: p.name)
def test_every_recording_comes_back_equal_from_the_compact_form_in_under_half_the_bytes(path):
    exp = _load(path)
    small = exp.to_json()
    plain = exp.to_json(compact=False)
    assert json.loads(small)["schema_version"] == list(SCHEMA_VERSION)
    assert compiler.Exploration.from_json(small) == exp
    assert compiler.Exploration.from_json(plain) == exp
    assert len(small.encode()) * 2 < len(plain.encode())


def test_a_schema_2_0_file_loads_as_its_schema_1_original_and_renders_the_same():
    from conftest import built_view

    text = REDUCE_OVERHEAD_2_0.read_text()
    assert text.startswith('{"schema_version": [2, 0]')
    old = compiler.Exploration.from_json(text)
    assert old.unknown_keys == ()
    again = compiler.Exploration.from_json(old.to_json())
    assert again == old
    assert built_view(again) == built_view(old)


def test_fused_node_texts_are_stored_once_as_spans_of_the_post_fusion_text():
    exp = _load(ROOT / "notebooks/recordings/transformer_block.json")
    doc = json.loads(exp.to_json())
    (out,) = exp.compiles[0].output_code
    assert out.schedule is not None and len(out.schedule.fused) > 5
    written = doc["exploration"]["compiles"][0]["output_code"][0]["schedule"]["fused"]
    spans = [f["text"] for f in compact.Unpacker(doc["strings"]).items(written)]
    assert all(isinstance(s, list) for s in spans)
    assert all(a[1] <= b[0] for a, b in itertools.pairwise(spans))  # in order, no overlap
    back = compiler.Exploration.from_json(json.dumps(doc))
    assert back.compiles[0].output_code[0].schedule == out.schedule


def _with_kernel_copied(exp: compiler.Exploration) -> tuple[compiler.Exploration, str]:
    """``exp`` with its first Triton kernel's variants copied onto a second kernel."""
    c = exp.compiles[0]
    (out, *rest) = c.output_code
    triton = next(k for k in out.kernels if k.variants)
    other = next(k for k in out.kernels if k is not triton)
    kernels = tuple(
        dataclasses.replace(k, variants=triton.variants) if k is other else k for k in out.kernels
    )
    out = dataclasses.replace(out, kernels=kernels)
    ptx = next(s.text for v in triton.variants for s in v.stages if s.stage == "ptx" and s.text)
    c = dataclasses.replace(c, output_code=(out, *rest))
    return dataclasses.replace(exp, compiles=(c, *exp.compiles[1:])), ptx


def test_a_stage_text_two_kernels_share_is_written_once():
    exp, ptx = _with_kernel_copied(_load(ROOT / "notebooks/recordings/training_step.json"))
    doc = json.loads(exp.to_json())
    blob = compact.compress(ptx)
    assert isinstance(blob, dict)  # PTX compresses
    assert doc["strings"].count(blob) == 1
    assert json.dumps(doc["exploration"]).count(blob["zlib"]) == 0
    assert compiler.Exploration.from_json(json.dumps(doc)) == exp


def test_guards_are_written_as_their_tree_and_read_back_as_its_list():
    exp = compiler.explore(lambda x: x.sin() + 1, torch.randn(4), backend="eager")
    (c,) = exp.compiles
    assert c.guards is not None and c.guards.guards
    doc = json.loads(exp.to_json())
    assert "guards" not in doc["exploration"]["compiles"][0]["guards"]
    back = compiler.Exploration.from_json(json.dumps(doc))
    assert back.compiles[0].guards.guards == c.guards.guards


def test_a_damaged_string_table_is_a_clear_error():
    exp = compiler.explore(lambda x: x.cos(), torch.randn(4), backend="eager")
    doc = json.loads(exp.to_json())
    doc["strings"] = []
    with pytest.raises(
        compiler.TraceFormatError,
        match=r"a compact Exploration JSON document is damaged: string index \d+ is outside "
        r"the table of 0\. Write it again\.",
    ):
        compiler.Exploration.from_json(json.dumps(doc))


def test_compact_json_keeps_strings_that_look_like_its_own_markers():
    tricky = ("0", "12", '{"zlib": "eJwDAAAAAAE="}', "[0, 5]", "x" * 2000, "x" * 2000)
    exp = compiler.Exploration(source="live", target="t", notes=tricky)
    assert compiler.Exploration.from_json(exp.to_json()) == exp


def _leaf_types(tp: object) -> set[object]:
    args = typing.get_args(tp)
    if args:
        return {leaf for a in args if a is not Ellipsis for leaf in _leaf_types(a)}
    return {tp}


def test_every_model_field_is_typed_closely_enough_for_the_compact_reader():
    # the reader finds interned and compressed strings through the type hints: a field
    # typed Any (or list, object) would get an index where its string was written
    for cls in vars(model).values():
        if not (isinstance(cls, type) and dataclasses.is_dataclass(cls)):
            continue
        hints = typing.get_type_hints(cls, vars(model))
        # not the ``derived`` handle: the file never holds it
        for name, tp in ((f.name, hints[f.name]) for f in dataclasses.fields(cls)
                         if not f.metadata.get("derived")):  # fmt: skip
            for leaf in _leaf_types(tp):
                ok = leaf in (str, int, float, bool, type(None)) or (
                    isinstance(leaf, type) and dataclasses.is_dataclass(leaf)
                )
                assert ok, f"{cls.__name__}.{name}: {tp}"
            outer = typing.get_origin(tp)
            assert outer in (None, tuple, dict, typing.Union, types.UnionType), (cls, name, tp)


def test_a_fused_node_text_not_in_the_post_fusion_text_is_written_whole():
    exp = _load(ROOT / "notebooks/recordings/pointwise.json")
    c = exp.compiles[0]
    (out,) = c.output_code
    assert out.schedule is not None and out.schedule.fused
    node = dataclasses.replace(out.schedule.fused[0], text="op0: edited by hand")
    schedule = dataclasses.replace(out.schedule, fused=(node, *out.schedule.fused[1:]))
    out = dataclasses.replace(out, schedule=schedule)
    exp = dataclasses.replace(exp, compiles=(dataclasses.replace(c, output_code=(out,)),))
    doc = json.loads(exp.to_json())
    written = doc["exploration"]["compiles"][0]["output_code"][0]["schedule"]["fused"]
    assert written[0]["text"] == "op0: edited by hand"
    assert compiler.Exploration.from_json(json.dumps(doc)) == exp
