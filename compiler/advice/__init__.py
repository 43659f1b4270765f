"""The advisor's rules, one module per family of findings.

Each family exposes ``findings(exp) -> list[Ranked]``; ``compiler.advisor.diagnose``
merges and orders them. Rules read the Exploration only (never torch), so a recording
loaded on a CPU gets the same diagnosis as the live capture that made it.
"""
