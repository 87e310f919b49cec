#!/usr/bin/env bash
# Sets up a Python venv with PyTorch 2 from PyPI, for the torch.export (.pt2) tools:
# making fixtures (tools/torch2/make_fixtures.py), the full .pt2 zoo parity run, and
# comparisons with the DLBacktrace engine. Optional: neither README command needs it,
# and the build never uses it (switchyard builds against Debian's LibTorch 1.13).
#
#   tools/torch2/setup_venv.sh [--torch VERSION] [--prefix DIR] [--dlbacktrace]
#
#   --torch VERSION   torch release to install (default 2.6.0, the version the DLBacktrace
#                     package pins); "latest" takes PyPI's newest
#   --prefix DIR      where the venv goes (default: $XDG_CACHE_HOME/switchyard/torch2-VERSION,
#                     which the tests look for, see tools/torch2/find_python.sh)
#   --dlbacktrace     also install the DLBacktrace engine (needs torch 2.6.0), for
#                     tools/torch2/compare_dlbacktrace.py: dl-backtrace 0.1.24 with
#                     --no-deps (its declared dependencies pull tensorflow, lime and more),
#                     then what it imports on the CPU: "transformers<5", matplotlib,
#                     graphviz (the Python package) and ipython
#
# PyPI's Linux torch wheels are CUDA builds: the venv takes about 5 GB. Idempotent: an
# existing venv that already imports the asked-for torch is kept, and so is an installed
# dl-backtrace whose imports all resolve. dl-backtrace ships prebuilt CUDA extensions
# (cpython-312 .so files) that fail to load with this venv's torch (an undefined c10
# symbol); compare_dlbacktrace.py stubs the three it imports (wt_fc_v3_ops,
# wt_selfattention_v3_ops, wt_embedding_v2_ops) in sys.modules before importing it.
set -euo pipefail

version=2.6.0
prefix=""
dlbacktrace=0
while [ $# -gt 0 ]; do
  case "$1" in
    --torch) version="$2"; shift 2 ;;
    --prefix) prefix="$2"; shift 2 ;;
    --dlbacktrace) dlbacktrace=1; shift ;;
    -h|--help) sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "setup_venv: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done

dlbacktrace_version=0.1.24
if [ "$dlbacktrace" = 1 ] && [ "$version" != 2.6.0 ]; then
  echo "setup_venv: --dlbacktrace needs --torch 2.6.0 (dl-backtrace $dlbacktrace_version pins torch 2.6), not $version" >&2
  exit 2
fi

cache="${XDG_CACHE_HOME:-$HOME/.cache}/switchyard"
[ -n "$prefix" ] || prefix="$cache/torch2-$version"
python="$(command -v python3)"

spec="torch==$version"
[ "$version" = latest ] && spec="torch"

if [ -x "$prefix/bin/python" ] && "$prefix/bin/python" - "$version" <<'PY' 2>/dev/null; then
import sys, torch, torchvision
want = sys.argv[1]
sys.exit(0 if want == "latest" or torch.__version__.split("+")[0] == want else 1)
PY
  echo "setup_venv: $prefix already has torch $("$prefix/bin/python" -c 'import torch; print(torch.__version__)')"
else
  echo "setup_venv: creating $prefix with $spec (about 5 GB of CUDA wheels from PyPI)"
  mkdir -p "$(dirname "$prefix")"
  if ! "$python" -c 'import ensurepip' 2>/dev/null; then
    # Debian's python3 makes venvs only with python3-venv installed.
    echo "setup_venv: $python cannot make venvs; installing Debian's python3-venv"
    apt-get install -y -qq --no-install-recommends python3-venv
  fi
  "$python" -m venv "$prefix"
  "$prefix/bin/python" -m pip install --quiet --upgrade pip
  "$prefix/bin/python" -m pip install --quiet "$spec" torchvision numpy
fi

# Imports dl_backtrace with its CUDA extension modules stubbed (as compare_dlbacktrace.py
# does) and prints its version; fails when the package or one of its imports is missing.
dlbacktrace_check() {
  "$prefix/bin/python" - <<'PY' 2>/dev/null
import sys, types
for name in ("wt_fc_v3_ops", "wt_selfattention_v3_ops", "wt_embedding_v2_ops"):
    sys.modules[name] = types.ModuleType(name)
import dl_backtrace
from dl_backtrace.pytorch_backtrace import DLBacktrace  # noqa: F401
print(dl_backtrace.__version__)
PY
}

if [ "$dlbacktrace" = 1 ]; then
  if found="$(dlbacktrace_check)" && [ "$(echo "$found" | tail -n 1)" = "$dlbacktrace_version" ]; then
    echo "setup_venv: $prefix already has dl-backtrace $dlbacktrace_version"
  else
    echo "setup_venv: installing dl-backtrace $dlbacktrace_version (--no-deps) and what it imports"
    "$prefix/bin/python" -m pip install --quiet --no-deps "dl-backtrace==$dlbacktrace_version"
    "$prefix/bin/python" -m pip install --quiet "transformers<5" matplotlib graphviz ipython
    if ! found="$(dlbacktrace_check)"; then
      echo "setup_venv: dl-backtrace does not import in $prefix; try:" >&2
      echo "  $prefix/bin/python -c 'import dl_backtrace'  (after stubbing its three CUDA extension modules)" >&2
      exit 1
    fi
  fi
  echo "setup_venv: dl-backtrace $(echo "$found" | tail -n 1)"
fi
"$prefix/bin/python" -c 'import torch, torchvision; print("setup_venv: torch", torch.__version__, "torchvision", torchvision.__version__)'
echo "setup_venv: python is $prefix/bin/python"
