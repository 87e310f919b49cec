#!/usr/bin/env bash
# Dataset runs: `run --inputs-dir/--inputs-list --save-outputs OUTDIR`, one file per sample,
# a bad sample named (stop or skip), --resume after a stopped run, no partial files left.
# Usage: test_dataset.sh <switchyard binary> <source dir>
set -u
bin=$1; src=$2
here=$(cd "$(dirname "$0")" && pwd); . "$here/expect.sh"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
demo=$src/tools/demo/mlp.json
cfg=$src/configs/example.toml
mkdir -p "$tmp/data"
for i in 0 1 2 3 4; do
  printf '{"x": {"dtype": "float32", "shape": [2, 8], "data": [%s]}}\n' "$(seq -s, $((i - 8)) $((i + 7)))" > "$tmp/data/s$i.json"
done
run_ds() { "$bin" run "$demo" --config "$cfg" --output-format json "$@"; }

expect ds-all 0 "dataset: 5 sample\(s\): 5 run, 0 already done \(--resume\), 0 failed; .* samples/s" \
  -- run_ds --inputs-dir "$tmp/data" --save-outputs "$tmp/out"
check ds-five-files [ "$(ls "$tmp/out" | tr '\n' ' ')" = "s0.json s1.json s2.json s3.json s4.json " ]
check ds-no-partials [ -z "$(ls -A "$tmp/out" | grep partial)" ]
# Each sample's file is what a single run of that sample writes.
expect ds-single 0 "outputs written" -- "$bin" run "$demo" --config "$cfg" --inputs "$tmp/data/s3.json" --save-outputs "$tmp/single3.json"
check ds-same-as-single cmp -s "$tmp/out/s3.json" "$tmp/single3.json"
# No terminal, no progress line (stderr here is a pipe).
expect ds-no-progress-on-pipe 0 "^dataset: 5 sample" -- run_ds --inputs-dir "$tmp/data" --save-outputs "$tmp/out_np"
check ds-pipe-quiet [ -z "$(run_ds --inputs-dir "$tmp/data" --save-outputs "$tmp/out_np2" 2>&1 >/dev/null)" ]
if script -qec true /dev/null >/dev/null 2>&1; then  # a pseudo-terminal: the progress line shows
  expect ds-progress-on-tty 0 "5/5  [0-9.]+ samples/s  ETA" -- script -qec "$bin run $demo --config $cfg --output-format json --inputs-dir $tmp/data --save-outputs $tmp/out_tty" /dev/null
  expect ds-progress-off 0 "^dataset" -- script -qec "$bin run $demo --config $cfg --output-format json --inputs-dir $tmp/data --save-outputs $tmp/out_tty2 --no-progress" /dev/null
  check ds-progress-off-quiet [ -z "$(script -qec "$bin run $demo --config $cfg --output-format json --inputs-dir $tmp/data --save-outputs $tmp/out_tty3 --no-progress" /dev/null | grep ETA)" ]
else
  echo "note: skipping the progress-line cases: no script(1) to make a terminal"
fi

# A bad sample (wrong shape) stops the run, named; the samples before it are complete.
cp -r "$tmp/data" "$tmp/bad"
printf '{"x": {"dtype": "float32", "shape": [2, 3], "data": [1,2,3,4,5,6]}}\n' > "$tmp/bad/s2.json"
expect ds-stop nonzero "sample .*bad/s2.json \(3 of 5\): input 'x' expects \[2, 8\].*got \[2, 3\]" \
  -- run_ds --inputs-dir "$tmp/bad" --save-outputs "$tmp/out_bad"
check ds-stop-kept-done [ "$(ls -A "$tmp/out_bad" | tr '\n' ' ')" = "s0.json s1.json " ]
# Fixed, and resumed: only the rest run.
cp "$tmp/data/s2.json" "$tmp/bad/s2.json"
touch -d '2000-01-01' "$tmp/out_bad/s0.json"
expect ds-resume 0 "5 sample\(s\): 3 run, 2 already done" -- run_ds --inputs-dir "$tmp/bad" --save-outputs "$tmp/out_bad" --resume
check ds-resume-untouched [ "$(stat -c %Y "$tmp/out_bad/s0.json")" = "$(date -d '2000-01-01' +%s)" ]
check ds-resume-same cmp -s "$tmp/out_bad/s4.json" "$tmp/out/s4.json"
# Without --resume every sample runs again.
expect ds-rerun 0 "5 run, 0 already done" -- run_ds --inputs-dir "$tmp/bad" --save-outputs "$tmp/out_bad"
# A killed run's temporary is removed, never taken for a result.
printf 'half' > "$tmp/out_bad/.s1.partial.json"; rm "$tmp/out_bad/s1.json"
out=$(run_ds --inputs-dir "$tmp/bad" --save-outputs "$tmp/out_bad" --resume 2>&1)
check ds-stale-partial grep -q "removed 1 incomplete file" <<<"$out"
check ds-stale-resumed grep -q "1 run, 4 already done" <<<"$out"
check ds-stale-gone [ ! -e "$tmp/out_bad/.s1.partial.json" ] && check ds-redone cmp -s "$tmp/out_bad/s1.json" "$tmp/out/s1.json"

# --on-error skip: an unreadable sample is reported and skipped; the exit code says so.
cp -r "$tmp/data" "$tmp/skip"; printf 'not json' > "$tmp/skip/s1.json"
expect ds-skip 1 "error: sample .*skip/s1.json: .*\(skipped\)" -- run_ds --inputs-dir "$tmp/skip" --save-outputs "$tmp/out_skip" --on-error skip
expect ds-skip-summary 1 "4 run, 0 already done \(--resume\), 1 failed" -- run_ds --inputs-dir "$tmp/skip" --save-outputs "$tmp/out_skip2" --on-error skip
check ds-skip-rest [ "$(ls "$tmp/out_skip" | tr '\n' ' ')" = "s0.json s2.json s3.json s4.json " ]

# --inputs-list: paths relative to the list, comments and blank lines ignored; a missing file is named.
printf '# two samples\ndata/s4.json\n\n%s\n' "$tmp/data/s0.json" > "$tmp/list.txt"
expect ds-list 0 "2 sample\(s\): 2 run" -- run_ds --inputs-list "$tmp/list.txt" --save-outputs "$tmp/out_list"
check ds-list-files [ "$(ls "$tmp/out_list" | tr '\n' ' ')" = "s0.json s4.json " ]
printf 'data/s0.json\ndata/nope.json\n' > "$tmp/list2.txt"
expect ds-list-missing nonzero "sample .*data/nope.json \(2 of 2\)" -- run_ds --inputs-list "$tmp/list2.txt" --save-outputs "$tmp/out_list2"
# node_io per sample beside its outputs.
expect ds-node-io 0 "outputs and node_io in .*<sample>.node_io.json" -- run_ds --inputs-dir "$tmp/data" --save-outputs "$tmp/out_io" --node-io all
check ds-node-io-files [ -s "$tmp/out_io/s2.node_io.json" ] && check ds-node-io-records grep -q '"softmax"' "$tmp/out_io/s2.node_io.json"
# The config's [runtime] node_io is honoured the same way.
printf '[selection]\ndefault = ["example", "aten"]\n[runtime]\nnode_io = "outputs"\n' > "$tmp/io.toml"
expect ds-config-node-io 0 "outputs and node_io in" -- "$bin" run "$demo" --config "$tmp/io.toml" --output-format json --inputs-dir "$tmp/data" --save-outputs "$tmp/out_cio"
check ds-config-node-io-file [ -s "$tmp/out_cio/s0.node_io.json" ]

# Clear refusals.
expect ds-needs-outdir nonzero "pass --save-outputs OUTDIR" -- run_ds --inputs-dir "$tmp/data"
expect ds-not-a-dir nonzero "--inputs-dir .*nodir: not a folder" -- run_ds --inputs-dir "$tmp/nodir" --save-outputs "$tmp/o"
mkdir -p "$tmp/empty"; expect ds-empty nonzero "no .pt, .pth or .json files" -- run_ds --inputs-dir "$tmp/empty" --save-outputs "$tmp/o"
expect ds-excludes nonzero "excludes" -- run_ds --inputs "$tmp/data/s0.json" --inputs-dir "$tmp/data" --save-outputs "$tmp/o"
expect ds-no-profile nonzero "do not combine with --inputs-dir" -- run_ds --inputs-dir "$tmp/data" --save-outputs "$tmp/o" --profile
expect ds-on-error-value nonzero "on-error" -- run_ds --inputs-dir "$tmp/data" --save-outputs "$tmp/o" --on-error maybe

# .pt samples with node_io streamed per sample (builds with LibTorch).
py=/usr/bin/python3
if "$bin" --help 2>&1 | grep -q convert && $py -c "import torch" 2>/dev/null; then
  mkdir -p "$tmp/ptdata"
  $py -c "import torch
for i in range(3): torch.save((torch.randn(2, 8),), '$tmp/ptdata/p%d.pt' % i)"
  expect ds-pt-stream 0 "3 run" -- "$bin" run "$demo" --config "$cfg" --inputs-dir "$tmp/ptdata" --save-outputs "$tmp/out_pt" --node-io stream
  expect ds-pt-check 0 "^ok$" -- $py -c "import sys, torch; sys.path.insert(0, '$src/tools'); import node_io_stream as r
for i in range(3):
    out = torch.load('$tmp/out_pt/p%d.pt' % i); io = r.load_all('$tmp/out_pt/p%d.node_io.pt' % i)
    assert list(io) == ['fc1', 'act', 'residual', 'gated', 'fc2', 'softmax'], list(io)
    assert torch.equal(io['softmax']['outputs'][0], out[0])
    assert torch.equal(io['fc1']['inputs'][0], torch.load('$tmp/ptdata/p%d.pt' % i)[0])
print('ok')"
else
  echo "note: skipping the .pt dataset cases: no LibTorch build or no torch in $py"
fi
finish
