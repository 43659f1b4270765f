"""What only a GPU compile has: Triton's lowered stages and their line maps, kernel
timing and bandwidth."""
