#!/usr/bin/env bash
# Set up gpuviz in ./.venv on a fresh machine: one command, nothing installed by hand first.
#   bash scripts/setup.sh           the app (plus Qt's X11 system libraries where we can install them)
#   bash scripts/setup.sh --test    the app and the test tools
set -euo pipefail
cd "$(dirname "$0")/.."
want_test=0
[ "${1:-}" = "--test" ] && want_test=1

py=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$py" -m venv .venv
pip=".venv/bin/python -m pip"
$pip install -q --upgrade pip >/dev/null

# torch first and pinned: an unpinned "torch" pulls the newest build with GBs of CUDA
# packages. GPUVIZ_TORCH overrides the spec (e.g. "torch==2.11.0" for a CUDA box).
if ! .venv/bin/python -c "import torch" 2>/dev/null; then
    $pip install -q "${GPUVIZ_TORCH:-torch==2.13.0}"
fi
if [ "$want_test" = 1 ]; then
    $pip install -q -e ".[test,cluster]"  # cluster: the --cluster tests run on a LocalCluster
else
    $pip install -q -e .
    # Qt's xcb plugin needs these on a minimal Linux; install them where we are allowed to.
    missing=0
    for so in libxcb-cursor.so.0 libxcb-icccm.so.4 libxcb-keysyms.so.1 libxcb-image.so.0 \
        libxcb-render-util.so.0 libxcb-xkb.so.1 libxkbcommon-x11.so.0 libxcb-shape.so.0 \
        libxcb-randr.so.0 libEGL.so.1 libfontconfig.so.1; do
        ldconfig -p 2>/dev/null | grep -q "$so" || missing=1
    done
    if [ "$(uname -s)" = Linux ] && [ "$missing" = 1 ] && command -v apt-get >/dev/null \
        && [ "$(id -u)" = 0 ]; then
        (apt-get update -qq && apt-get install -y -qq libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 \
            libxcb-image0 libxcb-render-util0 libxcb-xkb1 libxkbcommon-x11-0 libxcb-shape0 \
            libxcb-randr0 libegl1 libgl1 libfontconfig1 libdbus-1-3 >/dev/null) \
            || echo "setup: could not install Qt's X11 libraries; gpuviz will name the missing ones" >&2
    fi
fi
