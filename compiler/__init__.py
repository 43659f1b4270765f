"""Headless capture of torch.compile: every stage of every compile, as plain data.

Imports torch and the standard library only, so it runs in scripts, CI and on GPU
machines without Jupyter.

Example:
    >>> import torch, compiler
    >>> exp = compiler.explore(lambda x: torch.relu(x) * 2, torch.randn(16), backend="aot_eager")
    >>> exp.compiles[0].graphs["dynamo_output_graph"].nodes[1].target
    'torch.relu'
"""

from .capture import Recording, recording
from .compare import CompareProgress, CompareRow, Comparison, Config, compare
from .diff import Diff, diff
from .errors import (
    CompileError,
    ExploreError,
    InputError,
    OptionError,
    SchemaVersionError,
    TargetError,
    TraceFormatError,
)
from .explore import classify_failure, explore
from .exported import explore_export
from .model import (
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
    Options,
    OutputCode,
    Phase,
    Provenance,
    RecompileReason,
    Schedule,
    SourceLoc,
    StageError,
    TensorMeta,
)
from .progress import Progress, reporting
from .script import explore_path, explore_script
from .trace import load_trace
from .triton_stages import with_sass

__all__ = [
    "SCHEMA_VERSION",
    "Bytecode",
    "CallTiming",
    "CompareProgress",
    "CompareRow",
    "Comparison",
    "Compile",
    "CompileError",
    "CompileId",
    "CompileMetrics",
    "Config",
    "Diff",
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
    "Node",
    "OptionError",
    "Options",
    "OutputCode",
    "Phase",
    "Progress",
    "Provenance",
    "RecompileReason",
    "Recording",
    "Schedule",
    "SchemaVersionError",
    "SourceLoc",
    "StageError",
    "TargetError",
    "TensorMeta",
    "TraceFormatError",
    "classify_failure",
    "compare",
    "diff",
    "explore",
    "explore_export",
    "explore_path",
    "explore_script",
    "load_trace",
    "recording",
    "reporting",
    "with_sass",
]
