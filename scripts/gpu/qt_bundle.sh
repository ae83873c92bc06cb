#!/usr/bin/env bash
# The app on the GPU host, which has no PySide6 and no registry (issue 25: the GUI thread's
# stalls as the app opens a 64-rank folder, measured on 16 cores). Run HERE, after
# scripts/setup.sh: it packs the venv's PySide6 (QtCore, QtGui, QtWidgets, QtSvg, QtOpenGL,
# the offscreen platform; abi3, so any Python >= 3.9 loads it), shiboken6, pyqtgraph, the
# system libraries they link to (this VM's Debian 12 glibc is older than the host's, so they
# load there) and three DejaVu fonts into bench-out/qt/ (ignored by git; about 29 MB: carry
# "bench-out"). On the host: `source bench-out/qt/setup.sh` unpacks it to /tmp/qt and puts on
# LD_LIBRARY_PATH only the libraries that host lacks, then e.g.
#   python3 benchmarks/bench_gui_ranks.py --kernels 100000 --runs 2
set -euo pipefail
cd "$(dirname "$0")/../.."
site=$(.venv/bin/python -c "import PySide6, os; print(os.path.dirname(os.path.dirname(PySide6.__file__)))")
b=$(mktemp -d); trap 'rm -rf "$b"' EXIT
q=$b/site/PySide6
mkdir -p "$q/Qt/lib" "$q/Qt/plugins/platforms" "$b/syslib" "$b/fonts/dejavu" bench-out/qt
cp "$site"/PySide6/*.py "$site"/PySide6/libpyside6.abi3.so.* "$q/"
for m in QtCore QtGui QtWidgets QtSvg QtOpenGL QtOpenGLWidgets; do
  cp "$site/PySide6/$m.abi3.so" "$q/"
  cp "$site/PySide6/Qt/lib/libQt6${m#Qt}.so.6" "$q/Qt/lib/"
done
cp "$site"/PySide6/Qt/lib/{libQt6DBus.so.6,libicu*.so.*} "$q/Qt/lib/"
cp "$site/PySide6/Qt/plugins/platforms/libqoffscreen.so" "$q/Qt/plugins/platforms/"
cp -r "$site/shiboken6" "$site/pyqtgraph" "$b/site/"
rm -rf "$b/site/shiboken6/include" "$b/site/pyqtgraph/examples" "$b/site/pyqtgraph/tests"
find "$b/site" -name __pycache__ -prune -exec rm -rf {} +
# Every library outside glibc and the C++ runtime that they link to, from this machine.
for f in "$q"/*.so "$q"/Qt/plugins/platforms/*.so "$q"/Qt/lib/*.so.*; do
  LD_LIBRARY_PATH=$q/Qt/lib:$q:$b/site/shiboken6 ldd "$f" | awk '$3 ~ /^\// {print $3}'
done | grep -v -e "$b" -e 'libc\.so' -e 'libm\.so' -e 'libdl\.so' -e 'libpthread' -e 'librt\.so' \
  -e 'ld-linux' -e 'libstdc++' -e 'libgcc_s' | sort -u | xargs -I{} cp -L {} "$b/syslib/"
cp /usr/share/fonts/truetype/dejavu/{DejaVuSans.ttf,DejaVuSans-Bold.ttf,DejaVuSansMono.ttf} "$b/fonts/dejavu/"
tar -C "$b" -I 'xz -T0' -cf bench-out/qt/qt.tar.xz site syslib fonts
cat > bench-out/qt/setup.sh <<'SETUP'
# source bench-out/qt/setup.sh (from the checkout's root, on the GPU host): see
# scripts/gpu/qt_bundle.sh.
Q=/tmp/qt
mkdir -p $Q/need && tar -xJf bench-out/qt/qt.tar.xz -C $Q
export PYTHONPATH=$Q/site:$PYTHONPATH QT_PLUGIN_PATH=$Q/site/PySide6/Qt/plugins
export QT_QPA_PLATFORM=offscreen QT_QPA_FONTDIR=$Q/fonts/dejavu
for round in 1 2 3; do  # the missing libraries, then theirs
  for f in $Q/site/PySide6/*.so $Q/site/PySide6/Qt/plugins/platforms/*.so $Q/site/PySide6/Qt/lib/*.so.* $Q/need/*; do
    [ -e "$f" ] && LD_LIBRARY_PATH=$Q/site/PySide6/Qt/lib:$Q/site/PySide6:$Q/site/shiboken6:$Q/need ldd "$f" 2>/dev/null | awk '/not found/{print $1}'
  done | sort -u > $Q/missing
  for l in $(cat $Q/missing); do cp $Q/syslib/$l $Q/need/ 2>/dev/null || echo "no $l in the bundle"; done
done
echo "system libraries taken from the bundle: $(ls $Q/need | tr '\n' ' ')"
export LD_LIBRARY_PATH=$Q/need${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
SETUP
du -h bench-out/qt/qt.tar.xz
