"""What Inductor leaves behind a compile: the output-code module it loaded, Triton's cache
folder, max-autotune's benchmark feedback, and AOTInductor packages.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any


def add_autotune_listener(listener: Callable[..., None]) -> Callable[[], None]:
    """Call ``listener(timings, name, input_nodes, choices, ...)`` whenever Inductor's
    algorithm selection (max-autotune) has benchmarked its choices; returns a function
    that removes exactly this listener (``select_algorithm.add_feedback_saver``, torch
    2.11/2.13; torch only offers clearing all of them, which would drop the user's)."""
    from torch._inductor import select_algorithm

    select_algorithm.add_feedback_saver(listener)

    def remove() -> None:
        savers = select_algorithm.get_algorithm_selector_cache().feedback_saver_fns
        if listener in savers:
            savers.remove(listener)

    return remove


def triton_cache_dir() -> Path | None:
    """Triton's cache folder in this process: ``TRITON_CACHE_DIR`` (Inductor sets it to
    ``<inductor cache>/triton/<device>`` on its first Triton kernel when the user has
    not: ``torch._inductor.runtime.cache_dir_utils.triton_cache_dir``, torch 2.11/2.13),
    None before any Triton kernel and without Triton."""
    import os

    directory = os.environ.get("TRITON_CACHE_DIR")
    if directory:
        return Path(directory)
    try:
        from torch._inductor.runtime.cache_dir_utils import triton_cache_dir as inductor_dir
    except ImportError:
        return None
    path = Path(inductor_dir(0))
    return path if path.is_dir() else None


def loaded_output_module(path: str) -> ModuleType | None:
    """The output-code module Inductor loaded from ``path`` in this process, whose
    globals hold each Triton kernel's ``CachingAutotuner`` once the compile finished
    (``torch._inductor.codecache.PyCodeCache.modules``/``modules_no_attr``, 2.11/2.13)."""
    if not path:
        return None
    from torch._inductor.codecache import PyCodeCache

    module = PyCodeCache.modules_no_attr.get(path)
    if module is not None:
        return module
    for candidate in reversed(PyCodeCache.modules):
        if getattr(candidate, "__file__", None) == path:
            return candidate
    return None


def aoti_compile_and_package(program: Any, package_path: str) -> str:
    """AOTInductor: compile an ``ExportedProgram`` ahead of time into a ``.pt2`` package
    (``torch._inductor.aoti_compile_and_package``, torch 2.6+; checked on 2.13 CPU and
    2.14.1). Returns the package's path."""
    from torch._inductor import aoti_compile_and_package as compile_and_package

    return str(compile_and_package(program, package_path=package_path))
