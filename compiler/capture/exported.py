"""``explore_export`` and ``explore_aoti``: torch.export and AOTInductor as stages of the
explorer.

``torch.export.export`` traces a module ahead of time into an ``ExportedProgram``: one
whole graph of ATen ops (no graph breaks allowed), a signature saying which graph inputs
are parameters, buffers or user inputs, the ranges of its symbolic sizes and the call
graph of its submodules. ``explore_export`` runs it while recording and returns an
``Exploration`` whose compile holds those parts as stages, so the explorer shows them
next to Dynamo's graph (strict export runs Dynamo; non-strict export traces the Python
directly and records no Dynamo stage):

- ``exported_program``: the ATen graph as ``ExportedProgram.graph_module`` prints it;
- ``exported_program_decomposed``: the same after ``run_decompositions()`` (core ATen);
- ``exported_program_signature``, ``exported_program_range_constraints``,
  ``exported_program_module_call_graph``: text stages (a ``Graph`` with text and no nodes), also
  kept in ``Compile.artifacts`` under the same keys.

``torch.export`` traces the model into an ``ExportedProgram``; AOTInductor then compiles
that program ahead of time into a ``.pt2`` package: a zip holding the generated C++
wrapper that calls the kernels, the C++ kernels, their compiled shared library, metadata
and the weights. ``explore_aoti`` adds what the package holds as stages, each file's text
as AOTInductor wrote it (after a line ``// <file in the package>``):

- ``aoti_package``: every file of the package with its size;
- ``aoti_wrapper_cpp``: the generated wrapper (``*.wrapper.cpp``);
- ``aoti_kernel_cpp``: the generated kernels (``*.kernel.cpp``) on the CPU.

Both run inside one observation (``compiler.capture.observe``), as ``explore`` does: no
process-wide reset (unless ``reset=True``), so what the process compiled before keeps its
cache entries and does not compile again; Dynamo's record of seen sizes is set aside.
"""

from __future__ import annotations

import dataclasses
import inspect
import os
import tempfile
import warnings
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from compiler import _compat
from compiler.capture.observe import observe
from compiler.capture.recording import recording
from compiler.capture.spec import describe_target
from compiler.errors import CompileError, InputError, TargetError
from compiler.link.user_code import error_location, innermost_user_frame, is_user_file
from compiler.model import Compile, CompileId, Exploration, Graph, Options, StageError
from compiler.model.graph import AOTI_STAGES, EXPORT_TEXT_STAGES
from compiler.parse.graph_text import parse_graph

__all__ = ["AOTI_STAGES", "TEXT_STAGES", "explore_aoti", "explore_export", "package_stages"]
_SOURCES = {"aoti_wrapper_cpp": ".wrapper.cpp", "aoti_kernel_cpp": ".kernel.cpp"}

# Named so that the explorer, which lists extra stages by name, shows the graph first.
TEXT_STAGES = EXPORT_TEXT_STAGES


def explore_export(
    model: Any,
    args: Any,
    kwargs: Mapping[str, Any] | None = None,
    dynamic_shapes: Any = None,
    strict: bool = False,
    *,
    decompose: bool = True,
    reset: bool = False,
) -> Exploration:
    """Export ``model`` with ``torch.export.export`` and return what it produced as stages.

    Args:
        model: the ``nn.Module`` to export.
        args: its positional example inputs, a tuple (a single tensor is accepted too).
        kwargs: its keyword example inputs.
        dynamic_shapes: as in ``torch.export.export``, e.g. ``{"x": {0: Dim("batch")}}``.
        strict: trace with Dynamo (True) or by running the Python with fake tensors
            (False, torch's default).
        decompose: also keep the core-ATen graph of ``ep.run_decompositions()``.
        reset: reset Dynamo for the whole process first (``torch.compiler.reset()``).
            Off by default: the export runs beside what the process compiled before,
            whose cache entries stay as they were (nothing compiles again afterwards),
            with Dynamo's record of seen sizes set aside for it and put back; log
            handlers and a few config flags are added for the export and restored. A
            failure of the explorer's own work is in the Exploration's errors.

    Returns:
        An Exploration with one compile holding the exported program's stages; the
        ``ExportedProgram`` itself is not kept (it is not plain data): export again,
        or use ``torch.export.export`` directly, to save it.

    Raises:
        TargetError: ``model`` is not an ``nn.Module``.
        CompileError: torch.export failed; the message names the line of your code
            it failed on and ``.exploration`` holds what was recorded.

    Example:
        >>> import torch, compiler
        >>> exp = compiler.explore_export(torch.nn.Linear(4, 2), (torch.randn(3, 4),))
        >>> exp.compiles[0].graphs["exported_program"].nodes[-2].target
        'torch.ops.aten.linear.default'
    """
    import torch

    if not isinstance(model, torch.nn.Module):
        msg = (
            f"explore_export() exports an nn.Module, but got a {type(model).__name__}. Wrap a "
            "function in a small nn.Module whose forward calls it."
        )
        raise TargetError(msg)
    if isinstance(args, torch.Tensor):
        args = (args,)
    if not isinstance(args, tuple):
        msg = f"args must be a tuple of example inputs, not a {type(args).__name__}: use (x,)."
        raise InputError(msg)
    options = Options(backend="export", dynamic=dynamic_shapes is not None, wrapped=False)
    failure: Exception | None = None
    program: Any = None
    with observe(model, args, kwargs, reset=reset) as obs:
        with recording(decompile=False, boundary=obs.boundary) as rec:
            rec.target = describe_target(model)
            rec.options = options
            rec.device = next((a.device.type for a in args if isinstance(a, torch.Tensor)), "")
            try:
                program = torch.export.export(
                    model, args, kwargs=dict(kwargs or {}), dynamic_shapes=dynamic_shapes,
                    strict=strict,
                )  # fmt: skip
            except Exception as exc:
                failure = exc
        exploration = rec.exploration()
        if failure is not None:
            raise _export_error(failure, model, exploration, strict) from failure
        stages: dict[str, Graph] = {}
        errors: list[StageError] = []
        with obs.boundary.guard("export"):  # reading the program is the explorer's work
            stages, errors = _stages(program, decompose)
        found = _with_stages(exploration, model, stages, errors)
    return obs.finish(found)


def _stages(program: Any, decompose: bool) -> tuple[dict[str, Graph], list[StageError]]:
    errors: list[StageError] = []
    text = program.graph_module.print_readable(print_output=False)
    stages = {"exported_program": parse_graph("exported_program", text)}
    if decompose:
        try:
            with warnings.catch_warnings():
                # torch 2.13 warns about its own pytree internals while copying the program
                warnings.simplefilter("ignore", FutureWarning)
                core = program.run_decompositions()
            text = core.graph_module.print_readable(print_output=False)
            stages["exported_program_decomposed"] = parse_graph("exported_program_decomposed", text)
        except Exception as exc:  # a decomposition torch cannot run: say so, keep the rest
            message = f"run_decompositions() failed: {type(exc).__name__}: {exc}"
            errors.append(StageError(stage="exported_program_decomposed", message=message))
    for stage, body in zip(TEXT_STAGES, _texts(program), strict=True):
        stages[stage] = Graph(stage=stage, text=body)
    return stages, errors


def _texts(program: Any) -> tuple[str, str, str]:
    signature = str(program.graph_signature).strip()
    ranges = program.range_constraints
    if ranges:
        width = max(len(str(s)) for s in ranges)
        range_text = "\n".join(f"{s!s:{width}}  {r}" for s, r in ranges.items())
    else:
        range_text = "(no symbolic sizes: every shape is static)"
    calls = []
    for entry in program.module_call_graph:
        name = entry.fqn or "(root)"
        sig = entry.signature
        if sig is None:
            calls.append(f"{name}")
            continue
        ins = ", ".join(getattr(a, "name", str(a)) for a in sig.inputs)
        outs = ", ".join(getattr(a, "name", str(a)) for a in sig.outputs)
        named = ", ".join(getattr(sig, "forward_arg_names", None) or ())
        calls.append(f"{name}({named})  inputs: [{ins}]  outputs: [{outs}]")
    return signature, range_text, "\n".join(calls)


def _with_stages(
    exploration: Exploration, model: Any, stages: dict[str, Graph], errors: list[StageError]
) -> Exploration:
    forward = type(model).forward
    try:
        filename = os.path.abspath(inspect.getsourcefile(forward) or "")
        first_line = inspect.getsourcelines(forward)[1]
    except (OSError, TypeError):
        filename, first_line = "", 0
    artifacts = {k: stages[k].text for k in TEXT_STAGES if k in stages}
    compiles = list(exploration.compiles)
    if compiles:  # strict export: Dynamo's compile, with the exported program added
        last = compiles[-1]
        compiles[-1] = dataclasses.replace(
            last,
            code_name=last.code_name or f"{type(model).__name__}.forward",
            filename=last.filename or filename,
            first_line=last.first_line or first_line,
            graphs={**last.graphs, **stages},
            artifacts={**last.artifacts, **artifacts},
            errors=(*last.errors, *errors),
        )
    else:  # non-strict export runs no Dynamo frame: one compile stands for the export
        cid = CompileId(frame_id=0, frame_compile_id=0)
        compiles.append(
            Compile(
                compile_id=cid,
                key=str(cid),
                code_name=f"{type(model).__name__}.forward",
                filename=filename,
                first_line=first_line,
                graphs=stages,
                artifacts=artifacts,
                errors=tuple(errors),
            )
        )
    return dataclasses.replace(exploration, compiles=tuple(compiles))


def _user_line(exc: BaseException, model: Any) -> str:
    """``file:line`` of the last user frame the failure passed through, or ""."""
    # the model's own file is user code even in an installed package (transformers)
    forward = getattr(type(model), "forward", None)
    compiled = frozenset({inspect.getsourcefile(forward) or ""}) if forward else frozenset()
    loc = error_location(exc)  # strict export: Dynamo lists the user's frames in its message
    if loc is None or not is_user_file(loc.filename, compiled):
        loc = innermost_user_frame(exc.__traceback__, compiled)
    return str(loc) if loc is not None else ""


def _export_error(
    exc: BaseException, model: Any, exploration: Exploration, strict: bool
) -> CompileError:
    first = (str(exc).strip().splitlines() or [""])[0].rstrip(".")
    where = _user_line(exc, model)
    at = f" at {where}" if where else ""
    msg = (
        f"torch.export.export(strict={strict}) could not export {describe_target(model)}{at}: "
        f"{type(exc).__name__}: {first}. Export needs one whole graph: data-dependent Python "
        "control flow must become torch.cond or tensor ops, and sizes that vary need "
        "dynamic_shapes; torch.export.draft_export lists every problem at once."
    )
    note = StageError(stage="exported_program", message=msg)
    return CompileError(msg, exploration=dataclasses.replace(
        exploration, errors=(*exploration.errors, note)
    ))  # fmt: skip


def explore_aoti(
    model: Any,
    args: Any,
    kwargs: Mapping[str, Any] | None = None,
    dynamic_shapes: Any = None,
    *,
    package_path: str | None = None,
    reset: bool = False,
) -> Exploration:
    """Export ``model``, compile it with AOTInductor, and return both as stages.

    Args:
        model: the ``nn.Module`` to export and compile.
        args: its positional example inputs, a tuple.
        kwargs: its keyword example inputs.
        dynamic_shapes: as in ``torch.export.export``.
        package_path: where to write the ``.pt2`` package (kept); by default a temporary
            file, removed once its contents are read.
        reset: as in ``explore_export``: off by default, so what the process compiled
            before keeps its cache entries; seen sizes are set aside and put back, log
            handlers and config flags restored, the explorer's own failures kept as errors.

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
    with observe(model, args, kwargs, reset=reset) as obs, tempfile.TemporaryDirectory() as folder:
        path = package_path or str(Path(folder) / "model.pt2")
        failure: Exception | None = None
        program: Any = None
        with recording(decompile=False, boundary=obs.boundary) as rec:
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
        stages: dict[str, Graph] = {}
        package: dict[str, Graph] = {}
        errors: list[StageError] = []
        package_errors: list[StageError] = []
        with obs.boundary.guard("export"):  # reading the program is the explorer's work
            stages, errors = _stages(program, decompose=False)
            package, package_errors = package_stages(path)
    found = _with_stages(exploration, model, {**stages, **package}, [*errors, *package_errors])
    first = found.compiles[-1]
    artifacts = {**first.artifacts, **{k: g.text for k, g in package.items()}}
    compiles = (*found.compiles[:-1], dataclasses.replace(first, artifacts=artifacts))
    return obs.finish(dataclasses.replace(found, compiles=compiles))


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
