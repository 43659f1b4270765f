"""``explore_aoti``: AOTInductor as stages of the explorer.

``torch.export`` traces the model into an ``ExportedProgram`` (its stages as
``explore_export`` shows them); AOTInductor then compiles that program ahead of time into a
``.pt2`` package: a zip holding the generated C++ wrapper that calls the kernels, the C++
kernels, their compiled shared library, metadata and the weights. ``explore_aoti`` adds what
the package holds as stages, each file's text as AOTInductor wrote it (after a line
``// <file in the package>``):

- ``aoti_package``: every file of the package with its size;
- ``aoti_wrapper_cpp``: the generated wrapper (``*.wrapper.cpp``);
- ``aoti_kernel_cpp``: the generated kernels (``*.kernel.cpp``) on the CPU.
"""

from __future__ import annotations

import dataclasses
import tempfile
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from compiler import _compat
from compiler.capture.exported import _stages, _with_stages
from compiler.capture.recording import describe_target, recording
from compiler.errors import CompileError, InputError, TargetError
from compiler.model import Exploration, Graph, Options, StageError
from compiler.model.graph import AOTI_STAGES

__all__ = ["AOTI_STAGES", "explore_aoti", "package_stages"]
_SOURCES = {"aoti_wrapper_cpp": ".wrapper.cpp", "aoti_kernel_cpp": ".kernel.cpp"}


def explore_aoti(
    model: Any,
    args: Any,
    kwargs: Mapping[str, Any] | None = None,
    dynamic_shapes: Any = None,
    *,
    package_path: str | None = None,
) -> Exploration:
    """Export ``model``, compile it with AOTInductor, and return both as stages.

    Args:
        model: the ``nn.Module`` to export and compile.
        args: its positional example inputs, a tuple.
        kwargs: its keyword example inputs.
        dynamic_shapes: as in ``torch.export.export``.
        package_path: where to write the ``.pt2`` package (kept); by default a temporary
            file, removed once its contents are read.

    Raises:
        TargetError: ``model`` is not an ``nn.Module``.
        CompileError: export or AOTInductor failed; ``.exploration`` holds what was
            recorded.

    Example:
        >>> import torch, compiler
        >>> exp = compiler.explore_aoti(torch.nn.Linear(4, 2), (torch.randn(3, 4),))
        >>> "aoti_wrapper_cpp" in exp.compiles[0].graphs
        True
    """
    import torch

    if not isinstance(model, torch.nn.Module):
        msg = f"explore_aoti() compiles an nn.Module, but got a {type(model).__name__}."
        raise TargetError(msg)
    if not isinstance(args, tuple):
        msg = f"args must be a tuple of example inputs, not a {type(args).__name__}: use (x,)."
        raise InputError(msg)
    torch.compiler.reset()
    with tempfile.TemporaryDirectory() as folder:
        path = package_path or str(Path(folder) / "model.pt2")
        failure: Exception | None = None
        program: Any = None
        with recording(decompile=False) as rec:
            rec.target = describe_target(model)
            rec.options = Options(backend="aoti", dynamic=dynamic_shapes is not None, wrapped=False)
            try:
                program = torch.export.export(
                    model, args, kwargs=dict(kwargs or {}), dynamic_shapes=dynamic_shapes
                )
                path = _compat.aoti_compile_and_package(program, path)
            except Exception as exc:
                failure = exc
        exploration = rec.exploration()
        if failure is not None:
            msg = f"AOTInductor could not compile {type(model).__name__}: {failure}"
            raise CompileError(msg, exploration=exploration, stage="backend") from failure
        stages, errors = _stages(program, decompose=False)
        package, package_errors = package_stages(path)
    found = _with_stages(exploration, model, {**stages, **package}, [*errors, *package_errors])
    first = found.compiles[-1]
    artifacts = {**first.artifacts, **{k: g.text for k, g in package.items()}}
    compiles = (*found.compiles[:-1], dataclasses.replace(first, artifacts=artifacts))
    return dataclasses.replace(found, compiles=compiles)


def package_stages(path: str) -> tuple[dict[str, Graph], list[StageError]]:
    """The stages of a ``.pt2`` package: its listing and its generated C++ sources."""
    errors: list[StageError] = []
    with zipfile.ZipFile(path) as package:
        infos = package.infolist()
        listing = "\n".join(f"{i.file_size:>12,d}  {i.filename}" for i in infos)
        stages = {"aoti_package": Graph(stage="aoti_package", text=listing)}
        for stage, suffix in _SOURCES.items():
            names = [i.filename for i in infos if i.filename.endswith(suffix)]
            if not names:
                errors.append(StageError(stage=stage, message=f"the package holds no *{suffix}"))
                continue
            text = "\n\n".join(
                f"// {name}\n{package.read(name).decode('utf-8', 'replace')}" for name in names
            )
            stages[stage] = Graph(stage=stage, text=text)
    return stages, errors
