#!/usr/bin/env bash
# Prints the python of the torch 2 venv that tools/torch2/setup_venv.sh made, or exits 1.
#   tools/torch2/find_python.sh [VERSION]     VERSION: 2.6.0 (default) or latest
# $SWITCHYARD_TORCH2_PYTHON, when set, wins (a venv made elsewhere).
set -euo pipefail
version="${1:-2.6.0}"
if [ -n "${SWITCHYARD_TORCH2_PYTHON:-}" ]; then
  [ -x "$SWITCHYARD_TORCH2_PYTHON" ] && { echo "$SWITCHYARD_TORCH2_PYTHON"; exit 0; }
  echo "find_python: SWITCHYARD_TORCH2_PYTHON=$SWITCHYARD_TORCH2_PYTHON is not executable" >&2
  exit 1
fi
python="${XDG_CACHE_HOME:-$HOME/.cache}/switchyard/torch2-$version/bin/python"
if [ -x "$python" ] && "$python" -c "import torch, torchvision" 2>/dev/null; then
  echo "$python"
  exit 0
fi
exit 1
