#!/usr/bin/env bash
# The cuda plugin's GPU check, in two steps (docs/cuda.md):
#
#   tools/gpu_check.sh prepare [BUNDLE]   here: a Debian machine with this repo built with
#                                         LibTorch and the model zoo exported
#   tools/gpu_check.sh run [BUNDLE]       there: a machine with an NVIDIA GPU, CMake, nvcc
#                                         and python3 with torch (CUDA), no package registry
#
# `prepare` packs into BUNDLE (default: gpu_bundle/ in the repo root) what the GPU machine
# cannot fetch: the Debian packages the host core and the CPU family plugins build against
# (.deb files, unpacked there with dpkg -x into a prefix), the zoo models converted to
# portable graph files with `switchyard convert`, and their inputs and PyTorch's CPU
# outputs as .npz files. `run` then, on the GPU machine:
#   1. builds the host core without LibTorch (-DSWITCHYARD_WITH_TORCH=OFF), the cuda plugin
#      and the CPU family plugins, for the GPU present (CUDA architecture `native`);
#   2. runs the GPU tests (test_cuda_plugin: a GPU test that skips there is a failure);
#   3. runs every bundled zoo model on `cuda`, with the CPU family plugins as the fallback
#      (aten needs LibTorch, which that machine does not have), and checks each output
#      within 1e-4 * max(1, max|ref|) of PyTorch's CPU output;
#   4. benchmarks end-to-end runs against PyTorch eager CUDA on the same GPU, and GEMM
#      nodes against plain cuBLAS, and writes the markdown table (RESULTS/cuda_benchmarks.md;
#      --update-docs also puts it into docs/benchmarks.md).
# Results (logs, JSON lines, the table) go to RESULTS (default BUNDLE/results).
#
# Options:
#   --models a,b      zoo models to bundle (prepare) or check (run); default: every bundled one
#   --batches 1,4     batch sizes to bundle (prepare)
#   --build DIR       build directory (prepare: the LibTorch build with `switchyard`, default
#                     build/; run: where to build, default build-gpu/)
#   --results DIR     where run writes its results (e.g. $OUT under the device tool)
#   --stage S         run only: build | test | parity | bench | all (default all)
#   --repeat N        timed runs per benchmark (default 20)
#   --update-docs     run only: write the table into docs/benchmarks.md
#
# Through the device tool (64 MiB may travel per call): bundle the small models, e.g.
#   tools/gpu_check.sh prepare --models mobilenet_v3_small,gpt_decomposed,gpt_fast,bert_decomposed
#   echo /gpu_bundle/ >> .git/info/exclude
# then run with carry = ["gpu_bundle"], as two calls if one would pass the 10-minute limit:
#   tools/gpu_check.sh run --stage build && tools/gpu_check.sh run --stage test,parity,bench --results "$OUT"
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
STEP=${1:-help}
shift || true
BUNDLE=$ROOT/gpu_bundle
if [[ $# -gt 0 && $1 != --* ]]; then BUNDLE=$(realpath -m "$1"); shift; fi
MODELS="" BATCHES="1,4" BUILD="" RESULTS="" STAGE="all" REPEAT=20 UPDATE_DOCS=0
while [[ $# -gt 0 ]]; do
  case $1 in
    --models) MODELS=$2; shift 2 ;;
    --batches) BATCHES=$2; shift 2 ;;
    --build) BUILD=$(realpath -m "$2"); shift 2 ;;
    --results) RESULTS=$(realpath -m "$2"); shift 2 ;;
    --stage) STAGE=$2; shift 2 ;;
    --repeat) REPEAT=$2; shift 2 ;;
    --update-docs) UPDATE_DOCS=1; shift ;;
    *) echo "gpu_check: unknown option '$1' (see tools/gpu_check.sh help)" >&2; exit 2 ;;
  esac
done

PY=${PYTHON:-python3}  # there: the python3 with torch and numpy
say() { echo "gpu_check: $*" >&2; }
die() { say "$*"; exit 1; }

# The Debian packages the GPU machine lacks: the host core's (spdlog, fmt, toml++, oneTBB,
# nlohmann-json, CLI11, DLPack, Boost headers, GoogleTest) and the CPU family plugins'
# (OpenBLAS for linalg/attention, oneDNN for conv/shape, and the OpenCL loader oneDNN links).
DEBS=(libspdlog-dev libspdlog1.10 libfmt-dev libfmt9 libtomlplusplus-dev libtomlplusplus3 libtbb-dev libtbb12 libtbbbind-2-5 libhwloc15 libudev1
      libtbbmalloc2 nlohmann-json3-dev libcli11-dev libdlpack-dev libboost1.74-dev libgtest-dev libgmock-dev
      libopenblas-dev libopenblas0 libopenblas0-pthread libopenblas-pthread-dev libgfortran5 libdnnl-dev libdnnl2
      ocl-icd-libopencl1)  # oneDNN 2.6 in Debian links the OpenCL loader
# Zoo models that run without aten: every op has a cuda kernel or a CPU family plugin's.
# bert_fast needs aten (nonzero, cumsum, any, ...), which the GPU machine cannot build.
RUNNABLE="resnet18,resnet50,mobilenet_v3_small,vit_b_16,vit_b_16_fast,gpt_decomposed,gpt_fast,bert_decomposed"

# ---- prepare (here) ---------------------------------------------------------------------------------

prepare() {
  local build=${BUILD:-$ROOT/build} zoo models
  local cli=$build/bin/switchyard
  [[ -x $cli ]] || die "$cli not found: build switchyard with LibTorch first (ninja -C build switchyard)"
  zoo=$(sed -n 's/^SWITCHYARD_ZOO_DIR:PATH=//p' "$build/CMakeCache.txt" 2>/dev/null || true)
  [[ -f $zoo/zoo.json ]] || die "no exported model zoo at '$zoo' (ninja -C $build zoo)"
  models=${MODELS:-$RUNNABLE}
  mkdir -p "$BUNDLE/debs" "$BUNDLE/zoo"

  say "downloading ${#DEBS[@]} Debian packages into $BUNDLE/debs"
  (cd "$BUNDLE/debs" && apt-get download "${DEBS[@]}" >/dev/null 2>"$BUNDLE/debs/apt.log") ||
    die "apt-get download failed (see $BUNDLE/debs/apt.log; run apt-get update?)"
  # Every shared library in the packages must find its dependencies in them or in the base
  # system a GPU image has (glibc, libstdc++, libgcc): no surprise there.
  local check=$BUNDLE/.check-prefix
  rm -rf "$check" && mkdir -p "$check"
  for f in "$BUNDLE"/debs/*.deb; do dpkg -x "$f" "$check"; done
  local missing
  missing=$(find "$check" -name '*.so*' -type f -exec sh -c 'objdump -p "$1" 2>/dev/null | sed -n "s/ *NEEDED *//p"' _ {} \; |
            sort -u | while read -r lib; do
              case $lib in libc.so*|libm.so*|libstdc++.so*|libgcc_s.so*|libpthread.so*|libdl.so*|librt.so*|ld-linux*|libgomp.so*|libquadmath.so*) continue ;; esac
              [[ -n $(find "$check" -name "$lib" -print -quit) ]] || echo "$lib"
            done)
  rm -rf "$check"
  [[ -z $missing ]] || die "the bundled packages need libraries not bundled: $missing"

  say "converting models to portable graph files: $models"
  IFS=, read -ra list <<<"$models"
  for m in "${list[@]}"; do
    [[ -f $zoo/$m.pt ]] || die "$zoo/$m.pt: no such zoo model"
    "$cli" convert "$zoo/$m.pt" "$BUNDLE/zoo/$m.json" >"$BUNDLE/zoo/$m.convert.log" 2>&1 ||
      die "switchyard convert $m failed (see $BUNDLE/zoo/$m.convert.log)"
  done
  /usr/bin/"$PY" "$ROOT/tools/gpu_check_zoo.py" export-tensors "$zoo" "$BUNDLE/zoo" --models "$models" --batches "$BATCHES"
  # Which ops of each model have a cuda kernel (the rest fall back to a CPU family plugin).
  "$cli" plugins -k >"$BUNDLE/zoo/kernels.txt" 2>&1
  /usr/bin/python3 - "$BUNDLE/zoo" "$models" <<'EOF' | tee "$BUNDLE/zoo/coverage.txt" >&2
import json, re, sys
zoo, models = sys.argv[1], sys.argv[2].split(",")
owners = {}
plugin = None
for line in open(f"{zoo}/kernels.txt"):
    m = re.match(r"^(\S+) \S+ .*\(vendor", line)
    if m:
        plugin = m.group(1)
        continue
    m = re.match(r"^\s+(aten::\S+)\s", line)
    if m and plugin:
        owners.setdefault(m.group(1), set()).add(plugin)
for model in models:
    ops = sorted({n["op"] for n in json.load(open(f"{zoo}/{model}.json"))["nodes"]})
    elsewhere = [op for op in ops if "cuda" not in owners.get(op, ())]
    nowhere = [op for op in elsewhere if not (owners.get(op, set()) - {"aten", "cuda"})]
    print(f"{model}: {len(ops) - len(elsewhere)} of {len(ops)} ops have cuda kernels"
          + (f"; on CPU plugins: {', '.join(elsewhere)}" if elsewhere else "")
          + (f"; NEEDS ATEN: {', '.join(nowhere)}" if nowhere else ""))
EOF
  git -C "$ROOT" rev-parse HEAD >"$BUNDLE/commit.txt" 2>/dev/null || true
  say "bundle ready: $BUNDLE ($(du -sh "$BUNDLE" | cut -f1)); the device tool carries at most 64 MiB per call"
}

# ---- run (there) --------------------------------------------------------------------------------------

PREFIX="" CUDNN_ROOT=""

setup_prefix() {
  PREFIX=$BUNDLE/prefix
  if [[ ! -f $PREFIX/.unpacked ]]; then
    ls "$BUNDLE"/debs/*.deb >/dev/null 2>&1 || die "no .deb files in $BUNDLE/debs: run 'tools/gpu_check.sh prepare' on a Debian machine first"
    rm -rf "$PREFIX" && mkdir -p "$PREFIX"
    for f in "$BUNDLE"/debs/*.deb; do dpkg -x "$f" "$PREFIX"; done
    # Debian points these at the OpenBLAS flavour through alternatives (postinst, not the .deb).
    local lib=$PREFIX/usr/lib/x86_64-linux-gnu
    mkdir -p "$lib/cmake/openblas"
    cat >"$lib/cmake/openblas/OpenBLASConfig.cmake" <<EOF
set(OpenBLAS_VERSION "0.3.21")
set(OpenBLAS_INCLUDE_DIRS $PREFIX/usr/include/x86_64-linux-gnu/openblas-pthread)
set(OpenBLAS_LIBRARIES $lib/openblas-pthread/libopenblas.so)
EOF
    ln -sf openblas-pthread/libopenblas.so.0 "$lib/libopenblas.so.0"
    touch "$PREFIX/.unpacked"
  fi
  # cuDNN: beside the toolkit, or the pip wheel PyTorch brings (nvidia-cudnn-cu*).
  if [[ ! -f /usr/local/cuda/include/cudnn_version.h && ! -f /usr/include/cudnn_version.h ]]; then
    CUDNN_ROOT=$("$PY" -c 'import os, nvidia.cudnn as c; print(os.path.dirname(c.__file__) if c.__file__ else list(c.__path__)[0])' 2>/dev/null || true)
  fi
  export LD_LIBRARY_PATH=$PREFIX/usr/lib/x86_64-linux-gnu:$PREFIX/usr/lib/x86_64-linux-gnu/openblas-pthread${CUDNN_ROOT:+:$CUDNN_ROOT/lib}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
}

stage_build() {
  command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader >&2 ||
    say "nvidia-smi not found; building anyway"
  command -v nvcc >/dev/null || export PATH=/usr/local/cuda/bin:$PATH
  local gen=() arch=native
  command -v ninja >/dev/null && gen=(-G Ninja)
  nvidia-smi >/dev/null 2>&1 || arch="80-real;90-real;75-virtual"  # no GPU to ask
  cmake -S "$ROOT" -B "$BUILD" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DSWITCHYARD_WITH_TORCH=OFF \
    -DSWITCHYARD_ZOO_ENABLED=OFF -DCMAKE_PREFIX_PATH="$PREFIX/usr" -DSWITCHYARD_CUDA_ARCHITECTURES="$arch" \
    ${CUDNN_ROOT:+-DSWITCHYARD_CUDNN_ROOT="$CUDNN_ROOT"} ${GPU_CHECK_CMAKE_ARGS:-} >"$RESULTS/configure.log" 2>&1 ||
    { tail -30 "$RESULTS/configure.log" >&2; die "configure failed (see $RESULTS/configure.log)"; }
  grep "cuda plugin:" "$RESULTS/configure.log" >&2 || die "CMake did not configure the cuda plugin (see $RESULTS/configure.log)"
  local targets=(switchyard switchyard-plugin-cuda test_cuda_plugin test_cuda_kernel_logic bench_cuda_gemm)
  for p in linalg conv attention elementwise shape example; do targets+=("switchyard-plugin-$p"); done
  cmake --build "$BUILD" -j "$(nproc)" --target "${targets[@]}" >"$RESULTS/build.log" 2>&1 ||
    { tail -40 "$RESULTS/build.log" >&2; die "build failed (see $RESULTS/build.log)"; }
  say "built in $BUILD"
}

stage_test() {
  local failed=0
  "$BUILD/tests/test_cuda_kernel_logic" >"$RESULTS/test_cuda_kernel_logic.log" 2>&1 || failed=1
  SWITCHYARD_PLUGIN_PATH=$BUILD/plugins "$BUILD/tests/test_cuda_plugin" >"$RESULTS/test_cuda_plugin.log" 2>&1 || failed=1
  grep -E "^\[  (PASSED|FAILED) |tests? ran" "$RESULTS"/test_cuda_*.log >&2 || true
  # On a GPU machine the GPU tests must run: a skip for want of a GPU is a failure here.
  if grep -q "needs a CUDA GPU" "$RESULTS/test_cuda_plugin.log"; then
    grep -m1 "needs a CUDA GPU" "$RESULTS/test_cuda_plugin.log" >&2
    die "the GPU tests skipped: the cuda plugin found no usable GPU"
  fi
  [[ $failed == 0 ]] || die "GPU tests failed (see $RESULTS/test_cuda_*.log)"
  say "GPU tests passed"
}

bundled_models() {
  if [[ -n $MODELS ]]; then tr , ' ' <<<"$MODELS"; return; fi
  for f in "$BUNDLE"/zoo/*.json; do
    case $(basename "$f") in models.json) continue ;; esac
    basename "$f" .json
  done
}

# cuda first; aten is not there (no LibTorch), so the CPU family plugins take what cuda declines.
# GPU_CHECK_BACKENDS (comma-separated) overrides the list, e.g. to try the pipeline on a
# machine that has aten and no GPU.
write_config() {
  local list
  list=$(tr , '\n' <<<"${GPU_CHECK_BACKENDS:-cuda,linalg,conv,attention,shape,example}" | sed 's/.*/"&"/' | paste -sd, | sed 's/,/, /g')
  cat >"$RESULTS/cuda.toml" <<EOF
[plugins]
load = [$list]
[selection]
default = [$list]
fuse = true
[runtime]
intra_op_threads = 4
EOF
}

stage_parity_and_bench() {
  local do_parity=$1 do_bench=$2 cli=$BUILD/bin/switchyard failed=0
  write_config
  : >"$RESULTS/parity.jsonl"
  : >"$RESULTS/e2e.jsonl"
  for m in $(bundled_models); do
    for npz in "$BUNDLE"/zoo/"$m".b*.npz; do
      [[ -f $npz ]] || continue
      local stem b inputs out log
      stem=$(basename "$npz" .npz); b=${stem##*.b}
      inputs=$RESULTS/$stem.inputs.json out=$RESULTS/$stem.outputs.json log=$RESULTS/$stem.run.log
      "$PY" "$ROOT/tools/gpu_check_zoo.py" to-json "$npz" "$BUNDLE/zoo/$m.json" "$inputs"
      "$cli" plan "$BUNDLE/zoo/$m.json" --inputs "$inputs" --config "$RESULTS/cuda.toml" >"$RESULTS/$stem.plan.txt" 2>&1 || true
      local timing=()
      [[ $do_bench == 1 ]] && timing=(--repeat "$REPEAT")
      if ! "$cli" run "$BUNDLE/zoo/$m.json" --inputs "$inputs" --config "$RESULTS/cuda.toml" --save-outputs "$out" \
           --no-table "${timing[@]}" >"$log" 2>&1; then
        say "$stem: switchyard run failed: $(tail -2 "$log")"
        echo "{\"npz\": \"$stem.npz\", \"pass\": false, \"error\": \"run failed\"}" >>"$RESULTS/parity.jsonl"
        failed=1
        continue
      fi
      local on_cuda total
      read -r on_cuda total < <("$PY" "$ROOT/tools/gpu_check_zoo.py" plan-count "$RESULTS/$stem.plan.txt")
      if [[ $do_parity == 1 ]]; then
        "$PY" "$ROOT/tools/gpu_check_zoo.py" compare "$out" "$npz" "$BUNDLE/zoo/$m.json" >>"$RESULTS/parity.jsonl" || failed=1
        say "$stem: nodes on cuda: $on_cuda of $total"
        if [[ $on_cuda == 0 && -z ${GPU_CHECK_BACKENDS:-} ]]; then
          say "$stem: no node ran on the cuda plugin (see $RESULTS/$stem.plan.txt)"
          failed=1
        fi
      fi
      if [[ $do_bench == 1 ]]; then
        local ours torch_line
        ours=$(sed -n 's/^median_ms: //p' "$log")
        torch_line=$("$PY" "$ROOT/tools/gpu_check_zoo.py" torch-bench "$m" "$npz" --repeat "$REPEAT" 2>"$RESULTS/$stem.torch.log" || echo '{}')
        echo "{\"model\": \"$m\", \"batch\": $b, \"switchyard_ms\": ${ours:-null}, \"on_cuda\": $on_cuda, \"nodes\": $total, \"torch\": $torch_line}" >>"$RESULTS/e2e.jsonl"
      fi
    done
  done
  if [[ $do_bench == 1 ]]; then
    "$BUILD/bin/bench_cuda_gemm" --repeat "$REPEAT" --markdown "$RESULTS/gemm.md" >&2 || { say "bench_cuda_gemm failed"; failed=1; }
    write_table
  fi
  [[ $failed == 0 ]] || die "zoo parity or the benchmark failed (see $RESULTS)"
}

write_table() {
  local md=$RESULTS/cuda_benchmarks.md
  "$PY" - "$RESULTS" "$md" <<'EOF'
import json, sys, os
results, md = sys.argv[1], sys.argv[2]
rows = [json.loads(l) for l in open(f"{results}/e2e.jsonl") if l.strip()]
device = next((r["torch"].get("device") for r in rows if r.get("torch")), "?")
torch_v = next((r["torch"].get("torch") for r in rows if r.get("torch")), "?")
out = [f"### CUDA: switchyard vs PyTorch eager on {device}", "",
       f"Measured by `tools/gpu_check.sh run` (PyTorch {torch_v}, float32, TF32 off on both sides). "
       "switchyard's time is `switchyard run --repeat` (median, host tensors in and out, so it includes "
       "the input and output copies); PyTorch's is the same model in eager mode, timed with and without "
       "those copies. 'nodes on cuda' counts the graph's nodes the cuda plugin ran; the rest ran on the CPU "
       "family plugins (the GPU machine has no LibTorch for aten).", "",
       "| model | batch | nodes on cuda | switchyard (ms) | PyTorch eager, with copies (ms) | PyTorch eager, on device (ms) | ratio (PyTorch with copies / switchyard) |",
       "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
for r in rows:
    t = r.get("torch") or {}
    ours, theirs = r.get("switchyard_ms"), t.get("median_ms_with_copies")
    ratio = f"{theirs / ours:.2f}" if ours and theirs else "n/a"
    fmt = lambda v: f"{v:.2f}" if isinstance(v, (int, float)) else "n/a"
    out.append(f"| {r['model']} | {r['batch']} | {r['on_cuda']} of {r['nodes']} | {fmt(ours)} | {fmt(theirs)} | "
               f"{fmt(t.get('median_ms_on_device'))} | {ratio} |")
out += ["", "GEMM nodes (a chain of linear nodes on the cuda plugin, per-node time from two chain lengths) "
        "against plain cublasSgemm on the same shapes:", ""]
gemm = f"{results}/gemm.md"
out += open(gemm).read().splitlines() if os.path.exists(gemm) else ["(bench_cuda_gemm did not run)"]
open(md, "w").write("\n".join(out) + "\n")
EOF
  cat "$md" >&2
  if [[ $UPDATE_DOCS == 1 ]]; then
    local docs=$ROOT/docs/benchmarks.md begin="<!-- cuda-benchmarks:begin -->" end="<!-- cuda-benchmarks:end -->"
    if grep -qF "$begin" "$docs"; then
      "$PY" - "$docs" "$md" "$begin" "$end" <<'EOF'
import sys
docs, md, begin, end = sys.argv[1:]
text = open(docs).read()
head, rest = text.split(begin, 1)
_, tail = rest.split(end, 1)
open(docs, "w").write(head + begin + "\n" + open(md).read() + end + tail)
EOF
    else
      printf '\n%s\n%s%s\n' "$begin" "$(cat "$md")" "$end" >>"$docs"
    fi
    say "updated $docs"
  fi
}

run() {
  BUILD=${BUILD:-$ROOT/build-gpu}
  RESULTS=${RESULTS:-$BUNDLE/results}
  mkdir -p "$RESULTS"
  setup_prefix
  local s=",$STAGE,"
  [[ $STAGE == all ]] && s=",build,test,parity,bench,"
  [[ $s == *,build,* ]] && stage_build
  [[ -x $BUILD/bin/switchyard ]] || die "nothing built in $BUILD: run with --stage build first"
  [[ $s == *,test,* ]] && stage_test
  local parity=0 bench=0
  [[ $s == *,parity,* ]] && parity=1
  [[ $s == *,bench,* ]] && bench=1
  if [[ $parity == 1 || $bench == 1 ]]; then stage_parity_and_bench $parity $bench; fi
  say "done; results in $RESULTS"
}

case $STEP in
  prepare) prepare ;;
  run) run ;;
  help|-h|--help) sed -n '2,40p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' ;;
  *) die "unknown step '$STEP': prepare, run or help" ;;
esac
