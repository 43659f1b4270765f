"""Worker processes: the one protocol (``frames``) and the one parent side (``process``)
that live recompiles and the kernel lab run their compiles through."""
