"""The kernel lab: a Triton kernel torch.compile generated, edited (source, launch
config, target) and lowered again to TTIR, TTGIR, LLVM IR, PTX and SASS on a machine
without a GPU, with line maps, a diff against the captured stages and ptxas's report."""

from compiler.lab.engine import KernelLab, relower, shared_lab, triton_available
from compiler.lab.variant import INSTALL, LabError, LoweringDiff, Relowered, TritonMissingError

__all__ = [
    "INSTALL",
    "KernelLab",
    "LabError",
    "LoweringDiff",
    "Relowered",
    "TritonMissingError",
    "relower",
    "shared_lab",
    "triton_available",
]
