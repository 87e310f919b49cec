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
#   --dlbacktrace     also install the dl-backtrace package (needs --torch 2.6.0)
#
# PyPI's Linux torch wheels are CUDA builds: the venv takes about 5 GB. Idempotent: an
# existing venv that already imports the asked-for torch is kept.
set -euo pipefail

version=2.6.0
prefix=""
dlbacktrace=0
while [ $# -gt 0 ]; do
  case "$1" in
    --torch) version="$2"; shift 2 ;;
    --prefix) prefix="$2"; shift 2 ;;
    --dlbacktrace) dlbacktrace=1; shift ;;
    -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "setup_venv: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done

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

if [ "$dlbacktrace" = 1 ]; then
  "$prefix/bin/python" -m pip install --quiet dl-backtrace
fi
"$prefix/bin/python" -c 'import torch, torchvision; print("setup_venv: torch", torch.__version__, "torchvision", torchvision.__version__)'
echo "setup_venv: python is $prefix/bin/python"
