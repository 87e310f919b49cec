#!/usr/bin/env bash
# Installs ONNX Runtime from PyPI for Debian's python (optional: only tools/bench/compare_ort.py
# uses it; the build and the tests never do).
#
#   tools/bench/setup_ort.sh [DIR]        # default: build/onnxruntime-python in the source tree
#
# Then: PYTHONPATH=DIR /usr/bin/python3 tools/bench/compare_ort.py ...
# pip puts a numpy 2.x beside onnxruntime; it is removed because Debian's torch 1.13 needs
# Debian's numpy 1.x, which onnxruntime's wheel accepts.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
dir=${1:-$src/build/onnxruntime-python}
python=${PYTHON:-/usr/bin/python3}
mkdir -p "$dir"
PIP_ROOT_USER_ACTION=ignore "$python" -m pip install --quiet --disable-pip-version-check --target "$dir" --upgrade onnxruntime
rm -rf "$dir"/numpy "$dir"/numpy-*.dist-info "$dir"/numpy.libs "$dir"/bin/f2py "$dir"/bin/numpy-config
PYTHONPATH=$dir "$python" -c 'import os, numpy, onnxruntime, torch
print("onnxruntime", onnxruntime.__version__, "with numpy", numpy.__version__, "from",
      os.path.dirname(os.path.dirname(numpy.__file__)), "and torch", torch.__version__)'
echo "use: PYTHONPATH=$dir" >&2
