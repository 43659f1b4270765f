"""The data model: compile ids in torch's own string form, lossless JSON, schema listing."""

from __future__ import annotations

import dataclasses
import json
import re
import typing
from pathlib import Path

import programs
import pytest
import torch
from torch._guards import CompileId as TorchCompileId

import compiler
from compiler import model
from compiler.store.serialize import KEPT_PROPERTIES

SCHEMA_FILE = Path(__file__).parent / "data" / "schema.json"


@pytest.mark.parametrize("text", ["0/0", "3/12", "0/1_2", "!0", "!2/1/0", "!1/4/5_1"])
def test_compile_id_round_trips_through_its_string_form(text):
    assert str(compiler.CompileId.from_string(text)) == text


@pytest.mark.parametrize("text", ["0/0", "7/3", "!1/2/3"])
def test_compile_id_string_form_matches_torchs(text):
    theirs = TorchCompileId.from_string(text)
    ours = compiler.CompileId.from_string(text)
    assert str(theirs) == str(ours)
    assert (ours.frame_id, ours.frame_compile_id, ours.compiled_autograd_id) == (
        theirs.frame_id, theirs.frame_compile_id, theirs.compiled_autograd_id)  # fmt: skip


def test_bad_compile_id_is_a_value_error():
    with pytest.raises(ValueError, match=r"not a torch compile id: 'x/1'"):
        compiler.CompileId.from_string("x/1")


def test_live_capture_round_trips_through_json():
    exp = compiler.explore(programs.with_print, torch.randn(3), backend="aot_eager")
    again = compiler.Exploration.from_json(exp.to_json())
    assert again == exp
    assert isinstance(again.compiles[0].graphs["dynamo_output_graph"].nodes, tuple)


def test_trace_fixtures_round_trip_through_json():
    for path in (Path(__file__).parent / "data" / "traces").iterdir():
        if path.name.endswith(".py"):
            continue
        exp = compiler.load_trace(path)
        assert compiler.Exploration.from_json(exp.to_json()) == exp, path


def test_unknown_keys_are_kept_in_a_list_not_dropped_silently():
    exp = compiler.explore(programs.pointwise, torch.randn(3), backend="eager")
    doc = json.loads(exp.to_json())
    doc["exploration"]["from_the_future"] = 1
    doc["exploration"]["compiles"][0]["shiny_new_stage"] = {}
    again = compiler.Exploration.from_json(json.dumps(doc))
    assert sorted(again.unknown_keys) == [
        "exploration.compiles[0].shiny_new_stage",
        "exploration.from_the_future",
    ]


def _type_name(tp: object) -> str:
    if isinstance(tp, type):
        return tp.__name__
    # classes print with their module (compiler.model.graph.Node): the listing keeps the name
    return re.sub(r"compiler\.model\.(?:\w+\.)?", "", str(tp).replace("typing.", ""))


def schema_listing() -> dict[str, object]:
    """Every dataclass of the model with its fields and their types, as text."""
    classes = {}
    for name in sorted(dir(model)):
        cls = getattr(model, name)
        if isinstance(cls, type) and dataclasses.is_dataclass(cls):
            hints = typing.get_type_hints(cls, vars(model))
            # what the file holds: the fields, not the cache handle (``derived``), and the
            # properties it keeps though they are computed on first read
            fields = [f.name for f in dataclasses.fields(cls) if not f.metadata.get("derived")]
            listed = {n: _type_name(hints[n]) for n in fields}
            for prop in KEPT_PROPERTIES.get(cls, ()):
                hint = typing.get_type_hints(getattr(cls, prop).fget, vars(model))["return"]
                listed[prop] = _type_name(hint)
            classes[name] = listed
    return {"version": list(model.SCHEMA_VERSION), "classes": classes}


def test_schema_listing_matches_the_committed_one():
    expected = json.loads(SCHEMA_FILE.read_text())
    actual = schema_listing()
    if actual["classes"] != expected["classes"] or actual["version"] != expected["version"]:
        pytest.fail(
            "The Exploration schema changed. Bump compiler.model.SCHEMA_VERSION (minor for a "
            "new field with a default, major otherwise; add an _upgrade step in serialize.py "
            "for a major bump), then regenerate tests/data/schema.json with:\n"
            '  python -c \'import sys; sys.path[:0]=["tests","."]; import json, test_model; '
            "print(json.dumps(test_model.schema_listing(), indent=1))' > tests/data/schema.json"
        )
