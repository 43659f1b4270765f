"""Panes of one generated kernel: its Triton lowering, stage by stage (``lowering``)."""
