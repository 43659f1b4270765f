"""The torch.compile explorer in Jupyter: the ``%%compile`` magic and the widget.

Load the extension in a notebook with ``%load_ext explorer``, then put ``%%compile``
on top of a cell (``%%compile?`` lists the options), or ``%%compare`` to time a cell's
last expression eagerly and compiled. From Python, ``show`` compiles a function or module
and returns the widget, ``load`` opens a ``TORCH_TRACE`` log, ``view`` shows an
``Exploration`` you already have and ``compare`` runs ``compiler.compare`` into a table
and chart.

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

    from compiler import Comparison, Exploration

    from .compare_widget import CompareView
    from .widget import ExplorationWidget

__all__ = [
    "ExplorationWidget",
    "compare",
    "live",
    "load",
    "load_ipython_extension",
    "missing_packages",
    "show",
    "to_html",
    "unload_ipython_extension",
    "view",
    "view_comparison",
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

    from ._progress import showing_progress

    with showing_progress():
        exploration = compiler.explore(target, *inputs, **compile_options)
    return view(exploration)


def live(obj: Any, *inputs: Any, **compile_options: Any) -> Any:
    """An editor whose edits recompile, the explorer following them: on source, a
    function, an ``nn.Module`` class or instance, or (``edit=Class.method``) a method.

    Arguments and options: ``explorer.editing.live.live`` (a private module, so that importing
    it cannot replace this function by a module of the same name).

    Example:
        >>> w = explorer.live("def f(x):\\n    return x.cos()\\n", torch.randn(4))  # doctest: +SKIP
        >>> w = explorer.live(Block(8, torch.nn.GELU()), x)  # doctest: +SKIP
    """
    import inspect

    from .editing.live import live as _live

    if "namespace" not in compile_options:
        # the names the source uses are the caller's (the notebook's), not this module's
        caller = inspect.currentframe()
        compile_options["namespace"] = caller.f_back.f_globals if caller and caller.f_back else {}
    return _live(obj, *inputs, **compile_options)


# A multi-rank directory larger than this opens rank by rank (``RanksWidget``).
LAZY_RANKS_BYTES = 256 << 20


def load(
    trace_path: str | os.PathLike[str],
    *,
    lazy: bool | None = None,
    profile: str | os.PathLike[str] | None = None,
) -> ExplorationWidget:
    """Open a ``TORCH_TRACE`` directory or log file (or an ``Exploration`` ``.json``).

    Loading never runs code from the file. Bad trace lines are skipped and listed in
    ``exploration.errors``. A multi-rank directory over 256 MB (or any, with
    ``lazy=True``) opens in outline: every rank's compiles, the ranks side by side and
    where they diverge, with a rank's graphs read when one of its panes is opened; in a
    notebook, the rank being scanned shows under the cell meanwhile.

    Args:
        trace_path: a ``TORCH_TRACE`` directory, a ``.log``/``.log.gz`` file, or a
            file written by ``Exploration.to_json``.
        profile: a ``torch.profiler`` Chrome trace of the same run (a file or a
            ``tensorboard_trace_handler`` folder), linked to the kernels
            (``compiler.attach_profile``); not with a multi-rank outline.

    Returns:
        An ``ExplorationWidget`` on what the trace recorded.

    Raises:
        compiler.TraceFormatError: nothing readable at ``trace_path``.
        compiler.SchemaVersionError: the ``.json`` was written by a newer version.

    Example:
        >>> import explorer
        >>> explorer.load("tests/data/traces/graph_break_eager").exploration.source
        'trace'
    """
    import compiler

    path = os.fspath(trace_path)

    def profiled(exp: Exploration) -> ExplorationWidget:
        return view(exp if profile is None else compiler.attach_profile(exp, profile))

    if path.endswith(".json") and os.path.isfile(path):
        with open(path, encoding="utf-8") as f:
            return profiled(compiler.Exploration.from_json(f.read()))
    if os.path.isdir(path) and lazy is not False and profile is None:
        from compiler.ranks.scan import rank_logs, scan_ranks

        logs = rank_logs(path)
        if len(logs) > 1 and (lazy or sum(p.stat().st_size for p in logs) > LAZY_RANKS_BYTES):
            from .ranks_widget import RanksWidget

            missing = missing_packages()
            if missing:
                raise ImportError(_missing_message(missing))
            from ._progress import showing_progress

            # seconds for GBs of logs: the rank being scanned shows under the cell
            with showing_progress("explorer.load") as status:
                outline = scan_ranks(path, progress=status)
            return RanksWidget(outline)
    return profiled(compiler.load_trace(path))


def view(exploration: Exploration) -> ExplorationWidget:
    """The explorer widget for an ``Exploration`` captured or loaded earlier.

    Example:
        >>> import torch, compiler, explorer
        >>> exp = compiler.explore(torch.sin, torch.randn(4), backend="eager")
        >>> explorer.view(exp).exploration is exp
        True
    """
    missing = missing_packages()
    if missing:
        raise ImportError(_missing_message(missing))
    from .widget import ExplorationWidget

    return ExplorationWidget(exploration)


def to_html(exploration: Exploration, path: str | os.PathLike[str] | None = None) -> str:
    """One self-contained, offline HTML page of ``exploration`` (written to ``path`` if
    given), with the explorer's navigation and cross-links; returns the HTML text.

    Example:
        >>> import torch, compiler, explorer
        >>> exp = compiler.explore(torch.sin, torch.randn(4), backend="eager")
        >>> explorer.to_html(exp).startswith("<!DOCTYPE html>")
        True
    """
    from .export import to_html as export_html

    return export_html(exploration, path)


# What the widget needs beyond the compiler: (import name, pip name).
_WIDGET_PACKAGES = (
    ("anywidget", "anywidget"), ("ipywidgets", "ipywidgets"), ("IPython", "ipython"),
)  # fmt: skip


def missing_packages() -> list[str]:
    """The pip names of the widget's packages that this environment lacks (none normally:
    they are part of the base install).

    Example:
        >>> import explorer
        >>> explorer.missing_packages()
        []
    """
    import importlib.util

    def lacks(name: str) -> bool:
        try:
            return importlib.util.find_spec(name) is None
        except (ImportError, ValueError):  # a broken or half-removed install
            return True

    return [pip for name, pip in _WIDGET_PACKAGES if lacks(name)]


def _missing_message(missing: list[str]) -> str:
    return (
        f"the explorer's widget needs {', '.join(missing)}, which this environment lacks. "
        f"Install {'them' if len(missing) > 1 else 'it'} with: pip install {' '.join(missing)} "
        "(or reinstall with pip install torch-compile-explorer), then restart the kernel."
    )


def compare(target: Callable[..., Any], *inputs: Any, **compare_options: Any) -> CompareView:
    """``compiler.compare`` with its progress under the cell, shown as a table and a chart.

    Args:
        target: a function or an ``nn.Module``, not yet compiled.
        *inputs: its example inputs.
        **compare_options: ``configs``, ``steps``, ``warmup``, ``record`` as in
            ``compiler.compare``.

    Returns:
        A ``CompareView``: click a row (or ``.select(name)``) to explore its compiles;
        ``explorer.compile_log.compile_log(view.comparison)`` is the compile log.

    Example:
        >>> import torch, explorer
        >>> v = explorer.compare(torch.nn.Linear(4, 4), torch.randn(2, 4), configs=["aot_eager"])
        >>> [r.name for r in v.comparison.rows]
        ['eager', 'aot_eager']
    """
    import compiler

    from ._progress import showing_progress

    with showing_progress("compare") as status:
        comparison = compiler.compare(
            target, *inputs, progress=lambda p: status(str(p)), **compare_options
        )
    return view_comparison(comparison)


def view_comparison(comparison: Comparison) -> CompareView:
    """The table, bar chart and per-row explorer of a ``compiler.compare`` result."""
    missing = missing_packages()
    if missing:
        raise ImportError(_missing_message(missing))
    from .compare_widget import CompareView

    return CompareView(comparison)


def load_ipython_extension(ip: InteractiveShell) -> None:
    """``%load_ext explorer``: register ``%%compile`` and ``%%compare``.

    Checks first that the widget's packages are installed, so a missing one is named
    (with the pip command) before any cell compiles anything.
    """
    missing = missing_packages()
    if missing:
        from IPython.core.error import UsageError

        # IPython shows a UsageError as its message alone, without a traceback.
        raise UsageError(_missing_message(missing))
    from .magics.compare_magic import CompareMagics
    from .magics.compile_magic import CompileMagics

    ip.register_magics(CompileMagics)
    ip.register_magics(CompareMagics)


def unload_ipython_extension(ip: InteractiveShell) -> None:
    """``%unload_ext explorer``: remove ``%%compile`` and ``%%compare`` (widgets keep working)."""
    from .magics.compare_magic import CompareMagics
    from .magics.compile_magic import CompileMagics

    manager = ip.magics_manager
    for cls in (CompileMagics, CompareMagics):
        for kind, names in cls.magics.items():
            for name in names:
                registered = manager.magics[kind].get(name)
                if isinstance(getattr(registered, "__self__", None), cls):
                    del manager.magics[kind][name]
        manager.registry.pop(cls.__name__, None)


def __getattr__(name: str) -> Any:
    # ``explorer.ExplorationWidget`` without importing anywidget at ``import explorer``.
    if name == "ExplorationWidget":
        from .widget import ExplorationWidget

        return ExplorationWidget
    raise AttributeError(f"module 'explorer' has no attribute {name!r}")
