#!/bin/sh
# The CLI and the conformance kit build against the public headers only. Each .cpp under
# the given folders is compiled (-fsyntax-only) with exactly the public include folders
# (host/include, host/torchscript/include, host/conformance/include, sdk/include, and
# DLPack's), so an include of a host/src header (config/config.hpp, ir/graph.hpp,
# util/log.hpp, api/internal.hpp, ...) does not resolve, and the file fails to compile.
#   check_public_headers_only.sh CXX SOURCE_ROOT DLPACK_INCLUDE_DIR FOLDER...
# Prints each failing file with the compiler's first error; exits 1 if any fails.
set -u
cxx=$1 root=$2 dlpack=$3
shift 3
flags="-std=c++17 -fsyntax-only -DSWITCHYARD_WITH_TORCHSCRIPT
       -I$root/host/include -I$root/host/torchscript/include -I$root/host/conformance/include
       -I$root/sdk/include -I$dlpack"
failed=0 checked=0
for folder in "$@"; do
  [ -d "$folder" ] || { echo "no such folder: $folder"; exit 2; }
  for file in $(find "$folder" -name '*.cpp' | sort); do
    checked=$((checked + 1))
    # A relative path (#include "../src/ir/graph.hpp") would get past the include folders.
    if grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[^"]*\.\./' "$file"; then
      echo "FAILED: $file includes a header by a relative path out of its folder"
      failed=$((failed + 1))
      continue
    fi
    # shellcheck disable=SC2086
    if ! out=$($cxx $flags "$file" 2>&1); then
      echo "FAILED: $file does not compile with the public headers only:"
      printf '%s\n' "$out" | grep -m1 -E 'error|fatal' || printf '%s\n' "$out" | head -5
      failed=$((failed + 1))
    fi
  done
done
[ "$checked" -gt 0 ] || { echo "no sources found"; exit 2; }
if [ "$failed" -gt 0 ]; then
  echo "$failed of $checked files reach past the public headers (host/include, host/torchscript/include,"
  echo "host/conformance/include, sdk/include); give the public API what they need instead."
  exit 1
fi
echo "ok: $checked files compile against the public headers only"
