"""Graph breaks and backend failures diagnosed from torch's own records (issue 33).

Every expectation comes from torch: its graph-break registry file (read here straight from
the installed torch's folder), its documentation-link helper, its counters, and the op
its fake tensors name when they fail. Programs are small and compile with
``backend="eager"`` where the backend does not matter.
"""

from __future__ import annotations

import importlib.util
import inspect
import json
import os
import sys
import threading
from pathlib import Path

import torch
from torch._dynamo.utils import counters

import compiler
from compiler import _compat


def _registry_file(python_torch_dir: str) -> dict[str, list[dict[str, object]]]:
    path = Path(python_torch_dir) / "_dynamo" / "graph_break_registry.json"
    return json.loads(path.read_text(encoding="utf-8"))


def _torch_registry() -> dict[str, list[dict[str, object]]]:
    spec = importlib.util.find_spec("torch")
    assert spec is not None and spec.submodule_search_locations
    return _registry_file(next(iter(spec.submodule_search_locations)))


def _id_of(gb_type: str) -> str:
    """The registry id torch's own file gives a type (its current wording)."""
    return next(k for k, v in _torch_registry().items() if v[0]["Gb_type"] == gb_type)


def test_the_registry_is_the_installed_torchs():
    # on every torch the suite runs on: 2.13 here, 2.14.1 in scripts/smoke_newest_torch.sh
    raw = _torch_registry()
    ours = _compat.graph_break_registry()
    assert set(ours) == set(raw)
    for gb_id in ("GB0025", "GB0124", "GB0219"):
        assert ours[gb_id][0]["Gb_type"] == raw[gb_id][0]["Gb_type"]
        assert ours[gb_id][0]["Hints"] == raw[gb_id][0]["Hints"]
        page = torch._dynamo.exc.get_gbid_documentation_link(str(raw[gb_id][0]["Gb_type"]))
        assert page and ours[gb_id][0]["Link"] == page


def test_torchs_own_optimizer_break_is_a_note_not_an_edit_of_torch():
    """A compiled AdamW step under LambdaLR: torch's optimizer wrapper calls
    ``torch._dynamo.graph_break()`` itself (torch's record places it in torch/optim)."""
    model = torch.nn.Linear(4, 4)
    opt = torch.optim.AdamW(model.parameters(), lr=0.01)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 0.9**s)
    model(torch.randn(2, 4)).sum().backward()

    @torch.compile(backend="eager")
    def step():
        opt.step()

    def run():
        for _ in range(3):
            step()
            sched.step()

    exp = compiler.explore(run)
    explicit = _id_of("Call to `torch._dynamo.graph_break()`")
    records = [gb for c in exp.compiles for gb in c.graph_breaks]
    asked = [gb for gb in records if explicit in gb.documentation.upper()]
    torch_dir = os.path.dirname(torch.__file__)
    assert asked and all(gb.location.filename.startswith(torch_dir) for gb in asked)
    breaks = [f for f in exp.findings() if f.kind.startswith("graph_break")]
    assert breaks
    for f in breaks:
        assert f.severity == "info", (f.title, f.severity)
        assert "Remove" not in f.suggestion and "remove the" not in f.suggestion.lower()
        assert "cannot trace" not in f.title
    own = next(f for f in breaks if f.kind == "graph_break.torch_own")
    assert "torch.optim" in own.title and "lr=torch.tensor(" in own.suggestion
    assert "@torch.compile(fullgraph=False)" in own.suggestion


def test_a_break_without_a_tailored_rule_is_told_by_the_registry():
    lock = threading.Lock()

    def f(x):
        with lock:
            return x + 1

    exp = compiler.explore(f, torch.rand(3), backend="eager")
    gb = exp.compiles[0].graph_breaks[0]
    gb_id = next(k for k, v in _torch_registry().items() if v[0]["Gb_type"] == gb.summary)
    entry = _torch_registry()[gb_id][0]
    page = torch._dynamo.exc.get_gbid_documentation_link(str(entry["Gb_type"]))
    first = exp.findings()[0]
    assert first.title.startswith(f"{entry['Gb_type']} ({gb_id})")
    assert "Traceback" not in first.title
    assert page and page in first.suggestion
    assert all(str(h).strip() in first.suggestion for h in gb.hints)
    line = inspect.getsourcelines(f)[1] + 1
    assert first.cause.startswith(f"break|{gb_id}|") and first.cause.endswith(f":{line}")


def test_item_read_to_record_a_loss_names_the_registry_cause_and_moving_it_out():
    losses: list[float] = []

    def step(x):
        loss = (x * 2).sum()
        losses.append(loss.item())
        return loss * 3

    exp = compiler.explore(step, torch.rand(4), backend="eager")
    gb_id = _id_of("Unsupported Tensor.item() call with capture_scalar_outputs=False")
    first = exp.findings()[0]
    assert first.kind == "graph_break.scalar_output" and f"|{gb_id}|" in first.cause
    assert "outside" in first.suggestion and "capture_scalar_outputs" in first.suggestion
    assert first.fix is not None and first.fix.name == "capture_scalar_outputs"


@torch.library.custom_op("i33breaks::twice", mutates_args=())
def _twice(x: torch.Tensor) -> torch.Tensor:
    return x * 2


@_twice.register_fake
def _(x):
    return torch.empty_like(x)


def _twice_backward(ctx, grad):
    peak = grad.abs().max().item()  # a value read in the backward formula
    return grad * 2 if peak < 1e6 else grad


_twice.register_autograd(_twice_backward)


def _uses_twice(x):
    return _twice(x.sin()).sum()


def test_a_backend_failure_is_one_finding_that_names_the_op_and_its_code():
    """AOTAutograd traces the custom op's backward with fake tensors; its ``.item()``
    fails (torch names the op in ``DataDependentOutputException``) and torch falls back
    to eager, in each of two compiles (the second input size recompiles)."""
    counters.clear()

    def run(x):
        return _uses_twice(x)

    compiled = torch.compile(run)

    def twice():
        compiled(torch.randn(8, requires_grad=True)).backward()
        compiled(torch.randn(16, requires_grad=True)).backward()

    exp = compiler.explore(twice)
    assert counters["aot_autograd"]["not_ok"] >= 2  # torch's count of failed AOT compiles
    op = str(torch.ops.aten._local_scalar_dense.default)
    failures = [f for f in exp.findings() if f.kind == "backend_failure"]
    assert len(failures) == 1, [f.title for f in exp.findings()]
    f = failures[0]
    assert op in f.title and "_twice_backward" in f.title
    line = inspect.getsourcelines(_twice_backward)[1] + 1
    assert f"test_diagnosis_breaks.py:{line}" in f.title
    assert f.cause.startswith(f"backend|{op}|") and f.cause.endswith(":_twice_backward")
    assert "2 compiles" in f.impact
    assert 'backend="eager"' in f.suggestion and "aot_eager_decomp_partition" in f.suggestion
    # torch's other record of the same failure is not a second finding
    assert not any("Traceback" in g.title or "Backend compiler" in g.title
                   for g in exp.findings())  # fmt: skip


def test_the_ladder_rung_named_for_an_aot_failure_fails_in_torch_too():
    """The finding says AOTAutograd raised, so ``aot_eager`` fails the same way: torch's
    own counter of failed AOTAutograd compiles says so for that backend."""
    counters.clear()
    x = torch.randn(8, requires_grad=True)
    torch.compile(_uses_twice, backend="aot_eager")(x).backward()
    assert counters["aot_autograd"]["not_ok"] == 1
    # torch now runs `_uses_twice` eagerly (its failed compile marked the code): the
    # capture lifts that mark for its own compile, and puts it back afterwards
    exp = compiler.explore(_uses_twice, torch.randn(8, requires_grad=True))
    assert exp.compiles
    f = next(f for f in exp.findings() if f.kind == "backend_failure")
    assert "AOTAutograd" in f.suggestion and "`aot_eager` fails" in f.suggestion
    counters.clear()
    torch.compile(_uses_twice, backend="aot_eager")(x).backward()
    assert not counters["aot_autograd"]  # still marked: the user's code runs eagerly


def test_a_librarys_own_break_is_not_the_users_to_remove(tmp_path, monkeypatch):
    pkg = tmp_path / "site-packages" / "breaklib"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(
        "import torch\n\ndef scale(x):\n    torch._dynamo.graph_break()\n    return x * 2\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path / "site-packages"))
    import breaklib

    def f(x):
        return breaklib.scale(x) + 1

    exp = compiler.explore(f, torch.rand(3), backend="eager")
    found = [g for g in exp.findings() if g.kind == "graph_break.explicit"]
    assert found and all(g.severity != "problem" for g in found)
    assert all("breaklib" in g.suggestion and "Remove" not in g.suggestion for g in found)
    sys.modules.pop("breaklib", None)


def test_deepcopy_is_placed_at_the_users_line_not_in_pythons_copy_module():
    import copy

    def f(x):
        y = copy.deepcopy(x)
        return y + 1

    exp = compiler.explore(f, torch.rand(3), backend="eager")
    gb = exp.compiles[0].graph_breaks[0]
    # torch's place: Python's copy module on 2.13 and 2.14.1; 2.11 already names the caller
    assert gb.location is not None and gb.location.filename in (copy.__file__, __file__)
    gb_id = next(k for k, v in _torch_registry().items() if v[0]["Gb_type"] == gb.summary)
    first = exp.findings()[0]
    line = inspect.getsourcelines(f)[1] + 1
    assert first.kind == "graph_break.deepcopy" and f"|{gb_id}|" in first.cause
    assert first.cause.endswith(f"test_diagnosis_breaks.py:{line}") and "copy.py" not in first.title


def test_a_training_step_logging_its_loss_leads_with_the_item_and_keeps_torch_code_torchs():
    """The issue's step: ``losses.append(loss.item())`` inside the compiled function,
    then backward, ``opt.step()`` and ``opt.zero_grad()``, which torch keeps out of
    graphs itself (its records name a torch file)."""
    model = torch.nn.Linear(8, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    losses: list[float] = []

    @torch.compile(backend="eager")
    def train_step(x, y):
        loss = torch.nn.functional.mse_loss(model(x), y)
        losses.append(loss.item())
        loss.backward()
        opt.step()
        opt.zero_grad()

    def run():
        for _ in range(2):
            train_step(torch.randn(4, 8), torch.randn(4, 1))

    exp = compiler.explore(run)
    item = _id_of("Unsupported Tensor.item() call with capture_scalar_outputs=False")
    findings = exp.findings()
    assert findings[0].kind == "graph_break.scalar_output" and f"|{item}|" in findings[0].cause
    torch_dir = os.path.dirname(torch.__file__)
    skipped = [gb for c in exp.compiles for gb in c.graph_breaks
               if "zero_grad" in gb.reason and torch_dir in gb.reason]  # fmt: skip
    assert skipped  # torch's own record: zero_grad is torch's, in a torch file
    for f in findings:
        if "zero_grad" in f.title or "zero_grad" in f.suggestion:
            assert f.severity != "problem" and "allow_in_graph" not in f.suggestion
    assert len({f.cause for f in findings}) == len(findings)
