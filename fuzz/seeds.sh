#!/usr/bin/env bash
# Seeds the fuzz corpora (fuzz/corpus/{parse,pipeline}, ignored by git) with every PTX file of
# the repository: samples, test fixtures and the stress inputs.
set -euo pipefail
cd "$(dirname "$0")/.."
for target in parse pipeline; do
    mkdir -p "fuzz/corpus/$target"
    find samples crates -name '*.ptx' -size -1024k -print0 |
        while IFS= read -r -d '' f; do
            cp "$f" "fuzz/corpus/$target/$(echo "$f" | tr '/' '_')"
        done
done
echo "seeded: $(ls fuzz/corpus/parse | wc -l) files per target"
