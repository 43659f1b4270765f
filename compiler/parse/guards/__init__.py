"""What Dynamo prints about its guards: each guard's source and kind, read the same on every
torch (``sources``), and a recompile's failed guards (``recompiles``)."""
