"""``explorer.live``: an editor whose edits recompile, the explorer following them.

The widget is a column: the editor (``explorer/static/live.js``) with the compile
controls, the compiling indicator, the error at its line and the versions; the
``ExplorationWidget`` of the version on show (updated in place, keeping the selection);
and a diff of any two versions (``explorer/static/diff.js``). Compiles run in a worker
process (``compiler.live.session``), so the notebook stays usable and the user's torch state is
never touched.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import inspect
import threading
import time
from collections.abc import Callable
from typing import Any

import anywidget
import anywidget.experimental
import ipywidgets
import traitlets

from compiler import CompileSpec, Exploration, OptionError
from compiler.live.session import HISTORY_LIMIT, LiveEngine, LiveResult
from compiler.live.target import LiveTarget, target_of

from .._static import widget_path
from .diff_view import DiffWidget

DEBOUNCE_MS = 750
# how to compile is a CompileSpec; decompiling is how the worker records it
_COMPILE_KEYS = (*CompileSpec.names(), "decompile")
# the spec's fields the editor's controls set
_CONTROLS = ("backend", "mode", "dynamic", "fullgraph")


class EditorWidget(anywidget.AnyWidget):  # type: ignore[misc]
    """The editor half of the live explorer: source, controls, status and versions.

    The front-end's requests are anywidget commands (``experimental.invoke``): ``_edit``
    ``{text}``, ``_recompile``, ``_show`` ``{version}``, each answered ``{}`` once the
    ``LiveExplorer`` that owns the editor has taken it.
    """

    _esm = widget_path("editors")  # the live editor's, with the kernel lab's

    code = traitlets.Dict().tag(sync=True)
    options = traitlets.Dict().tag(sync=True)
    auto = traitlets.Bool(True).tag(sync=True)
    status = traitlets.Dict().tag(sync=True)
    versions = traitlets.List().tag(sync=True)
    shown = traitlets.Int(0).tag(sync=True)
    magic_line = traitlets.Unicode("").tag(sync=True)

    def __init__(self, owner: LiveExplorer, **kwargs: Any) -> None:
        self._owner = owner
        super().__init__(**kwargs)

    @anywidget.experimental.command  # type: ignore[misc]
    def _edit(self, msg: Any, _buffers: list[bytes]) -> tuple[dict[str, Any], list[bytes]]:
        if isinstance(msg, dict) and isinstance(msg.get("text"), str):
            self._owner._edit(msg["text"])
        return {}, []

    @anywidget.experimental.command  # type: ignore[misc]
    def _recompile(self, _msg: Any, _buffers: list[bytes]) -> tuple[dict[str, Any], list[bytes]]:
        self._owner.recompile()
        return {}, []

    @anywidget.experimental.command  # type: ignore[misc]
    def _show(self, msg: Any, _buffers: list[bytes]) -> tuple[dict[str, Any], list[bytes]]:
        version = msg.get("version") if isinstance(msg, dict) else None
        if isinstance(version, int):
            self._owner._show_version(version)
        return {}, []


class LiveExplorer(ipywidgets.VBox):  # type: ignore[misc]
    """The live explorer; see ``explorer.live``.

    ``source`` (settable: setting it is an edit), ``history`` (successful versions'
    Explorations, oldest first, at most ``history_limit``), ``error`` (the last failed
    edit's message, None once an edit compiles) and ``wait()``.
    """

    def __init__(
        self,
        source: str,
        inputs: tuple[Any, ...],
        *,
        target: str | LiveTarget | None = None,
        debounce_ms: int = DEBOUNCE_MS,
        auto: bool = True,
        magic_line: str = "",
        timeout: float | None = None,
        history_limit: int = HISTORY_LIMIT,
        **compile_options: Any,
    ) -> None:
        unknown = sorted(set(compile_options) - set(_COMPILE_KEYS))
        if unknown:
            msg = (f"explorer.live: unknown option{'s' * (len(unknown) > 1)} "
                   f"{', '.join(unknown)}; it takes {', '.join(_COMPILE_KEYS)}, target, "
                   "debounce_ms, auto, timeout and history_limit.")  # fmt: skip
            raise TypeError(msg)
        # None leaves a choice at its default, as explore's own keywords do
        given = {k: v for k, v in compile_options.items() if v is not None}
        self._decompile: bool | None = given.pop("decompile", None)
        self._spec = CompileSpec.of(**given).check()
        self._inputs = inputs
        self._target = target
        self._debounce = debounce_ms / 1000
        self._source = source
        self._error: str | None = None
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None
        self._results: dict[int, LiveResult] = {}
        self._differ = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="live-diff")
        self._diffed: concurrent.futures.Future[None] = concurrent.futures.Future()
        self._diffed.set_result(None)
        engine_kwargs: dict[str, Any] = {"history_limit": history_limit}
        if timeout is not None:
            engine_kwargs["timeout"] = timeout
        backend = self._spec.backend
        self._engine = LiveEngine(self._on_result, backend=backend if isinstance(backend, str)
                                  else "inductor", **engine_kwargs)  # fmt: skip
        self.editor = EditorWidget(
            self, code={"text": source, "n": 0}, auto=auto, magic_line=magic_line,
            options={k: getattr(self._spec, k) for k in _CONTROLS},
            status={"state": "compiling", "message": "compiling version 1 ..."},
        )  # fmt: skip
        self.editor.observe(self._on_options, names="options")
        self.view: Any = None  # the ExplorationWidget, made on the first success
        self._view_box = ipywidgets.VBox([ipywidgets.HTML("<i>compiling ...</i>")])
        self.diff_view = DiffWidget()
        super().__init__([self.editor, self._view_box, self.diff_view])
        self._submit()

    # -- the public API --------------------------------------------------------------------

    @property
    def source(self) -> str:
        """The source in the editor; setting it is an edit (recompiles after the pause)."""
        return self._source

    @source.setter
    def source(self, text: str) -> None:
        self._edit(text)
        self.editor.code = {"text": text, "n": int(self.editor.code.get("n", 0)) + 1}

    @property
    def history(self) -> tuple[Exploration, ...]:
        """The Explorations of the versions that compiled, oldest first (bounded)."""
        return tuple(r.exploration for r in self._engine.history if r.exploration is not None)

    @property
    def error(self) -> str | None:
        """The last failed edit's message (with its line), or None if the latest compiled."""
        return self._error

    def wait(self, timeout: float | None = None) -> bool:
        """Block until no edit is waiting or compiling; False if ``timeout`` ran out."""
        end = None if timeout is None else time.monotonic() + timeout
        while True:
            with self._lock:
                timer = self._timer
            if timer is None or not timer.is_alive():
                break
            if end is not None and time.monotonic() > end:
                return False
            time.sleep(0.02)
        left = None if end is None else max(0.0, end - time.monotonic())
        if not self._engine.wait(left):
            return False
        left = None if end is None else max(0.0, end - time.monotonic())
        try:
            self._diffed.result(left)
        except concurrent.futures.TimeoutError:
            return False
        except Exception:  # a failed diff leaves the diff view as it was; the edit compiled
            return True
        return True

    def recompile(self) -> None:
        """Compile the current source now (the "Recompile" button)."""
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
        self._submit()

    def close(self) -> None:
        """Stop the worker processes and close the widgets."""
        if not hasattr(self, "_engine"):  # __init__ refused its arguments: nothing started
            super().close()
            return
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
        self._engine.close()
        self._differ.shutdown(wait=False, cancel_futures=True)
        super().close()

    # -- edits -------------------------------------------------------------------------------

    def _edit(self, text: str) -> None:
        self._source = text
        if not self.editor.auto:
            return
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
            self._timer = threading.Timer(self._debounce, self._submit)
            self._timer.daemon = True
            self._timer.start()

    def _submit(self) -> None:
        options = {k: v for k, v in self._spec.kwargs().items() if v is not None}
        if self._decompile is not None:
            options["decompile"] = self._decompile
        version = self._engine.submit(self._source, self._inputs, options, self._target)
        self.editor.status = {"state": "compiling", "version": version,
                              "message": f"compiling version {version} ..."}  # fmt: skip
        with self._lock:
            self._timer = None

    def _show_version(self, version: int) -> None:
        found = self._results.get(version)
        if found is not None and found.exploration is not None:
            self._show(found.version, found.exploration)

    def _on_options(self, change: Any) -> None:
        new = dict(change["new"] or {})
        default = CompileSpec()  # a control the front end leaves empty (null) is the default
        chosen = {k: getattr(default, k) if new.get(k) is None else new[k] for k in _CONTROLS}
        try:
            spec = dataclasses.replace(self._spec, **chosen).check()
        except OptionError as exc:  # nothing compiles: the controls' error, as an edit's
            self._error = str(exc)
            self.editor.status = {"state": "error", "message": self._error, "line": None,
                                  "stale": self.view is not None, "version": self.editor.shown}
            return
        self._spec = spec
        self.recompile()

    # -- results (called from the engine's thread) -------------------------------------------

    def _on_result(self, result: LiveResult) -> None:
        if result.exploration is None:
            err = result.error
            self._error = str(err) if err is not None else "the edit failed"
            self._view_box.add_class("tce-live-stale-view")
            self.editor.status = {
                "state": "error", "message": self._error, "line": err.line if err else None,
                "stale": self.view is not None, "version": self.editor.shown,
            }  # fmt: skip
            return
        self._error = None
        self._view_box.remove_class("tce-live-stale-view")
        keep = {r.version for r in self._engine.history}
        self._results = {v: r for v, r in self._results.items() if v in keep}
        self._results[result.version] = result
        self._show(result.version, result.exploration)
        kernels = sum(len(c.kernels()) for c in result.exploration.compiles)
        self.editor.status = {"state": "ok", "version": result.version,
                              "message": f"version {result.version}: {kernels} kernel"
                              f"{'s' * (kernels != 1)}, compiled in {result.seconds:.2f} s"}
        self.editor.versions = [
            {"version": r.version, "label": f"v{r.version}", "source": r.source,
             "summary": f"{r.options.get('backend')} {r.options.get('mode') or ''}".strip()}
            for r in self._engine.history
        ]  # fmt: skip
        # the diff after the view: on a large model it takes seconds the view need not wait
        versions = [(f"v{r.version}", r.exploration) for r in self._engine.history if r.exploration]
        self._diffed = self._differ.submit(self.diff_view.set_versions, versions)

    def _show(self, version: int, exploration: Exploration) -> None:
        if self.view is None:
            from ..widget import ExplorationWidget

            self.view = ExplorationWidget(exploration)
            self._view_box.children = [self.view]
        else:
            self.view.update(exploration)
        self.editor.shown = version

    def __repr__(self) -> str:
        return f"<LiveExplorer {len(self._engine.history)} versions, error={self._error!r}>"


def live(
    obj: Any, *inputs: Any, edit: Callable[..., Any] | None = None,
    namespace: dict[str, Any] | None = None, **compile_options: Any,
) -> LiveExplorer:  # fmt: skip
    """An editor on ``obj``'s source whose edits recompile, with the explorer below.

    Args:
        obj: what to compile: Python source defining one function or ``nn.Module`` class;
            a function; an ``nn.Module`` class (built with no arguments) or instance (its
            constructor arguments, weights and buffers kept; the editor holds its class).
            The code may use what the notebook defines (helpers, globals, classes,
            imported modules): it crosses to the worker process as data
            (``compiler.live.crossing``).
        *inputs: example inputs, sent to the worker process.
        edit: a method to edit instead, e.g. ``Block.forward`` or transformers'
            ``GPT2MLP.forward``: the editor holds its source, and each edit is set on its
            class (in the worker only) before ``obj``, a module, compiles.
        namespace: where the source's names are looked up (default: the caller's globals,
            the notebook's).
        **compile_options: ``mode``, ``backend``, ``dynamic``, ``fullgraph``,
            ``options`` as in ``torch.compile``, ``keep_caches`` and ``decompile`` as in
            ``compiler.explore``; ``target`` (the name to compile when the
            source defines several), ``debounce_ms`` (idle pause before an edit
            recompiles, default 750), ``auto`` (False: recompile only on the button),
            ``timeout`` (seconds before a compile is stopped), ``history_limit``.

    Returns:
        A ``LiveExplorer``: set ``.source`` to edit, ``.wait()`` for the compile.

    Raises:
        OptionError: an unknown backend, mode or Inductor option (``CompileSpec.check``),
            before any worker starts.

    Example:
        >>> import torch, explorer
        >>> w = explorer.live("def f(x):\\n    return x.relu() + 1\\n", torch.randn(8),
        ...                   backend="aot_eager")  # doctest: +SKIP
        >>> w.wait(); w.source = "def f(x):\\n    return x.sin()\\n"  # doctest: +SKIP
        >>> explorer.live(model, x, edit=GPT2MLP.forward)  # doctest: +SKIP
    """
    if namespace is None:
        caller = inspect.currentframe()
        namespace = caller.f_back.f_globals if caller and caller.f_back else {}
    source, target = target_of(obj, edit=edit, namespace=namespace,
                               name=compile_options.pop("target", None))  # fmt: skip
    return LiveExplorer(source, inputs, target=target, **compile_options)


__all__ = ["DEBOUNCE_MS", "EditorWidget", "LiveExplorer", "live"]
