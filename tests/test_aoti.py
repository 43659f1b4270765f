"""AOTInductor as stages: the exported program, and the .pt2 package's files and C++.

The package is real: it is loaded back with torch's own loader and run against the eager
model, and each C++ stage is compared with the file inside the package.
"""

from __future__ import annotations

import zipfile

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


def test_explore_aoti_refuses_what_is_not_a_module():
    with pytest.raises(compiler.TargetError, match=r"nn\.Module"):
        compiler.explore_aoti(torch.sin, (torch.randn(2),))
