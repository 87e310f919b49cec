#!/usr/bin/env bash
# The host core's test suites under ASan + UBSan (LeakSanitizer included), in a build of
# their own without LibTorch. CTest's `asan_core` runs it, so every `.ci/run` does.
#
#   tools/sanitizers/asan_core.sh SOURCE_DIR BUILD_DIR
#
# The full suite under the sanitizers (LibTorch parts too) is the `asan` and `tsan`
# presets: README, "Sanitizers and fuzzing".
set -euo pipefail
src=$1
build=$2
tests=(test_ir test_config test_select test_exec test_misbehaving test_fusion test_profile test_parallel
       test_memory_plan test_concurrency test_endurance test_plugin_abi test_sdk_parallel test_example_plugin
       test_shapes test_devices test_oom test_cost test_tensor_import)

echo "asan_core: configuring $build (ASan + UBSan, no LibTorch)"
# -O1 -g1: enough for ASan to catch and place errors, and far cheaper to compile than
# -O2 -g (compiling is most of this test: about 5 minutes on CI's two cores).
cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1" \
      -DCMAKE_C_FLAGS_DEBUG="-O1 -g1" -DSWITCHYARD_SANITIZE=address -DSWITCHYARD_WITH_TORCH=OFF \
      > "$build.configure.log" 2>&1 || { cat "$build.configure.log"; exit 1; }
echo "asan_core: building ${#tests[@]} test suites and their plugins"
start=$SECONDS
cmake --build "$build" --target "${tests[@]}"
echo "asan_core: built in $((SECONDS - start)) s; running"
regex="^($(IFS='|'; echo "${tests[*]}"))\$"
ctest --test-dir "$build" -R "$regex" --output-on-failure --no-tests=error
