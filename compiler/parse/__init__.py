"""Parsers of the texts torch prints: FX graph text, guard trees and graph breaks,
output code and its schedule, ``dis`` line tables, and (``words/``) what torch's messages
and names say. The one room that matches torch's wording: the rest of the compiler takes
the typed results. ``tests/test_formats.py`` reads the real texts of every torch version
kept under ``tests/data/formats/`` through it."""
