"""The advisor against the public graph-break corpus (penguinwu/oss-model-graph-break-corpus),
whose labels nobody here wrote.

The labels are the corpus's own (``benchmarks/data/oss_graph_break_corpus_labels.json``,
its commit and license recorded there); the graph-break types each corpus cause maps to are
torch's (``torch/_dynamo/graph_break_registry.json`` of the installed torch); whether a
label still holds with this torch and transformers is Dynamo's own graph-break counter.
``python benchmarks/advisor_models.py --corpus`` runs every model; here a few cheap ones.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import torch

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCH))

from advisor_corpus_models import BUILDERS, CAUSES, build, names_cause, registry_ids  # noqa: E402

LABELS = json.loads((BENCH / "data" / "oss_graph_break_corpus_labels.json").read_text())


def _registry() -> dict[str, list[dict[str, object]]]:
    path = Path(torch._dynamo.__file__).parent / "graph_break_registry.json"
    return json.loads(path.read_text())


def test_the_label_extract_names_its_source_commit_and_license_and_every_model_is_built():
    assert LABELS["source"].endswith("penguinwu/oss-model-graph-break-corpus")
    assert len(LABELS["commit"]) == 40 and "MIT" in LABELS["license"]
    models = LABELS["models"]
    assert len(models) >= 20
    assert set(models) == set(BUILDERS)
    assert any(n.startswith("timm/") for n in models) and any("/" not in n for n in models)
    for name, label in models.items():
        assert label["cause"] in CAUSES, name
        assert label["mode"] in ("eval", "train"), name
        if label["status"] is not None:  # the corpus's golden set agrees with the label
            expected = "full_graph" if label["cause"] == "full_graph" else "graph_break"
            assert label["status"][label["mode"]] == expected, name
    causes = {label["cause"] for label in models.values()} - {"full_graph"}
    assert len(causes) >= 5


def test_every_graph_break_type_of_the_mapping_table_is_in_the_installed_torchs_registry():
    known = {e["Gb_type"] for entries in _registry().values() for e in entries}
    for cause, m in CAUSES.items():
        missing = set(m.gb_types) - known
        assert not missing, (cause, missing)
        assert len(registry_ids(m.gb_types)) >= len(m.gb_types), cause


def test_a_finding_names_a_cause_by_kind_or_by_torchs_registry_id_not_by_anything_else():
    from compiler.advise.findings import Finding

    ids = registry_ids(CAUSES["copy.deepcopy()"].gb_types)
    by_id = Finding(kind="graph_break.registry", severity="problem", title="t",
                    cause=f"graph_break|{ids[0]}|x.py:3")  # fmt: skip
    by_kind = Finding(kind="graph_break.logging", severity="problem", title="t")
    other = Finding(kind="graph_break.logging", severity="problem", title="deep copies")
    assert names_cause(by_id, "copy.deepcopy()", ids)
    assert names_cause(by_kind, "logging.Logger", ())
    assert not names_cause(other, "copy.deepcopy()", ids)


# the cheapest models whose label torch still shows here (2.13 and 2.14.1, transformers 5.24)
CHEAP = ["FlaubertModel", "BertModel", "ViTModel", "ConvNextModel"]


@pytest.mark.slow
@pytest.mark.parametrize("name", CHEAP)
def test_the_corpus_label_is_the_first_finding(name):
    pytest.importorskip("transformers")
    from torch._dynamo.utils import counters

    import compiler

    label = LABELS["models"][name]
    cause, m = label["cause"], build(name, label["mode"])
    counters.clear()
    with torch.set_grad_enabled(m.grad):
        exp = compiler.explore(m.target, *m.inputs, backend="eager")
    broke = {k.split("\n")[0] for k in counters["graph_break"]}
    flagged = [f for f in exp.findings() if f.severity in ("problem", "warning")]
    if cause == "full_graph":
        assert not broke and not flagged, [f.title for f in flagged]
        return
    assert broke & set(CAUSES[cause].gb_types), broke  # torch still shows the label here
    assert flagged and names_cause(flagged[0], cause, registry_ids(CAUSES[cause].gb_types)), [
        (f.kind, f.title) for f in flagged
    ]
    causes = [f.cause for f in exp.findings() if f.cause]
    assert len(causes) == len(set(causes)), causes


@pytest.mark.slow
def test_an_exception_reported_again_where_it_leaves_an_enclosing_frame_is_one_finding():
    """SwitchTransformers (eval): on 2.13 Dynamo reports the exception it observed in
    ``forward`` once there and again at the ``finally`` of transformers' output-capturing
    wrapper that called it, in each frame the wrapper runs in; 2.14.1 reports it once. The
    wrapper's report is that break leaving the wrapper: it folds into the inner break's
    finding, so both torch versions give the same findings (issue 43)."""
    import compiler
    from compiler.model import SourceLoc

    with torch.no_grad():
        m = build("SwitchTransformersModel", "eval")
        exp = compiler.explore(m.target, *m.inputs, backend="eager")
    observed = [(b.location, b.user_stack) for c in exp.compiles for b in c.graph_breaks
                if b.summary == "Observed exception" and b.location is not None]  # fmt: skip

    def short(loc: SourceLoc) -> str:
        return f"{loc.filename.split('site-packages/')[-1]}:{loc.line}"

    # torch's record: which observed-exception breaks stopped in a frame another one's
    # stack passes through, at or after the line that frame called down from
    outer = {
        short(at) for at, stack in observed for _, inner in observed
        if len(inner) > len(stack) and inner[: len(stack) - 1] == stack[:-1]
        and inner[len(stack) - 1].function == stack[-1].function
        and inner[len(stack) - 1].filename == stack[-1].filename
        and inner[len(stack) - 1].line <= stack[-1].line
    }  # fmt: skip
    titles = [f.title for f in exp.findings() if f.kind.startswith("graph_break.")]
    for place in outer:
        assert not any(place in t for t in titles), (place, titles)
    inner_places = {short(at) for at, _ in observed} - outer
    assert inner_places and all(any(p in t for t in titles) for p in inner_places), titles
