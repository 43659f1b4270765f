"""Where compiled values leave eager's: ``compiler.numerics`` (issue 44)."""

from compiler.numerics.run import numerics

__all__ = ["numerics"]
