"""AOTInductor as stages: the exported program, and the .pt2 package's files and C++.

The package is real: it is loaded back with torch's own loader and run against the eager
model, and each C++ stage is compared with the file inside the package.
"""

from __future__ import annotations

import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import torch

import compiler


class Small(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(8, 8)

    def forward(self, x):
        return torch.relu(self.lin(x)) * 2


@pytest.mark.slow
def test_explore_aoti_shows_the_exported_program_and_the_packages_generated_cpp(tmp_path):
    torch.manual_seed(0)
    model, x = Small().eval(), torch.randn(4, 8)
    path = str(tmp_path / "small.pt2")
    exp = compiler.explore_aoti(model, (x,), package_path=path)
    (c,) = exp.compiles
    assert not c.errors, c.errors
    assert {"exported_program", "aoti_package", "aoti_wrapper_cpp", "aoti_kernel_cpp"} <= set(
        c.graphs
    )
    with zipfile.ZipFile(path) as package:
        names = package.namelist()
        for name in names:
            assert name in c.graphs["aoti_package"].text
        for stage, suffix in (
            ("aoti_wrapper_cpp", ".wrapper.cpp"),
            ("aoti_kernel_cpp", ".kernel.cpp"),
        ):
            (source,) = [n for n in names if n.endswith(suffix)]
            assert package.read(source).decode() in c.graphs[stage].text
    # the stages come from the package torch runs
    loaded = torch._inductor.aoti_load_package(path)
    torch.testing.assert_close(loaded(x), model(x))
    assert exp.options is not None and exp.options.backend == "aoti"
    assert compiler.Exploration.from_json(exp.to_json()).compiles[0].graphs[
        "aoti_wrapper_cpp"
    ].text == (c.graphs["aoti_wrapper_cpp"].text)


TRACED = """
import sys, torch
sys.path.insert(0, {tests!r})
from test_aoti import Small
torch.manual_seed(0)
program = torch.export.export(Small().eval(), (torch.randn(4, 8),))
torch._inductor.aoti_compile_and_package(program, package_path={path!r})
"""


@pytest.mark.slow
def test_an_aoti_compile_loads_from_its_torch_trace_with_its_graphs_and_code(tmp_path):
    """torch logs AOTInductor's graphs and generated code without a compile id (no Dynamo
    frame ran): they load as one compile, 0/0, like a non-strict export's."""
    trace = tmp_path / "trace"
    code = TRACED.format(tests=str(Path(__file__).parent), path=str(tmp_path / "t.pt2"))
    env = {"TORCH_TRACE": str(trace), "PATH": "/usr/bin:/bin"}
    subprocess.run([sys.executable, "-c", code], check=True, env=env, timeout=600)
    loaded = compiler.load_trace(str(trace), strict=True)
    (c,) = loaded.compiles
    assert str(c.compile_id) == "0/0"
    assert {"aot_inference_graph", "aoti_wrapper_cpp", "aoti_kernel_cpp"} <= set(c.graphs)
    with zipfile.ZipFile(tmp_path / "t.pt2") as package:
        (kernels,) = [n for n in package.namelist() if n.endswith(".kernel.cpp")]
        packaged = package.read(kernels).decode()
    names = set(re.findall(r"\bcpp_fused_\w+", c.graphs["aoti_kernel_cpp"].text))
    assert names and all(name in packaged for name in names)


def test_explore_aoti_refuses_what_is_not_a_module():
    with pytest.raises(compiler.TargetError, match=r"nn\.Module"):
        compiler.explore_aoti(torch.sin, (torch.randn(2),))
