#!/usr/bin/env bash
# Runs every launch of scripts/hw/launches.txt on the GPU: once plainly (10 s limit: a
# deadlocked kernel is killed), then, unless it hung, under compute-sanitizer's racecheck,
# synccheck and memcheck (60 s limit each).  Writes OUT/summary.tsv (one row per launch) and
# OUT/logs.txt (every tool's output).  An argument, a regular expression, keeps the launches
# whose names match it; LAUNCHES names another launch list.
# For a GPU machine only; see scripts/hw/README.md.
set -u
OUT=${OUT:-/tmp/hw-out}
FILTER=${1:-.}
LAUNCHES=${LAUNCHES:-scripts/hw/launches.txt}
mkdir -p "$OUT"
WORK=$(mktemp -d)
nvcc -O2 -o "$WORK/launch" scripts/hw/launch.cu -lcuda || exit 1
{ nvidia-smi -L; compute-sanitizer --version | tail -1; nvcc --version | tail -1; } >"$OUT/machine.txt" 2>&1

one() {
    local line="$1" name ptx kernel rest dir plain
    read -r name ptx kernel rest <<<"$line"
    dir="$WORK/$name"
    mkdir -p "$dir"
    timeout -s KILL 10 "$WORK/launch" "$ptx" "$kernel" $rest >"$dir/plain" 2>&1
    plain=$?
    local row="$name	plain=$plain"
    if [ "$plain" -ne 137 ]; then
        for tool in racecheck synccheck memcheck; do
            timeout -s KILL 60 compute-sanitizer --tool "$tool" --print-limit 20 \
                "$WORK/launch" "$ptx" "$kernel" $rest >"$dir/$tool" 2>&1
            local rc=$?
            local summary
            summary=$(grep -m1 -E "(RACECHECK|ERROR|SYNCCHECK) SUMMARY" "$dir/$tool" | sed 's/^========= //')
            row="$row	$tool=$rc:${summary:-none}"
        done
    else
        row="$row	hung (killed after 10 s)"
    fi
    echo "$row" >"$dir/row"
}
export -f one
export WORK
grep -E "^[^ ]*($FILTER)" "$LAUNCHES" >"$WORK/launches"
tr '\n' '\0' <"$WORK/launches" | xargs -0 -P 8 -I{} bash -c 'one "$@"' _ {}

: >"$OUT/summary.tsv"
: >"$OUT/logs.txt"
while read -r name _; do
    cat "$WORK/$name/row" >>"$OUT/summary.tsv" 2>/dev/null || echo "$name	no result" >>"$OUT/summary.tsv"
    for f in plain racecheck synccheck memcheck; do
        [ -f "$WORK/$name/$f" ] && { echo "### $name $f"; cat "$WORK/$name/$f"; } >>"$OUT/logs.txt"
    done
done <"$WORK/launches"
cat "$OUT/summary.tsv"
