"""Write ``compiler/graph_break_registry.json``: the installed torch's graph-break registry,
shipped with the package so that a trace read where torch is not installed still gets
each break's registry entry (``compiler._torch_files``).

Run it when the package is built (and after upgrading the torch it is built with):
``python scripts/ship_graph_break_registry.py``. The file holds ``{"torch": version,
"registry": <torch/_dynamo/graph_break_registry.json as torch ships it>}``;
``tests/test_torch_files.py`` checks it against the installed torch's. torch is located,
not imported.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from compiler._torch_files import (  # noqa: E402  (the checkout's, not an installed copy)
    SHIPPED_REGISTRY,
    installed_torch_version,
    torch_dir,
)


def main() -> None:
    where = torch_dir()
    if where is None:
        raise SystemExit("torch is not installed here: the registry is copied from torch.")
    source = where / "_dynamo" / "graph_break_registry.json"
    registry = json.loads(source.read_text(encoding="utf-8"))
    shipped = {"torch": installed_torch_version(), "registry": registry}
    SHIPPED_REGISTRY.write_text(json.dumps(shipped, indent=0, sort_keys=True) + "\n", "utf-8")
    print(f"{SHIPPED_REGISTRY}: {len(registry)} ids from torch {shipped['torch']} ({source})")


if __name__ == "__main__":
    main()
