"""The Python expressions torch prints (guard sources, autotune configs): split at their
top-level commas by one scanner for quotes and brackets, and string literals unquoted, so
every reader reads them the same."""

from __future__ import annotations


def top_level_parts(text: str) -> list[str]:
    """``text`` split at the commas outside quotes and brackets, each part stripped.

    Example:
        >>> top_level_parts("L['x'], f(a, b), 'c,d'")
        ["L['x']", 'f(a, b)', "'c,d'"]
    """
    parts, depth, quote, start = [], 0, "", 0
    for i, ch in enumerate(text):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    parts.append(text[start:].strip())
    return parts


def unquote(text: str) -> str:
    """A quoted string literal's text; anything else as it is.

    Example:
        >>> unquote("'lr'"), unquote("64")
        ('lr', '64')
    """
    return text[1:-1] if len(text) > 1 and text[0] == text[-1] and text[0] in "'\"" else text
