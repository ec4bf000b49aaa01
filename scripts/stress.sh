#!/usr/bin/env bash
# Runs the release weft on every stress input of issue 15 (crates/cli/tests/stress) with the
# default budgets, under a 10 s wall-clock limit and a 4 GiB address-space limit, and prints
# per input: exit status, the summary line, seconds and peak resident memory. An exit status
# other than 0-3 (a panic is 101, a signal 128+N, a timeout 124) is a failure.
#
#   scripts/stress.sh [path/to/weft]
set -uo pipefail
cd "$(dirname "$0")/.."
weft=${1:-target/release/weft}
fail=0
printf '%-28s %4s %8s %10s  %s\n' input exit seconds 'peak MiB' summary
for f in crates/cli/tests/stress/*.ptx /dev/zero; do
    out=$(mktemp)
    start=$(date +%s.%N)
    ( ulimit -v 4194304; exec /usr/bin/time -f '%M' -o "$out.rss" timeout 10 "$weft" "$f" ) \
        >"$out" 2>"$out.err"
    code=$?
    end=$(date +%s.%N)
    rss=$(tail -1 "$out.rss" 2>/dev/null)
    summary=$(grep -h -E '^kernel |error: |warning: ' "$out" "$out.err" | tail -1 | cut -c1-150)
    printf '%-28s %4s %8.2f %10.1f  %s\n' "$(basename "$f")" "$code" \
        "$(awk "BEGIN { print $end - $start }")" "$(awk "BEGIN { print ${rss:-0} / 1024 }")" \
        "$summary"
    [ "$code" -le 3 ] || fail=1
    rm -f "$out" "$out.err" "$out.rss"
done
exit $fail
