"""What of a compile must match across ranks, each reduced to a text that two ranks
running the same program write identically.

torch prints per-process facts into its texts: object ids in guards
(``___check_obj_id(L['self'], 140230...)``), addresses, the pre-grad graph's ``graph id``,
cache paths in output code. Those are masked (``compiler/parse/words/per_process.py``), so
they never count as a divergence; what remains (shapes, ops, guard conditions, kernel
code) is what a rank compiled.
"""

from __future__ import annotations

import hashlib

from compiler.link.ids import OutputKey, PaneId, compile_pane, output_pane
from compiler.model import Compile
from compiler.parse.words.per_process import masked_devices, masked_guard_lines, normalized


def digest(text: str) -> str:
    """A short fingerprint of the normalized text."""
    return hashlib.blake2b(normalized(text).encode(), digest_size=8).hexdigest()


_DIGITS = b"0123456789"


class GuardsDigest:
    """The fingerprint of a guard tree as bytes, fed piece by piece, for the outline of a
    large log: addresses and the latency masked as ``normalized`` does
    (``masked_guard_lines``), then its digits dropped (object ids, the measured latency;
    sizes too, which the graphs' fingerprints carry), at the speed of ``bytes.translate``
    and one literal-led search rather than ``normalized``'s expression over tens of MB.
    Pieces give the digest of the whole (a piece's unfinished last line waits for the
    next), so a guard tree is never held whole.

    Example:
        >>> d = GuardsDigest(); d.update(b"id(x) == 14"); d.update(b"02 at 0xa")
        >>> d.hexdigest() == guards_digest(b"id(x) == 9431 at 0xbc")
        True
    """

    def __init__(self) -> None:
        self._hash = hashlib.blake2b(digest_size=8)
        self._line = b""  # the unfinished last line fed: nothing masked spans lines

    def update(self, piece: bytes) -> None:
        """Feed the next bytes of the guard tree."""
        data = self._line + piece
        cut = data.rfind(b"\n") + 1
        self._line = data[cut:]
        self._digest(data[:cut])

    def hexdigest(self) -> str:
        """The fingerprint of everything fed."""
        self._digest(self._line)
        self._line = b""
        return self._hash.hexdigest()

    def _digest(self, lines: bytes) -> None:
        self._hash.update(masked_guard_lines(lines).translate(None, _DIGITS))


class GraphDigest(GuardsDigest):
    """The fingerprint of a graph's text as bytes, fed piece by piece, for the outline:
    the rank's own device index masked (``cuda:1``, ``device(type='cuda', index=1)``) as
    ``normalized`` masks it, everything else as torch printed it, so ranks on different
    GPUs running the same program give the same fingerprint and a changed size does not.

    Example:
        >>> a, b = GraphDigest(), GraphDigest()
        >>> a.update(b"f32[4, 32]cuda:0\\n"); b.update(b"f32[4, 32]cuda:1\\n")
        >>> a.hexdigest() == b.hexdigest()
        True
    """

    def _digest(self, lines: bytes) -> None:
        self._hash.update(masked_devices(lines))


def guards_digest(payload: bytes) -> str:
    """``GuardsDigest`` of a whole guard tree.

    Example:
        >>> guards_digest(b"id(x) == 1402") == guards_digest(b"id(x) == 9431")
        True
    """
    d = GuardsDigest()
    d.update(payload)
    return d.hexdigest()


def guards_of(c: Compile) -> str:
    """The guard tree's fingerprint ("" without guards)."""
    return digest(c.guards.tree) if c.guards is not None else ""


def graphs_of(c: Compile) -> dict[PaneId, str]:
    """Fingerprint of every graph stage of ``c`` (compile-level and per output code),
    keyed by the id of the pane that shows it, read from the text torch printed, not
    from parsed nodes."""
    out = {compile_pane(stage): digest(g.text) for stage, g in c.graphs.items()}
    for oc in c.output_code:
        for stage, g in oc.graphs.items():
            out[output_pane(OutputKey(oc.key), stage)] = digest(g.text)
    return out


def kernels_of(c: Compile) -> tuple[tuple[str, str], ...]:
    """(kernel id, fingerprint of its source) for every kernel of ``c``, in order."""
    return tuple((k.id, digest(k.source)) for k in c.kernels())


def reasons_of(c: Compile) -> tuple[str, ...]:
    """Why ``c`` recompiled, as the guard failures read (normalized)."""
    return tuple(normalized(r.reason) for r in c.recompile_reasons)
