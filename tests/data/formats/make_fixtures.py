"""Write the texts the installed torch prints, as fixtures for ``tests/test_formats.py``.

    python tests/data/formats/make_fixtures.py            # -> tests/data/formats/torch-X.Y/

Three tiny programs run under ``compiler.recording()`` (torch's own structured trace, taken
in process): a function with two graph breaks (an explicit one and a branch on tensor
data), one that recompiles when its input's size changes, and a training step of a small
module (forward and backward through Inductor, on CUDA when there is one, else the CPU).
The payloads torch logged are written verbatim, one file a text, a few KB each, plus
``manifest.json`` (torch version, device, the module's parameter names): what the test
checks the parsed texts against. Rerun it on each torch the project supports; a torch
that changes a format changes one fixture here and one reader in ``compiler/parse/``.
"""

from __future__ import annotations

import inspect
import json
import re
import shutil
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))  # the checkout's compiler/, not an installed one

import torch  # noqa: E402

import compiler  # noqa: E402


def breaks(x: torch.Tensor) -> torch.Tensor:
    x = x.sin() + 1
    torch._dynamo.graph_break()
    x = x.cos()
    if x.sum() > 0:  # a branch on tensor data
        return x * 2
    return x - 1


def resized(x: torch.Tensor) -> torch.Tensor:
    return x.relu() * 3


class Net(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(8, 4)
        self.out = torch.nn.Linear(4, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out(torch.relu(self.lin(x))).sum()


def _record(run: Any) -> list[Any]:
    torch._dynamo.reset()
    with compiler.recording(decompile=False, triton_stages=False) as rec:
        run()
    return rec.events


def _name(event: Any) -> str:
    meta = event.metadata
    if event.key == "artifact" and isinstance(meta, dict):
        return str(meta.get("name", ""))
    return str(event.key)


def _payloads(events: list[Any], name: str) -> list[str]:
    return [e.payload for e in events if _name(e) == name and e.payload is not None]


def _fusion(events: list[Any], stage: str) -> list[str]:
    return [
        e.payload
        for e in events
        if e.key == "explorer_fusion_ir" and e.metadata.get("stage") == stage and e.payload
    ]


def _line_of(fn: Any, code: str) -> int:
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if code in line)


def main() -> None:
    device = "cuda" if torch.cuda.is_available() else "cpu"
    # torch-2.13 for 2.13.0, torch-2.14.1 for 2.14.1 (a local or pre-release tag dropped)
    major, minor, patch = re.findall(r"^(\d+)\.(\d+)\.?(\d*)", torch.__version__)[0]
    out = HERE / f"torch-{major}.{minor}{f'.{patch}' if patch not in ('', '0') else ''}"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    files: dict[str, str] = {}

    def write(name: str, text: str) -> None:
        (out / name).write_text(text, encoding="utf-8")
        files[name] = text

    # graph breaks: an explicit one, then a branch on tensor data (eager: no Inductor needed)
    f = torch.compile(breaks, backend="eager")
    events = _record(lambda: f(torch.randn(6)))
    reasons = _payloads(events, "dynamo_graph_break_reason")
    for label, text in zip(("explicit", "branch"), reasons, strict=False):
        write(f"graph_break_{label}.txt", text)

    # a recompile: the same function on a second size
    g = torch.compile(resized, backend="eager", dynamic=False)
    events = _record(lambda: (g(torch.randn(4)), g(torch.randn(5))))
    write("recompile_reasons.txt", _payloads(events, "recompile_reasons")[0])

    # a training step through Inductor: Dynamo's graph, guards, AOT graphs, post-grad
    # graphs, output code, provenance maps and the fused schedule
    torch.manual_seed(0)
    net = Net().to(device)
    step = torch.compile(net)

    def train() -> None:
        loss = step(torch.randn(2, 8, device=device))
        loss.backward()

    events = _record(train)
    for name in ("dynamo_output_graph", "dynamo_cpp_guards_str", "aot_joint_graph",
                 "aot_forward_graph", "aot_backward_graph"):  # fmt: skip
        found = _payloads(events, name)
        if found:
            write(f"{name}.txt", found[0])
    for label, i in (("forward", 0), ("backward", 1)):
        for name, ext in (
            ("inductor_post_grad_graph", "txt"),
            ("inductor_output_code", "txt"),
            ("inductor_provenance_tracking_node_mappings", "json"),
            ("inductor_provenance_tracking_kernel_stack_traces", "json"),
        ):
            found = _payloads(events, name)
            if len(found) > i:
                write(f"{name}.{label}.{ext}", found[i])
        for stage in ("ir_pre_fusion", "ir_post_fusion"):
            found = _fusion(events, stage)
            if len(found) > i:
                write(f"{stage}.{label}.txt", found[i])

    manifest = {
        "torch": torch.__version__,
        "python": sys.version.split()[0],
        "device": device,
        # what the programs are, for the test to hold the parsed texts against
        "parameters": [name for name, _ in net.named_parameters()],
        "input_size": [2, 8],
        "forward_line": _line_of(Net.forward, "return self.out("),
        "break_lines": {
            "explicit": _line_of(breaks, "torch._dynamo.graph_break()"),
            "branch": _line_of(breaks, "if x.sum() > 0"),
        },
        "recompile": {"input": "x", "sizes": [4, 5]},
        "programs": "tests/data/formats/make_fixtures.py",
        "files": sorted(files),
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    size = sum(len(t) for t in files.values())
    print(f"{out}: {len(files)} fixtures, {size // 1024} KB, torch {torch.__version__} on {device}")


if __name__ == "__main__":
    main()
