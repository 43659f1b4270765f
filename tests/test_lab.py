"""The kernel lab lowers recorded Triton kernels again on this CPU (triton from the
[triton] extra): unedited, they reproduce what the GPU machine recorded; edited, they
change as Triton and ptxas say."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import compiler
from compiler.lab import KernelLab, LabError

pytest.importorskip("triton", reason="the kernel lab needs the [triton] extra")

ROOT = Path(__file__).resolve().parents[1]
RECORDINGS = [
    *sorted((ROOT / "notebooks" / "recordings").glob("*.json")),
    *sorted((ROOT / "tests" / "advisor_corpus" / "recordings").glob("*.json")),
]


def _kernels():
    out = []
    for path in RECORDINGS:
        text = path.read_text()
        if '"compiles"' not in text:
            continue
        exp = compiler.Exploration.from_json(text)
        out += [(path.stem, k) for c in exp.compiles for k in c.kernels() if k.language == "triton"]
    return out


KERNELS = _kernels()


@pytest.fixture(scope="module")
def lab():
    lab = KernelLab()
    yield lab
    lab.close()


def _pointwise():
    return next(k for name, k in KERNELS if name == "pointwise")


def _captured(kernel, stage):
    (chosen,) = [v for v in kernel.variants if v.chosen]
    return next(s for s in chosen.stages if s.stage == stage)


def _instructions(ptx):
    """PTX instructions as the GPU runs them: what precedes the DWARF sections, without
    location directives, the ISA version line, comments or blank lines; a device assert's
    file global (the kernel module's path, where Inductor wrote it) read up to its folder."""
    code = ptx.split("\t.section\t.debug", 1)[0]
    lines = (line.split("//", 1)[0].strip() for line in code.splitlines())
    out = [x for x in lines if x and not x.startswith((".loc", ".file", ".version"))]
    return [_without_folder(x) if x.startswith(".global .align 1 .b8 assertFile_") else x
            for x in out]


def _without_folder(line):
    head, _, values = line.partition(" = {")
    path = bytes(int(v) for v in values.rstrip("};").split(",")).decode()
    return head.split("[")[0] + " " + path.rstrip("\0").split("/")[-1]


def test_every_recorded_kernel_relowers_and_unedited_reproduces_its_recorded_ptx(lab):
    assert len(KERNELS) >= 30
    reproduced = compared = 0
    for name, kernel in KERNELS:
        v = lab.relower(kernel)
        stages = {s.stage: s for s in v.stages}
        assert ".entry " + kernel.name in stages["ptx"].text, (name, kernel.name)
        assert "tt.func" in stages["ttir"].text and v.registers and v.registers > 0
        if any(x.chosen for x in kernel.variants):
            compared += 1
            same = _instructions(_captured(kernel, "ptx").text) == _instructions(stages["ptx"].text)
            assert v.reproduced is same
            reproduced += same
    # every kernel the GPU machine recorded stages for, lowered by the same Triton 3.6.0
    assert reproduced == compared >= 26


def test_relowered_stages_carry_the_captured_line_maps(lab):
    kernel = _pointwise()
    v = lab.relower(kernel)
    for stage in ("ttir", "ttgir", "llir"):
        new = next(s for s in v.stages if s.stage == stage)
        assert new.source_lines == _captured(kernel, stage).source_lines, stage
    ptx = next(s for s in v.stages if s.stage == "ptx").source_lines
    captured = _captured(kernel, "ptx").source_lines
    n = len(_instructions(_captured(kernel, "ptx").text))
    assert ptx[:n] == captured[:n] and any(ptx[:n])
    assert v.triton_version == v.captured_version == "3.6.0"


def test_doubled_block_size_changes_the_ptx_and_the_register_count(lab):
    kernel = _pointwise()
    before = lab.relower(kernel)
    block = int(before.config["XBLOCK"])
    after = lab.relower(kernel, config={"XBLOCK": 2 * block})
    assert after.config["XBLOCK"] == str(2 * block)
    assert _instructions(next(s.text for s in after.stages if s.stage == "ptx")) != _instructions(
        next(s.text for s in before.stages if s.stage == "ptx")
    )
    assert after.diff("ptx").changed and not after.reproduced
    assert after.registers != before.registers
    # the same lowering again, with SASS, comes from the worker's Triton cache: ptxas does
    # not run, and its report is still there
    again = lab.relower(kernel, config={"XBLOCK": 2 * block}, sass=True)
    assert again.registers == after.registers and again.ptxas_log == after.ptxas_log
    sass = next(s for s in again.stages if s.stage == "sass")
    assert "Function : " + kernel.name in sass.text


def test_another_target_lowers_for_that_architecture(lab):
    v = lab.relower(_pointwise(), target="sm_80")
    ptx = next(s.text for s in v.stages if s.stage == "ptx")
    assert ".target sm_80" in ptx and v.target == "cuda sm80 warp32"


def test_syntax_error_in_the_edited_kernel_shows_at_its_line(lab):
    kernel = _pointwise()
    lines = kernel.source.split("\n")
    at = next(i for i, line in enumerate(lines) if "tl_math.sin(tmp0)" in line)
    lines[at] = lines[at].replace("sin(tmp0)", "sin(tmp0")
    with pytest.raises(LabError, match=r"SyntaxError: '\(' was never closed") as info:
        lab.relower(kernel, source="\n".join(lines))
    assert info.value.kind == "syntax" and info.value.line == at + 1


def test_triton_error_in_the_edited_kernel_shows_triton_message_at_its_line(lab):
    kernel = _pointwise()
    lines = kernel.source.split("\n")
    at = next(i for i, line in enumerate(lines) if "tl_math.sin(tmp0)" in line)
    lines[at] = lines[at].replace("sin(tmp0)", "sin(undefined_name)")
    with pytest.raises(LabError, match="CompilationError") as info:
        lab.relower(kernel, source="\n".join(lines))
    assert info.value.kind == "triton" and info.value.line == at + 1
    assert "undefined_name" in str(info.value)
    # the worker survived and lowers the next request
    assert lab.relower(kernel).reproduced


def test_bad_config_and_target_are_refused_with_what_to_do(lab):
    kernel = _pointwise()
    with pytest.raises(LabError, match="XBLOCK=300 must be a power of two"):
        lab.relower(kernel, config={"XBLOCK": 300})
    with pytest.raises(LabError, match="unknown target 'volta'"):
        lab.relower(kernel, target="volta")


def test_without_triton_the_lab_says_how_to_install_it_and_the_rest_works():
    code = (
        "import sys; sys.modules['triton'] = None\n"
        "import compiler, explorer\n"
        "exp = compiler.Exploration.from_json(open('notebooks/recordings/pointwise.json').read())\n"
        "k = next(k for c in exp.compiles for k in c.kernels() if k.language == 'triton')\n"
        "assert exp.findings() is not None\n"
        "try:\n"
        "    compiler.relower(k)\n"
        "except ImportError as exc:\n"
        "    print(exc)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, timeout=120, env={"PYTHONPATH": str(ROOT),
                         "PATH": "/usr/bin:/bin"})  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "pip install 'torch-compile-explorer[triton]'" in out.stdout


def test_a_kernel_captured_by_another_triton_says_which_version_lowered_what(lab):
    import dataclasses

    import triton

    kernel = _pointwise()
    # as if the GPU machine had run Triton 3.5.0: only the recorded version differs
    older = dataclasses.replace(kernel, variants=tuple(
        dataclasses.replace(v, triton_version="3.5.0") for v in kernel.variants))  # fmt: skip
    v = lab.relower(older)
    assert v.captured_version == "3.5.0" and v.triton_version == triton.__version__
    assert v.note.startswith(
        f"captured by Triton 3.5.0 (cuda sm90 warp32), re-lowered by Triton {triton.__version__}"
    )
    assert "may come from the versions" in v.note


# last in the module: it kills the shared worker twice, and no test after it pays a restart
def test_a_crash_or_hang_while_lowering_costs_a_fresh_worker_not_the_caller(lab):
    kernel = _pointwise()
    crash = kernel.source.replace(
        "import triton\n", "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)\n", 1
    )
    hang = kernel.source.replace("import triton\n", "import triton\nwhile True: pass\n", 1)
    timeout, lab.timeout_s = lab.timeout_s, 3
    try:
        with pytest.raises(LabError, match="crashed lowering triton_poi_fused") as info:
            lab.relower(kernel, source=crash)
        assert info.value.kind == "crash"
        assert lab.relower(kernel).reproduced  # a fresh worker
        with pytest.raises(LabError, match="took over 3 s") as info:
            lab.relower(kernel, source=hang)
        assert info.value.kind == "timeout"
        assert not lab._workers.running  # the hung worker was killed; the next request starts one
    finally:
        lab.timeout_s = timeout
