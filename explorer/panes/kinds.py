"""The pane kinds, registered once: each kind's name, the module that builds it and its
browser renderer; its builder and class are read from that module when first asked for
(a module of a kind never imports this one).

``KINDS`` is the one table. ``build_pane`` looks a kind's builder up in it, the JSDoc
``Pane`` union lists its classes, and ``explorer/static/panes/renderers.js`` (the browser's
``RENDERERS``, kind -> ``render<Kind>(el, pane, ctx)``) is generated from it by
``renderers_js()``; ``tests/test_panes.py`` regenerates and compares, so adding a kind
here is the whole registration. After changing the table run::

    python -c "from explorer.panes import renderers_js; print(renderers_js(), end='')" \
        > explorer/static/panes/renderers.js && npm run build
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .types import PaneHead

__all__ = ["KINDS", "PaneKind", "kind_of", "renderers_js"]


@dataclass(frozen=True, kw_only=True, slots=True)
class PaneKind:
    """One kind of pane: its name (what its class sets ``kind`` to), the module of
    ``explorer.panes`` that builds it (``home``, whose ``build_<kind>`` is the pure function
    that builds it), and the JS function (in ``explorer/static/panes/<module>``) that
    draws it.

    The table names ``home`` rather than holding the builder: a kind's module, and the
    dataclasses its panes are made of (about 1 ms each to create), is imported when a
    pane of that kind is first built, so a page imports only the kinds it shows.

    Example:
        >>> kind_of("graph").renderer, kind_of("graph").cls.__name__
        ('renderGraph', 'GraphPane')
    """

    kind: str
    home: str
    module: str
    renderer: str

    @property
    def build(self) -> Callable[[Any, Any, str], PaneHead]:
        """``build_<kind>`` of ``home``, importing ``home`` the first time."""
        home = importlib.import_module(f"{__package__}.{self.home}")
        return getattr(home, f"build_{self.kind}")

    @property
    def cls(self) -> type[PaneHead]:
        """The class the kind's panes are: the one its builder says it returns."""
        build = self.build
        return build.__globals__[build.__annotations__["return"]]  # type: ignore[no-any-return]


KINDS: tuple[PaneKind, ...] = (
    PaneKind(kind="code", home="frame", module="frame.js", renderer="renderCode"),
    PaneKind(kind="graph", home="frame", module="frame.js", renderer="renderGraph"),
    PaneKind(
        kind="output_code", home="inductor", module="inductor.js", renderer="renderOutputCode"
    ),
    PaneKind(kind="schedule", home="inductor", module="inductor.js", renderer="renderSchedule"),
    PaneKind(
        kind="graph_breaks", home="why.reasons", module="frame.js", renderer="renderGraphBreaks"
    ),
    PaneKind(
        kind="recompile_reasons",
        home="why.reasons",
        module="frame.js",
        renderer="renderRecompileReasons",
    ),
    PaneKind(kind="autotuning", home="runtime", module="runtime.js", renderer="renderAutotuning"),
    PaneKind(
        kind="kernel_timing", home="runtime", module="runtime.js", renderer="renderKernelTiming"
    ),
    PaneKind(kind="metrics", home="costs.metrics", module="runtime.js", renderer="renderMetrics"),
    PaneKind(
        kind="triton_lowering",
        home="kernels.lowering",
        module="inductor.js",
        renderer="renderTritonLowering",
    ),
    PaneKind(kind="findings", home="findings", module="frame.js", renderer="renderFindings"),
    PaneKind(kind="ranks", home="ranks", module="ranks.js", renderer="renderRanks"),
    PaneKind(kind="profile", home="runtime", module="runtime.js", renderer="renderProfile"),
    PaneKind(
        kind="compile_time",
        home="costs.compile_time",
        module="compile_time.js",
        renderer="renderCompileTime",
    ),
    PaneKind(kind="memory", home="costs.memory", module="memory.js", renderer="renderMemory"),
    PaneKind(
        kind="cudagraphs",
        home="costs.cudagraphs",
        module="cudagraphs.js",
        renderer="renderCudagraphs",
    ),
    PaneKind(
        kind="numerics", home="checks.numerics", module="numerics.js", renderer="renderNumerics"
    ),
)

_BY_NAME = {k.kind: k for k in KINDS}


def kind_of(name: str) -> PaneKind:
    """The registered kind called ``name``; a KeyError names the kinds there are."""
    found = _BY_NAME.get(name)
    if found is None:
        msg = f"no pane kind {name!r}; the kinds are {', '.join(_BY_NAME)}"
        raise KeyError(msg)
    return found


def renderers_js() -> str:
    """The text of ``explorer/static/panes/renderers.js``: the browser's kind -> renderer table.

    Example:
        >>> "graph: renderGraph," in renderers_js()
        True
    """
    modules: dict[str, list[str]] = {}
    for k in KINDS:
        modules.setdefault(k.module, []).append(k.renderer)
    lines = [
        "// @ts-check",
        "// GENERATED from explorer/panes/kinds.py KINDS by explorer.panes.kinds.renderers_js();",
        "// do not edit. Each pane kind's renderer, as the shell looks it up by `pane.kind`.",
        "",
        '/** @import { Renderer } from "../util.js" */',
    ]
    lines += [f'import {{ {", ".join(names)} }} from "./{m}";' for m, names in modules.items()]
    lines += ["", "/** @type {Object<string, Renderer>} */", "const RENDERERS = {"]
    lines += [f"  {k.kind}: {k.renderer}," for k in KINDS]
    lines += ["};", "", "export { RENDERERS };", ""]
    return "\n".join(lines)
