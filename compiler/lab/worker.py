"""The kernel lab's worker: a process that lowers Triton kernel source on request.

Started by ``compiler.lab.engine.KernelLab`` as ``python -m compiler.lab.worker``; it
speaks the worker protocol (``compiler.worker.frames``), and anything the compiler prints
goes to stderr. Why a process of its own: Triton's
compiler is native code that can crash or loop on an edited kernel, and it imports torch's
Inductor runtime; in a worker none of that reaches the user's kernel. It imports Triton
and lowers one tiny kernel before saying it is ready, so an edit pays for its own
lowering only (the first lowering of a process costs ~0.6 s more, measured).

Every request is one kernel module: Inductor's source, written to a file of the name the
captured stages give it so that ``loc(...)`` and ``.loc`` lines come out the same as on
the GPU machine. Two lines of Inductor's module cannot run without a GPU and are blanked
(lines kept, so line numbers do not move): ``triton_helpers.set_driver_to_gpu()``, and
the ``@triton_heuristics.<kind>(...)`` decorator, which builds an autotuner that needs a
driver; its arguments (``triton_meta``: the signature, constants and divisibility
attributes) are read by calling a stand-in with them.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import os
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

from compiler.gpu import triton_stages
from compiler.model import LoweredStage
from compiler.parse.triton.kernel_module import lines_before_def, ptxas_stats, with_heuristics
from compiler.worker.frames import error as _error
from compiler.worker.frames import serve

_DRIVER_LINE = "triton_helpers.set_driver_to_gpu()"
_HEURISTICS = "_lab_heuristics"
# cuobjdump takes 0.6-0.8 s per kernel here, more than the lowering itself
SASS_DEFERRED = (
    "not disassembled: cuobjdump costs more than the lowering, so SASS comes on request "
    "(compiler.relower(..., sass=True); the lab's SASS pane asks for it)."
)
_WARM_UP = """
import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers  # every Inductor kernel imports it

@triton.jit
def lab_warm_up(in_ptr, out_ptr, XBLOCK: tl.constexpr):
    x = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)
    tl.store(out_ptr + x, tl.sin(tl.load(in_ptr + x)) + 1)
"""


class _Heuristics:
    """Stands in for ``triton_heuristics``: ``@_lab_heuristics.pointwise(**kw)`` keeps
    ``kw`` and leaves the function as ``@triton.jit`` made it."""

    def __init__(self) -> None:
        self.kind = ""
        self.kwargs: dict[str, Any] = {}

    def __getattr__(self, kind: str) -> Any:
        def decorator(*_args: Any, **kwargs: Any) -> Any:
            self.kind, self.kwargs = kind, kwargs
            return lambda fn: fn

        return decorator


def runnable_source(source: str) -> str:
    """Inductor's kernel module with the two GPU-only lines made inert, lines kept."""
    source = source.replace(_DRIVER_LINE, "")
    return with_heuristics(source, _HEURISTICS)


def _module_line(exc: BaseException, path: str) -> int | None:
    """The last line of the kernel's module in the traceback, or in the message of a
    Triton CompilationError (whose node carries the line Triton parsed)."""
    line = None
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename == path:
            line = frame.lineno
    return line


def _triton_line(exc: BaseException, fn: Any) -> int | None:
    """A Triton CompilationError's line in the module file: its AST node's line counts
    from the ``def`` line of the function Triton parsed."""
    node = getattr(exc, "node", None)
    lineno = getattr(node, "lineno", None)
    if lineno is None:
        return None
    src: str = getattr(exc, "src", None) or ""
    own: str = getattr(fn, "src", "")
    if src and own and src != own:
        return None  # an error inside a helper Triton inlined: not a line of this kernel
    start = getattr(fn, "starting_line_number", None)
    raw = getattr(fn, "raw_src", None)
    if start is None or raw is None:
        return None
    # raw_src starts at the first decorator; src (what the node counts in) at ``def``
    text = "".join(raw) if isinstance(raw, list) else str(raw)
    return int(start) + lines_before_def(text) + int(lineno) - 1


def load_module(path: str, name: str) -> tuple[Any, _Heuristics]:
    """Import the kernel module at ``path`` (written by ``runnable_source``): the module,
    and the stand-in that kept the Inductor decorator's arguments (``.kwargs``)."""
    heuristics = _Heuristics()
    spec = importlib.util.spec_from_file_location(f"lab_{name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    setattr(module, _HEURISTICS, heuristics)
    spec.loader.exec_module(module)
    return module, heuristics


def _sass(cubin: bytes, folder: str, name: str) -> LoweredStage:
    """The cubin's SASS, by the same ``cuobjdump`` the captured SASS came from."""
    path = Path(folder) / f"{name}.cubin"
    path.write_bytes(cubin)
    return triton_stages.sass(path)


def lower(req: dict[str, Any], folder: str, reports: dict[str, str]) -> dict[str, Any]:
    """Lower one kernel: the module file, its function, ``triton.compile`` for the target,
    then ptxas's statistics and the SASS. Errors come back as data with their line.

    ``reports`` keeps ptxas's report per compiled hash: a request Triton answers from this
    worker's cache (the same kernel again, say with SASS) runs no ptxas."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    name, file_name = req["name"], req["file_name"]
    path = os.path.join(folder, file_name)
    # Inductor's module file starts with a newline Kernel.source does not keep: with it
    # the lowered stages name the same lines as the captured ones.
    source = req["source"]
    with open(path, "w") as fh:
        fh.write("\n" + runnable_source(source))
    sys.modules.pop(f"lab_{name}", None)
    try:
        compile(runnable_source(source), path, "exec")
    except SyntaxError as exc:
        return _error("syntax", f"SyntaxError: {exc.msg}", exc.lineno)
    try:
        module, heuristics = load_module(path, name)
    except Exception as exc:
        line = _module_line(exc, path)
        message = f"running the kernel module raised {type(exc).__name__}: {exc}"
        return _error("exception", message, line - 1 if line else None)
    fn = getattr(module, name, None)
    if fn is None or not hasattr(fn, "src"):
        return _error("kernel", f"the source no longer defines the @triton.jit kernel {name}.")
    meta = heuristics.kwargs.get("triton_meta")
    if not isinstance(meta, dict):
        return _error("kernel", "the source has no @triton_heuristics decorator with a "
                      "triton_meta: the lab reads the kernel's signature from it.")  # fmt: skip
    config = req["config"]
    constants = dict(meta.get("constants", {}))
    constants.update({k: v for k, v in config.items() if k in meta["signature"]})
    attrs = (meta.get("configs") or [{}])[0]
    options = {
        "num_warps": int(config.get("num_warps", 4)),
        "num_stages": int(config.get("num_stages", 1)),
        # what Inductor passes (triton_heuristics._create_compile_options)
        "debug": bool(req.get("debug", True)),
        "sanitize_overflow": False,
        "launch_pdl": bool(meta.get("launch_pdl", False)),
    }
    if "enable_fp_fusion" in meta:
        options["enable_fp_fusion"] = bool(meta["enable_fp_fusion"])
    if meta.get("disable_ftz"):
        options["enable_reflect_ftz"] = False
    log = io.StringIO()
    started = time.perf_counter()
    try:
        with contextlib.redirect_stdout(log):
            compiled = triton.compile(
                ASTSource(fn, meta["signature"], constants, attrs),
                target=GPUTarget("cuda", int(req["arch"]), 32),
                options=options,
            )
    except Exception as exc:
        line = _triton_line(exc, fn)
        message = str(exc).strip() or type(exc).__name__
        return _error("triton", f"{type(exc).__name__}: {message}", line - 1 if line else None)
    seconds = time.perf_counter() - started
    stages = {s: compiled.asm[s] for s in ("ttir", "ttgir", "llir", "ptx") if s in compiled.asm}
    if "cubin" not in compiled.asm:
        sass = LoweredStage(stage="sass", error="Triton produced no cubin")
    elif req.get("sass"):
        sass = _sass(compiled.asm["cubin"], folder, name)
    else:
        sass = LoweredStage(stage="sass", error=SASS_DEFERRED)
    md = compiled.metadata
    report = log.getvalue() or reports.get(str(md.hash), "")
    reports[str(md.hash)] = report
    return {
        "ok": True,
        "stages": stages,
        "sass": sass,
        "ptxas": ptxas_stats(report),
        "ptxas_log": report,
        "shared": int(getattr(md, "shared", 0) or 0),
        "hash": str(getattr(md, "hash", "")),
        "arch": str(getattr(md, "arch", "")),
        "triton_version": triton.__version__,
        "heuristic": heuristics.kind,
        "options": options,
        "constants": {k: v for k, v in constants.items() if isinstance(v, (int, float, bool))},
        "seconds": seconds,
    }


def main() -> None:
    """Serve requests until stdin closes."""
    with tempfile.TemporaryDirectory(prefix="kernel-lab-") as folder:
        # a cache of this worker's own: the user's Triton cache is never written
        os.environ["TRITON_CACHE_DIR"] = os.path.join(folder, "cache")
        reports: dict[str, str] = {}
        serve(lambda req: lower(req, folder, reports), lambda _hello: _warm_up(folder),
              "kernel lab worker")  # fmt: skip


def _warm_up(folder: str) -> None:
    """Lower a tiny kernel (no decorator: it is plain ``@triton.jit``) once, and
    disassemble it."""
    import triton
    from triton import knobs
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    # ptxas's -v report (registers, spills) is printed only when asked for
    knobs.nvidia.dump_ptxas_log = True
    path = os.path.join(folder, "lab_warm_up.py")
    with open(path, "w") as fh:
        fh.write(_WARM_UP)
    module, _ = load_module(path, "lab_warm_up")
    fn = module.lab_warm_up
    log = io.StringIO()
    with contextlib.redirect_stdout(log):
        compiled = triton.compile(
            ASTSource(fn, {"in_ptr": "*fp32", "out_ptr": "*fp32", "XBLOCK": "constexpr"},
                      {"XBLOCK": 128}, {}),
            target=GPUTarget("cuda", 90, 32), options={"num_warps": 4},
        )  # fmt: skip
    _sass(compiled.asm["cubin"], folder, "lab_warm_up")


if __name__ == "__main__":
    main()
