#!/bin/sh
# Layering check: no file under PLUGINS_DIR includes a host header.
#   check_no_host_includes.sh PLUGINS_DIR HOST_DIR
# Plugins may include the SDK's headers (switchyard/sdk.h, plugin.hpp, parallel.hpp, shapes.hpp,
# huge_pages.hpp, conv_attributes.hpp, aten_dtype.hpp) and
# nothing else named switchyard/..., nothing under host/, and no header that exists in
# HOST_DIR/src (such as "loader/plugin_manager.hpp"). Prints each offending line; exits 1 if any.
set -u
plugins_dir=$1
host_dir=$2
[ -d "$plugins_dir" ] || { echo "no such directory: $plugins_dir"; exit 2; }
[ -d "$host_dir/src" ] || { echo "no such directory: $host_dir/src"; exit 2; }

found=0
list=$(mktemp) || exit 2
trap 'rm -f "$list"' EXIT
# Lines "file:line:#include <x>" or "...\"x\"" of C/C++ sources and headers.
grep -rnE --include='*.c' --include='*.cc' --include='*.cpp' --include='*.cxx' --include='*.cu' \
     --include='*.h' --include='*.hh' --include='*.hpp' --include='*.cuh' --include='*.inc' \
     '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"][^>"]+[>"]' "$plugins_dir" >"$list"
while IFS= read -r line; do
  header=$(printf '%s\n' "$line" | sed -E 's/^[^#]*#[[:space:]]*include[[:space:]]*[<"]([^>"]+)[>"].*/\1/')
  bad=0
  case "$header" in
    switchyard/sdk.h | switchyard/plugin.hpp | switchyard/parallel.hpp | switchyard/shapes.hpp | \
      switchyard/huge_pages.hpp | switchyard/conv_attributes.hpp | switchyard/aten_dtype.hpp | \
      switchyard/dltensor.hpp) ;;
    switchyard/*) bad=1 ;;
    host/* | */host/*) bad=1 ;;
    *) [ -f "$host_dir/src/$header" ] && bad=1 ;;
  esac
  if [ "$bad" = 1 ]; then
    echo "host header included by a plugin: $line"
    found=1
  fi
done <"$list"

if [ "$found" = 1 ]; then
  echo "plugins/ must build against the SDK alone (sdk/include); see "Layers" in docs/architecture.md."
  exit 1
fi
echo "ok: no plugin source under $plugins_dir includes a host header"
