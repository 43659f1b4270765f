"""Per-kernel device time on CUDA, and the bandwidth each kernel achieved.

``explore(..., measure=True)`` times kernels from the target's own run where it calls its
compiled code more than once (``compiler.profile.own_run``); ``measure`` here re-runs the
compiled program for a target that calls it once. The profiler gives each kernel launch's
device duration; the device's peak is measured here too, as the bandwidth of a large
device-to-device copy.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from compiler.gpu.timed_calls import synchroniser, time_calls
from compiler.model import Kernel, KernelTiming, OutputCode
from compiler.parse.output_code import (
    buffer_shapes,
    call_args,
    grid_type,
    kernel_params,
    view_shape,
)

# profile/ imports library_aten_name from here
from compiler.parse.words.names import library_aten_name as library_aten_name

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


REPEATS = 20


@dataclass
class Profiled:
    """What the profiler saw over ``runs`` calls of the compiled program."""

    durations: dict[str, list[float]]
    graph_launches: int
    device_us: float
    unattributed_us: dict[str, float]


def measure(
    run: Callable[[], Any], names: set[str], *, warmup: int = 3, repeats: int = REPEATS
) -> Profiled:
    """Device durations (microseconds) of each named kernel over ``repeats`` calls, how
    many CUDA graphs were launched (replays, under reduce-overhead), the device time of
    every kernel and copy, and the device time outside the named kernels."""
    from torch.profiler import ProfilerActivity, profile

    # CPU activity too: library calls are found through their aten op's CPU event,
    # whose kernels are those of the library (cuBLAS, cuDNN, attention). Each call is
    # synchronised like every timed call; a kernel's device time does not depend on it.
    activities = [ProfilerActivity.CPU, ProfilerActivity.CUDA]
    prof: Any = profile(activities=activities, record_shapes=True)
    time_calls(run, warmup=warmup, runs=repeats, sync=synchroniser(True), around=prof)
    aten = {a: n for n in names if (a := library_aten_name(n)) is not None}
    durations: dict[str, list[float]] = {}
    unattributed: dict[str, float] = {}
    graph_launches = 0
    device_us = 0.0
    attributed_ids: set[int] = set()
    events = list(prof.events())
    # record_function ranges (the compiled graph's "## Call CompiledFxGraph ##", the
    # optimizer's step) are mirrored on the device timeline and span its kernels:
    # they are not device work of their own.
    ranges = {e.name for e in events if not str(e.device_type).endswith("CUDA")}
    for event in events:
        if event.name == "cudaGraphLaunch":
            graph_launches += 1
        annotation = getattr(event, "is_user_annotation", False) or (
            event.name in ranges and event.name not in names
        )
        if str(event.device_type).endswith("CUDA") and not annotation:
            device_us += float(event.time_range.elapsed_us())
            if event.name in names:
                durations.setdefault(event.name, []).append(float(event.time_range.elapsed_us()))
                attributed_ids.add(id(event))
        elif event.name in aten and _outermost(event, aten):
            total = _kernels_below(event)
            if total > 0:
                durations.setdefault(aten[event.name], []).append(total)
    attributed = sum(sum(v) for v in durations.values())
    rest = device_us - attributed
    if rest > 0:
        for event in events:
            if not str(event.device_type).endswith("CUDA") and event.kernels:
                top = _top_op(event)
                if top in aten:
                    continue
                us = sum(float(k.duration) for k in event.kernels if k.name not in names)
                if us <= 0:
                    continue
                unattributed[top] = unattributed.get(top, 0.0) + us
    return Profiled(
        durations=durations,
        graph_launches=graph_launches,
        device_us=device_us,
        unattributed_us=unattributed,
    )


def _outermost(event: Any, aten: dict[str, str]) -> bool:
    parent = event.cpu_parent
    while parent is not None:
        if parent.name in aten:
            return False
        parent = parent.cpu_parent
    return True


def _kernels_below(event: Any) -> float:
    total = sum(float(k.duration) for k in event.kernels)
    return total + sum(_kernels_below(child) for child in event.cpu_children)


def _top_op(event: Any) -> str:
    while event.cpu_parent is not None and str(event.cpu_parent.name).startswith("aten::"):
        event = event.cpu_parent
    return str(event.name)


def matmul_peak_tflops(n: int = 8192, repeats: int = 5) -> float:
    """Throughput of a large fp32 matrix product (torch's default precision), TFLOP/s."""
    import torch

    a = torch.randn(n, n, device="cuda")
    b = torch.randn(n, n, device="cuda")
    return float(2 * n**3 / _device_seconds(lambda: a @ b, repeats) / 1e12)


def copy_peak_gbps(nbytes: int = 1 << 30, repeats: int = 10) -> float:
    """Bandwidth of a large device-to-device copy (read + write), in GB/s."""
    import torch

    src = torch.empty(nbytes, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    return float(2 * nbytes / _device_seconds(lambda: dst.copy_(src), repeats) / 1e9)


def _device_seconds(op: Callable[[], Any], repeats: int) -> float:
    """The median device time of ``op`` over ``repeats`` runs after one warm-up, each
    between two CUDA events: the one probe both peaks are measured with."""
    import torch

    op()
    times: list[float] = []
    for _ in range(repeats):
        start = torch.cuda.Event(enable_timing=True)  # type: ignore[no-untyped-call]
        end = torch.cuda.Event(enable_timing=True)  # type: ignore[no-untyped-call]
        start.record()
        op()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / 1e3)
    return float(statistics.median(times))


def timing(
    kernel: Kernel, out: OutputCode, durations: list[float], peak: float | None, runs: int
) -> KernelTiming:
    """A KernelTiming from the durations measured for ``kernel`` over ``runs`` runs."""
    median = statistics.median(durations)
    nbytes = kernel_bytes(out, kernel)
    gbps = nbytes / (median * 1e-6) / 1e9 if nbytes and median > 0 else None
    flops = kernel_flops(out, kernel)
    per_run_s = sum(durations) / runs * 1e-6 if runs else 0.0
    return KernelTiming(
        calls=len(durations),
        median_us=median,
        min_us=min(durations),
        bytes=nbytes,
        achieved_gbps=gbps,
        peak_gbps=peak,
        flops=flops,
        achieved_tflops=flops / per_run_s / 1e12 if flops and per_run_s > 0 else None,
    )


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
