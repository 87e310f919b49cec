#!/usr/bin/env bash
# Builds switchyard's libFuzzer targets with clang-14 and runs each on a fresh copy of its
# seed corpus (tests/fuzz/README.md).
#
#   tools/fuzz.sh [--time SECONDS | --runs N] [options] [target...]
#
# Targets: config, graph_file, shapes, dlpack, pt2, torch_pickle, torchscript (default: all
# seven; torchscript only where LibTorch is installed). Options:
#   --time S         fuzz each target for S seconds (default 60)
#   --runs N         fuzz each target for N executions instead
#   --build-dir DIR  the clang build tree (default: build-fuzz/ in the repository)
#   --jobs N         build parallelism (default: ninja's)
#   --keep-going     don't stop a target at its first crash: libFuzzer's fork mode counts
#                    every crash, timeout and OOM (--time only); fresh worker processes
#                    also bound the memory LibTorch accumulates (torchscript)
#   --workers N      fork-mode worker processes for --keep-going (default 1)
#   --resume         start from the corpus the last run left in DIR/runs/<target>/ (plus the
#                    seeds) instead of the seeds alone; its artifacts move to previous/
#   --no-build       run what is already built
#   -- ARGS...       extra libFuzzer flags for every target (e.g. -- -max_len=8192)
#
# Before fuzzing, each target replays tests/fuzz/regressions/<target>/ (inputs that once
# crashed it); a failure there counts as a crash. Findings land in
# DIR/runs/<target>/artifacts/ and the log in DIR/runs/<target>/log.txt. Prints a summary
# table with executions and crashes per target; exits 1 on any crash, 2 on a usage or
# build error.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
FUZZ_DIR=$ROOT/tests/fuzz
ALL_TARGETS=(config graph_file shapes dlpack pt2 torch_pickle torchscript)

time_s=60
runs=
build_dir=$ROOT/build-fuzz
jobs=
keep_going=0
workers=1
resume=0
build=1
targets=()
extra=()

usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; }
die() { echo "fuzz.sh: $*" >&2; exit 2; }

while [ $# -gt 0 ]; do
  case $1 in
    --time) [ $# -ge 2 ] || die "--time needs SECONDS"; time_s=$2; runs=; shift 2 ;;
    --runs) [ $# -ge 2 ] || die "--runs needs N"; runs=$2; shift 2 ;;
    --build-dir) [ $# -ge 2 ] || die "--build-dir needs DIR"; build_dir=$2; shift 2 ;;
    --jobs|-j) [ $# -ge 2 ] || die "--jobs needs N"; jobs=$2; shift 2 ;;
    --keep-going) keep_going=1; shift ;;
    --workers) [ $# -ge 2 ] || die "--workers needs N"; workers=$2; shift 2 ;;
    --resume) resume=1; shift ;;
    --no-build) build=0; shift ;;
    -h|--help) usage; exit 0 ;;
    --) shift; extra=("$@"); break ;;
    -*) die "unknown option $1 (see --help)" ;;
    *) targets+=("$1"); shift ;;
  esac
done
[[ $time_s =~ ^[0-9]+$ ]] || die "--time wants whole seconds, got '$time_s'"
[ -z "$runs" ] || [[ $runs =~ ^[0-9]+$ ]] || die "--runs wants a number, got '$runs'"
[ -z "$runs" ] || [ $keep_going = 0 ] || die "--keep-going works with --time only"
mkdir -p "$build_dir"
build_dir=$(cd "$build_dir" && pwd)

have_torch() { [ -f /usr/lib/x86_64-linux-gnu/cmake/Torch/TorchConfig.cmake ] ||
               [ -n "$(find /usr/lib /usr/share /usr/local -path '*Torch/TorchConfig.cmake' -print -quit 2>/dev/null)" ]; }

explicit=1
if [ ${#targets[@]} -eq 0 ]; then
  explicit=0
  targets=(config graph_file shapes dlpack pt2 torch_pickle)
  if have_torch; then targets+=(torchscript); else
    echo "fuzz.sh: LibTorch not found; skipping the torchscript target" >&2; fi
fi
for t in "${targets[@]}"; do
  [[ " ${ALL_TARGETS[*]} " == *" $t "* ]] || die "unknown target '$t' (known: ${ALL_TARGETS[*]})"
done

# --- configure and build ------------------------------------------------------------------
want_torch=OFF
[[ " ${targets[*]} " == *" torchscript "* ]] && want_torch=ON
if [ $build = 1 ]; then
  command -v clang++-14 >/dev/null && command -v clang-14 >/dev/null ||
    die "clang-14 is missing: run tools/setup.sh (it installs clang-14 and libclang-rt-14-dev)"
  cache=$build_dir/CMakeCache.txt
  # Keep LibTorch on once a tree has it, so that switching targets does not flip the cache.
  if [ -f "$cache" ] && grep -q '^SWITCHYARD_WITH_TORCH:BOOL=ON' "$cache"; then want_torch=ON; fi
  gen=()
  [ -f "$cache" ] || gen=(-G Ninja)
  echo "fuzz.sh: configuring $build_dir (clang-14, LibTorch $want_torch)"
  cmake -S "$ROOT" -B "$build_dir" "${gen[@]}" \
    -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 \
    -DSWITCHYARD_FUZZ=ON -DSWITCHYARD_WITH_TORCH=$want_torch >"$build_dir/configure.log" 2>&1 ||
    { tail -30 "$build_dir/configure.log" >&2; die "configure failed (log: $build_dir/configure.log)"; }
  build_targets=()
  for t in "${targets[@]}"; do build_targets+=("fuzz_$t"); done
  echo "fuzz.sh: building ${build_targets[*]}"
  jflag=()
  [ -n "$jobs" ] && jflag=(-j "$jobs")
  cmake --build "$build_dir" "${jflag[@]}" --target "${build_targets[@]}" ||
    die "build failed"
fi

# Where did a failure happen? Replays an artifact and reads the first stack of the report:
# "in LibTorch, under <first switchyard frame>" when the frames above our first one are
# LibTorch's (or the C/C++ runtime's), else "in <that frame>".
triage() {  # bin artifact env...
  local bin=$1 artifact=$2; shift 2
  case $(basename "$artifact") in timeout-*) echo "timeout (not replayed)"; return ;; esac
  env UBSAN_OPTIONS=print_stacktrace=1 "$@" "$bin" "${flags_replay[@]}" "$artifact" 2>&1 | awk '
    /^ *#[0-9]+ 0x/ {
      if ($0 ~ /switchyard::|LLVMFuzzerTestOneInput/) {
        fn = $0; sub(/^ *#[0-9]+ 0x[0-9a-f]+ in /, "", fn)
        gsub(/\(anonymous namespace\)/, "{anon}", fn); sub(/\(.*/, "", fn)
        print (torch ? "in LibTorch, under " : "in ") fn; done = 1; exit
      }
      if ($0 ~ /lib(torch|c10)[^ ]*\.so/) torch = 1
    }
    /^SUMMARY:/ && !summary { summary = $0 }
    END {
      if (done) exit
      if (summary ~ /\/(host|sdk|plugins|tests)\//) { sub(/^SUMMARY: [A-Za-z]+: [a-z-]+ /, "", summary); print "in switchyard code: " summary }
      else print "no switchyard frame: " (summary ? summary : "see the log")
    }'
}

# --- run ----------------------------------------------------------------------------------
declare -A r_status r_execs r_rate r_crashes r_corpus r_time
total_crashes=0
for t in "${targets[@]}"; do
  bin=$build_dir/fuzz/fuzz_$t
  if [ ! -x "$bin" ]; then
    if [ $explicit = 0 ] && [ "$t" = torchscript ]; then
      r_status[$t]=skipped; r_execs[$t]=-; r_rate[$t]=-; r_crashes[$t]=-; r_corpus[$t]=-; r_time[$t]=-
      continue
    fi
    die "$bin is not built"
  fi
  work=$build_dir/runs/$t
  log=$work/log.txt
  if [ $resume = 1 ] && [ -d "$work/corpus" ]; then
    stamp=$(date +%Y%m%d-%H%M%S)
    mkdir -p "$work/previous/$stamp"
    find "$work/artifacts" -maxdepth 1 -type f -exec mv {} "$work/previous/$stamp/" \; 2>/dev/null || true
    for f in "$log" "$work/regressions.log"; do [ -f "$f" ] && mv "$f" "$work/previous/$stamp/"; done
    echo "fuzz.sh: $t: resuming from $(find "$work/corpus" -type f | wc -l) corpus files"
  else
    rm -rf "$work"
  fi
  mkdir -p "$work/corpus" "$work/artifacts"
  cp -R "$FUZZ_DIR/corpus/$t/." "$work/corpus/"
  flags=(-artifact_prefix="$work/artifacts/" -print_final_stats=1 -timeout=25)
  [ -f "$FUZZ_DIR/$t.dict" ] && flags+=(-dict="$FUZZ_DIR/$t.dict")
  env_opts=(UBSAN_OPTIONS="print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}")
  case $t in
    # LibTorch leaks on some error paths of its own (suppressed, see the file); it needs
    # more memory than libFuzzer's 2 GB default; and .pt seeds are larger than the 4 KB
    # libFuzzer starts its length limit at.
    torchscript)
      env_opts+=(LSAN_OPTIONS="suppressions=$FUZZ_DIR/lsan-libtorch.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}")
      flags+=(-rss_limit_mb=6144 -len_control=0 -max_len=65536) ;;
    # .pt2 seeds are 23-66 KB, and the regressions up to 120 KB (a replayed file is cut
    # to -max_len); the zip-aware mutators grow an input a little at a time.
    pt2|torch_pickle)
      flags+=(-len_control=0 -max_len=131072) ;;
  esac
  crashes=0
  start=$(date +%s)

  # 1. Regressions: each file once; any failure is a crash.
  regressions=()
  if [ -d "$FUZZ_DIR/regressions/$t" ]; then
    while IFS= read -r -d '' f; do regressions+=("$f"); done \
      < <(find "$FUZZ_DIR/regressions/$t" -type f ! -name '*.md' -print0 | sort -z)
  fi
  if [ ${#regressions[@]} -gt 0 ]; then
    echo "fuzz.sh: $t: replaying ${#regressions[@]} regression inputs"
    for f in "${regressions[@]}"; do
      if ! env "${env_opts[@]}" "$bin" "${flags[@]}" "${extra[@]}" "$f" >>"$work/regressions.log" 2>&1; then
        flags_replay=(-timeout=25 -rss_limit_mb=6144)
        echo "fuzz.sh: $t: REGRESSION: $f fails again: $(triage "$bin" "$f" "${env_opts[@]}")" >&2
        crashes=$((crashes + 1))
      fi
    done
  fi

  # 2. Fuzz.
  if [ -n "$runs" ]; then
    flags+=(-runs="$runs"); what="$runs runs"
  else
    flags+=(-max_total_time="$time_s"); what="${time_s}s"
  fi
  [ $keep_going = 1 ] && flags+=(-fork="$workers" -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1)
  echo "fuzz.sh: $t: fuzzing for $what (log: $log)"
  set +e
  env "${env_opts[@]}" "$bin" "${flags[@]}" "${extra[@]}" "$work/corpus" >"$log" 2>&1
  rc=$?
  set -e
  r_time[$t]=$(( $(date +%s) - start ))

  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  if [ $keep_going = 1 ]; then
    # fork mode: "#N: cov: .. exec/s: R oom/timeout/crash: a/b/c time: ..."
    last=$(grep -E '^#[0-9]+: cov:' "$log" | tail -1 || true)
    if [ -n "$last" ]; then
      execs=$(sed -E 's/^#([0-9]+):.*/\1/' <<<"$last")
      rate=$(sed -E 's/.*exec\/s:? ([0-9]+).*/\1/' <<<"$last")
      abc=$(sed -E 's/.*oom\/timeout\/crash: ([0-9]+)\/([0-9]+)\/([0-9]+).*/\1 \2 \3/' <<<"$last")
      read -r n_oom n_timeout n_crash <<<"$abc"
      crashes=$((crashes + n_oom + n_timeout + n_crash))
    fi
  fi
  found=$(find "$work/artifacts" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) | wc -l)
  # Stopped by a signal (Ctrl-C, kill -INT): libFuzzer says so and leaves no artifact.
  interrupted=0
  grep -q 'libFuzzer: run interrupted' "$log" && interrupted=1
  if [ $keep_going = 0 ]; then
    crashes=$((crashes + found))
    # A failure that left no artifact (e.g. the harness died at start) still counts.
    [ $rc -ne 0 ] && [ "$found" -eq 0 ] && [ $interrupted = 0 ] && crashes=$((crashes + 1))
  elif [ $rc -ne 0 ] && [ $crashes -eq 0 ]; then
    crashes=1
  fi
  r_execs[$t]=${execs:-?}
  r_rate[$t]=${rate:-?}
  r_crashes[$t]=$crashes
  r_corpus[$t]=$(find "$work/corpus" -type f | wc -l)
  if [ $crashes -gt 0 ]; then r_status[$t]=CRASH; elif [ $interrupted = 1 ]; then r_status[$t]=stopped; else r_status[$t]=ok; fi
  total_crashes=$((total_crashes + crashes))
  if [ $crashes -gt 0 ]; then
    grep -E '^(==[0-9]+==ERROR|SUMMARY|.*runtime error|terminate called)' "$log" | head -5 >&2 || true
    flags_replay=(-timeout=25 -rss_limit_mb=6144)
    n=0
    while IFS= read -r a; do
      n=$((n + 1))
      if [ $n -le 20 ]; then
        echo "  artifact: $a: $(triage "$bin" "$a" "${env_opts[@]}")" >&2
      else
        echo "  artifact: $a" >&2
      fi
    done < <(find "$work/artifacts" -maxdepth 1 -type f | sort)
  fi
done

echo
printf '%-12s %-8s %12s %8s %8s %8s %7s\n' target status executions exec/s crashes corpus time_s
for t in "${targets[@]}"; do
  printf '%-12s %-8s %12s %8s %8s %8s %7s\n' "$t" "${r_status[$t]}" "${r_execs[$t]}" \
    "${r_rate[$t]}" "${r_crashes[$t]}" "${r_corpus[$t]}" "${r_time[$t]}"
done
if [ $total_crashes -gt 0 ]; then
  echo "fuzz.sh: $total_crashes crash(es); inputs under $build_dir/runs/<target>/artifacts/" >&2
  exit 1
fi
