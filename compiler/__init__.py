"""Headless capture of torch.compile: every stage of every compile, as plain data.

Imports torch and the standard library only, so it runs in scripts, CI and on GPU
machines without Jupyter. ``import compiler`` itself imports no torch: each name below is
imported on first use, so reading a ``TORCH_TRACE`` log (``load_trace``, the advisor, the
file forms) runs where torch is not installed; capture imports torch when it is called.

Example:
    >>> import torch, compiler
    >>> exp = compiler.explore(lambda x: torch.relu(x) * 2, torch.randn(16), backend="aot_eager")
    >>> exp.compiles[0].graphs["dynamo_output_graph"].nodes[1].target
    'torch.relu'
"""

import sys
import types
from typing import TYPE_CHECKING

from compiler.errors import (
    CompileError,
    ExploreError,
    InputError,
    OptionError,
    SchemaVersionError,
    TargetError,
    TraceFormatError,
)
from compiler.model import (
    SCHEMA_VERSION,
    Bytecode,
    CallTiming,
    Compile,
    CompileId,
    CompileMetrics,
    Environment,
    Exploration,
    FinalNumerics,
    FusedNode,
    Graph,
    GraphBreak,
    Guard,
    Guards,
    Kernel,
    Node,
    NodeNumerics,
    Numerics,
    Options,
    OutputCode,
    Phase,
    Profile,
    Provenance,
    RecompileReason,
    Schedule,
    SourceLoc,
    StageError,
    TensorMeta,
)

if TYPE_CHECKING:
    from compiler.advise.costs.time_phases import CompileTimes, compile_time
    from compiler.capture.explore import explore
    from compiler.capture.exported import explore_aoti, explore_export
    from compiler.capture.failures import classify_failure
    from compiler.capture.progress import Progress, reporting
    from compiler.capture.recording import Recording, recording
    from compiler.capture.script import explore_path, explore_script
    from compiler.capture.spec import CompileSpec
    from compiler.compare.comparison import CompareProgress, CompareRow, Comparison, Config, compare
    from compiler.costs.cudagraphs import CudaGraphs, cudagraphs
    from compiler.costs.memory import Memory, memory
    from compiler.diff.cache_keys import CacheDiff, cache_diff
    from compiler.diff.compiles import Diff, diff
    from compiler.diff.config import ConfigChange, config_diff, config_of
    from compiler.gpu.triton_stages import with_sass
    from compiler.lab import LabError, Relowered, TritonMissingError, relower
    from compiler.numerics import numerics
    from compiler.profile import attach_profile
    from compiler.ranks.divergence import Divergence, DivergenceItem, RankLink, divergence
    from compiler.remedy.tried import try_fixes
    from compiler.trace.load import load_trace

# name -> the module that defines it, imported on the name's first use (PEP 562)
_LAZY = {
    "CompileTimes": "compiler.advise.costs.time_phases",
    "compile_time": "compiler.advise.costs.time_phases",
    "explore_aoti": "compiler.capture.exported",
    "explore": "compiler.capture.explore",
    "explore_export": "compiler.capture.exported",
    "classify_failure": "compiler.capture.failures",
    "Progress": "compiler.capture.progress",
    "reporting": "compiler.capture.progress",
    "Recording": "compiler.capture.recording",
    "recording": "compiler.capture.recording",
    "explore_path": "compiler.capture.script",
    "explore_script": "compiler.capture.script",
    "CompileSpec": "compiler.capture.spec",
    "CompareProgress": "compiler.compare.comparison",
    "CompareRow": "compiler.compare.comparison",
    "Comparison": "compiler.compare.comparison",
    "Config": "compiler.compare.comparison",
    "compare": "compiler.compare.comparison",
    "CacheDiff": "compiler.diff.cache_keys",
    "cache_diff": "compiler.diff.cache_keys",
    "Diff": "compiler.diff.compiles",
    "diff": "compiler.diff.compiles",
    "ConfigChange": "compiler.diff.config",
    "config_diff": "compiler.diff.config",
    "config_of": "compiler.diff.config",
    "with_sass": "compiler.gpu.triton_stages",
    "LabError": "compiler.lab",
    "Relowered": "compiler.lab",
    "TritonMissingError": "compiler.lab",
    "relower": "compiler.lab",
    "CudaGraphs": "compiler.costs.cudagraphs",
    "cudagraphs": "compiler.costs.cudagraphs",
    "Memory": "compiler.costs.memory",
    "memory": "compiler.costs.memory",
    "numerics": "compiler.numerics",
    "attach_profile": "compiler.profile",
    "Divergence": "compiler.ranks.divergence",
    "DivergenceItem": "compiler.ranks.divergence",
    "RankLink": "compiler.ranks.divergence",
    "divergence": "compiler.ranks.divergence",
    "try_fixes": "compiler.remedy.tried",
    "load_trace": "compiler.trace.load",
}


def __getattr__(name: str) -> object:
    """Import a name of the API from its module on first use, then keep it here."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'compiler' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


class _Api(types.ModuleType):
    """This package's module. Two names of the API are also rooms: ``diff``
    (``compiler/diff/``) and ``numerics`` (``compiler/numerics/``). Importing a room binds it
    on its package, which would hide the lazy function of that name from ``__getattr__``
    (``compiler.diff(a, b)`` then called a module): the API's function wins, and the room
    stays reachable through ``sys.modules`` and ``from compiler.diff.compiles import ...``."""

    def __setattr__(self, name: str, value: object) -> None:
        if name in _LAZY and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Api


__all__ = [
    "SCHEMA_VERSION",
    "Bytecode",
    "CacheDiff",
    "CallTiming",
    "CompareProgress",
    "CompareRow",
    "Comparison",
    "Compile",
    "CompileError",
    "CompileId",
    "CompileMetrics",
    "CompileSpec",
    "CompileTimes",
    "Config",
    "ConfigChange",
    "CudaGraphs",
    "Diff",
    "Divergence",
    "DivergenceItem",
    "Environment",
    "Exploration",
    "ExploreError",
    "FinalNumerics",
    "FusedNode",
    "Graph",
    "GraphBreak",
    "Guard",
    "Guards",
    "InputError",
    "Kernel",
    "LabError",
    "Memory",
    "Node",
    "NodeNumerics",
    "Numerics",
    "OptionError",
    "Options",
    "OutputCode",
    "Phase",
    "Profile",
    "Progress",
    "Provenance",
    "RankLink",
    "RecompileReason",
    "Recording",
    "Relowered",
    "Schedule",
    "SchemaVersionError",
    "SourceLoc",
    "StageError",
    "TargetError",
    "TensorMeta",
    "TraceFormatError",
    "TritonMissingError",
    "attach_profile",
    "cache_diff",
    "classify_failure",
    "compare",
    "compile_time",
    "config_diff",
    "config_of",
    "cudagraphs",
    "diff",
    "divergence",
    "explore",
    "explore_aoti",
    "explore_export",
    "explore_path",
    "explore_script",
    "load_trace",
    "memory",
    "numerics",
    "recording",
    "relower",
    "reporting",
    "try_fixes",
    "with_sass",
]
