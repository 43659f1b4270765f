#!/usr/bin/env bash
# Set up (or refresh) the project's virtual environment in .venv. Idempotent: safe to re-run.
#
# Usage: scripts/setup.sh [--browser] [EXTRA ...]
#   scripts/setup.sh            installs the package alone (editable)
#   scripts/setup.sh test       installs .[test]; several extras: scripts/setup.sh test lab
#   --browser                   also installs Debian's chromium (for browser tests/screenshots)
#
# Environment:
#   PYTHON=python3          interpreter that creates .venv
#   TORCH_VERSION=2.13.0    torch release installed (pinned) when .venv has no torch yet
#   TORCH_INDEX_URL=URL     optional pip index for torch, e.g. https://download.pytorch.org/whl/cpu
#   SETUP_BROWSER=1         same as --browser
#   SETUP_SKIP_APT=1        never call apt-get (chromium is then up to you)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

TORCH_VERSION=${TORCH_VERSION:-2.13.0}
PYTHON=${PYTHON:-python3}
VENV=.venv

say() { printf 'setup: %s\n' "$*"; }
die() { printf 'setup: error: %s\n' "$*" >&2; exit 1; }

browser=${SETUP_BROWSER:-0}
extras=()
for arg in "$@"; do
    case $arg in
        --browser) browser=1 ;;
        -h | --help) sed -n '2,15p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) die "unknown option '$arg' (see scripts/setup.sh --help)" ;;
        *)
            [[ $arg =~ ^[A-Za-z0-9_,-]+$ ]] || die "bad extra name '$arg'"
            extras+=("$arg")
            ;;
    esac
done

# pip install -q ARGS...: quiet, errors shown. Machines whose pip config lists a local package
# index make pip warn once for every project missing from it; only that line is dropped.
pip_install() {
    { "$PY" -m pip install -q "$@" 2>&1 1>&3 3>&- |
        { grep -v 'is ignored: it is neither a file nor a directory' || true; } >&2; } 3>&1
}

# --- (a) system packages: chromium (with --browser) -------------------------------------------
apt_updated=0
# apt_install PACKAGE COMMAND HOW_OPTIONAL: installs PACKAGE unless COMMAND is already on PATH.
apt_install() {
    local pkg=$1 cmd=$2 why=$3
    if command -v "$cmd" >/dev/null 2>&1; then
        return 0
    fi
    if [[ ${SETUP_SKIP_APT:-0} != 1 && $(id -u) -eq 0 ]] && command -v apt-get >/dev/null 2>&1; then
        if ((!apt_updated)); then
            say "apt-get update"
            apt-get update -qq
            apt_updated=1
        fi
        say "installing Debian package $pkg (for $cmd)"
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$pkg" >/dev/null
        command -v "$cmd" >/dev/null 2>&1 || die "apt-get installed $pkg but '$cmd' is still not on PATH"
    else
        say "note: '$cmd' not found; $why. Install it with: sudo apt-get install $pkg (or your OS's $pkg package)"
    fi
}
# apt runs beside the pip installs below (a minute each on a fresh machine), awaited at the end
apt_job=
if [[ $browser == 1 ]]; then
    apt_install chromium chromium "it is needed for the browser tests and HTML screenshots" &
    apt_job=$!
fi

# --- (b) the virtual environment -------------------------------------------------------------
if [[ ! -x $VENV/bin/python ]]; then
    command -v "$PYTHON" >/dev/null 2>&1 || die "'$PYTHON' not found; set PYTHON=/path/to/python3.11"
    say "creating $VENV with $("$PYTHON" --version 2>&1)"
    "$PYTHON" -m venv "$VENV"
fi
PY=$VENV/bin/python
"$PY" -c 'import sys; sys.exit(sys.version_info < (3, 10))' ||
    die "$VENV has $("$PY" --version 2>&1); need Python 3.10+ (remove $VENV, set PYTHON=...)"

# --- (c) torch first, pinned -------------------------------------------------------------------
# Prints the installed torch version, with " old" appended when it is below the project's >=2.11,
# or nothing when torch is not installed. Metadata only: does not import torch (2 s).
torch_state() {
    "$PY" - <<'PY'
import importlib.metadata as md
import importlib.util
import re

if importlib.util.find_spec("torch") is not None:
    v = md.version("torch")
    major, minor = (int(x) for x in re.match(r"(\d+)\.(\d+)", v).groups())
    print(v + (" old" if (major, minor) < (2, 11) else ""))
PY
}
state=$(torch_state)
if [[ -z $state || $state == *" old" ]]; then
    # Never let pip pick torch by itself in an empty env: an unpinned torch resolves to a
    # multi-GB CUDA build. The pinned CPU wheel comes from local disk where one is provided.
    if [[ -n $state ]]; then
        say "torch ${state% old} is older than 2.11; replacing it"
    fi
    say "installing torch $TORCH_VERSION (CPU) - about a minute"
    pip_install ${TORCH_INDEX_URL:+--index-url "$TORCH_INDEX_URL"} "torch==$TORCH_VERSION"
    state=$(torch_state)
    [[ -n $state ]] || die "torch $TORCH_VERSION did not install"
else
    say "torch $state already installed; keeping it"
fi
torch_version=${state% old}

# --- (d) the project, editable, with the requested extras ------------------------------------
spec=.
if ((${#extras[@]})); then
    spec=".[$(IFS=,; echo "${extras[*]}")]"
fi
# Hold torch at the installed release while resolving the extras, so no dependency can make
# pip upgrade or replace it (a conflict then fails loudly instead of downloading gigabytes).
constraints=$(mktemp)
trap 'rm -f "$constraints"' EXIT
echo "torch==$torch_version" >"$constraints"
say "installing $spec (editable)"
pip_install -c "$constraints" -e "$spec"

if [[ -n $apt_job ]]; then
    wait "$apt_job" || die "installing chromium failed (see above)"
fi
say "ready: $VENV (python $("$PY" -c 'import platform; print(platform.python_version())'), torch $torch_version)"
