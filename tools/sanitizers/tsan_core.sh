#!/usr/bin/env bash
# The host core's multi-threaded suites under ThreadSanitizer, in a build of their own
# without LibTorch: 8 threads running one model at once (fixed and run-time shapes,
# plans made and evicted concurrently), bit-identical to one thread. CTest's `tsan_core`
# runs it.
#
#   tools/sanitizers/tsan_core.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$1
build=$2
tests=(test_concurrency test_shapes)

echo "tsan_core: configuring $build (TSan, no LibTorch)"
cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1" \
      -DCMAKE_C_FLAGS_DEBUG="-O1 -g1" -DSWITCHYARD_SANITIZE=thread -DSWITCHYARD_WITH_TORCH=OFF \
      > "$build.configure.log" 2>&1 || { cat "$build.configure.log"; exit 1; }
echo "tsan_core: building ${#tests[@]} test suites and their plugins"
start=$SECONDS
cmake --build "$build" --target "${tests[@]}"
echo "tsan_core: built in $((SECONDS - start)) s; running"
regex="^($(IFS='|'; echo "${tests[*]}"))\$"
ctest --test-dir "$build" -R "$regex" --output-on-failure --no-tests=error
