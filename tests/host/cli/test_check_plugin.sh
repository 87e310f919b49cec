#!/usr/bin/env bash
# check-plugin against a plugin with subtle bugs: it must exit 1 and name each wrong
# kernel and the case that showed it, while passing the right one. A bug in a storage's
# conversion (SDK 1.1) shows only with values kept in that storage, which the kit also runs;
# a bug in an in-place output, only with inputs the host owns and that die at the kernel.
set -u
bin=$1 plugin=$2
fails=0
out=$("$bin" check-plugin "$plugin" 2>&1); rc=$?
echo "$out"
check() {  # description, extended regex the output must match
  if grep -Eq "$2" <<<"$out"; then echo "ok: $1"; else echo "FAILED: $1 (no match for /$2/)"; fails=$((fails + 1)); fi
}
[ $rc = 1 ] && echo "ok: exit code 1" || { echo "FAILED: exit code $rc, expected 1"; fails=$((fails + 1)); }
check "leaky relu fails on a negative element" "FAIL +aten::relu +float32 .*case '.*': output 0: element [0-9]+ is -"
check "stride-blind sigmoid fails on the transposed case" "FAIL +aten::sigmoid .*case 'transposed"
check "correct tanh passes" "PASS +aten::tanh +float32"
check "neg's storage conversion bug fails, named with the storage" \
  "FAIL +aten::neg +float32 .*case '.*': in storage subtly_wrong/reversed: output 0: element"
check "exp's in-place bug fails, named as in place" \
  "FAIL +aten::exp +float32 .*case '.*': in place: output 0: element"
check "summary counts" "1 passed, 4 failed"

out=$("$bin" check-plugin /nonexistent/libx.so 2>&1); rc=$?
[ $rc = 1 ] && echo "ok: missing file exits 1" || { echo "FAILED: missing file rc=$rc"; fails=$((fails + 1)); }
check "missing file is named" "no such file: /nonexistent/libx.so"
exit $((fails > 0))
