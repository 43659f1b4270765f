"""Panes of a run's costs, one per question a slow or hungry compile raises: where compile
time went, where memory went, what CUDA graphs did. Each is an Exploration-wide pane built
from the compiler's own analysis (``compiler.compile_time``, ``compiler.memory``,
``compiler.cudagraphs``); nothing here computes a figure of its own. ``metrics`` is each
compile's own compile-time pane, and ``saved`` the graph panes' saved-for-backward marks."""
