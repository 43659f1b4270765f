"""What the worker is asked to lower: the kernel's source, its launch config and its
target, each from the user's edit, else from what the GPU machine recorded."""

from __future__ import annotations

import ast
from collections.abc import Mapping

from compiler.lab.variant import LabError
from compiler.model import Kernel, TritonVariant
from compiler.parse.triton.kernel_module import block_params, module_path, size_hints, target_arch

DEFAULT_ARCH = 90
# A kernel recorded without its variants (an older recording, or one made with
# triton_stages=False) and without the config Inductor chose still lowers: with Triton's
# own defaults and at most 128 per block axis, within the kernel's size hints.
DEFAULT_CONFIG = {"num_warps": "4", "num_stages": "1"}
DEFAULT_BLOCK = "128"
# A persistent reduction holds its whole reduction (size hint r0_) per row; Inductor keeps
# XBLOCK * r0_ within this many elements, and so do we: 128 rows of 1024 took LLVM over a
# minute to lower.
PERSISTENT_ELEMENTS = 4096


def captured_variant(kernel: Kernel) -> TritonVariant | None:
    """The variant the GPU machine ran (autotuning's choice), or None."""
    return next((v for v in kernel.variants if v.chosen), None)


def arch_of(target: str | int | None, captured: TritonVariant | None) -> int:
    """The compute capability to lower for: ``"sm_80"``, ``"sm90"``, ``90`` or the
    captured form ``"cuda sm90 warp32"``; the captured target when None.

    Example:
        >>> arch_of("sm_80", None), arch_of(None, None)
        (80, 90)
    """
    if target is None:
        target = captured.target if captured and captured.target else DEFAULT_ARCH
    arch = target_arch(str(target))
    if arch is None:
        msg = (f"unknown target {target!r}: name an NVIDIA compute capability as sm_80, "
               "sm_90 or 90.")  # fmt: skip
        raise LabError(msg, kind="config")
    return arch


def recorded_config(kernel: Kernel) -> dict[str, str]:
    """The launch config the GPU machine used: the chosen variant's, else the one
    ``triton_kernel_info`` names (``best_config``/``only_config``), else defaults with
    every block-size constexpr of the signature at ``DEFAULT_BLOCK``."""
    captured = captured_variant(kernel)
    if captured is not None and captured.config:
        return {k: v for k, v in captured.config.items() if k != "num_ctas"}
    for key in ("best_config", "only_config"):
        text = kernel.info.get(key)
        if text:
            try:
                pairs = ast.literal_eval(text)
                return {str(k): str(v) for k, v in pairs}
            except (ValueError, SyntaxError, TypeError):
                pass
    config = dict(DEFAULT_CONFIG)
    hints = size_hints(kernel.source)
    persistent = "@triton_heuristics.persistent_reduction" in kernel.source
    reduction = hints.get("r0_", 1)
    for name in block_params(kernel.source):
        block = int(DEFAULT_BLOCK)
        hint = hints.get(name[: -len("BLOCK")].lower() or "x")
        if hint:
            block = min(block, _next_power_of_2(hint))
        if persistent and name == "XBLOCK":
            block = max(1, min(block, PERSISTENT_ELEMENTS // max(reduction, 1)))
        config[name] = str(block)
    return config


def _is_integer(value: str) -> bool:
    digits = value.strip().removeprefix("-")
    return digits.isascii() and digits.isdecimal()


def _next_power_of_2(n: int) -> int:
    return 1 << max(n - 1, 0).bit_length()


def merged_config(kernel: Kernel, config: Mapping[str, object] | None) -> dict[str, str]:
    """The recorded config with the user's changes on top; every value an integer."""
    merged = recorded_config(kernel)
    merged.update({str(k): str(v) for k, v in (config or {}).items()})
    for key, value in merged.items():
        if not _is_integer(value):
            msg = (f"config {key}={value!r} is not an integer: give block sizes, num_warps "
                   "and num_stages as whole numbers.")  # fmt: skip
            raise LabError(msg, kind="config")
    warps = int(merged.get("num_warps", "4"))
    if warps < 1 or warps & (warps - 1):
        raise LabError(f"num_warps={warps} must be a power of two (1, 2, 4, 8, 16, 32).",
                       kind="config")  # fmt: skip
    for key, value in merged.items():
        n = int(value)
        if key.endswith("BLOCK") and (n < 1 or n & (n - 1)):
            raise LabError(f"{key}={n} must be a power of two: tl.arange needs one.",
                           kind="config")  # fmt: skip
    return merged


def module_file_name(kernel: Kernel) -> str:
    """The base name of the module file the captured stages name (``cwp3...py``), so
    that a re-lowering's locations read the same; ``<kernel name>.py`` otherwise."""
    captured = captured_variant(kernel)
    for stage in captured.stages if captured else ():
        if stage.stage == "ttir" and stage.text:
            path = module_path(stage.text)
            if path:
                return path.rsplit("/", 1)[-1]
    return f"{kernel.name}.py"


def request(
    kernel: Kernel,
    source: str | None,
    config: Mapping[str, object] | None,
    target: str | int | None,
) -> dict[str, object]:
    """The message the worker lowers."""
    if kernel.language != "triton":
        msg = (f"{kernel.name} is a {kernel.language} kernel: the lab lowers Triton kernels "
               "(those of a GPU compile).")  # fmt: skip
        raise LabError(msg, kind="kernel")
    return {
        "name": kernel.name,
        "file_name": module_file_name(kernel),
        "source": kernel.source if source is None else source,
        "config": {k: int(v) for k, v in merged_config(kernel, config).items()},
        "arch": arch_of(target, captured_variant(kernel)),
    }
