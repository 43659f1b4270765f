#!/usr/bin/env bash
# A smoke set on the newest torch this machine installs (2.14.1: a CUDA build on local disk,
# run here on the CPU), in a second venv beside .venv. Only torch and its own dependencies
# go into that venv (5.4 GB, 3 minutes from local disk, installed once and kept under
# ~/.cache); every other package (pytest,
# numpy, transformers) is read from .venv through a .pth file that comes after the venv's
# own site-packages, so the newer torch is the one imported.
#   scripts/smoke_newest_torch.sh            the smoke set on torch $NEWEST_TORCH (2.14.1)
#   NEWEST_TORCH=2.15.0 scripts/smoke_newest_torch.sh
#   scripts/smoke_newest_torch.sh --install-only   the venv alone (scripts/test.sh runs this
#                                                  beside the main tests, then the smoke set)
# Called by scripts/test.sh under CI=true. A torch that pip cannot install here is reported
# and skipped (exit 0); a failing test fails.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

install_only=0
[[ ${1:-} == --install-only ]] && install_only=1
NEWEST=${NEWEST_TORCH:-2.14.1}
# outside the clone: CI clones afresh each run, and the venv is kept for the next one
VENV=${NEWEST_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/torch-compile-explorer/venv-torch-$NEWEST}
say() { echo "smoke_newest_torch.sh: $*"; }

[[ -x .venv/bin/python ]] || { say "no .venv: run scripts/setup.sh first" >&2; exit 1; }
installed() {
    [[ -x $VENV/bin/python ]] && "$VENV/bin/python" - "$NEWEST" <<'PY'
import importlib.metadata as md, sys
try:
    sys.exit(md.version("torch").split("+")[0] != sys.argv[1])
except md.PackageNotFoundError:
    sys.exit(1)
PY
}
if ! installed; then
    base=$(.venv/bin/python -c 'import sys; print(sys._base_executable)')
    rm -rf "$VENV"
    mkdir -p "$(dirname "$VENV")"
    "$base" -m venv "$VENV"
    say "installing torch==$NEWEST into $VENV (once; a few minutes)"
    if ! "$VENV/bin/pip" install -q "torch==$NEWEST"; then
        say "WARNING: pip cannot install torch==$NEWEST on this machine: smoke set skipped" >&2
        rm -rf "$VENV"
        exit 0
    fi
fi
((install_only)) && exit 0
own=$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
main=$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
echo "$main" >"$own/zz_project_venv.pth"

"$VENV/bin/python" -c 'import sys, torch; print(f"smoke_newest_torch.sh: torch {torch.__version__}, python {sys.version.split()[0]}")'
# the decompiler on Dynamo's output, higher-order ops, the compat surface, one capture
# through Inductor: the parts a torch release moves first. Then observation: Dynamo's
# per-code cache and its canary of private names, the fast observation tests (the user's
# compile survives, eager marks and seen sizes come back, a loop ends as a plain run
# ends), measure=True's rule and profile, and the graph-break registry of this torch; the
# frames torch keeps in a compile's stack (its skip count moves between releases)
"$VENV/bin/python" -m pytest -q -p no:cacheprovider -m "not slow" \
    tests/test_decompile.py tests/test_subgraphs.py tests/test_compat.py \
    "tests/test_capture.py::test_decompiling_waits_until_the_decompiled_source_is_first_read" \
    tests/test_code_cache.py tests/test_observe.py tests/test_measure.py \
    tests/test_diagnosis_causes.py tests/test_advisor_torch_oracle.py \
    --deselect "tests/test_observe.py::test_compare_and_try_fixes_leave_a_stateful_target_as_they_found_it" \
    "tests/test_diagnosis_breaks.py::test_the_registry_is_the_installed_torchs" \
    "tests/test_memory_cudagraphs.py::test_a_compiled_functions_stack_ends_at_the_line_that_called_it"
