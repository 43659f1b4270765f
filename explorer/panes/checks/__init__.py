"""Panes that check what the compiled program computed against a reference: numerics
(compiled against eager, node by node, kernel by kernel)."""
