#!/bin/sh
# Out-of-tree plugin test, driven by CTest (test_sdk_out_of_tree):
#   run.sh SOURCE_DIR BUILD_DIR CMAKE GENERATOR CXX_COMPILER
# 1. installs the SDK component of BUILD_DIR into a temporary prefix;
# 2. configures and builds this folder's project against that prefix only, from a copy
#    outside the source tree, and checks it saw neither the source tree nor LibTorch;
# 3. installs the plugin, and has the host's CLI list it and run a graph on it.
set -eu
src=$1
build=$2
cmake=$3
generator=$4
cxx=$5

tmp=$(mktemp -d "${TMPDIR:-/tmp}/switchyard-oot.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
step() { echo "---- $*"; }

step "install the SDK component into $tmp/sdk"
"$cmake" --install "$build" --component sdk --prefix "$tmp/sdk"
for f in include/switchyard/sdk.h include/switchyard/plugin.hpp include/switchyard/parallel.hpp; do
  [ -f "$tmp/sdk/$f" ] || fail "the SDK install lacks $f"
done
config=$(find "$tmp/sdk" -name switchyardConfig.cmake)
[ -n "$config" ] || fail "the SDK install lacks switchyardConfig.cmake"
[ -f "$(dirname "$config")/switchyardConfigVersion.cmake" ] || fail "no switchyardConfigVersion.cmake"
[ ! -e "$tmp/sdk/include/switchyard/runtime.hpp" ] || fail "the sdk component installs host headers"
if find "$tmp/sdk" -name '*.so' -o -name '*.a' | grep -q .; then
  fail "the sdk component installs libraries: $(find "$tmp/sdk" -name '*.so' -o -name '*.a')"
fi

step "configure and build the out-of-tree plugin against $tmp/sdk only"
mkdir "$tmp/src"
cp "$src/tests/sdk/out_of_tree/CMakeLists.txt" "$src/tests/sdk/out_of_tree/oot.cpp" "$tmp/src/"
# Nothing from the environment may point CMake back at the source or build tree.
env -u CMAKE_PREFIX_PATH -u switchyard_DIR -u CPATH -u CPLUS_INCLUDE_PATH \
  "$cmake" -S "$tmp/src" -B "$tmp/build" -G "$generator" \
  -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$tmp/sdk" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF \
  -DCMAKE_EXPORT_COMPILE_COMMANDS=ON
"$cmake" --build "$tmp/build"

step "check the build saw the installed SDK and nothing else of switchyard or LibTorch"
grep -q "^switchyard_DIR:PATH=$tmp/sdk/" "$tmp/build/CMakeCache.txt" ||
  fail "find_package(switchyard) did not use $tmp/sdk: $(grep '^switchyard_DIR' "$tmp/build/CMakeCache.txt")"
commands="$tmp/build/compile_commands.json"
[ -f "$commands" ] || fail "no compile_commands.json"
grep -F "$src" "$commands" && fail "the plugin compiled with paths into the source tree $src"
grep -F "$build" "$commands" && fail "the plugin compiled with paths into the build tree $build"
grep -E -i "torch|ATen|c10" "$commands" && fail "the plugin compiled with LibTorch flags"
grep -q -F -- "-I$tmp/sdk/include" "$commands" || grep -q -F -- "-isystem $tmp/sdk/include" "$commands" ||
  fail "the plugin did not compile against $tmp/sdk/include"
plugin=$tmp/build/libswitchyard-oot.so
[ -f "$plugin" ] || fail "no $plugin"
needed=$(readelf -d "$plugin" | grep NEEDED || true)
echo "$needed"
echo "$needed" | grep -E -i "torch|c10|switchyard" && fail "the plugin links host or LibTorch libraries"
# Hidden visibility: the entry point is the only exported function, and nothing of the
# SDK helpers (namespace sy) or the plugin leaks. (libstdc++ keeps a few std:: type-info
# and template objects visible; they are harmless.)
functions=$(nm -D --defined-only "$plugin" | awk '$2 ~ /^[TtWi]$/ {print $3}' | sort -u)
[ "$functions" = "switchyard_plugin_init" ] ||
  fail "the plugin exports functions besides its entry symbol: $(echo "$functions" | tr '\n' ' ')"
nm -D --defined-only "$plugin" | grep -E "N2sy|2sy[0-9]|Square" &&
  fail "the plugin exports symbols of the SDK helpers or of its own code"

step "install the plugin"
"$cmake" --install "$tmp/build" --prefix "$tmp/oot"
installed=$(find "$tmp/oot" -path '*/switchyard/plugins/libswitchyard-oot.so')
[ -n "$installed" ] || fail "cmake --install did not put libswitchyard-oot.so under <libdir>/switchyard/plugins"
plugin_dir=$(dirname "$installed")

step "the host lists it"
cli=$build/bin/switchyard
[ -x "$cli" ] || fail "no CLI at $cli"
SWITCHYARD_PLUGIN_PATH=$plugin_dir "$cli" plugins --kernels >"$tmp/plugins.txt" 2>&1 ||
  { cat "$tmp/plugins.txt"; fail "switchyard plugins failed"; }
cat "$tmp/plugins.txt"
grep -q "^oot 1.0.0 .*$installed" "$tmp/plugins.txt" || fail "switchyard plugins does not list oot from $installed"
grep -q "oot::square" "$tmp/plugins.txt" || fail "switchyard plugins does not list oot::square"

step "the host runs a one-node graph on it"
cat >"$tmp/square.json" <<'JSON'
{
  "format": "switchyard-graph",
  "version": 1,
  "inputs": [{"name": "x", "dtype": "float32", "shape": [2, 3]}],
  "nodes": [{"name": "square", "op": "oot::square", "inputs": ["x"], "outputs": ["y"]}],
  "outputs": ["y"]
}
JSON
cat >"$tmp/x.json" <<'JSON'
{"x": {"dtype": "float32", "shape": [2, 3], "data": [1, -2, 3, 0.5, -1.5, 4]}}
JSON
cat >"$tmp/oot.toml" <<'TOML'
[plugins]
load = ["oot"]

[selection]
default = ["oot"]
strict = true
TOML
SWITCHYARD_PLUGIN_PATH=$plugin_dir "$cli" run "$tmp/square.json" --config "$tmp/oot.toml" \
  --inputs "$tmp/x.json" --save-outputs "$tmp/y.json" >"$tmp/run.txt" 2>&1 ||
  { cat "$tmp/run.txt"; fail "switchyard run failed"; }
cat "$tmp/run.txt"
grep -E -q "^square +oot::square +.* oot *$" "$tmp/run.txt" || fail "the node did not run on backend oot"
# y = x * x, all exact in fp32.
values=$(tr -d ' \n' <"$tmp/y.json" | sed -E 's/.*"data":\[([^]]*)\].*/\1/')
[ "$values" = "1.0,4.0,9.0,0.25,2.25,16.0" ] || fail "y is [$values], expected x * x = [1, 4, 9, 0.25, 2.25, 16]"

echo "ok: out-of-tree plugin built against the installed SDK, loaded and run by the host"
