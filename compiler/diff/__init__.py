"""What changed between two compiles: stage by stage (``compiles``), with nodes matched
by stable identity (``identity``)."""
