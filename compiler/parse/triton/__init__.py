"""Parsers of the texts Triton and its tools print for a kernel: the lowered stages'
source locations, the kernel module's header and signature, ptxas's report, PTX."""
