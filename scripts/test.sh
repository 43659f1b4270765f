#!/usr/bin/env bash
# Set up .venv (with the test extra) and run the test suite. Arguments go to pytest.
#   scripts/test.sh                  the default suite (pytest config in pyproject.toml)
#   scripts/test.sh -m "not slow"    skip the Inductor-on-CPU tests
#   scripts/test.sh -m gpu           the GPU tests, on a machine with CUDA
# With CI=true it also passes -p no:cacheprovider --durations=15.
# pytest's exit code 5 (no tests collected) is reported as a failure.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# --browser: the explorer is tested in a real Chromium (installed where we run as root).
bash scripts/setup.sh --browser test lab

PY=.venv/bin/python
"$PY" -c 'import sys, torch; print(f"test.sh: torch {torch.__version__} (CUDA available: {torch.cuda.is_available()}), python {sys.version.split()[0]}")'

args=()
if [[ ${CI:-} == true ]]; then
    args+=(-p no:cacheprovider --durations=15)
fi

# Lint first: it is fast and its failures are the cheapest to read.
echo "test.sh: ruff check (compiler, explorer, tests, benchmarks, examples)"
"$PY" -m ruff check compiler explorer tests benchmarks examples
echo "test.sh: mypy --strict compiler/"
"$PY" -m mypy
# The front end's npm packages (esbuild, typescript, pinned by package-lock.json): the
# type check below and the test that rebuilds the committed bundles need them.
if ! command -v npm >/dev/null 2>&1; then
    if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null 2>&1; then
        echo "test.sh: installing Debian's nodejs and npm (for the front end's checks)"
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null
    else
        echo "test.sh: error: npm not found. The front end's type check and bundle test need" \
            "Node.js 18+ with npm: install them (Debian: sudo apt-get install nodejs npm)" >&2
        exit 1
    fi
fi
if [[ ! -x node_modules/.bin/tsc || ! -d node_modules/esbuild ]]; then
    echo "test.sh: npm ci (esbuild, typescript)"
    npm ci --no-audit --no-fund
fi
echo "test.sh: tsc --checkJs (explorer/static/**/*.js)"
node_modules/.bin/tsc -p tsconfig.json

rc=0
"$PY" -m pytest ${args[@]+"${args[@]}"} "$@" || rc=$?
if ((rc == 5)); then
    echo "test.sh: pytest collected no tests: that is a failure, not a pass" >&2
    exit 1
fi
# Under CI, a smoke set on the newest torch this machine installs, in a second venv (about
# a minute once that venv exists; its first install takes 3 minutes and 5.4 GB).
# SMOKE_NEWEST_TORCH=0 skips it; =1 runs it outside CI too.
if ((rc == 0)) && [[ ${SMOKE_NEWEST_TORCH:-${CI:-}} == 1 || ${SMOKE_NEWEST_TORCH:-${CI:-}} == true ]]; then
    bash scripts/smoke_newest_torch.sh || rc=$?
fi
exit "$rc"
