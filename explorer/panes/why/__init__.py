"""Panes of why a compile exists: its graph breaks and recompile reasons (``reasons``)."""
