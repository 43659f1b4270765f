"""What a compiled program costs beyond its kernels: where a run's compile time went
(``time_phases``), CUDA graphs skipped or recorded per shape (``cudagraphs``), memory above
eager (``memory``)."""
