"""Findings about what a compiled program costs beyond its kernels: CUDA graphs skipped or
recorded per shape (``cudagraphs``), memory above eager (``memory``)."""
