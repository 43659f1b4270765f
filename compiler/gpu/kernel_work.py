"""The work a kernel does, read from the output code that launches it: the bytes it reads
and writes, the FLOPs of a matrix product or convolution, and a Triton kernel's launch grid.

``compiler.measure.kernel_timing`` divides them by measured device time (bandwidth and
throughput); the recording of a Triton kernel stores its grid.
"""

from __future__ import annotations

from compiler.model import Kernel, OutputCode
from compiler.parse.output_code import (
    buffer_shapes,
    call_args,
    grid_type,
    kernel_params,
    view_shape,
)

_ITEMSIZE = {"fp64": 8, "i64": 8, "u64": 8, "fp32": 4, "i32": 4, "u32": 4, "fp16": 2,
             "bf16": 2, "i16": 2, "u16": 2, "i8": 1, "u8": 1, "i1": 1, "fp8e4nv": 1,
             "fp8e5": 1}  # fmt: skip


def kernel_bytes(out: OutputCode, kernel: Kernel) -> int | None:
    """Bytes the kernel reads and writes, if every pointer argument's shape is known.

    The kernel's ``signature`` gives each pointer's dtype; the wrapper's call gives the
    buffers, whose shapes come from ``empty_strided_*``/``assert_size_stride`` lines.
    """
    signature = kernel_params(kernel.source)
    if signature is None or not kernel.call_lines:
        return None
    params = [p for p in signature if p[1] != "constexpr"]
    lines = out.text.split("\n")
    shapes = buffer_shapes(out.text)
    call = lines[kernel.call_lines[0] - 1]
    args = call_args(call, kernel.name)
    total = 0
    for (pname, ptype), arg in zip(params, args, strict=False):
        if not ptype.startswith("*"):
            continue
        view = view_shape(arg)
        shape = view if view is not None else shapes.get(arg)
        numel = _numel(shape)
        size = _ITEMSIZE.get(ptype[1:])
        if numel is None or size is None:
            return None
        # an in_out_ptr is read and written
        total += numel * size * (2 if pname.startswith("in_out_ptr") else 1)
    return total


_GRID_AXES = {"Grid1D": ("x",), "Grid2D": ("x", "y"), "Grid3D": ("x", "y", "z")}


def launch_grid(out: OutputCode, kernel: Kernel, config: dict[str, str]) -> tuple[int, ...]:
    """The grid a Triton kernel launches with: ceil(numel / BLOCK) per axis, from the
    numels the wrapper passes and the chosen config's block sizes. Empty when the grid
    is not one of Inductor's plain 1-3D grids or a size is symbolic."""
    kind = grid_type(kernel.source)
    signature = kernel_params(kernel.source)
    if kind is None or signature is None or kind not in _GRID_AXES or not kernel.call_lines:
        return ()
    # Inductor passes a numel it made constexpr (``xnumel = 1``) in the call all the same
    params = [
        name for name, kind_of in signature if kind_of != "constexpr" or name.endswith("numel")
    ]
    call = out.text.split("\n")[kernel.call_lines[0] - 1]
    values = dict(zip(params, call_args(call, kernel.name), strict=False))
    grid = []
    for axis in _GRID_AXES[kind]:
        numel, block = values.get(f"{axis}numel", ""), config.get(f"{axis.upper()}BLOCK", "")
        if not numel.isdigit() or not block.isdigit() or int(block) == 0:
            return ()
        grid.append(-(-int(numel) // int(block)))
    return tuple(grid)


def _numel(shape: str | None) -> int | None:
    if shape is None:
        return None
    numel = 1
    for dim in (d.strip() for d in shape.split(",")):
        if not dim:
            continue
        if not dim.isdigit():
            return None
        numel *= int(dim)
    return numel


_MATMULS = {"mm": 2, "addmm": 3, "bmm": 2, "baddbmm": 3}  # index after the last operand


def kernel_flops(out: OutputCode, kernel: Kernel) -> int | None:
    """2·M·N·K summed over the kernel's call sites, for matrix products whose operand
    shapes the wrapper states; None for anything else."""
    op = kernel.name.split(".", 1)[1] if kernel.language == "extern" else ""
    if op == "convolution":
        return _conv_flops(out, kernel)
    template = kernel.language == "triton" and "_tem_" in kernel.name and "mm" in kernel.name
    if op not in _MATMULS and not template:
        return None
    lines = out.text.split("\n")
    shapes = buffer_shapes(out.text)
    total = 0
    for line_no in kernel.call_lines:
        args = call_args(lines[line_no - 1], kernel.name)
        operands = args[_MATMULS[op] - 2 : _MATMULS[op]] if op else args[:2]
        if len(operands) != 2:
            return None
        a, b = _dims(operands[0], shapes), _dims(operands[1], shapes)
        if a is None or b is None or len(a) < 2 or len(b) < 2 or a[-1] != b[-2]:
            return None
        batch = 1
        for d in a[:-2]:
            batch *= d
        total += 2 * batch * a[-2] * b[-1] * a[-1]
    return total or None


def _conv_flops(out: OutputCode, kernel: Kernel) -> int | None:
    """2 · output elements · (input channels per group · kernel window) per call: the
    weight's shape is (out channels, in channels / groups, *window)."""
    lines = out.text.split("\n")
    shapes = buffer_shapes(out.text)
    total = 0
    for line_no in kernel.call_lines:
        line = lines[line_no - 1]
        target = line.split("=", 1)[0].strip() if "=" in line.split("(", 1)[0] else ""
        args = call_args(line, kernel.name)
        result = _dims(target, shapes) if target else None
        weight = _dims(args[1], shapes) if len(args) > 1 else None
        if not result or not weight or len(weight) < 3:
            return None
        per_output = 1
        for d in weight[1:]:
            per_output *= d
        numel = 1
        for d in result:
            numel *= d
        total += 2 * numel * per_output
    return total or None


def _dims(arg: str, shapes: dict[str, str]) -> list[int] | None:
    view = view_shape(arg)
    shape = view if view is not None else shapes.get(arg)
    if shape is None:
        return None
    dims = [d.strip() for d in shape.split(",") if d.strip()]
    return [int(d) for d in dims] if all(d.isdigit() for d in dims) else None
