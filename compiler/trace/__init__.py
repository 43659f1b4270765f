"""Trace events: one event shape for live log records and ``TORCH_TRACE`` lines
(``events``), assembled into an Exploration (``build``); ``load`` reads a log folder."""
