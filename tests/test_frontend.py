"""The front end as shipped: ES modules, the committed esbuild bundles, one table of kinds.

The bundles under ``explorer/static/dist/`` are package data built by ``npm run build``;
these tests rebuild them from the sources and compare, so a change to a module that was
not rebuilt fails here (the type check, ``tsc``, runs in ``scripts/test.sh``).
"""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from explorer._static import BUNDLES, PAGE_MODULE, STATIC_DIR, inline_module, widget_module
from explorer.panes import KINDS, renderers_js

ROOT = Path(__file__).resolve().parent.parent
NODE = shutil.which("node")
ESBUILD = ROOT / "node_modules" / "esbuild"
needs_node = pytest.mark.skipif(NODE is None, reason="needs node (v20) on PATH")
needs_esbuild = pytest.mark.skipif(
    NODE is None or not ESBUILD.is_dir(),
    reason="needs node and the npm packages: run `npm ci` at the repository root",
)
STATIC = STATIC_DIR.resolve()
# the npm packages bundled into dist/ (CodeMirror 6 for the editors), pinned by package.json
BUNDLED_PACKAGES = {
    name
    for name in json.loads((ROOT / "package.json").read_text(encoding="utf-8"))["devDependencies"]
    if name.startswith("@codemirror/")
}
# every JS module under static/, its subfolders' too, but not the bundles in dist/
SOURCES = sorted(p for p in STATIC.rglob("*.js") if p.relative_to(STATIC).parts[0] != "dist")


@needs_esbuild
def test_the_committed_bundles_are_a_fresh_build_of_the_sources(tmp_path):
    done = subprocess.run(
        [NODE, "js/build.mjs", "--outdir", str(tmp_path)],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    built = sorted(p.name for p in tmp_path.glob("*.js"))
    assert built == sorted(f"{name}.js" for name in BUNDLES)
    stale = [
        name for name in built
        if (tmp_path / name).read_text(encoding="utf-8") != widget_module(name[:-3])
    ]  # fmt: skip
    assert not stale, (
        f"explorer/static/dist/{', '.join(stale)} is not what the sources build; "
        "run `npm run build` and commit the result"
    )


def test_every_source_is_a_module_of_real_imports_and_no_longer_than_600_lines():
    for path in SOURCES:
        name = path.relative_to(STATIC).as_posix()
        text = path.read_text(encoding="utf-8")
        assert text.count("\n") <= 600, f"{name} has {text.count(chr(10))} lines"
        assert re.search(r"^export\b", text, re.M), f"{name} exports nothing"
        for target in re.findall(r'^import [^;]*? from "([^"]+)";$', text, re.M | re.S):
            if target in BUNDLED_PACKAGES:
                continue  # an npm package that esbuild bundles in (package.json pins it)
            found = (path.parent / target).resolve()
            assert target.startswith(("./", "../")) and found in SOURCES, (
                f"{name} imports {target}: only the explorer's own modules and the npm "
                "packages package.json pins, no network imports"
            )


def test_no_folder_of_sources_holds_more_than_12_modules_at_its_top():
    folders: dict[str, list[str]] = {}
    for path in SOURCES:
        folders.setdefault(path.parent.relative_to(STATIC).as_posix(), []).append(path.name)
    for folder, names in folders.items():
        assert len(names) <= 12, f"explorer/static/{folder} holds {len(names)} modules: {names}"


def test_the_js_registry_of_renderers_is_generated_from_the_table_of_kinds():
    committed = (STATIC_DIR / "panes" / "renderers.js").read_text(encoding="utf-8")
    assert committed == renderers_js(), (
        "explorer/static/panes/renderers.js is out of date with explorer/panes/kinds.py KINDS; "
        "regenerate it with: python -c \"from explorer.panes import renderers_js; "
        "print(renderers_js(), end='')\" > explorer/static/panes/renderers.js && npm run build"
    )


@needs_node
def test_the_renderers_the_browser_loads_are_the_kinds_python_builds():
    # the module graph itself, evaluated by node: each kind's function, by name
    script = (
        'const m = await import("./explorer/static/panes/renderers.js");'
        "console.log(JSON.stringify(Object.entries(m.RENDERERS).map(([k, f]) => [k, f.name])));"
    )
    done = subprocess.run(
        [NODE, "--input-type=module", "-e", script],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    loaded = [tuple(pair) for pair in json.loads(done.stdout)]
    assert loaded == [(k.kind, k.renderer) for k in KINDS]


def test_each_kind_is_the_one_its_class_names():
    # the table names a kind and its module; the class is what that module's builder
    # returns, and its ``kind`` default is the name the browser looks the renderer up by
    assert len({k.kind for k in KINDS}) == len(KINDS)
    for k in KINDS:
        (kind,) = [f.default for f in dataclasses.fields(k.cls) if f.name == "kind"]
        assert kind == k.kind, (k.kind, k.cls)


def test_the_inlined_module_gathers_the_bundles_exports():
    text = inline_module("explorer", "explorerModule")
    assert "export {" not in text[-400:]
    (line,) = [ln for ln in text.splitlines() if ln.startswith("return { ")]
    assert "default: " in line and "GraphCanvas: " in line


def test_each_piece_of_front_end_code_is_in_one_bundle():
    # the page's entry carries no explorer code (the page inlines the widget's bundle),
    # and CodeMirror is in the editors' bundle only
    bundles = {name: widget_module(name) for name in BUNDLES}
    assert len(bundles[PAGE_MODULE]) < 5_000, len(bundles[PAGE_MODULE])
    holding_codemirror = [name for name, text in bundles.items() if "cm-editor" in text]
    assert holding_codemirror == ["editors"]


def test_the_page_module_reads_the_elements_the_exported_page_writes():
    from explorer import export

    source = (STATIC_DIR / "page.js").read_text(encoding="utf-8")
    for name in ("INDEX_ELEMENT_ID", "PANES_ELEMENT_ID", "MOUNT_ELEMENT_ID"):
        assert f'const {name} = "{getattr(export, name)}";' in source, name
    # the page inlines the explorer's bundle and the page's entry whole, and mounts one on
    # the other: the only JavaScript written in Python is that one call
    page = export.html_page({"title": "t"}, {})
    for name in ("explorer", PAGE_MODULE):
        body = widget_module(name)
        assert body[: body.rindex("export {")] in page, name
    assert page.count("pageModule.mountPage(explorerModule.default);") == 1
