"""Several ranks of one run: where they diverge (``divergence``), which compiles a
distributed wrapper (DDP, FSDP) introduced (``wrappers``), and the lazy index that opens
production-size multi-rank logs (``index``)."""
