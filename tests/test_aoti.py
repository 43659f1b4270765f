"""AOTInductor as stages: the exported program, and the .pt2 package's files and C++, live
and from the TORCH_TRACE log of the same compile.

One AOTInductor compile (a C++ build: seconds) runs in a subprocess under TORCH_TRACE and
captures itself with ``compiler.explore_aoti``; its Exploration comes back as JSON. The
package is real: it is loaded back with torch's own loader and run against the eager model,
and each C++ stage is compared with the file inside the package.
"""

from __future__ import annotations

import os
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


CAPTURE = """
import sys, torch
sys.path[:0] = [{root!r}, {tests!r}]
import compiler
from test_aoti import Small
torch.manual_seed(0)
model, x = Small().eval(), torch.randn(4, 8)
exp = compiler.explore_aoti(model, (x,), package_path={package!r})
open({json!r}, "w").write(exp.to_json())
"""


@pytest.mark.slow
def test_explore_aoti_shows_the_package_live_and_from_its_torch_trace(tmp_path):
    tests = Path(__file__).resolve().parent
    package, trace, json = tmp_path / "small.pt2", tmp_path / "trace", tmp_path / "small.json"
    code = CAPTURE.format(
        root=str(tests.parent), tests=str(tests), package=str(package), json=str(json)
    )
    env = {**os.environ, "TORCH_TRACE": str(trace)}
    subprocess.run([sys.executable, "-c", code], check=True, env=env, timeout=600)

    # live: the export's stages and the package's, read from the package itself
    exp = compiler.Exploration.from_json(json.read_text())
    (c,) = exp.compiles
    assert not c.errors, c.errors
    assert exp.options is not None and exp.options.backend == "aoti"
    stages = {"exported_program", "aoti_package", "aoti_wrapper_cpp", "aoti_kernel_cpp"}
    assert stages <= set(c.graphs)
    with zipfile.ZipFile(package) as pt2:
        names = pt2.namelist()
        for name in names:
            assert name in c.graphs["aoti_package"].text
        for stage, suffix in (
            ("aoti_wrapper_cpp", ".wrapper.cpp"),
            ("aoti_kernel_cpp", ".kernel.cpp"),
        ):
            (source,) = [n for n in names if n.endswith(suffix)]
            assert pt2.read(source).decode() in c.graphs[stage].text
        (kernels,) = [n for n in names if n.endswith(".kernel.cpp")]
        packaged_kernels = pt2.read(kernels).decode()
    # the stages come from the package torch runs
    torch.manual_seed(0)
    model, x = Small().eval(), torch.randn(4, 8)
    torch.testing.assert_close(torch._inductor.aoti_load_package(str(package))(x), model(x))

    # from the log: torch writes AOTInductor's graphs and code with no compile id (no
    # Dynamo frame ran); they load as one compile, 0/0, like a non-strict export's
    (traced,) = compiler.load_trace(str(trace), strict=True).compiles
    assert str(traced.compile_id) == "0/0"
    assert {"aot_inference_graph", "aoti_wrapper_cpp", "aoti_kernel_cpp"} <= set(traced.graphs)
    names = set(re.findall(r"\bcpp_fused_\w+", traced.graphs["aoti_kernel_cpp"].text))
    assert names and all(name in packaged_kernels for name in names)


@pytest.mark.slow
def test_explore_aoti_leaves_what_the_user_compiled_before_compiled():
    # no process-wide reset: a function compiled before does not compile again after
    from test_exported import Counting

    backend = Counting()
    f = torch.compile(lambda x: x.cos() + 1, backend=backend)
    x = torch.randn(4)
    f(x)
    exp = compiler.explore_aoti(Small().eval(), (torch.randn(4, 8),))
    assert "aoti_wrapper_cpp" in exp.compiles[0].graphs and not exp.errors, exp.errors
    f(x)
    assert backend.compiles == 1


def test_explore_aoti_refuses_what_is_not_a_module():
    with pytest.raises(compiler.TargetError, match=r"nn\.Module"):
        compiler.explore_aoti(torch.sin, (torch.randn(2),))
