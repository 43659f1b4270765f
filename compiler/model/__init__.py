"""The Exploration: plain, frozen, JSON-friendly data describing one capture.

Everything the explorer renders is here, and nothing here is a torch object: graph
and kernel text is kept exactly as torch emitted it, next to the structure parsed
from it. The same classes come out of a live capture and out of a ``TORCH_TRACE``
log, so a view never needs to know which one it is looking at.

One module per part of a capture: ``base`` (ids, source locations, the schema
version), ``graph`` (graphs and FX nodes), ``frame`` (what Dynamo recorded of a frame),
``kernel`` (what Inductor generated), ``exploration`` (compiles and the whole capture),
``derived`` (the one cache of what is computed on first read). The JSON forms are
``compiler/store``'s: reading a file links it again, which is ``compiler/link``'s work.
"""

from compiler.model.base import SCHEMA_VERSION, CompileId, SourceLoc, StageError
from compiler.model.derived import Derived, Later
from compiler.model.exploration import (
    CallTiming,
    Compile,
    CompileMetrics,
    Environment,
    Exploration,
    Fix,
    Options,
    Phase,
    RunFigures,
    TriedFix,
    as_jsonable,
)
from compiler.model.frame import Bytecode, GraphBreak, Guard, Guards, RecompileReason
from compiler.model.graph import Graph, Node, TensorMeta
from compiler.model.kernel import (
    AutotuneChoice,
    Autotuning,
    FusedNode,
    Kernel,
    KernelTiming,
    LoweredStage,
    OutputCode,
    Provenance,
    Schedule,
    TritonVariant,
)
from compiler.model.numerics import FinalNumerics, Measured, NodeNumerics, Numerics
from compiler.model.profile import Profile, ProfiledKernel, ProfiledPlace, RegionCalls

__all__ = [
    "SCHEMA_VERSION",
    "AutotuneChoice",
    "Autotuning",
    "Bytecode",
    "CallTiming",
    "Compile",
    "CompileId",
    "CompileMetrics",
    "Derived",
    "Environment",
    "Exploration",
    "FinalNumerics",
    "Fix",
    "FusedNode",
    "Graph",
    "GraphBreak",
    "Guard",
    "Guards",
    "Kernel",
    "KernelTiming",
    "Later",
    "LoweredStage",
    "Measured",
    "Node",
    "NodeNumerics",
    "Numerics",
    "Options",
    "OutputCode",
    "Phase",
    "Profile",
    "ProfiledKernel",
    "ProfiledPlace",
    "Provenance",
    "RecompileReason",
    "RegionCalls",
    "RunFigures",
    "Schedule",
    "SourceLoc",
    "StageError",
    "TensorMeta",
    "TriedFix",
    "TritonVariant",
    "as_jsonable",
]
