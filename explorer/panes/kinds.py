"""The pane kinds, registered once: each kind's class, builder and browser renderer.

``KINDS`` is the one table. ``build_pane`` looks a kind's builder up in it, the JSDoc
``Pane`` union lists its classes, and ``explorer/static/panes/renderers.js`` (the browser's
``RENDERERS``, kind -> ``render<Kind>(el, pane, ctx)``) is generated from it by
``renderers_js()``; ``tests/test_panes.py`` regenerates and compares, so adding a kind
here is the whole registration. After changing the table run::

    python -c "from explorer.panes import renderers_js; print(renderers_js(), end='')" \
        > explorer/static/panes/renderers.js && npm run build
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .checks.numerics import NumericsPane, build_numerics
from .costs.compile_time import CompileTimePane, build_compile_time
from .costs.cudagraphs import CudagraphsPane, build_cudagraphs
from .costs.memory import MemoryPane, build_memory
from .findings import build_findings
from .frame import build_code, build_graph, build_graph_breaks, build_recompile_reasons
from .inductor import build_output_code, build_schedule, build_triton_lowering
from .ranks import build_ranks
from .runtime import (
    build_autotuning,
    build_kernel_timing,
    build_metrics,
    build_profile,
)
from .types import (
    AutotuningPane,
    CodePane,
    FindingsPane,
    GraphBreaksPane,
    GraphPane,
    KernelTimingPane,
    MetricsPane,
    OutputCodePane,
    PaneHead,
    ProfilePane,
    RanksPane,
    RecompileReasonsPane,
    SchedulePane,
    TritonLoweringPane,
)

__all__ = ["KINDS", "PaneKind", "kind_of", "renderers_js"]


@dataclass(frozen=True, kw_only=True, slots=True)
class PaneKind:
    """One kind of pane: the class its data is (whose ``kind`` default names the kind),
    the pure function that builds it, and the JS function (in ``explorer/static/panes/<module>``)
    that draws it.

    Example:
        >>> kind_of("graph").renderer
        'renderGraph'
    """

    cls: type[PaneHead]
    build: Callable[[Any, Any, str], PaneHead]
    module: str
    renderer: str

    @property
    def kind(self) -> str:
        """The kind's name: what the class sets ``kind`` to."""
        (field,) = [f for f in dataclasses.fields(self.cls) if f.name == "kind"]
        return str(field.default)


KINDS: tuple[PaneKind, ...] = (
    PaneKind(cls=CodePane, build=build_code, module="frame.js", renderer="renderCode"),
    PaneKind(cls=GraphPane, build=build_graph, module="frame.js", renderer="renderGraph"),
    PaneKind(
        cls=OutputCodePane,
        build=build_output_code,
        module="inductor.js",
        renderer="renderOutputCode",
    ),
    PaneKind(
        cls=SchedulePane,
        build=build_schedule,
        module="inductor.js",
        renderer="renderSchedule",
    ),
    PaneKind(
        cls=GraphBreaksPane,
        build=build_graph_breaks,
        module="frame.js",
        renderer="renderGraphBreaks",
    ),
    PaneKind(
        cls=RecompileReasonsPane,
        build=build_recompile_reasons,
        module="frame.js",
        renderer="renderRecompileReasons",
    ),
    PaneKind(
        cls=AutotuningPane,
        build=build_autotuning,
        module="runtime.js",
        renderer="renderAutotuning",
    ),
    PaneKind(
        cls=KernelTimingPane,
        build=build_kernel_timing,
        module="runtime.js",
        renderer="renderKernelTiming",
    ),
    PaneKind(cls=MetricsPane, build=build_metrics, module="runtime.js", renderer="renderMetrics"),
    PaneKind(
        cls=TritonLoweringPane,
        build=build_triton_lowering,
        module="inductor.js",
        renderer="renderTritonLowering",
    ),
    PaneKind(cls=FindingsPane, build=build_findings, module="frame.js", renderer="renderFindings"),
    PaneKind(cls=RanksPane, build=build_ranks, module="ranks.js", renderer="renderRanks"),
    PaneKind(
        cls=ProfilePane, build=build_profile, module="runtime.js", renderer="renderProfile"
    ),
    PaneKind(
        cls=CompileTimePane,
        build=build_compile_time,
        module="compile_time.js",
        renderer="renderCompileTime",
    ),
    PaneKind(cls=MemoryPane, build=build_memory, module="memory.js", renderer="renderMemory"),
    PaneKind(
        cls=CudagraphsPane,
        build=build_cudagraphs,
        module="cudagraphs.js",
        renderer="renderCudagraphs",
    ),
    PaneKind(
        cls=NumericsPane, build=build_numerics, module="numerics.js", renderer="renderNumerics"
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
