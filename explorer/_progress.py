"""A one-line progress display under a notebook cell while torch.compile works.

``showing_progress()`` wraps any code that compiles (``%%compile``, ``explorer.show``,
``%%compare``): after a short delay, so quick compiles stay quiet, it shows which phase
the compiler is in and the time so far, refreshed twice a second, and at the end one
line saying how long it took. Outside a Jupyter kernel (a terminal, a script) it does
nothing.
"""

from __future__ import annotations

import contextlib
import html
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from compiler.capture.progress import Progress, reporting

# torch's phase names, in words a reader knows; any other phase shows by its own name.
PHASE_LABELS = {
    "entire_frame_compile": "Dynamo: compiling a frame",
    "bytecode_tracing": "Dynamo: tracing bytecode into an FX graph",
    "backend_compile": "backend",
    "create_aot_dispatcher_function": "AOTAutograd: tracing ATen graphs",
    "aot_collect_metadata": "AOTAutograd: collecting metadata",
    "_recursive_joint_graph_passes": "AOTAutograd: joint graph passes",
    "inductor_compile": "Inductor",
    "fx_codegen_and_compile": "Inductor: lowering and code generation",
    "_recursive_post_grad_passes": "Inductor: post-grad passes",
    "compile_file": "C++ compiler: building kernels",
    "async_compile.wait": "waiting for kernel builds",
    "PyCodeCache.load_by_key_path": "loading the generated module",
    "build_guards": "Dynamo: building guards",
}
# Phases too short or too deep to be worth naming: the line shows their parent instead.
_QUIET_PREFIXES = (
    "pass.", "CacheBase.", "inductor_codecache", "insert_deferred", "compile_attempt_", "gc",
)  # fmt: skip


def describe(progress: Progress) -> str:
    """``compile 2 · Inductor: lowering and code generation`` for one Progress."""
    named = [p for p in progress.running if not p.startswith(_QUIET_PREFIXES)]
    where = PHASE_LABELS.get(named[-1], named[-1]) if named else "running"
    return f"compile {progress.compiles} · {where}" if progress.compiles else where


class _Line:
    """What the display shows: plain text, escaped for HTML."""

    def __init__(self, text: str) -> None:
        self.text = text

    def _repr_html_(self) -> str:
        return f'<pre class="explorer-progress" style="margin:0">{html.escape(self.text)}</pre>'

    def __repr__(self) -> str:
        return self.text


def _no_status(_: str) -> None:
    return None


def _in_kernel() -> bool:
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell: Any = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


@contextlib.contextmanager
def showing_progress(
    what: str = "torch.compile", *, delay_s: float = 0.7
) -> Iterator[Callable[[str], None]]:
    """Show the compiler's phase and the elapsed time under the running cell.

    Yields a function that sets a status shown before the phase (``compare`` uses it
    for the configuration and step it is on).

    Args:
        what: the line's prefix, e.g. ``torch.compile`` or ``compare``.
        delay_s: nothing shows before this many seconds (quick compiles stay quiet).
    """
    if not _in_kernel():
        yield _no_status
        return
    from IPython.display import display

    start = time.perf_counter()
    state: dict[str, Any] = {"text": "starting", "status": "", "handle": None}
    lock = threading.Lock()
    stop = threading.Event()

    def on_progress(progress: Progress) -> None:
        with lock:
            state["text"] = describe(progress)

    def set_status(text: str) -> None:
        with lock:
            state["status"] = text
            state["text"] = ""

    def refresh() -> None:
        while not stop.wait(0.5):
            elapsed = time.perf_counter() - start
            if elapsed < delay_s:
                continue
            with lock:
                parts = [p for p in (state["status"], state["text"]) if p]
                line = _Line(f"{what}: {' · '.join(parts)} · {elapsed:.1f} s")
                if state["handle"] is None:
                    state["handle"] = display(line, display_id=True)
                else:
                    state["handle"].update(line)

    ticker = threading.Thread(target=refresh, name="explorer-progress", daemon=True)
    ticker.start()
    try:
        with reporting(on_progress):
            yield set_status
    finally:
        stop.set()
        ticker.join()
        with lock:
            if state["handle"] is not None:
                elapsed = time.perf_counter() - start
                state["handle"].update(_Line(f"{what}: done in {elapsed:.1f} s"))
