#!/usr/bin/env bash
# Regenerate the committed PTX of every samples/**/*.cu (hand-written PTX in
# samples/handwritten/ has no .cu and is left alone).
#
#   bash samples/regen.sh            # all samples
#   bash samples/regen.sh samples/classic/transpose.cu ...
#
# Compiles from the repository root with repository-relative paths, so the `.file`
# lines name e.g. "samples/classic/transpose.cu"; any absolute path nvcc still writes
# (CUDA headers inside .venv) is rewritten relative to the repository root or, outside
# it, to "<external>/NAME".  Arch: compute_80, or compute_90 / compute_90a / compute_100a
# for a source containing the line "Compile: compute_90" (resp. 90a, 100a); a line
# "Compile-flags: ..." adds nvcc flags.  Runs one nvcc
# at a time.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
nvcc="${NVCC:-$(bash samples/setup-nvcc.sh | tail -n1)}"

if [ "$#" -gt 0 ]; then
    sources=("$@")
else
    mapfile -t sources < <(find samples -name '*.cu' -not -path 'samples/handwritten/*' | sort)
fi

status=0
for cu in "${sources[@]}"; do
    cu="${cu#./}"
    ptx="${cu%.cu}.ptx"
    arch=compute_80
    grep -q 'Compile: compute_90' "$cu" && arch=compute_90
    # Architecture-specific targets for wgmma (sm_90a) and tcgen05 (sm_100a).
    grep -q 'Compile: compute_90a' "$cu" && arch=compute_90a
    grep -q 'Compile: compute_100a' "$cu" && arch=compute_100a
    # Extra flags from a "Compile-flags: ..." line (e.g. -rdc=true for extern functions).
    read -r -a extra <<<"$(sed -n 's|^.*Compile-flags: *||p' "$cu" | head -n1)"
    echo "nvcc -ptx -lineinfo -arch=$arch ${extra[*]} $cu -o $ptx" >&2
    if ! timeout 120 "$nvcc" -ptx -lineinfo -arch="$arch" "${extra[@]}" "$cu" -o "$ptx"; then
        echo "regen: FAILED $cu" >&2
        status=1
        continue
    fi
    # Repair absolute paths: repo-relative where possible, else <external>/basename.
    sed -i -e "s|\"$root/|\"|g" "$ptx"
    sed -i -E 's|^(\s*\.file\s+[0-9]+\s+")/[^"]*/([^"/]+")|\1<external>/\2|' "$ptx"
    if grep -n '"/' "$ptx" >&2; then
        echo "regen: absolute path left in $ptx" >&2
        status=1
    fi
done
exit "$status"
