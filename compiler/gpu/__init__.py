"""What only a GPU compile has: Triton's lowered stages and their line maps, and the work a
kernel does (bytes, FLOPs, launch grid) as its output code states it. Timing it is
``compiler/measure/``'s."""
