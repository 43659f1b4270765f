"""What a compiled program costs, read from an Exploration: where its memory goes
(``compiler.memory``) and what CUDA graphs did per call site (``compiler.cudagraphs``).
The advisor judges these in ``compiler/advise/costs/``; the panes show them from
``explorer/panes/costs/``."""
