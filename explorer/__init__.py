"""The torch.compile explorer in Jupyter: the ``%%compile`` magic and the widget.

Load the extension in a notebook with ``%load_ext explorer``, then put ``%%compile``
on top of a cell (``%%compile?`` lists the options). From Python, ``show`` compiles a
function or module and returns the widget, ``load`` opens a ``TORCH_TRACE`` log and
``view`` shows an ``Exploration`` you already have.

Importing this package imports neither IPython nor ipywidgets nor anywidget (nor
torch): they load when a widget or the magic is first used, so the rendering modules
import anywhere.

Example:
    >>> import torch, explorer
    >>> w = explorer.show(lambda x: torch.relu(x) * 2, torch.randn(8), backend="eager")
    >>> w.exploration.compiles[0].label  # doctest: +ELLIPSIS
    '0/0 <lambda>'
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

    from compiler import Exploration

    from .widget import ExplorationWidget

__all__ = [
    "ExplorationWidget",
    "live",
    "load",
    "load_ipython_extension",
    "show",
    "unload_ipython_extension",
    "view",
]


def show(target: Callable[..., Any], *inputs: Any, **compile_options: Any) -> ExplorationWidget:
    """Compile ``target`` on ``inputs``, record every stage and return the explorer widget.

    Args:
        target: a function or an ``nn.Module`` (or code that calls compiled code).
        *inputs: example inputs, passed to ``target`` positionally.
        **compile_options: ``mode``, ``backend``, ``dynamic``, ``fullgraph``,
            ``options``, ``keep_caches``, ``wrap``, ``decompile``, as in
            ``compiler.explore``; any other keyword goes to ``target``.

    Returns:
        An ``ExplorationWidget``; the last expression of a cell displays it, and its
        ``.exploration`` is the recorded ``Exploration``.

    Raises:
        compiler.ExploreError: (``OptionError``, ``InputError``, ``CompileError``, ...)
            with a one-paragraph message; ``.exploration`` holds what was captured
            before the failure, which ``explorer.view`` shows.

    Example:
        >>> import torch, explorer
        >>> w = explorer.show(torch.nn.Linear(4, 2), torch.randn(3, 4), backend="aot_eager")
        >>> len(w.exploration.compiles)
        1
    """
    import compiler

    return view(compiler.explore(target, *inputs, **compile_options))


def live(source_or_function: Any, *inputs: Any, **compile_options: Any) -> Any:
    """An editor whose edits recompile, the explorer following them.

    Arguments and options: ``explorer._live.live`` (a private module, so that importing
    it cannot replace this function by a module of the same name).

    Example:
        >>> w = explorer.live("def f(x):\\n    return x.cos()\\n", torch.randn(4))  # doctest: +SKIP
    """
    from ._live import live as _live

    return _live(source_or_function, *inputs, **compile_options)


def load(trace_path: str | os.PathLike[str]) -> ExplorationWidget:
    """Open a ``TORCH_TRACE`` directory or log file (or an ``Exploration`` ``.json``).

    Loading never runs code from the file. Bad trace lines are skipped and listed in
    ``exploration.errors``.

    Args:
        trace_path: a ``TORCH_TRACE`` directory, a ``.log``/``.log.gz`` file, or a
            file written by ``Exploration.to_json``.

    Returns:
        An ``ExplorationWidget`` on what the trace recorded.

    Raises:
        compiler.TraceFormatError: nothing readable at ``trace_path``.
        compiler.SchemaVersionError: the ``.json`` was written by a newer version.

    Example:
        >>> import explorer
        >>> w = explorer.load("tests/data/traces/graph_break_eager")  # doctest: +SKIP
    """
    import compiler

    path = os.fspath(trace_path)
    if path.endswith(".json") and os.path.isfile(path):
        with open(path, encoding="utf-8") as f:
            return view(compiler.Exploration.from_json(f.read()))
    return view(compiler.load_trace(path))


def view(exploration: Exploration) -> ExplorationWidget:
    """The explorer widget for an ``Exploration`` captured or loaded earlier.

    Example:
        >>> import torch, compiler, explorer
        >>> exp = compiler.explore(torch.sin, torch.randn(4), backend="eager")
        >>> explorer.view(exp).exploration is exp
        True
    """
    from .widget import ExplorationWidget

    return ExplorationWidget(exploration)


def load_ipython_extension(ip: InteractiveShell) -> None:
    """``%load_ext explorer``: register the ``%%compile`` cell magic."""
    from ._magic import CompileMagics

    ip.register_magics(CompileMagics)


def unload_ipython_extension(ip: InteractiveShell) -> None:
    """``%unload_ext explorer``: remove ``%%compile`` again (earlier widgets keep working)."""
    from ._magic import CompileMagics

    manager = ip.magics_manager
    for kind, names in CompileMagics.magics.items():
        for name in names:
            registered = manager.magics[kind].get(name)
            if isinstance(getattr(registered, "__self__", None), CompileMagics):
                del manager.magics[kind][name]
    manager.registry.pop(CompileMagics.__name__, None)


def __getattr__(name: str) -> Any:
    # ``explorer.ExplorationWidget`` without importing anywidget at ``import explorer``.
    if name == "ExplorationWidget":
        from .widget import ExplorationWidget

        return ExplorationWidget
    raise AttributeError(f"module 'explorer' has no attribute {name!r}")
