"""Where ``compiler.explore``'s extra time goes: seconds spent inside each part of capture.

``timed_parts()`` wraps, for the duration of a ``with`` block, the functions that do
capture's work (ours) or the work torch does only because capture asked for it (the
fusion IR text, structured-trace payloads, provenance maps), and adds up the seconds
spent in each. Wrapped functions run unchanged; a wrapper costs about a microsecond
a call. Used by ``model_capture_overhead.py`` (CPU) and ``gpu_capture_overhead.py
--attribute`` (GPU).

    with timed_parts() as seconds:
        compiler.explore(model, x)
    print(seconds)  # {"fusion IR text (Inductor)": 0.21, ...}

Parts nest: "structured trace (torch + handler)" includes "trace handler (ours)", which
includes "module stacks (ours)". Parts marked (torch) are torch's code, run because
capture turned a log or a config flag on; ``trace_structured`` is patched where modules
imported it by name, so import the compile path first (a warm-up compile does).
"""

from __future__ import annotations

import contextlib
import functools
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

# (label, module, attribute path); labels are printed in this order
PARTS = (
    ("fusion IR text (Inductor)", "torch._inductor.debug", "DebugFormatter._write_ir"),
    ("structured trace (torch + handler)", "torch._logging._internal", "trace_structured"),
    ("  trace handler (ours)", "compiler.capture.recording", "_TraceHandler.emit"),
    ("    module stacks (ours)", "compiler.capture.recording", "_TraceHandler._module_stacks"),
    ("fusion IR handler (ours)", "compiler.capture.recording", "_FusionIRHandler.emit"),
    ("bytecode hook (ours)", "compiler.capture.recording", "Recording.bytecode_hook"),
    ("depyf decompile", "compiler.capture.recording", "_decompile"),
    (
        "provenance: pre/post map (torch)",
        "torch._inductor.debug",
        "create_mapping_pre_post_grad_nodes",
    ),
    ("provenance: dump (torch)", "torch._inductor.debug", "dump_inductor_provenance_info"),
    ("provenance: graph json (torch)", "torch.fx.traceback", "get_graph_provenance_json"),
    (
        "provenance: per kernel (torch)",
        "torch._inductor.debug",
        "set_kernel_post_grad_provenance_tracing",
    ),
    ("Triton stages (ours, GPU)", "compiler.capture.recording", "Recording._attach_triton_stages"),
    ("  stage files read (ours, GPU)", "compiler.gpu.triton_stages", "collect"),
    ("  stage line maps (ours, GPU)", "compiler.capture.recording", "with_source_lines"),
    ("Exploration build (ours)", "compiler.capture.recording", "Recording.exploration"),
)


def _wrap(label: str, fn: Callable[..., Any], seconds: dict[str, float]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def timed(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            seconds[label] = seconds.get(label, 0.0) + time.perf_counter() - start

    return timed


@contextlib.contextmanager
def timed_parts() -> Iterator[dict[str, float]]:
    """Seconds per part of capture while the block runs (see the module doc)."""
    import importlib

    seconds: dict[str, float] = {label: 0.0 for label, _, _ in PARTS}
    undo: list[Callable[[], None]] = []
    try:
        for label, module_name, path in PARTS:
            try:
                module = importlib.import_module(module_name)
            except ImportError:
                continue
            *owners, name = path.split(".")
            owner: Any = module
            for part in owners:
                owner = getattr(owner, part, None)
            if owner is None or name not in vars(owner):
                continue
            raw = vars(owner)[name]
            fn = raw.__func__ if isinstance(raw, staticmethod) else raw
            timed = _wrap(label, fn, seconds)
            new = staticmethod(timed) if isinstance(raw, staticmethod) else timed
            setattr(owner, name, new)
            undo.append(functools.partial(setattr, owner, name, raw))
            if owner is module:  # also where other modules imported it by name
                for other in list(sys.modules.values()):
                    try:
                        same = other is not module and getattr(other, name, None) is raw
                    except Exception:  # a module with a lazy __getattr__ that raises
                        same = False
                    if same:
                        setattr(other, name, timed)
                        undo.append(functools.partial(setattr, other, name, raw))
        yield seconds
    finally:
        for restore in reversed(undo):
            restore()
