"""Parsers of the texts torch prints: FX graph text, guard trees and graph breaks,
output code and its schedule, ``dis`` line tables."""
