#!/usr/bin/env bash
# Set up .venv (with the test extra), lint, and run the tests. Other arguments go to pytest.
#   scripts/test.sh                  the fast tier: every test but the slow ones, and every
#                                    docstring example of compiler/ and explorer/ (daily work)
#   scripts/test.sh --all            everything: the slow tests too (Inductor C++ builds, the
#                                    browser in JupyterLab, notebooks run end to end); CI's tier
#   scripts/test.sh tests/test_x.py  one file, fast tier (--all tests/test_x.py: all of it)
#   scripts/test.sh -m gpu           the GPU tests, on a machine with CUDA (a -m given replaces
#                                    the tier's)
#   scripts/test.sh compiler explorer   the docstring examples alone
# With CI=true it also passes -p no:cacheprovider --durations=15.
# pytest's exit code 5 (no tests collected) is reported as a failure.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

tier=fast
pytest_args=()
for arg in "$@"; do
    if [[ $arg == --all ]]; then tier=full; else pytest_args+=("$arg"); fi
done

# --browser: the explorer is tested in a real Chromium (installed where we run as root).
bash scripts/setup.sh --browser test lab

PY=.venv/bin/python
"$PY" -c 'import sys, torch; print(f"test.sh: torch {torch.__version__} (CUDA available: {torch.cuda.is_available()}), python {sys.version.split()[0]}")'

# Two single-threaded jobs run beside the tests, each on the core pytest mostly leaves free:
# mypy (a minute or two without its cache) and, under CI, the install of the newest-torch
# venv (3 minutes and 5.4 GB from local disk the first time) for the smoke set run after the
# tests. Their output is shown after pytest's. SMOKE_NEWEST_TORCH=0 skips the smoke set; =1
# runs it outside CI too.
background=()
logs=()
start_beside() {  # start_beside COMMAND...: run it in the background, its output kept
    local log
    log=$(mktemp)
    "$@" >"$log" 2>&1 &
    background+=($!)
    logs+=("$log")
}
# a lint failure ends this script early: the jobs beside end with it
trap 'kill ${background[@]+"${background[@]}"} 2>/dev/null || true; rm -f ${logs[@]+"${logs[@]}"}' EXIT
echo "test.sh: mypy --strict compiler/ (beside the tests; its result comes after theirs)"
start_beside "$PY" -m mypy
smoke=0
if [[ ${SMOKE_NEWEST_TORCH:-${CI:-}} == 1 || ${SMOKE_NEWEST_TORCH:-${CI:-}} == true ]]; then
    smoke=1
    start_beside bash scripts/smoke_newest_torch.sh --install-only
fi

args=()
if [[ $tier == fast ]]; then
    args+=(-m "not slow")
fi
if [[ ${CI:-} == true ]]; then
    args+=(-p no:cacheprovider --durations=15)
fi

# Lint first: it is fast and its failures are the cheapest to read (mypy runs beside pytest).
echo "test.sh: ruff check (compiler, explorer, tests, benchmarks, examples)"
"$PY" -m ruff check compiler explorer tests benchmarks examples
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

echo "test.sh: pytest, $tier tier${pytest_args[0]+ (arguments: ${pytest_args[*]})}"

rc=0
"$PY" -m pytest ${args[@]+"${args[@]}"} ${pytest_args[@]+"${pytest_args[@]}"} || rc=$?
if ((rc == 5)); then
    echo "test.sh: pytest collected no tests: that is a failure, not a pass" >&2
    exit 1
fi
# the jobs beside: mypy's result, then the smoke set (only when everything else passed)
if ((smoke && rc != 0)); then
    kill "${background[1]}" 2>/dev/null || true  # the smoke venv's install: no smoke set now
    unset 'background[1]'
fi
for i in "${!background[@]}"; do
    job_rc=0
    wait "${background[i]}" || job_rc=$?
    cat "${logs[i]}"
    if ((job_rc != 0)); then
        echo "test.sh: failed (exit code $job_rc): the job above, which ran beside pytest" >&2
        rc=$((rc ? rc : job_rc))
    fi
done
trap - EXIT
rm -f ${logs[@]+"${logs[@]}"}
if ((smoke && rc == 0)); then
    bash scripts/smoke_newest_torch.sh || rc=$?
fi
exit "$rc"
