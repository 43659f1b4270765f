"""The user's own ``torch.profiler`` trace, read and linked to an exploration's kernels."""

from compiler.profile.attach import attach_profile

__all__ = ["attach_profile"]
