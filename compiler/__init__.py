"""Headless capture of torch.compile: every stage of every compile, as plain data.

Imports torch and the standard library only, so it runs in scripts, CI and on GPU
machines without Jupyter.

Example:
    >>> import torch, compiler
    >>> exp = compiler.explore(lambda x: torch.relu(x) * 2, torch.randn(16), backend="aot_eager")
    >>> exp.compiles[0].graphs["dynamo_output_graph"].nodes[1].target
    'torch.relu'
"""

from compiler.advise.costs.time_phases import CompileTimes, compile_time
from compiler.capture.aoti import explore_aoti
from compiler.capture.explore import explore
from compiler.capture.exported import explore_export
from compiler.capture.failures import classify_failure
from compiler.capture.progress import Progress, reporting
from compiler.capture.recording import Recording, recording
from compiler.capture.script import explore_path, explore_script
from compiler.capture.spec import CompileSpec
from compiler.compare.comparison import CompareProgress, CompareRow, Comparison, Config, compare
from compiler.diff.cache_keys import CacheDiff, cache_diff
from compiler.diff.compiles import Diff, diff
from compiler.errors import (
    CompileError,
    ExploreError,
    InputError,
    OptionError,
    SchemaVersionError,
    TargetError,
    TraceFormatError,
)
from compiler.gpu.triton_stages import with_sass
from compiler.lab import LabError, Relowered, TritonMissingError, relower
from compiler.link.cudagraphs import CudaGraphs, cudagraphs
from compiler.link.memory import Memory, memory
from compiler.model import (
    SCHEMA_VERSION,
    Bytecode,
    CallTiming,
    Compile,
    CompileId,
    CompileMetrics,
    Environment,
    Exploration,
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
from compiler.numerics import numerics
from compiler.profile import attach_profile
from compiler.ranks.divergence import Divergence, DivergenceItem, RankLink, divergence
from compiler.remedy.tried import try_fixes
from compiler.trace.load import load_trace

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
    "CudaGraphs",
    "Diff",
    "Divergence",
    "DivergenceItem",
    "Environment",
    "Exploration",
    "ExploreError",
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
