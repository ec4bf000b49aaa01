#!/usr/bin/env bash
# Install a CUDA compiler (nvcc + NVVM + runtime headers + CCCL) from PyPI into
# the repository's .venv and print the path of nvcc. Idempotent: a second run
# reuses the venv and only installs what is missing.
#
#   bash samples/setup-nvcc.sh          # prints .../nvcc on the last line
#   NVCC=$(bash samples/setup-nvcc.sh | tail -n1)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$root/.venv"
python="${PYTHON:-python3}"

if [ ! -x "$venv/bin/python" ]; then
    echo "setup-nvcc: creating $venv" >&2
    "$python" -m venv "$venv"
fi

# Pinned: the committed sample PTX and the corpus verdicts (corpus/expected.json) were made
# with this compiler; a fresh venv (CI) gets the same one.
pkgs=(nvidia-cuda-nvcc==13.5.37 nvidia-nvvm==13.5.37 nvidia-cuda-runtime==13.5.37
      nvidia-cuda-cccl==13.3.5.0.6)
missing=()
for p in "${pkgs[@]}"; do
    "$venv/bin/python" -m pip show -q "${p%%==*}" >/dev/null 2>&1 || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
    echo "setup-nvcc: installing ${missing[*]}" >&2
    "$venv/bin/python" -m pip install -q "${missing[@]}" >&2
fi

# The wheels lay out nvidia/<cuXX>/bin/nvcc (CUDA 13) or nvidia/cuda_nvcc/bin/nvcc (CUDA 12).
nvcc="$(find "$venv/lib" -path '*/site-packages/nvidia/*' -name nvcc -type f -perm -u+x 2>/dev/null | sort | head -n1)"
if [ -z "$nvcc" ]; then
    echo "setup-nvcc: nvcc not found under $venv" >&2
    exit 1
fi
echo "$nvcc"
