#!/usr/bin/env bash
# Build weft's real-world corpus into corpus/build/ (gitignored): PTX of kernels nobody
# here wrote, plus corpus/build/manifest.json in the shape of samples/manifest.json with
# `expect` omitted (the verdict is discovered by running weft, not asserted).
#
#   bash corpus/build.sh            # ~8-12 min on 2 cores; one compiler at a time
#
# - CUTLASS 3.x Hopper warp-specialized GEMMs (pip package nvidia-cutlass, headers in
#   cutlass_library/source/include), instantiated by corpus/src/cutlass_sm90_gemm.cu:
#   KernelTmaWarpSpecialized, ...Pingpong, ...Cooperative.
# - Triton kernels (pip package triton) compiled for GPUTarget("cuda", 90|100, 32) without
#   a GPU by corpus/src/triton_kernels.py (fused softmax, pipelined matmul, and a TMA matmul
#   with `tl.range(..., warp_specialize=True)` for sm_90a and sm_100a) and
#   corpus/src/triton_attention.py (flash-attention forward, warp-specialized key loop), and
#   corpus/src/triton_tutorials.py (Triton's own tutorial 06, 09 and 10 kernels, unchanged).
# - CuTe DSL kernels (pip package nvidia-cutlass-dsl) compiled for sm_90a without a GPU by
#   corpus/src/cute_dsl_kernels.py (fake tensors, CUTE_DSL_ARCH, CUTE_DSL_KEEP=ptx): two
#   written here and CUTLASS's own Hopper examples (dense GEMM, warp-specialized persistent
#   GEMM, warp-specialized FMHA) and Blackwell examples (dense GEMMs, FMHA, sm_100a), taken
#   from the flashinfer-python wheel (pip download, pinned version; it bundles a CUTLASS
#   source tree).
# - FlashAttention-4's forward kernels for sm_90a and sm_100a and its sm_90a backward kernel
#   (flash-attn-4 and quack-kernels wheels downloaded, not installed; compiled without torch by
#   corpus/src/fa4_kernels.py).
# - quack-kernels' own CuTe DSL kernels from the same wheel (softmax, RMSNorm and LayerNorm
#   forward and backward, cross-entropy, top-k; warp-specialized persistent GEMMs for sm_90a
#   and sm_100a), compiled without torch by corpus/src/quack_kernels.py.
# - Liger-Kernel's Triton kernels (RMSNorm, LayerNorm, cross entropy, SwiGLU, RoPE; the
#   liger-kernel wheel downloaded, not installed), compiled without torch by
#   corpus/src/liger_kernels.py.
# - FlashInfer's Hopper prefill attention (headers and CUTLASS from the flashinfer-python
#   wheel), instantiated by corpus/src/flashinfer_prefill_sm90.cu, its FP8 variant
#   (corpus/src/flashinfer_prefill_fp8_sm90.cu), and its single-request decode attention for
#   sm_80 (cp.async pipeline), instantiated by corpus/src/flashinfer_decode_sm80.cu.
# - The classic CUTLASS 2.x Ampere GEMM (cutlass::gemm::device::Gemm, Sm80, OpClassTensorOp,
#   cp.async multistage mainloop), instantiated by corpus/src/cutlass_sm80_gemm.cu, and its
#   warp-matrix-function variant (OpClassWmmaTensorOp: wmma.load/store through shared
#   memory), instantiated by corpus/src/cutlass_wmma_gemm.cu.
# - CUTLASS examples 61 (Hopper GEMM with a fused top-k + softmax epilogue) and 63 (Hopper FP8
#   GEMM with an L2 weight-prefetch warp), compiled whole.
# - CUTLASS's attention examples from nvidia-cutlass's source tree: example 88 (Hopper FMHA,
#   compiled whole as shipped) and example 77 (Blackwell FMHA forward and backward and MLA
#   forward, instantiated by corpus/src/cutlass_example77_*.cu with the example's types),
#   and example 75 (Blackwell grouped GEMM, compiled whole as shipped).
# - FlashAttention-2's forward kernel for sm_80 (flash-attn 2.8.3.post2 sdist, fetched by URL
#   and sha256, never built), instantiated by corpus/src/flash_attn2_fwd_sm80.cu (fp16, head
#   dim 128, non-causal, no dropout; the tile-aligned and the general instance), and its
#   backward kernel, instantiated by corpus/src/flash_attn2_bwd_sm80.cu (tile-aligned).
#
# Every compile runs under `timeout`; a failing one is reported and skipped, the others
# still build.  The script exits 1 if any compile failed (after building the rest).
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
out=corpus/build
mkdir -p "$out"
per_compile_timeout="${WEFT_CORPUS_TIMEOUT:-600}"
start=$(date +%s)
# The packages the corpus is compiled with are pinned (here and in samples/setup-nvcc.sh), as
# the downloaded wheels are: corpus/expected.json holds the verdicts of exactly these kernels.
nvcc="$(bash samples/setup-nvcc.sh | tail -n1)" || { echo "corpus: nvcc setup failed" >&2; exit 1; }
py=.venv/bin/python
if ! $py -m pip show -q nvidia-cutlass >/dev/null 2>&1; then
    echo "corpus: installing nvidia-cutlass" >&2
    $py -m pip install -q nvidia-cutlass==4.2.0.0 >&2 || echo "corpus: nvidia-cutlass install FAILED" >&2
fi
cutlass_inc="$($py -c 'import cutlass_library, os; print(os.path.join(os.path.dirname(cutlass_library.__file__), "source", "include"))' 2>/dev/null)"
cutlass_inc="${cutlass_inc#"$root"/}"

failed=()
built=()   # lines: name|ptx|source|kernel-regex|threads|params...

# Rewrite absolute paths in .file lines to repository-relative ones.
relativize() { sed -i -e "s|\"$root/|\"|g" "$1"; }

# Runs one compile command under `timeout` (its output in $out/NAME.log), which must write
# $out/NAME.ptx, and records the kernel as built (from SOURCE) or failed.
compile() { # name source command...
    local name="$1" source="$2" ptx="$out/$1.ptx"
    shift 2
    echo "corpus: compiling $name" >&2
    local t0=$(date +%s)
    if timeout "$per_compile_timeout" "$@" >"$out/$name.log" 2>&1; then
        relativize "$ptx"
        echo "corpus: built $name in $(( $(date +%s) - t0 ))s, $(wc -c <"$ptx") bytes" >&2
        built+=("$name|$ptx|$source")
    else
        echo "corpus: FAILED $name (see $out/$name.log)" >&2
        tail -n 5 "$out/$name.log" >&2
        rm -f "$ptx"
        failed+=("$name")
    fi
}

compile_cutlass() { # name schedule [extra nvcc flags...]
    local name="$1" schedule="$2"
    shift 2
    if [ -z "$cutlass_inc" ]; then
        echo "corpus: FAILED $name (no CUTLASS headers)" >&2
        failed+=("$name")
        return
    fi
    compile "$name" corpus/src/cutlass_sm90_gemm.cu \
        "$nvcc" -ptx -lineinfo -arch=sm_90a --std=c++17 -I"$cutlass_inc" "$@" \
        --expt-relaxed-constexpr -DWEFT_SCHEDULE="$schedule" corpus/src/cutlass_sm90_gemm.cu -o "$out/$name.ptx"
}

compile_cutlass cutlass-sm90-tma-warpspecialized 1 -DNDEBUG
compile_cutlass cutlass-sm90-tma-warpspecialized-pingpong 2 -DNDEBUG
compile_cutlass cutlass-sm90-tma-warpspecialized-cooperative 3 -DNDEBUG
# The same kernels as CUTLASS ships them: no -DNDEBUG, so every CUTLASS/CuTe `assert` stays
# (calls to __assertfail, and the message strings as initialized .global data).
compile_cutlass cutlass-sm90-tma-warpspecialized-asserts 1
compile_cutlass cutlass-sm90-tma-warpspecialized-pingpong-asserts 2
compile_cutlass cutlass-sm90-tma-warpspecialized-cooperative-asserts 3
# The same three with a source C (beta = 1): the epilogue's TMA loads of C and their
# mbarrier pipeline run too (the same PTX, other Params; the manifest sets them).
for v in "" -pingpong -cooperative; do
    if [ -f "$out/cutlass-sm90-tma-warpspecialized$v-asserts.ptx" ]; then
        built+=("cutlass-sm90-tma-warpspecialized$v-beta1|$out/cutlass-sm90-tma-warpspecialized$v-asserts.ptx|corpus/src/cutlass_sm90_gemm.cu")
    fi
done

# CUTLASS 3.x Blackwell GEMM (sm_100a, tcgen05 MMA into tensor memory, CLC tile scheduler),
# instantiated by corpus/src/cutlass_sm100_gemm.cu after example 70 with a 1-SM tile and
# cluster 1x1x1.
if [ -n "$cutlass_inc" ]; then
    compile cutlass-sm100-tma-warpspecialized corpus/src/cutlass_sm100_gemm.cu \
        "$nvcc" -ptx -lineinfo -arch=sm_100a --std=c++17 -I"$cutlass_inc" -DNDEBUG \
        --expt-relaxed-constexpr corpus/src/cutlass_sm100_gemm.cu -o "$out/cutlass-sm100-tma-warpspecialized.ptx"
    if [ -f "$out/cutlass-sm100-tma-warpspecialized.ptx" ]; then
        # With a source C (beta = 1) and K = 1024 (the same PTX, other Params).
        built+=("cutlass-sm100-tma-warpspecialized-beta1|$out/cutlass-sm100-tma-warpspecialized.ptx|corpus/src/cutlass_sm100_gemm.cu")
    fi
else
    echo "corpus: FAILED cutlass-sm100-tma-warpspecialized (no CUTLASS headers)" >&2
    failed+=("cutlass-sm100-tma-warpspecialized")
fi

# The classic CUTLASS 2.x Ampere GEMM (cutlass::gemm::device::Gemm<..., OpClassTensorOp, Sm80>
# with its default configuration: 128x256x64 tile, 8 warps, 3-stage cp.async MmaMultistage
# mainloop), instantiated by corpus/src/cutlass_sm80_gemm.cu and compiled from the package's
# headers as shipped (no -DNDEBUG).
if [ -n "$cutlass_inc" ]; then
    compile cutlass-sm80-gemm-multistage corpus/src/cutlass_sm80_gemm.cu \
        "$nvcc" -ptx -lineinfo -arch=sm_80 --std=c++17 -I"$cutlass_inc" \
        --expt-relaxed-constexpr corpus/src/cutlass_sm80_gemm.cu -o "$out/cutlass-sm80-gemm-multistage.ptx"
else
    echo "corpus: FAILED cutlass-sm80-gemm-multistage (no CUTLASS headers)" >&2
    failed+=("cutlass-sm80-gemm-multistage")
fi

# CUTLASS 2.x's GEMM on the warp matrix functions (OpClassWmmaTensorOp, Sm70 tag, compiled
# for sm_80: wmma.load / wmma.store through shared memory, 2-stage MmaPipelined mainloop),
# instantiated by corpus/src/cutlass_wmma_gemm.cu with its unit tests' tile shapes, headers
# as shipped (no -DNDEBUG).
if [ -n "$cutlass_inc" ]; then
    compile cutlass-wmma-gemm-sm80 corpus/src/cutlass_wmma_gemm.cu \
        "$nvcc" -ptx -lineinfo -arch=sm_80 --std=c++17 -I"$cutlass_inc" \
        --expt-relaxed-constexpr corpus/src/cutlass_wmma_gemm.cu -o "$out/cutlass-wmma-gemm-sm80.ptx"
    # Its binary variant (1-bit operands, XOR-popcount): sub-byte wmma.load (.b1).
    compile cutlass-wmma-b1-gemm-sm80 corpus/src/cutlass_wmma_b1_gemm.cu \
        "$nvcc" -ptx -lineinfo -arch=sm_80 --std=c++17 -I"$cutlass_inc" \
        --expt-relaxed-constexpr corpus/src/cutlass_wmma_b1_gemm.cu -o "$out/cutlass-wmma-b1-gemm-sm80.ptx"
else
    echo "corpus: FAILED cutlass-wmma-gemm-sm80 (no CUTLASS headers)" >&2
    failed+=("cutlass-wmma-gemm-sm80" "cutlass-wmma-b1-gemm-sm80")
fi

# A CUTLASS example exactly as the package ships it (host code, reference kernels, asserts,
# cluster launch): its `main` includes curand, whose headers come from nvidia-curand.
if ! $py -m pip show -q nvidia-curand >/dev/null 2>&1; then
    echo "corpus: installing nvidia-curand" >&2
    $py -m pip install -q nvidia-curand==10.4.5.25 >&2 || echo "corpus: nvidia-curand install FAILED" >&2
fi
# A CUTLASS example's source compiled whole with the example's include paths (the
# utilities and examples/common); extra flags before the source (an example's own directory,
# --use_fast_math where its CMakeLists adds it).
compile_cutlass_example() { # name arch source [extra nvcc flags...]
    local name="$1" arch="$2" source="$3"
    shift 3
    compile "$name" "$source" \
        "$nvcc" -ptx -lineinfo -arch="$arch" --std=c++17 -I"$cutlass_inc" \
        -I"$cutlass_src/tools/util/include" -I"$cutlass_src/examples/common" "$@" \
        --expt-relaxed-constexpr "$source" -o "$out/$name.ptx"
}
if [ -n "$cutlass_inc" ]; then
    cutlass_src="${cutlass_inc%/include}"
    ex48="$cutlass_src/examples/48_hopper_warp_specialized_gemm/48_hopper_warp_specialized_gemm.cu"
    compile_cutlass_example cutlass-example-48-hopper-ws-gemm sm_90a "$ex48"
fi

# Example 63 (Hopper FP8 GEMM with an L2 weight-prefetch warp), compiled whole as shipped
# with its own directory on the include path (its CMakeLists); ~30 s. The manifest checks its
# one GEMM kernel twice: with prefetching disabled, and at the example's default ratio.
if [ -n "$cutlass_inc" ]; then
    ex63="$cutlass_src/examples/63_hopper_gemm_with_weight_prefetch"
    compile_cutlass_example cutlass-example-63-hopper-weight-prefetch sm_90a \
        "$ex63/63_hopper_gemm_with_weight_prefetch.cu" -I"$ex63"
    if [ -f "$out/cutlass-example-63-hopper-weight-prefetch.ptx" ]; then
        built+=("cutlass-example-63-hopper-weight-prefetch-default|$out/cutlass-example-63-hopper-weight-prefetch.ptx|$ex63/63_hopper_gemm_with_weight_prefetch.cu")
    fi
fi

# Example 61 (Hopper GEMM with a fused top-k + softmax epilogue, EVT), compiled whole as
# shipped; ~30 s.
if [ -n "$cutlass_inc" ]; then
    ex61="$cutlass_src/examples/61_hopper_gemm_with_topk_and_softmax/61_hopper_gemm_with_topk_and_softmax.cu"
    compile_cutlass_example cutlass-example-61-hopper-topk-softmax sm_90a "$ex61"
fi

# Example 55 (Hopper mixed-input GEMM: int4 weights dequantized in registers with bf16 scales
# and zero points before register-sourced wgmma), its int4 x bf16 file compiled whole as
# shipped (six GEMM kernels, one per conversion mode and layout, plus reference kernels);
# ~3 min and ~4 GB on the 2-core machine, ~4 MB of PTX.
if [ -n "$cutlass_inc" ]; then
    ex55="$cutlass_src/examples/55_hopper_mixed_dtype_gemm"
    compile_cutlass_example cutlass-example-55-hopper-mixed-dtype-gemm sm_90a \
        "$ex55/55_hopper_int4_bf16_gemm.cu" -I"$ex55"
    if [ -f "$out/cutlass-example-55-hopper-mixed-dtype-gemm.ptx" ]; then
        # Two more kernels of the same PTX: the other conversion modes (the manifest picks
        # each by name).
        for mode in scale-only convert-only; do
            built+=("cutlass-example-55-hopper-mixed-dtype-gemm-$mode|$out/cutlass-example-55-hopper-mixed-dtype-gemm.ptx|$ex55/55_hopper_int4_bf16_gemm.cu")
        done
    fi
fi

# CUTLASS's attention examples (shipped in nvidia-cutlass's source tree, like example 48).
# Example 88 (Hopper FMHA) is compiled whole, as shipped (its CMakeLists adds --use_fast_math;
# no -DNDEBUG): 57 entries (forward and backward kernels for three fusions and every head dim
# it dispatches, plus reference kernels); ~3 min and ~10 GB peak RSS on the 2-core machine,
# ~18 MB of PTX. The manifest checks three of its kernels (the same PTX, aliased below).
# Example 77 (Blackwell FMHA) instantiates 48 forward kernels per file; the corpus instantiates
# the three it checks by corpus/src/cutlass_example77_{fmha_fwd,fmha_bwd,mla_fwd}.cu with the
# example's own types and flags (~30 s and ~4 GB each).
if [ -n "$cutlass_inc" ]; then
    ex88="$cutlass_src/examples/88_hopper_fmha/88_hopper_fmha.cu"
    compile_cutlass_example cutlass-example-88-hopper-fmha sm_90a "$ex88" --use_fast_math \
        -I"$cutlass_src/examples/88_hopper_fmha"
    if [ -f "$out/cutlass-example-88-hopper-fmha.ptx" ]; then
        # Two more kernels of the same PTX (the manifest picks each by name).
        built+=("cutlass-example-88-hopper-fmha-pingpong|$out/cutlass-example-88-hopper-fmha.ptx|$ex88")
        built+=("cutlass-example-88-hopper-fmha-bwd|$out/cutlass-example-88-hopper-fmha.ptx|$ex88")
    fi
    ex77="$cutlass_src/examples/77_blackwell_fmha"
    compile cutlass-example-77-blackwell-fmha-fwd "$ex77/77_blackwell_fmha.cu" \
        "$nvcc" -ptx -lineinfo -arch=sm_100a --std=c++17 --use_fast_math -I"$cutlass_inc" \
        -I"$cutlass_src/tools/util/include" -I"$ex77" --expt-relaxed-constexpr \
        corpus/src/cutlass_example77_fmha_fwd.cu -o "$out/cutlass-example-77-blackwell-fmha-fwd.ptx"
    compile cutlass-example-77-blackwell-fmha-bwd "$ex77/77_blackwell_fmha_bwd.cu" \
        "$nvcc" -ptx -lineinfo -arch=sm_100a --std=c++17 --use_fast_math -I"$cutlass_inc" \
        -I"$cutlass_src/tools/util/include" -I"$ex77" --expt-relaxed-constexpr \
        corpus/src/cutlass_example77_fmha_bwd.cu -o "$out/cutlass-example-77-blackwell-fmha-bwd.ptx"
    compile cutlass-example-77-blackwell-mla-fwd "$ex77/77_blackwell_mla_fwd.cu" \
        "$nvcc" -ptx -lineinfo -arch=sm_100a --std=c++17 --use_fast_math -I"$cutlass_inc" \
        -I"$cutlass_src/tools/util/include" -I"$ex77" --expt-relaxed-constexpr \
        corpus/src/cutlass_example77_mla_fwd.cu -o "$out/cutlass-example-77-blackwell-mla-fwd.ptx"
    # Example 75 (Blackwell grouped GEMM), compiled whole as shipped (~30 s, ~3.8 GB): a 1-SM
    # and a 2-SM PtrArray kernel with a dynamic cluster shape; the manifest checks both.
    ex75="$cutlass_src/examples/75_blackwell_grouped_gemm/75_blackwell_grouped_gemm.cu"
    compile_cutlass_example cutlass-example-75-blackwell-grouped-gemm sm_100a "$ex75"
    if [ -f "$out/cutlass-example-75-blackwell-grouped-gemm.ptx" ]; then
        built+=("cutlass-example-75-blackwell-grouped-gemm-2sm|$out/cutlass-example-75-blackwell-grouped-gemm.ptx|$ex75")
    fi
fi

# Triton: optional (large wheel); skipped with a note if it cannot be installed or fails.
if ! $py -c 'import triton' >/dev/null 2>&1; then
    echo "corpus: installing triton" >&2
    timeout "$per_compile_timeout" $py -m pip install -q triton==3.9.0 >&2 || echo "corpus: triton install FAILED" >&2
fi
compile_triton() { # name which
    compile "$1" corpus/src/triton_kernels.py $py corpus/src/triton_kernels.py "$2" "$out/$1.ptx"
}
compile_triton triton-softmax softmax
compile_triton triton-matmul matmul
compile_triton triton-matmul-ws-sm90 matmul-ws-sm90
compile_triton triton-matmul-ws-sm100 matmul-ws-sm100
compile_triton triton-layernorm-bwd layernorm-bwd
compile_triton_attention() { # name which
    compile "$1" corpus/src/triton_attention.py $py corpus/src/triton_attention.py "$2" "$out/$1.ptx"
}
compile_triton_attention triton-attention-ws-sm90 attention-ws-sm90
compile_triton_attention triton-attention-ws-sm100 attention-ws-sm100
# Triton's own tutorial kernels, copied unchanged by corpus/src/triton_tutorials.py: tutorial
# 09's persistent TMA matmul (flattened tile loop, with and without warp specialization) and
# its device-side-descriptor variant, tutorial 10's nvfp4 block-scaled matmul (sm_100a), and
# tutorial 06's attention backward kernels and causal TMA forward (sm_90a, and the last two
# for sm_100a).
compile_triton_tutorial() { # name which
    compile "$1" corpus/src/triton_tutorials.py $py corpus/src/triton_tutorials.py "$2" "$out/$1.ptx"
}
compile_triton_tutorial triton-tma-persistent-sm90 tma-persistent-sm90
compile_triton_tutorial triton-tma-persistent-sm100 tma-persistent-sm100
compile_triton_tutorial triton-tma-persistent-ws-sm100 tma-persistent-ws-sm100
compile_triton_tutorial triton-descriptor-persistent-ws-sm90 descriptor-persistent-ws-sm90
compile_triton_tutorial triton-descriptor-persistent-ws-sm100 descriptor-persistent-ws-sm100
compile_triton_tutorial triton-matmul-tutorial-sm100 matmul-sm100
compile_triton_tutorial triton-matmul-tutorial-64x64-sm100 matmul-64x64-sm100
compile_triton_tutorial triton-block-scaled-nvfp4-sm100 block-scaled-nvfp4-sm100
compile_triton_tutorial triton-attn-bwd-preprocess-sm90 attn-bwd-preprocess-sm90
compile_triton_tutorial triton-attn-bwd-sm90 attn-bwd-sm90
compile_triton_tutorial triton-attn-bwd-sm100 attn-bwd-sm100
compile_triton_tutorial triton-attn-fwd-causal-sm90 attn-fwd-causal-sm90
compile_triton_tutorial triton-attn-fwd-causal-sm100 attn-fwd-causal-sm100
compile_triton_reduction() { # name which
    compile "$1" corpus/src/triton_reductions.py $py corpus/src/triton_reductions.py "$2" "$out/$1.ptx"
}
compile_triton_reduction triton-row-stats-sm90 row-stats-sm90
compile_triton_reduction triton-row-stats-sm100 row-stats-sm100
compile_triton_reduction triton-row-max-sm90 row-max-sm90
compile_triton_reduction triton-row-argmax-sm90 row-argmax-sm90
compile_triton_reduction triton-row-sum-i32-sm90 row-sum-i32-sm90

# CuTe DSL: optional like Triton.
if ! $py -m pip show -q nvidia-cutlass-dsl >/dev/null 2>&1; then
    echo "corpus: installing nvidia-cutlass-dsl" >&2
    timeout "$per_compile_timeout" $py -m pip install -q nvidia-cutlass-dsl==4.8.1 >&2 || echo "corpus: nvidia-cutlass-dsl install FAILED" >&2
fi
compile_cute_dsl() { # name which
    compile "$1" corpus/src/cute_dsl_kernels.py $py corpus/src/cute_dsl_kernels.py "$2" "$out/$1.ptx"
}
compile_cute_dsl cute-dsl-elementwise-add elementwise-add
compile_cute_dsl cute-dsl-pipeline-ws pipeline-ws

# Sources shipped in wheels that are downloaded (pinned, `pip download --no-deps`: the sources
# are data), never installed: fetch_sources NAME PREFIXES SPEC... extracts the files under the
# comma-separated PREFIXES of the wheels of SPEC... into $out/NAME/ once (kept between runs;
# a changed SPEC or PREFIXES fetches again).
fetch_sources() { # name prefixes spec...
    local name="$1" prefixes="$2" dir="$out/$1"
    shift 2
    local stamp="$* $prefixes"
    [ "$(cat "$dir/.complete" 2>/dev/null)" = "$stamp" ] && return 0
    echo "corpus: fetching $* (sources only)" >&2
    rm -rf "$dir" && mkdir -p "$dir/dl"
    if timeout "$per_compile_timeout" $py -m pip download -q --no-deps "$@" -d "$dir/dl" >&2 &&
        $py - "$dir/dl" "$dir" "$prefixes" <<'PY'
import glob, sys, zipfile
keep = tuple(sys.argv[3].split(","))
for wheel in glob.glob(sys.argv[1] + "/*.whl"):
    with zipfile.ZipFile(wheel) as z:
        z.extractall(sys.argv[2], [n for n in z.namelist() if n.startswith(keep)])
PY
    then
        echo "$stamp" >"$dir/.complete"
    else
        echo "corpus: fetching $* FAILED" >&2
    fi
    rm -rf "$dir/dl"
}

# CUTLASS's own CuTe DSL Hopper examples (dense GEMM, warp-specialized persistent GEMM,
# warp-specialized flash attention) are not in the nvidia-cutlass(-dsl) packages; the
# flashinfer-python wheel (pure Python, ~60 MB) bundles a CUTLASS 4.5 tree with them, and
# FlashInfer's own Hopper attention headers (corpus/src/flashinfer_prefill_sm90.cu).
fi_data=flashinfer/data
fetch_sources flashinfer \
    "$fi_data/cutlass/examples/python/CuTeDSL/,$fi_data/include/,$fi_data/cutlass/include/,$fi_data/cutlass/tools/util/include/" \
    flashinfer-python==0.7.2.post1
fi_data="$out/flashinfer/$fi_data"
cute_examples="$fi_data/cutlass/examples/python/CuTeDSL"
compile_cute_dsl_example() { # name which example-file (under the examples directory)
    compile "$1" "$cute_examples/$3" \
        $py corpus/src/cute_dsl_kernels.py "$2" "$out/$1.ptx" "$cute_examples"
}
compile_cute_dsl_example cute-dsl-hopper-dense-gemm hopper-dense-gemm hopper/dense_gemm.py
compile_cute_dsl_example cute-dsl-hopper-dense-gemm-persistent hopper-dense-gemm-persistent hopper/dense_gemm_persistent.py
compile_cute_dsl_example cute-dsl-hopper-fmha hopper-fmha hopper/fmha.py
# Blackwell (sm_100a): tcgen05 MMA into tensor memory, completion by tcgen05.commit.
compile_cute_dsl_example cute-dsl-blackwell-dense-gemm blackwell-dense-gemm blackwell/dense_gemm.py
compile_cute_dsl_example cute-dsl-blackwell-dense-gemm-persistent blackwell-dense-gemm-persistent blackwell/dense_gemm_persistent.py
# The same GEMM with the cluster-launch-control tile scheduler (one line aligned in a copy).
compile_cute_dsl_example cute-dsl-blackwell-dense-gemm-persistent-dynamic blackwell-dense-gemm-persistent-dynamic blackwell/dense_gemm_persistent_dynamic.py
# The Blackwell warp-specialized FMHA (16 warps: softmax, correction, MMA, load, epilogue).
compile_cute_dsl_example cute-dsl-blackwell-fmha blackwell-fmha blackwell/fmha.py
# The block-scaled (NVFP4) persistent GEMM: scale factors copied to tensor memory by tcgen05.cp.
compile_cute_dsl_example cute-dsl-blackwell-dense-blockscaled-gemm-persistent blackwell-dense-blockscaled-gemm-persistent blackwell/dense_blockscaled_gemm_persistent.py
# D = alpha AB + beta C with an epilogue-load warp for C; the software-pipelined GEMM (one warp
# loads and multiplies); the FMHA backward; the grouped GEMM (sizes in device memory); the
# Mamba2 SSD (16 warps, 12 mbarrier pipelines).
compile_cute_dsl_example cute-dsl-blackwell-dense-gemm-alpha-beta-persistent blackwell-dense-gemm-alpha-beta-persistent blackwell/dense_gemm_alpha_beta_persistent.py
compile_cute_dsl_example cute-dsl-blackwell-dense-gemm-software-pipeline blackwell-dense-gemm-software-pipeline blackwell/dense_gemm_software_pipeline.py
compile_cute_dsl_example cute-dsl-blackwell-fmha-bwd blackwell-fmha-bwd blackwell/fmha_bwd.py
compile_cute_dsl_example cute-dsl-blackwell-grouped-gemm blackwell-grouped-gemm blackwell/grouped_gemm.py
compile_cute_dsl_example cute-dsl-blackwell-mamba2-ssd blackwell-mamba2-ssd blackwell/mamba2_ssd/mamba2_ssd.py

# FlashAttention-4 (flash-attn-4, CuTe DSL) and its helper library quack-kernels: both wheels
# require torch, which is not installed; corpus/src/fa4_kernels.py compiles FA4's forward
# and backward kernel classes without it (see its docstring).
fetch_sources fa4 "flash_attn/cute/,quack/" flash-attn-4==4.0.0b36 quack-kernels==0.6.5
compile_fa4() { # name which kernel-file
    compile "$1" "$out/fa4/flash_attn/cute/$3" \
        $py corpus/src/fa4_kernels.py "$2" "$out/$1.ptx" "$out/fa4"
}
compile_fa4 fa4-fwd-sm90 fwd-sm90 flash_fwd_sm90.py
compile_fa4 fa4-fwd-sm100 fwd-sm100 flash_fwd_sm100.py
# FA4's Blackwell forward, causal, with its cluster-launch-control tile scheduler.
compile_fa4 fa4-fwd-sm100-clc-causal fwd-sm100-clc-causal flash_fwd_sm100.py
# FA4's Hopper backward (dK/dV per KV tile, dQ accumulated in global memory by a bulk reduction).
compile_fa4 fa4-bwd-sm90 bwd-sm90 flash_bwd_sm90.py
# quack-kernels' own kernels (the same unpacked wheel, build/fa4/quack/), compiled without
# torch by corpus/src/quack_kernels.py: the row reductions (softmax, RMSNorm and LayerNorm
# forward and backward, cross-entropy, top-k) and the warp-specialized persistent GEMMs with the default
# epilogue, single-CTA configurations (see its docstring).
compile_quack() { # name which kernel-file
    compile "$1" "$out/fa4/quack/$3" \
        $py corpus/src/quack_kernels.py "$2" "$out/$1.ptx" "$out/fa4"
}
compile_quack quack-softmax-fwd-sm90 softmax-fwd-sm90 softmax.py
compile_quack quack-softmax-bwd-sm90 softmax-bwd-sm90 softmax.py
compile_quack quack-rmsnorm-fwd-sm90 rmsnorm-fwd-sm90 rmsnorm.py
compile_quack quack-rmsnorm-bwd-sm90 rmsnorm-bwd-sm90 rmsnorm.py
compile_quack quack-rmsnorm-bwd-n256-sm90 rmsnorm-bwd-n256-sm90 rmsnorm.py
compile_quack quack-rmsnorm-bwd-sm100 rmsnorm-bwd-sm100 rmsnorm.py
compile_quack quack-layernorm-fwd-sm90 layernorm-fwd-sm90 rmsnorm.py
compile_quack quack-layernorm-bwd-sm90 layernorm-bwd-sm90 rmsnorm.py
compile_quack quack-cross-entropy-fwd-sm90 cross-entropy-fwd-sm90 cross_entropy.py
compile_quack quack-cross-entropy-fwd-dx-sm90 cross-entropy-fwd-dx-sm90 cross_entropy.py
compile_quack quack-topk-sm90 topk-sm90 topk.py
compile_quack quack-gemm-sm90 gemm-sm90 gemm_sm90.py
compile_quack quack-gemm-sm90-coop-c gemm-sm90-coop-c gemm_sm90.py
compile_quack quack-gemm-sm90-cluster2 gemm-sm90-cluster2 gemm_sm90.py
compile_quack quack-gemm-sm90-dynamic gemm-sm90-dynamic gemm_sm90.py
# Liger-Kernel's Triton kernels (liger-kernel wheel, sources only; it requires torch, which is
# not installed): corpus/src/liger_kernels.py imports Liger's own @triton.jit functions with
# a stand-in torch module and compiles them for Liger's launch settings (see its docstring).
fetch_sources liger "liger_kernel/" liger-kernel==0.8.5
# Liger's ops/utils.py imports `packaging` (a dependency of liger-kernel itself, which is
# downloaded, not installed): without it every Liger kernel fails to build in a fresh venv.
if ! $py -c 'import packaging.version' >/dev/null 2>&1; then
    echo "corpus: installing packaging (for Liger-Kernel)" >&2
    $py -m pip install -q packaging >&2 || echo "corpus: packaging install FAILED" >&2
fi
compile_liger() { # name which kernel-file
    compile "$1" "$out/liger/liger_kernel/ops/$3" \
        $py corpus/src/liger_kernels.py "$2" "$out/$1.ptx" "$out/liger"
}
compile_liger liger-rms-norm-block-bwd-sm90 rms-norm-block-bwd-sm90 rms_norm.py
compile_liger liger-layer-norm-bwd-sm90 layer-norm-bwd-sm90 layer_norm.py
compile_liger liger-cross-entropy-sm90 cross-entropy-sm90 cross_entropy.py
compile_liger liger-swiglu-fwd-sm90 swiglu-fwd-sm90 swiglu.py
compile_liger liger-rope-fwd-sm90 rope-fwd-sm90 rope.py
compile_liger liger-rms-norm-fwd-sm100 rms-norm-fwd-sm100 rms_norm.py
compile_quack quack-gemm-sm100 gemm-sm100 gemm_sm100.py

# FlashInfer's Hopper prefill attention (FA3-style, CUDA C++ on CUTLASS), instantiated by
# corpus/src/flashinfer_prefill_sm90.cu with the flags FlashInfer's JIT uses for sm90a
# (flashinfer/jit/core.py: -O3 -DNDEBUG -use_fast_math, CUTE_SM90_EXTENDED_MMA_SHAPES).
compile flashinfer-prefill-sm90 corpus/src/flashinfer_prefill_sm90.cu \
    "$nvcc" -ptx -lineinfo -arch=sm_90a --std=c++17 -O3 -DNDEBUG -use_fast_math \
    --expt-relaxed-constexpr -DFLASHINFER_ENABLE_F16 -DCUTE_SM90_EXTENDED_MMA_SHAPES_ENABLED \
    -diag-suppress 20012,1444 -I"$fi_data/include" -I"$fi_data/cutlass/include" \
    -I"$fi_data/cutlass/tools/util/include" corpus/src/flashinfer_prefill_sm90.cu \
    -o "$out/flashinfer-prefill-sm90.ptx"

# FlashInfer's Hopper FP8 prefill attention (its V transpose in shared memory by the producer
# warpgroup), instantiated by corpus/src/flashinfer_prefill_fp8_sm90.cu with the same flags
# plus FP8 e4m3.
compile flashinfer-prefill-fp8-sm90 corpus/src/flashinfer_prefill_fp8_sm90.cu \
    "$nvcc" -ptx -lineinfo -arch=sm_90a --std=c++17 -O3 -DNDEBUG -use_fast_math \
    --expt-relaxed-constexpr -DFLASHINFER_ENABLE_F16 -DFLASHINFER_ENABLE_FP8_E4M3 \
    -DCUTE_SM90_EXTENDED_MMA_SHAPES_ENABLED -diag-suppress 20012,1444 -I"$fi_data/include" \
    -I"$fi_data/cutlass/include" -I"$fi_data/cutlass/tools/util/include" \
    corpus/src/flashinfer_prefill_fp8_sm90.cu -o "$out/flashinfer-prefill-fp8-sm90.ptx"

# FlashInfer's single-request decode attention (SingleDecodeWithKVCacheKernel, cp.async
# pipeline), instantiated by corpus/src/flashinfer_decode_sm80.cu from its JIT templates; the
# flags of FlashInfer's JIT (-O3 -DNDEBUG -use_fast_math) for sm_80 (its decode modules carry
# no arch-specific flags). The PTX holds the kernel for every GQA group size and stage count
# the dispatch knows; the manifest checks the MHA one (group size 1, 2 stages).
compile flashinfer-decode-sm80 corpus/src/flashinfer_decode_sm80.cu \
    "$nvcc" -ptx -lineinfo -arch=sm_80 --std=c++17 -O3 -DNDEBUG -use_fast_math \
    --expt-relaxed-constexpr -DFLASHINFER_ENABLE_F16 -diag-suppress 20012,1444,177 \
    -I"$fi_data/include" -I"$fi_data/cutlass/include" corpus/src/flashinfer_decode_sm80.cu \
    -o "$out/flashinfer-decode-sm80.ptx"

# FlashAttention-2's forward kernel (flash-attn 2.8.3.post2, CUDA C++ on CuTe), instantiated
# by corpus/src/flash_attn2_fwd_sm80.cu in the configuration its dispatch launches on sm_80 for
# fp16, head dim 128, no mask, no dropout, once per Is_even_MN (WEFT_EVEN_MN); compiled with
# the nvcc flags of the sdist's setup.py (-O3, --use_fast_math, the -U__CUDA_NO_HALF* set,
# --expt-relaxed-constexpr --expt-extended-lambda) against its bundled CUTLASS (csrc/cutlass).
# The sdist is fetched, never built: `pip download` of it fails (its setup.py imports torch to
# generate metadata), so fetch_sdist takes the file from PyPI's file host by URL and checks its
# sha256 (as listed by https://pypi.org/simple/flash-attn/).
fetch_sdist() { # name url sha256 prefixes (comma-separated, under the sdist's top directory)
    local name="$1" url="$2" sha="$3" prefixes="$4" dir="$out/$1"
    local stamp="$url $prefixes"
    [ "$(cat "$dir/.complete" 2>/dev/null)" = "$stamp" ] && return 0
    echo "corpus: fetching $url (sources only)" >&2
    rm -rf "$dir" && mkdir -p "$dir"
    if timeout "$per_compile_timeout" $py - "$url" "$sha" "$dir" "$prefixes" <<'PY'
import hashlib, io, sys, tarfile, urllib.request
url, sha, dest, prefixes = sys.argv[1:]
data = urllib.request.urlopen(url, timeout=300).read()
if hashlib.sha256(data).hexdigest() != sha:
    sys.exit(f"sha256 mismatch for {url}")
keep = tuple(prefixes.split(","))
with tarfile.open(fileobj=io.BytesIO(data)) as t:
    members = []
    for m in t.getmembers():
        rel = m.name.split("/", 1)[1] if "/" in m.name else ""
        if (m.isfile() or m.isdir()) and rel.startswith(keep):
            m.name = rel
            members.append(m)
    t.extractall(dest, members)
PY
    then
        echo "$stamp" >"$dir/.complete"
    else
        echo "corpus: fetching $url FAILED" >&2
    fi
}
fetch_sdist flash-attn2 \
    https://files.pythonhosted.org/packages/6c/b1/b77625e3d11260d2bd6a4fc249a4be9a3da97ff848e2222e810c4f0e0211/flash_attn-2.8.3.post2.tar.gz \
    d0f9f0b08a986cdeadbffcf5ec8b3a8f514366c68ad1853d3ab061bc83cc340b \
    "csrc/flash_attn/src/,csrc/cutlass/include/"
fa2="$out/flash-attn2/csrc"
compile_flash_attn2() { # name even-mn
    compile "$1" "$fa2/flash_attn/src/flash_fwd_kernel.h" \
        "$nvcc" -ptx -lineinfo -arch=sm_80 -O3 -std=c++17 -U__CUDA_NO_HALF_OPERATORS__ \
        -U__CUDA_NO_HALF_CONVERSIONS__ -U__CUDA_NO_HALF2_OPERATORS__ \
        -U__CUDA_NO_BFLOAT16_CONVERSIONS__ --expt-relaxed-constexpr --expt-extended-lambda \
        --use_fast_math -I"$fa2/flash_attn/src" -I"$fa2/cutlass/include" \
        -Icorpus/src/flash_attn2_stubs -DWEFT_EVEN_MN="$2" corpus/src/flash_attn2_fwd_sm80.cu \
        -o "$out/$1.ptx"
}
compile_flash_attn2 flash-attn2-fwd-sm80 1
compile_flash_attn2 flash-attn2-fwd-sm80-uneven 0
# Its backward kernel (flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel), instantiated by
# corpus/src/flash_attn2_bwd_sm80.cu as run_mha_bwd_hdim128 launches it on an A100 (fp16, no
# mask, no dropout, the tile-aligned instance), same flags (~65 s, ~4.4 GB RSS).
compile flash-attn2-bwd-sm80 "$fa2/flash_attn/src/flash_bwd_kernel.h" \
    "$nvcc" -ptx -lineinfo -arch=sm_80 -O3 -std=c++17 -U__CUDA_NO_HALF_OPERATORS__ \
    -U__CUDA_NO_HALF_CONVERSIONS__ -U__CUDA_NO_HALF2_OPERATORS__ \
    -U__CUDA_NO_BFLOAT16_CONVERSIONS__ --expt-relaxed-constexpr --expt-extended-lambda \
    --use_fast_math -I"$fa2/flash_attn/src" -I"$fa2/cutlass/include" \
    -Icorpus/src/flash_attn2_stubs corpus/src/flash_attn2_bwd_sm80.cu \
    -o "$out/flash-attn2-bwd-sm80.ptx"

# Manifest: kernel names and CTA shapes are read from the PTX (.entry, .maxntid/.reqntid).
$py - "$out/manifest.json" "${built[@]}" <<'PY'
import json, re, sys
entries, pending = [], []
# Built but kept out of `samples` (which crates/cli/tests/corpus.rs requires to get a
# verdict) until weft accepts them; move an entry back once it does.
PENDING = {}
# Param 0 of the CuTe DSL Blackwell GEMMs holds the tcgen05 MMA atom's runtime fields
# (accumulate, negate A, negate B as bytes 0, 1, 2). The negate flags select bits of the
# tcgen05.mma instruction descriptor, which weft must know whole to lay out the shared
# operands; the examples never negate.
BLACKWELL_MMA_FIELDS = ["--param", "0+1:u8=0", "--param", "0+2:u8=0"]
# CUTLASS 2.x kernel::Gemm::Params (cutlass/gemm/kernel/gemm.h): the epilogue's
# LinearCombination params are alpha @288, beta @292, alpha_ptr @296, beta_ptr @304,
# alpha_ptr_array @312, beta_ptr_array @320. beta = 0 with null beta pointers: the epilogue
# reads no source C (weft's unverifiable report names these fields when they are free).
CUTLASS2_BETA0 = ["--param", "0+292:f32=0", "--param", "0+304:u64=0", "--param", "0+320:u64=0"]
for line in sys.argv[2:]:
    if not line:
        continue
    name, ptx, source = line.split("|")
    text = open(ptx).read()
    kernel = re.search(r"\.entry\s+([\w$]+)\s*\(", text).group(1)
    m = re.search(r"\.(?:reqntid|maxntid)\s+(\d+)(?:\s*,\s*(\d+))?(?:\s*,\s*(\d+))?", text)
    threads = "x".join(g for g in m.groups() if g) if m else "128"
    args = ["--threads", threads]
    if name == "cutlass-example-48-hopper-ws-gemm":
        why = ("CUTLASS example 48 (Hopper warp-specialized cooperative GEMM, 4x2x1 cluster) "
               "compiled exactly as shipped, asserts included; the file also holds host-side "
               "reference kernels without a CTA shape. Only the GEMM kernel is checked: it "
               "synchronizes across the CTAs of its cluster (barrier.cluster), which weft does "
               "not model, so it must say so rather than verify it.")
    elif name == "cutlass-example-61-hopper-topk-softmax":
        # Params: one by-value struct. The mainloop's TMA transaction bytes (u32 @640: fp16
        # A and B tiles of 64x128, 32768 per stage) are a host constant; the alpha and beta
        # pointers (@776, @784) are null (the scalars are used); beta (f32 @768) and the
        # k-tile count are explored.
        args += ["--param", "0+640:u32=32768", "--param", "0+776:u64=0",
                 "--param", "0+784:u64=0"]
        why = ("CUTLASS example 61 (Hopper GEMM with the LinCombTopKSoftmaxCol epilogue "
               "visitor, top-2) compiled whole as shipped: KernelTmaWarpSpecialized, fp16, "
               "64x64x128 tile, no source C, one TMA-store epilogue subtile per tile; beta "
               "and K explored.")
    elif name.startswith("cutlass-example-63-hopper-weight-prefetch"):
        # Params: one by-value struct. The mainloop's TMA transaction bytes (u32 @640: A + B
        # per stage, e4m3 64x128 + e5m2 64x128 = 16384; @644, @648: A and B alone, 8192 each)
        # and the epilogue's C-load bytes (@1408: one 64x64 e4m3 subtile, 4096; the epilogue
        # tile of a non-cooperative schedule with 8-bit D) are host constants; the alpha and
        # beta pointers (@776, @784) are null (the scalars are used); beta (f32 @768) is
        # explored (float comparisons, docs/semantics.md §6.5) and so is K (@12: the k-tile
        # loop; --max-trips 16 reaches past the 13 stages, where the producer waits for
        # released ones). prefetch_ratio (f32 @656): -1 disables the prefetch warp (the
        # collective's default); the example's command line defaults to 0.5, where the
        # prefetch count is floating-point arithmetic on the k-tile count.
        args += ["--param", "0+640:u32=16384", "--param", "0+644:u32=8192",
                 "--param", "0+648:u32=8192", "--param", "0+1408:u32=4096",
                 "--param", "0+776:u64=0", "--param", "0+784:u64=0"]
        if name.endswith("-default"):
            args += ["--param", "0+656:f32=0.5"]
            why = ("CUTLASS example 63 (Hopper FP8 GEMM with L2 weight prefetch) compiled whole "
                   "as shipped, at the example's default prefetch_ratio 0.5: the prefetch "
                   "warp's tile count is floating-point arithmetic on the k-tile count, which "
                   "weft computes; from 4 k-tiles on, the prefetcher issues 4 TMA loads into "
                   "its one scratch buffer without waiting between them, a write-after-write "
                   "race the CUTLASS source accepts on purpose (nothing reads the buffer).")
        else:
            args += ["--param", "0+656:f32=-1", "--max-trips", "16"]
            why = ("CUTLASS example 63 (Hopper FP8 GEMM with L2 weight prefetch: "
                   "KernelTmaWarpSpecializedFP8FastAccumWithPrefetchAndSplitDMA, 64x64x128 "
                   "tile, 13 stages, separate DMA warps for A and B, TMA-store epilogue over "
                   "the mainloop's shared memory) compiled whole as shipped, prefetching "
                   "disabled (prefetch_ratio -1); beta and K explored.")
    elif name.startswith("cutlass-example-55-hopper-mixed-dtype-gemm"):
        # The whole example's PTX: pick a GEMM by its A element (plain strides, not the
        # "shuffled" layouts): tuple<int4, bf16 scale, bf16 zero> (scale with zero point, the
        # entry without a suffix), tuple<int4, bf16 scale> (-scale-only) or int4 alone
        # (-convert-only).
        names = re.findall(r"\.entry\s+([\w$]+)\s*\(", text)
        mode, a_element, tx = {
            "": ("ConvertAndScaleWithZero",
                 "integer_subbyteILi4ELb1EEENS_10bfloat16_tESK_EEENS5_IJlSB_lEEE", 20992),
            "-scale-only": ("ConvertAndScale",
                            "integer_subbyteILi4ELb1EEENS_10bfloat16_tEEEENS5_IJlSB_lEEE", 20736),
            "-convert-only": ("DirectConvert",
                              "integer_subbyteILi4ELb1EEEEEENS5_IJlSB_lEEE", 20480),
        }[name.removeprefix("cutlass-example-55-hopper-mixed-dtype-gemm")]
        kernel = next(k for k in names if "MixedInput" in k and a_element in k)
        # Params: one by-value struct. The mainloop's TMA transaction bytes per stage (u32
        # @1164: int4 A 128x64 = 4096 and bf16 B 128x64 = 16384, plus a 128-row bf16 scale
        # column of 256 and a zero-point column of 256 in the modes that load them) and the
        # scales' reload factor (u32 @1168: group size 128, the example's default, over the
        # 64-deep k-tile = 2; it only moves the scales' global coordinate) are host
        # constants; beta = 0 (f32 @1280) with null beta pointers (@1288, @1296: the
        # epilogue loads no C); K (s32 @12) explored within 1..=2^24 (at K = 0 the
        # consumers' first k-tile wait is unconditional, a deadlock CUTLASS's driver never
        # launches), and so is the persistent tile scheduler's tile count (u64 @2168,
        # blocks_per_problem), with --max-trips 2.
        args = ["--threads", "384", "--param", f"0+1164:u32={tx}", "--param", "0+1168:u32=2",
                "--param", "0+1280:f32=0", "--param", "0+1288:u64=0", "--param", "0+1296:u64=0",
                "--param", "0+12:s32=1..=16777216", "--max-trips", "2"]
        why = ("CUTLASS example 55 (Hopper mixed-input GEMM) compiled whole as shipped: its "
               f"int4 x bf16 kernel in mode {mode} (KernelTmaWarpSpecializedCooperative, "
               "128x128x64 tile, 9 stages; A converted in registers before register-sourced "
               "wgmma), beta = 0; K and the persistent tile scheduler's tile count explored "
               "(--max-trips 2).")
    elif name.startswith("cutlass-example-88-hopper-fmha"):
        # The whole example's PTX: pick the kernel by its mangled name (fp16, DefaultFusion):
        # the cooperative forward (128x128x128, IndividualTileScheduler; `run_fwd_128`'s
        # "tma ws cooperative 128x128x128"), the ping-pong forward (the same tile with
        # kIsPersistent and kLoadsQSeparately: PersistentTileScheduler), or the backward for
        # head dim 128 (64x128x128, `run_bwd_128`). Each has .maxntid 384.
        names = re.findall(r"\.entry\s+([\w$]+)\s*\(", text)
        if name.endswith("-bwd"):
            want = ("33FmhaBwdMainloopTmaWarpSpecialized", "13DefaultFusion",
                    "NS7_1CILi64EEENS9_ILi128EEESB_EEE")
        else:
            sched = ("23PersistentTileScheduler" if name.endswith("-pingpong")
                     else "23IndividualTileScheduler")
            want = ("30FmhaMainloopTmaWarpSpecialized", "13DefaultFusion",
                    "NS7_1CILi128EEESA_SA_EEE", sched)
        kernel = next(k for k in names if all(w in k for w in want))
        at = text.index(".entry " + kernel)
        m = re.search(r"\.maxntid\s+(\d+)", text[at:at + 100000])
        # Params: one by-value struct; the problem shape (B, H, Q, K, D) as s32 at bytes 0-16.
        # K (bytes 12..16) bounds the key loop; the backward also loops over Q (8..12).
        # Explored within 1..=2^24: at K = 0 the consumers wait for a first K tile the
        # producer never loads (the mainloop's first step is unconditional, `if (true)`:
        # a deadlock, which CUTLASS's driver never launches), and near 2^31 the
        # ceil_div(K, 128) overflows (a deadlock too): neither is an attention problem.
        args = ["--threads", m.group(1), "--param", "0+12:s32=1..=16777216"]
        if name.endswith("-bwd"):
            args += ["--param", "0+8:s32=1..=16777216"]
            why = ("CUTLASS example 88 (Hopper FMHA) compiled whole as shipped; its backward "
                   "kernel for head dim 128 (FmhaBwdMainloopTmaWarpSpecialized, 64x128 tiles, "
                   "DefaultFusion, fp16): a producer warpgroup (TMA loads of K, V, Q, dO, LSE, "
                   "sum-OdO; a reducer warp adding dQ with TMA reduce-add) and two wgmma "
                   "warpgroups ordered by an OrderedSequenceBarrier; Q and K explored from 1.")
        elif name.endswith("-pingpong"):
            args += ["--max-trips", "2"]
            why = ("CUTLASS example 88 (Hopper FMHA) compiled whole as shipped; its 'tma ws "
                   "ping-pong 128x128x128' forward kernel (fp16, head dim 128, DefaultFusion): "
                   "persistent tile scheduler, Q loaded by its own producer warp, two wgmma "
                   "consumer warpgroups, TMA-store epilogue; K and the tile count explored "
                   "(--max-trips 2).")
        else:
            why = ("CUTLASS example 88 (Hopper FMHA) compiled whole as shipped (asserts, host "
                   "code, reference kernels); its 'tma ws cooperative 128x128x128' forward "
                   "kernel (fp16, head dim 128, DefaultFusion): a TMA producer warpgroup, two "
                   "wgmma/softmax consumer warpgroups (PipelineTmaAsync: 2 Q stages, 5 K/V "
                   "stages; OrderedSequenceBarrier between the consumers), TMA-store epilogue "
                   "over the mainloop's shared memory (a union); K explored from 1.")
    elif name == "cutlass-example-77-blackwell-fmha-fwd":
        # Params: the problem shape (Q, K, D, ((H_R, H_K), B)) as s32 at bytes 0-20. Q and K
        # are read together (ld.param.b64, split by mov.b64), which weft does not explore as
        # sizes (corpus/README.md): both fixed, one 256-row Q tile (the CTA's), 4 key tiles.
        args += ["--param", "0+0:u32=256", "--param", "0+4:u32=512"]
        why = ("CUTLASS example 77 (Blackwell FMHA) forward kernel, "
               "Sm100FmhaFwdKernelTmaWarpspecialized as 77_blackwell_fmha_fp16 instantiates it "
               "for head dim 128, no mask, no varlen, individual tile scheduler (the example's "
               "default): 16 warps (two softmax warpgroups, a correction warpgroup, an MMA warp "
               "issuing tcgen05.mma, a TMA load warp, a TMA-store epilogue warp), fp16, 256x128 "
               "tile; Q = 256, K = 512 fixed.")
    elif name == "cutlass-example-77-blackwell-mla-fwd":
        # Params: the problem shape (Q, K, (D_latent, D_rope), ((H_G, H_R), B)) as s32 at bytes
        # 0-24 (each loaded by itself here), then the persistent scheduler's Params at 1408:
        # num_blocks (the grid's tiles), a FastDivmod of the Q tiles and two more. All explored.
        why = ("CUTLASS example 77 (Blackwell FMHA) MLA forward kernel, "
               "Sm100FmhaFwdKernelTmaWarpspecialized with Sm100MlaFwdMainloopTmaWarpspecialized "
               "and the MLA schedule, as 77_blackwell_mla_fwd_fp16 instantiates it for latent "
               "head dim 128 + rope 64, no mask, no varlen, --persistent (OrderLoadEpilogue: the "
               "load warp and the TMA-store epilogue share shared memory under a named barrier); "
               "16 warps, fp16, 256x128 tile; sizes and the tile count explored.")
    elif name == "cutlass-example-77-blackwell-fmha-bwd":
        # Params: the problem shape (Q, K, D, D_VO, ((H_R, H_K), B)) as s32 at bytes 0-24,
        # each loaded by itself: explored.
        why = ("CUTLASS example 77 (Blackwell FMHA) backward kernel, "
               "Sm100FmhaBwdKernelTmaWarpSpecialized as Sm100FmhaBwd launches it for "
               "77_blackwell_fmha_bwd_fp16, head dim 128, no mask, no varlen: 16 warps "
               "(compute warpgroups, an MMA warp issuing tcgen05.mma, a load warp: TMA of K, V, "
               "Q, dO and cp.async of LSE and sum-OdO; dQ by TMA reduce-add), fp16, 128x128 "
               "tiles; sizes explored.")
    elif name.startswith("cutlass-example-75-blackwell-grouped-gemm"):
        # The 1-SM kernel (KernelPtrArrayTmaWarpSpecialized1SmSm100, 128x256 MMA tile) or the
        # 2-SM one (...2SmSm100, 256x256, TMA_2SM copies); both .maxntid 256.
        names = re.findall(r"\.entry\s+([\w$]+)\s*\(", text)
        two = name.endswith("-2sm")
        kernel = next(k for k in names if "GemmUniversal" in k and ("SM100_TMA_2SM" in k) == two)
        why = ("CUTLASS example 75 (Blackwell grouped GEMM) compiled whole as shipped: fp8 "
               "e4m3 A/B, fp16 C/D, a grouped problem shape (each group's M, N, K in a device "
               "array the persistent group tile scheduler reads), dynamic cluster shape, "
               + ("the 2-SM kernel (256x256 MMA tile across a CTA pair; the example requires "
                  "cluster_x >= 2). weft takes the CTA as alone in its cluster and finds "
                  "CUTLASS's assertion on the cluster's arrival count failing: a modelling "
                  "limit (corpus/README.md)."
                  if two else
                  "the 1-SM kernel (128x256 MMA tile). The problem sizes live in global memory: "
                  "weft must say so."))
    elif name == "cutlass-sm100-tma-warpspecialized-beta1":
        # The GEMM above with beta = 1 (f32 @1280; the pointers stay null: the epilogue load
        # warp then TMA-loads C, subtile by subtile, through its own mbarrier ring, and joins
        # the epilogue barriers), K = 1024 (16 k-tiles: the 4-stage ring wraps four times)
        # and three tiles (two cluster launch control requests answered "canceled"), so the
        # accumulator stages and the C and D buffers are reused across tiles.
        args += ["--param", "0+4:u32=128", "--param", "0+8:u32=128", "--param", "0+12:u32=1024",
                 "--param", "0+16:u32=1", "--param", "0+1280:f32=1", "--param", "0+1288:u64=0",
                 "--param", "0+1296:u64=0", "--param", "clusterlaunchcontrol.canceled=2"]
        why = ("CUTLASS 3.x Blackwell GEMM (the cutlass-sm100-tma-warpspecialized PTX) with a "
               "source C: beta = 1, so the epilogue load warp TMA-loads C tiles through an "
               "mbarrier ring of its own; M=N=128, K=1024 (16 k-tiles), three tiles for CTA 0 "
               "(clusterlaunchcontrol.canceled = 2).")
    elif name.endswith("-beta1"):
        # The Hopper GEMMs with beta = 1 (f32 @768; beta_ptr and beta_ptr_array @776, @784
        # null): the epilogue's producer TMA-loads C. Its transaction bytes per stage (u32
        # @1408, which weft asks for when free) are one 64x32 fp16 box, two for the
        # cooperative GEMM's 128-row epilogue tile (each phase of its C ring counts two
        # copies, 4096 bytes apart). The plain GEMM explores every size (its assert keeps K
        # >= 1); the pingpong and cooperative ones fix K = 1024 (16 k-tiles through the
        # stage ring: the pingpong's math-order barrier needs 4) and explore M, N, L and
        # the persistent scheduler's tile count with --max-trips 2.
        tx = "8192" if "-cooperative" in name else "4096"
        args += ["--param", "0+640:u32=32768", "--param", "0+768:f32=1",
                 "--param", "0+776:u64=0", "--param", "0+784:u64=0",
                 "--param", f"0+1408:u32={tx}"]
        sizes = "problem sizes explored (K >= 1 by CUTLASS's assert)"
        if "-pingpong" in name or "-cooperative" in name:
            args += ["--param", "0+12:s32=1024", "--max-trips", "2"]
            sizes = ("K = 1024 (16 k-tiles), M, N, L and the persistent tile scheduler's tile "
                     "count explored (--max-trips 2)")
        why = ("CUTLASS Hopper warp-specialized GEMM as shipped (asserts), with a source C: "
               f"beta = 1, so the epilogue TMA-loads C through its own mbarrier ring ({tx} "
               f"bytes per stage); {sizes}.")
    elif name == "cutlass-sm100-tma-warpspecialized":
        # Params: problem shape M, N, K, L (u32 @4..16, as in the sm90 GEMMs); the epilogue's
        # beta (f32 @1280) and source pointers (@1288, @1296) decide whether the epilogue
        # load warp joins the epilogue barriers (arrive count 224 or 256).
        args += ["--param", "0+4:u32=128", "--param", "0+8:u32=128", "--param", "0+12:u32=256",
                 "--param", "0+16:u32=1", "--param", "0+1280:f32=0", "--param", "0+1288:u64=0",
                 "--param", "0+1296:u64=0"]
        why = ("CUTLASS 3.x Blackwell GEMM (GemmUniversal, example 70's automatic schedules: TMA "
               "warp, tcgen05 MMA warp into tensor memory, epilogue warps, cluster-launch-control "
               "tile scheduler), fp16, 128x128x64 1-SM tile, cluster 1x1x1; M=N=128, K=256, beta "
               "= 0, no source C. Its persistent loop asks the hardware for more work with "
               "clusterlaunchcontrol.try_cancel: weft explores how many requests succeed "
               "(clusterlaunchcontrol.canceled, like a trip count).")
    elif name == "cutlass-sm80-gemm-multistage":
        # No .maxntid in the PTX: the kernel's 8 warps (128x256 tile of 64x64 warp tiles).
        # kernel::Gemm::Params (cutlass/gemm/kernel/gemm.h): problem_size M, N, K (i32 @0, 4,
        # 8), grid_tiled_shape (@12, 16, 20), swizzle_log_tile (@24), ..., the epilogue's
        # params (CUTLASS2_BETA0, fixed), gemm_k_size (@336). Explored: the grid of tiles (an
        # early exit for CTAs past it), K and gemm_k_size (CTA 0 reads min(K, gemm_k_size);
        # the host sets gemm_k_size to K rounded up to 64 without split-K).
        args = ["--threads", "256"] + CUTLASS2_BETA0
        why = ("CUTLASS 2.x Ampere GEMM (cutlass::gemm::device::Gemm, arch::Sm80, "
               "OpClassTensorOp, default configuration): fp16 row-major A x column-major B -> "
               "fp16, fp32 accumulation, 128x256x64 tile, 8 warps, 3-stage MmaMultistage "
               "mainloop (cp.async.commit_group / wait_group + __syncthreads), shared-memory "
               "epilogue; compiled as shipped (no -DNDEBUG). Sizes explored; beta = 0.")
    elif name == "cutlass-wmma-gemm-sm80":
        # No .maxntid in the PTX: 4 warps (128x128 tile of 64x64 warp tiles). The same
        # kernel::Gemm::Params layout as the Ampere GEMM above: beta = 0 with null beta
        # pointers fixed (no source C), the grid of tiles, K and gemm_k_size explored.
        args = ["--threads", "128"] + CUTLASS2_BETA0
        why = ("CUTLASS 2.x GEMM on the warp matrix functions (cutlass::gemm::device::Gemm, "
               "OpClassWmmaTensorOp, arch::Sm70, compiled for sm_80): fp16 row-major A x "
               "column-major B -> fp32, 128x128x32 tile, 4 warps of 64x64x32, WMMA "
               "16x16x16, 2-stage MmaPipelined mainloop (st.shared + __syncthreads, "
               "wmma.load.a/b from shared memory), epilogue through shared memory with "
               "wmma.store.d; compiled as shipped (no -DNDEBUG). Sizes explored; beta = 0.")
    elif name == "cutlass-wmma-b1-gemm-sm80":
        # 8 warps (128x256 tile of 64x64 warp tiles); the same Params layout and fixed fields.
        args = ["--threads", "256"] + CUTLASS2_BETA0
        why = ("CUTLASS 2.x binary GEMM on the warp matrix functions (OpClassWmmaTensorOp, "
               "arch::Sm75, OpXorPopc, compiled for sm_80): 1-bit row-major A x column-major "
               "B -> int32, 128x256x512 tile, 8 warps of 64x64x512, WMMA 8x8x128, 2-stage "
               "MmaPipelined mainloop with sub-byte wmma.load.b1 from shared memory, epilogue "
               "through shared memory with wmma.store.d.s32; compiled as shipped (no "
               "-DNDEBUG). Sizes explored; beta = 0.")
    elif name.startswith("cutlass"):
        # CUTLASS passes one by-value Params struct: mode (u32 @0), then the problem shape
        # (M, N, K, L as u32 @4, 8, 12, 16).  K bounds the mainloop's k-tile loop around
        # the producer/consumer mbarrier pipeline; M, N, L the tiles a CTA processes.
        # Every variant is explored over every problem size (docs/semantics.md §6.5): no
        # --param for M, N, K, L. (The pingpong and cooperative consumers advance their
        # pipeline state by the k-tile count, a term the mbarrier wait parity reads; it
        # fits the term size cap since the cap went from 48 to 400 nodes.)
        # Further Params fields that weft's unverifiable reports named (the mbarrier
        # transaction count, branches around mbarrier waits), fixed as a user would; they
        # are not sizes (an mbarrier operand, a scalar and pointers: exploring them value
        # by value would say nothing about problem sizes): the TMA
        # bytes per pipeline stage (A and B tiles, 2 x 128x64 halves = 32768), beta = 0 and
        # null C/D source pointers (no source tensor in the epilogue).
        # The pingpong and cooperative persistent tile schedulers' tile count,
        # blocks_per_problem_ (u64 @1656, PersistentTileSchedulerSm90Params: the output
        # tiles of one batch), is explored like the problem shape: its loop's flag
        # (`selp(0, 1, blocks <= t) & 255`, tested) constrains the field itself, one
        # variable for every trip. Every path emulates all its tiles' mainloops, so these
        # two explore 2 choices per branch (--max-trips 2: tile counts 0..=4, k-tile counts
        # 1..=3); the default 8 takes 94 paths and 151 s for the pingpong build.
        args += ["--param", "0+640:u32=32768", "--param", "0+768:f32=0",
                 "--param", "0+776:u64=0", "--param", "0+784:u64=0"]
        if not name.removesuffix("-asserts").endswith("-warpspecialized"):
            args += ["--max-trips", "2"]
        sched = ("" if name.removesuffix("-asserts").endswith("-warpspecialized")
                 else "; the persistent tile scheduler's tile count is explored too "
                      "(--max-trips 2)")
        why = ("CUTLASS Hopper warp-specialized GEMM (TMA + mbarrier pipeline, named barriers "
               "between warpgroups); problem sizes explored (no --param for M, N, K, L), "
               f"fixed: the TMA transaction bytes, beta = 0, no source C{sched}. TMA "
               "descriptors stay unknown.")
        if name.endswith("-asserts"):
            why += (" Compiled as CUTLASS ships it (no -DNDEBUG): its asserts call "
                    "__assertfail.")
    elif name == "triton-softmax":
        why = ("Triton fused softmax (num_warps=4, BLOCK_SIZE=1024) from the LLVM NVPTX back end; "
               "n_cols (param 4) only masks global memory.")
    elif name.startswith("triton-matmul-ws"):
        # Each host tensor descriptor is a 128-byte CUtensorMap param plus shape (2 x i32)
        # and strides (2 x i64): M, N, K are params 15, 16, 17. K bounds the
        # warp-specialized k loop (producer/consumer mbarrier ring between partitions):
        # explored over every size (docs/semantics.md §6.5), no --param.
        arch = "sm_90a: 3 warp groups (default + producer + consumer), wgmma" \
            if name.endswith("sm90") else "sm_100a: tcgen05 MMA into tensor memory"
        why = ("Triton TMA matmul with tl.range(k_tiles, warp_specialize=True) (automatic warp "
               "specialization; setmaxnreg, mbarrier full/empty ring, named barriers), "
               f"{arch}; M, N, K explored. TMA descriptors (params 0, 5, 10) stay unknown.")
    elif name.startswith("triton-attention-ws"):
        # Params: sm_scale, M, Z, H, then four tensor descriptors (a 128-byte CUtensorMap,
        # shape 2 x i32, strides 2 x i64: params 4-23), then N_CTX (param 24), which bounds
        # the warp-specialized key loop: explored, no --param. H (param 3) enters offset_y,
        # and N_CTX a tensor-map field, which every thread of the default partition stores
        # to one shared word for the worker partitions: one function of the inputs, a
        # benign race (weft compares such values by their terms).
        if name.endswith("sm90"):
            arch = ("sm_90a, 64-row Q tile: 3 warp groups (default + TMA producer + "
                    "wgmma/softmax consumer), setmaxnreg")
        else:
            arch = ("sm_100a, 128-row Q tile: tcgen05 MMA into tensor memory, completion "
                    "signalled by tcgen05.commit")
        why = ("Triton flash-attention forward in the shape of tutorial 06 (TMA descriptors, "
               "online softmax), key/value loop tl.range(0, N_CTX, 64, "
               f"warp_specialize=True), head dim 64, fp16, {arch}; "
               + "N_CTX explored, H left free (no --param). TMA descriptors stay unknown.")
    elif name.startswith("triton-tma-persistent"):
        # Tutorial 09's matmul_kernel_tma_persistent: three host tensor descriptors (params
        # 0-14), then M, N, K (params 15, 16, 17). Fixed: M = N = 2048 (256 tiles: CTA 0 of
        # the NUM_SMS-CTA grid gets 2, so the mbarriers and the epilogue buffer are reused
        # across tiles), K = 512 (8 k-tiles through the 3-stage ring). Explored instead, the
        # flattened loop's k counter (`ki = ki == k_tiles - 1 ? 0 : ki + 1`, a selp that
        # nests one level per trip) passes weft's 400-node term cap at 7 (sm90) or 8 (sm100) k-tiles and the
        # kernel is unverifiable ("a branch on an unknown predicate"); the warp-specialized
        # build hands the trip count to its worker partitions through shared memory, which
        # drops the term at once (corpus/README.md).
        args += ["--param", "15=2048", "--param", "16=2048", "--param", "17=512"]
        if name.endswith("ws-sm100"):
            arch = ("sm_100a, warp_specialize=True: 256 threads (default/epilogue warpgroup, "
                    "2-warp TMA producer partition, tcgen05 MMA warp; setmaxnreg, barrier.sync 1 "
                    "hand-off)")
        elif name.endswith("sm100"):
            arch = "sm_100a, not specialized: tcgen05 MMA, tcgen05.commit releases the stages"
        else:
            arch = ("sm_90a, wgmma (warp_specialize=True gives the same PTX on sm_90: the "
                    "tutorial's flatten=True loop is not specialized there)")
        why = ("Triton tutorial 09's persistent TMA matmul (matmul_kernel_tma_persistent, "
               "unchanged): tl.range(start_pid, num_tiles, NUM_SMS, flatten=True), fp16, "
               f"128x128x64, 3 stages, {arch}; M = N = 2048, K = 512 fixed (2 tiles for CTA "
               "0). TMA descriptors stay unknown.")
    elif name == "triton-descriptor-persistent-ws-sm100":
        # Params: a_ptr, b_ptr, c_ptr, M, N, K (3, 4, 5), the global scratch (6) and profile
        # (7) pointers. Fixed like tutorial 09's other entries, but N = 2560: 320 tiles, so
        # CTA 0 of the 148-CTA grid runs 3 and reuses one of its two tensor-memory
        # accumulators and epilogue buffers.
        args += ["--param", "3=2048", "--param", "4=2560", "--param", "5=512"]
        why = ("Triton tutorial 09's matmul_kernel_descriptor_persistent (unchanged), "
               "warp_specialize=True, FLATTEN=True, sm_100a, 256 threads: descriptors built on "
               "the device (tensormap.replace in shared memory, tensormap.cp_fenceproxy to "
               "global), tcgen05 MMA into a double-buffered tensor-memory accumulator, TMA "
               "stores; M = 2048, N = 2560, K = 512 fixed (3 tiles for CTA 0).")
    elif name.startswith("triton-matmul-tutorial"):
        cfg = "64x64x64, 3 stages, 4 warps" if "64x64" in name else (
            "128x256x64, 3 stages, 8 warps (the first of the tutorial's CUDA autotune "
            "configurations)")
        why = ("Triton tutorial 03's matmul_kernel (unchanged, activation \"\"), sm_100a, "
               f"{cfg}: operands loaded to registers and stored to shared memory, "
               "fence.proxy.async and bar.sync, one thread issues tcgen05.mma and "
               "tcgen05.commit to an mbarrier every thread waits on before the next stores. "
               "The k-tile count is packed with the tile index into one .b64 register; K "
               "(param 5) explored.")
    elif name == "triton-descriptor-persistent-ws-sm90":
        why = ("Triton tutorial 09's matmul_kernel_descriptor_persistent (unchanged), "
               "warp_specialize=True, FLATTEN=False (the tutorial's choice on Hopper), sm_90a, "
               "384 threads: descriptors built on the device (tl.make_tensor_descriptor: "
               "tensormap.replace on a map in shared memory, tensormap.cp_fenceproxy to "
               "global): the map's 128 bytes are checked as shared memory.")
    elif name == "triton-block-scaled-nvfp4-sm100":
        why = ("Triton tutorial 10's block_scaled_matmul_kernel (unchanged), nvfp4: fp4 A/B "
               "by TMA (128x256x256 tiles, 4 stages), fp8 scale factors by ld.global -> "
               "st.shared -> tcgen05.cp into tensor memory, tcgen05.mma kind::mxf4nvf4 "
               "block_scale; M, N, K are constexprs (8192, 8192, 1024). The scale factors' "
               "tcgen05.cp reads end at the MMA's tcgen05.commit, which every thread waits on "
               "before storing the next k-tile's scales: verified.")
    elif name.startswith("liger-"):
        what = {
            "liger-rms-norm-block-bwd-sm90": "_block_rms_norm_backward_kernel (rows of 128 bf16 "
                                             "in blocks of 16, 4 warps: each block's dW is summed "
                                             "through shared memory, trip after trip)",
            "liger-layer-norm-bwd-sm90": "_layer_norm_backward_kernel (4096 columns, 64 rows per "
                                         "program, 8 warps, dW/dB computed)",
            "liger-cross-entropy-sm90": "liger_cross_entropy_kernel (vocabulary 128256 in 32768 "
                                        "blocks, 32 warps); its branch on the label (ignore_index) "
                                        "loaded from global memory decides a barrier",
            "liger-swiglu-fwd-sm90": "_swiglu_forward_kernel (14336 columns, 16 warps)",
            "liger-rope-fwd-sm90": "_triton_rope (Llama-3-8B heads, head dim 128, 4 warps)",
            "liger-rms-norm-fwd-sm100": "_rms_norm_forward_kernel for sm_100a (4096 columns, "
                                        "8 warps)",
        }[name]
        why = (f"Liger-Kernel 0.8.5's {what}, unchanged, compiled without torch for Liger's "
               "own launch settings.")
    elif name.startswith("triton-row-"):
        what = {
            "triton-row-stats-sm90": "tl.sum(x, axis=1) / N, then the same of (x - mean)^2 "
                                     "(tutorial 05's statistics on 64 rows of 64 fp16), 4 warps, "
                                     "sm_90a",
            "triton-row-stats-sm100": "the same statistics for sm_100a (the partials travel as "
                                      "f32x2 pairs, split to shuffle and packed again)",
            "triton-row-max-sm90": "tl.max(x, axis=1) of a 128x128 fp32 tile, 8 warps, sm_90a",
            "triton-row-argmax-sm90": "tl.argmax(x, axis=1) of a 64x64 fp32 tile, 4 warps, "
                                      "sm_90a",
            "triton-row-sum-i32-sm90": "tl.sum(x, axis=1) of a 64x64 int32 tile, 4 warps, "
                                       "sm_90a",
        }[name]
        why = (f"Triton's row reduction {what}: each row spans two warps, which exchange "
               "their partials through shared memory and store the row's result, replicated, "
               "to shared memory for the layout change before the global store.")
    elif name == "triton-attn-bwd-preprocess-sm90":
        why = ("Triton tutorial 06's _attn_bwd_preprocess (unchanged): delta = "
               "tl.sum(o * do, axis=1) over a 128x64 fp16 tile, 4 warps; the row sums are "
               "reduced across two warps through shared memory and stored, replicated, "
               "through shared memory again for the global store.")
    elif name.startswith("triton-attn-bwd-sm"):
        # Params: Q, K, V, sm_scale, DO, DQ, DK, DV, M, D, stride_z, stride_h, stride_tok,
        # stride_d, H, N_CTX (param 15): N_CTX bounds the dK/dV loop over query blocks
        # (num_steps = (N_CTX - start_m) // BLOCK_M1): explored. CTA 1: CTA 0 runs no trip of
        # the unmasked dQ loop (its key blocks start at the diagonal), so its waits went
        # unchecked (six skipped waits of the sm100 kernel verified at CTA 0, races at 1).
        args += ["--cta", "1,0,0"]
        mma = ("sm_90a: wgmma" if name.endswith("sm90") else
               "sm_100a: tcgen05.mma into tensor memory, tcgen05.commit/mbarrier waits")
        why = ("Triton tutorial 06's _attn_bwd (unchanged) as _attention.backward launches it: "
               "fp16, HEAD_DIM 64, BLOCK_M1/N1/M2/N2 = 32/128/128/32, BLK_SLICE_FACTOR 2, "
               "num_warps 4, num_stages 5: K/V/Q/dO tiles by cp.async "
               f"(commit_group/wait_group pipeline), {mma}; N_CTX explored; CTA 1, whose "
               "unmasked dQ loop runs.")
    elif name.startswith("triton-attn-fwd-causal-sm"):
        # The causal forward's off-band loop runs start_m * BLOCK_M / BLOCK_N trips: CTA 0
        # has none, so the manifest emulates CTA 3 (6 off-band trips, 2 on-band). N_CTX
        # only addresses memory on that path.
        args += ["--cta", "3,0,0"]
        mma = "wgmma, sm_90a" if name.endswith("sm90") else "tcgen05.mma, sm_100a"
        why = ("Triton tutorial 06's _attn_fwd_tma with causal=True (STAGE 3: the off-band "
               "loop, then the masked on-band loop), unchanged: TMA descriptors, mbarriers, "
               f"{mma}, fp16, HEAD_DIM 64, BLOCK_M 128, BLOCK_N 64, 3 stages, 4 warps; "
               "CTA 3 (6 + 2 key blocks).")
    elif name == "cute-dsl-hopper-dense-gemm":
        why = ("CUTLASS CuTe DSL example hopper/dense_gemm.py (HopperWgmmaGemmKernel): one "
               "warpgroup issues TMA loads into a multi-stage full/empty mbarrier ring and "
               "consumes them with wgmma, TMA-store epilogue; fp16, 128x128 tile, static "
               "M=N=128, K=256, L=1.")
    elif name == "cute-dsl-hopper-dense-gemm-persistent":
        why = ("CUTLASS CuTe DSL example hopper/dense_gemm_persistent.py "
               "(HopperWgmmaGemmPersistentKernel): warp-specialized, a DMA warpgroup "
               "(setmaxnreg.dec) feeds an MMA warpgroup through a full/empty mbarrier ring, "
               "persistent tile scheduler; fp16, 128x128 tile, static M=N=128, K=256, L=1.")
    elif name == "cute-dsl-blackwell-dense-gemm":
        args += BLACKWELL_MMA_FIELDS
        why = ("CUTLASS CuTe DSL example blackwell/dense_gemm.py (DenseGemmKernel) for sm_100a: "
               "warp 0 issues TMA loads into a full/empty mbarrier ring and tcgen05.mma into "
               "tensor memory (tcgen05.commit releases the stages), all four warps read the "
               "accumulator from tensor memory in the TMA-store epilogue; fp16, 128x128 MMA "
               "tile, one CTA per cluster, static M=N=128, K=256, L=1.")
    elif name == "cute-dsl-blackwell-dense-gemm-persistent":
        args += BLACKWELL_MMA_FIELDS
        why = ("CUTLASS CuTe DSL example blackwell/dense_gemm_persistent.py "
               "(PersistentDenseGemmKernel) for sm_100a: warp-specialized (a TMA warp, an MMA "
               "warp issuing tcgen05.mma and tcgen05.commit, four epilogue warps), persistent "
               "tile scheduler, accumulator pipeline in tensor memory; fp16, 128x128 MMA tile, "
               "static M=N=128, K=256, L=1.")
    elif name == "cute-dsl-blackwell-dense-gemm-persistent-dynamic":
        args += BLACKWELL_MMA_FIELDS
        why = ("CUTLASS CuTe DSL example blackwell/dense_gemm_persistent_dynamic.py "
               "(PersistentDenseGemmKernel with ClcDynamicPersistentTileScheduler) for sm_100a: "
               "a scheduler warp asks clusterlaunchcontrol.try_cancel for each next tile and "
               "hands it to the TMA, MMA and epilogue warps through a PipelineClcFetchAsync; "
               "fp16, 128x128 MMA tile, static M=N=K=256, L=1 (its clc_response buffer "
               "16-byte aligned in a copy, for nvidia-cutlass-dsl 4.8.1).")
    elif name == "cute-dsl-hopper-fmha":
        # Params 3, 5, 7, 9 are the dynamic extents of Q, K, V, O's TMA tensors, each 4 x
        # u32: sequence length, query heads per KV head, KV heads, batch.
        # The key sequence length (5+0, an Int32 in the kernel) bounds the K/V loop: it is
        # explored, restricted to 1.. by a --param range. The example's can_implement
        # rejects s_k <= 0 ("window_size_left must be less than s_k_max - 1" with its
        # default window -1), and explored from 0 it deadlocks (the math warpgroups wait
        # for a first K tile the load warp never sends; confirmed concretely). V's length
        # (7+0) equals K's and decides nothing in the kernel: left free. Q's and O's
        # lengths stay 256, heads and batch 1.
        args += ["--param", "5+0:s32=1.."]
        for p in (3, 5, 7, 9):
            if p in (3, 9):
                args += ["--param", f"{p}+0:u32=256"]
            args += ["--param", f"{p}+4:u32=1", "--param", f"{p}+8:u32=1",
                     "--param", f"{p}+12:u32=1"]
        why = ("CUTLASS CuTe DSL example hopper/fmha.py (HopperFusedMultiHeadAttentionForward): "
               "warp-specialized flash attention, a load warpgroup (warp 1 loads Q, K, V by "
               "TMA; setmaxnreg.dec) and two wgmma/softmax warpgroups, Q and K/V full/empty "
               "mbarrier pipelines, named barriers between the math warpgroups; fp16, head "
               "dim 64, 64x128 MMA tile, no mask, non-persistent; the key sequence length "
               "explored from 1 (the example rejects empty keys), query length 256, one head, "
               "batch 1 fixed through the TMA tensors' extents.")
    elif name == "cute-dsl-blackwell-dense-blockscaled-gemm-persistent":
        # Param 0: the MMA atom's runtime fields (negate A/B, as for the other GEMMs). Params
        # 12-14: the persistent scheduler's problem shape in clusters (m, n, l tiles): 2 x 1 x
        # 1 fixed (two tiles through one CTA); the K extent of A (3+4) bounds the k-tile loop:
        # explored. With the tile counts free too it verifies as well, in 93 paths and 22 s.
        args += BLACKWELL_MMA_FIELDS + ["--param", "12+0:u32=2", "--param", "13+0:u32=1",
                                        "--param", "14+0:u32=1"]
        why = ("CUTLASS CuTe DSL example blackwell/dense_blockscaled_gemm_persistent.py "
               "(Sm100BlockScaledPersistentDenseGemmKernel) for sm_100a: NVFP4 A and B with "
               "Float8E4M3FN scale factors per 16 elements, which the MMA warp copies into tensor "
               "memory with tcgen05.cp before each tcgen05.mma.kind::mxf4nvf4.block_scale; fp16 "
               "C, 128x128 MMA tile, persistent tile scheduler with two tiles; K explored.")
    elif name == "cute-dsl-blackwell-dense-gemm-alpha-beta-persistent":
        args += BLACKWELL_MMA_FIELDS
        why = ("CUTLASS CuTe DSL example blackwell/dense_gemm_alpha_beta_persistent.py "
               "(SM100PersistentDenseGemmAlphaBetaKernel, D = alpha AB + beta C) for sm_100a: "
               "224 threads, a TMA warp, an MMA warp, four epilogue warps and an epilogue-load "
               "warp that TMA-loads C through a 2-stage PipelineTmaAsync whose release the "
               "DSL signals from lane 0 of each epilogue warp only; fp16, 128x128 MMA tile, "
               "static M=N=128, K=256, L=1.")
    elif name == "cute-dsl-blackwell-dense-gemm-software-pipeline":
        args += BLACKWELL_MMA_FIELDS
        why = ("CUTLASS CuTe DSL example blackwell/dense_gemm_software_pipeline.py "
               "(DenseGemmKernel) for sm_100a: warp 0 loads and multiplies in one loop the DSL "
               "software-pipelines (prefetch_stages), all four warps run the TMA-store "
               "epilogue; fp16, 128x128 MMA tile, static M=N=128, K=1024 (16 k-tiles through "
               "the 6-stage ring).")
    elif name == "cute-dsl-blackwell-fmha-bwd":
        # The module compiles three kernels (sum_OdO, bwd, convert): the warp-specialized
        # backward is the one named kernel_cutlass_bwd_... (512 threads). Params 0-4: its
        # five tcgen05 MMA atoms' runtime fields (negate A/B at bytes 1, 2: fixed to 0).
        # Every size is explored (the driver passes them as Int32 values).
        kernel = next(k for k in re.findall(r"\.entry\s+([\w$]+)\s*\(", text)
                      if k.startswith("kernel_cutlass_bwd_"))
        at = text.index(".entry " + kernel)
        m = re.search(r"\.reqntid\s+(\d+)", text[at:at + 100000])
        args = ["--threads", m.group(1)]
        for p in range(5):
            args += ["--param", f"{p}+1:u8=0", "--param", f"{p}+2:u8=0"]
        why = ("CUTLASS CuTe DSL example blackwell/fmha_bwd.py "
               "(BlackwellFusedMultiHeadAttentionBackward), its warp-specialized backward "
               "kernel for sm_100a: reduce warps 0-3, compute warps 4-11, an MMA warp issuing "
               "tcgen05.mma for S, dP, dV, dK and dQ into tensor memory, a load warp (TMA and "
               "cp.async); fp16, head dim 128, 128x128 tiles; sizes explored.")
    elif name == "cute-dsl-blackwell-grouped-gemm":
        args += BLACKWELL_MMA_FIELDS
        why = ("CUTLASS CuTe DSL example blackwell/grouped_gemm.py (GroupedGemmKernel) for "
               "sm_100a: two groups whose sizes, strides and pointers are device tensors; the "
               "persistent group scheduler reads each group's M and N from global memory to "
               "find its tiles, so weft must say the tile count is unknown.")
    elif name == "cute-dsl-blackwell-mamba2-ssd":
        why = ("CUTLASS CuTe DSL example blackwell/mamba2_ssd (SSDKernel) for sm_100a: 16 "
               "warps (intra- and inter-chunk MMA warps, two TMA warps, pre-inter, pre-intra "
               "and epilogue warpgroups) and 12 mbarrier pipelines, tcgen05 MMAs into tensor "
               "memory; bf16, fp32 accumulators, static G = B = H = 1, C = 4 chunks, D = 64, "
               "L = N = 128.")
    elif name == "cute-dsl-blackwell-fmha":
        # Params 0 and 1: the Q*K^T and P*V tcgen05 MMA atoms' runtime fields (negate A/B at
        # bytes 1, 2: fixed to 0 as for the Blackwell GEMMs). Params 3, 5, 7, 9: the dynamic
        # extents of the Q, K, V, O TMA tensors (5 x u32: Q/K/O (s, d, h_r, h_k, b), V (d, s,
        # ...)): the driver passes every problem size as an Int32. The key sequence length
        # (5+0) bounds the K/V loop: explored, restricted to 1.. by a range. The kernel loads
        # and multiplies the first K/V tile before its loop unconditionally while the softmax
        # warps loop ceil(s_k/128) times: with s_k = 0 it deadlocks (confirmed concretely);
        # empty keys are no attention (FA4's interface returns before launching for them).
        # Everything else is left free: heads, batch, head dim and the query length only
        # address global memory here (non-persistent scheduler: one tile per CTA).
        args += ["--param", "0+1:u8=0", "--param", "0+2:u8=0", "--param", "1+1:u8=0",
                 "--param", "1+2:u8=0", "--param", "5+0:s32=1.."]
        why = ("CUTLASS CuTe DSL example blackwell/fmha.py (BlackwellFusedMultiHeadAttentionForward) "
               "for sm_100a: 16 warps (two softmax warpgroups, a correction warpgroup, an MMA "
               "warp issuing tcgen05.mma into tensor memory, a TMA load warp, a TMA-store "
               "epilogue warp), Q and K/V TMA pipelines released by tcgen05.commit, "
               "softmax/correction/epilogue mbarrier pipelines; fp16, head dim 128, 128x128 MMA "
               "tile (two Q tiles per CTA), no mask, non-persistent; the key sequence length "
               "explored from 1, every other size left free.")
    elif name == "fa4-bwd-sm90":
        # Params 0-5: the dynamic extents of Q, K, V, dO, dK, dV after the kernel's transpose
        # (seqlen, heads, batch as u32). Q's seqlen (0+0) bounds the m-block loop: explored,
        # restricted to 1.. (FA4's interface returns before launching when q or k is empty;
        # at seqlen_q = 0 the MMA warpgroups skip every wait while K and V are still being
        # loaded into the buffers their epilogue overwrites).
        args += ["--param", "0+0:s32=1.."]
        why = ("FlashAttention-4 (flash-attn-4 4.0.0b36) FlashAttentionBackwardSm90 as FA4's "
               "interface configures it for fp16, head dim 128, no mask: a producer warpgroup "
               "(warp 0 loads K, V, Q, dO, LSE, dPsum by TMA and bulk copy; warp 1 adds each "
               "m-block's dQ to global memory with cp.reduce.async.bulk) and two wgmma "
               "warpgroups (384 threads), 80x128 tiles, 2 Q/dO stages; seqlen_q explored "
               "from 1.")
    elif name == "fa4-fwd-sm100-clc-causal":
        why = ("FlashAttention-4's Blackwell forward kernel (flash-attn-4 4.0.0b36), fp16, head "
               "dim 128, causal, with FA4's cluster-launch-control scheduler "
               "(use_clc_scheduler: SingleTileLPTScheduler in CLC mode): each next tile comes "
               "from clusterlaunchcontrol.try_cancel, and with causal masking its KV-block "
               "count depends on the tile's row block, the CTA id in the answer, which weft "
               "does not know: it must say so.")
    elif name.startswith("fa4-fwd"):
        # Params 0-3: the dynamic extents of Q, K, V, O after the kernel's transpose, 3 x u32
        # each (seqlen, heads, batch); the key/value loop is bounded by K's seqlen: the
        # sequence lengths are explored, no --param.
        if name.endswith("sm90"):
            arch = ("sm_90a: a producer warpgroup (TMA, setmaxnreg.dec) and two wgmma/softmax "
                    "warpgroups with intra-warpgroup overlap, 128x128 tiles, 2 K/V stages")
        else:
            arch = ("sm_100a (FlashAttention-4 proper), 512 threads: two softmax warpgroups, a "
                    "correction warpgroup, one MMA warp (tcgen05 into tensor memory), an "
                    "epilogue and a TMA load warp; 2 Q stages, one tile per CTA")
        why = ("FlashAttention-4's forward kernel (PyPI flash-attn-4 4.0.0b36, CuTe DSL, "
               f"compiled without torch), fp16, head dim 128, no mask, {arch}; sequence "
               "lengths explored.")
    elif name.startswith("quack-gemm"):
        # The tile scheduler passes each next tile, with its "is valid" flag (tile index <
        # the product of its tile counts), to the other warps through shared memory, where
        # weft loses the flag's term (a shared load is a plain unknown): the tile counts are
        # fixed, 2 x 3 x 1 (6 tiles for the emulated CTA of a one-CTA grid). Tile counts:
        # params 7, 8, 9 (u32; 10, 11, 12 with C and beta, which come first).
        tiles = (10, 11, 12) if name.endswith("-coop-c") else (7, 8, 9)
        for p, v in zip(tiles, (2, 3, 1)):
            args += ["--param", f"{p}={v}"]
        if name.endswith("sm100"):
            args += BLACKWELL_MMA_FIELDS
            what = ("GemmDefaultSm100 for sm_100a: epilogue warps 0-3 reading the accumulator "
                    "from tensor memory, an MMA warp (tcgen05.mma into tensor memory, "
                    "tcgen05.commit), a TMA warp, a C-load warp and a tile-scheduler warp, "
                    "128x128 tile, static persistent scheduler; K explored")
        elif name.endswith("-coop-c"):
            what = ("GemmDefaultSm90, cooperative (two wgmma warpgroups on one 256x128 tile), "
                    "with C (bf16, n-major) and a host beta: the epilogue loads C by TMA "
                    "through its own mbarrier pipeline; K explored")
        else:
            # A's and B's K extents are separate params (2 and 4, u32 at byte 4) though the
            # host passes one K: the MMA warpgroups count k-tiles from A's, the TMA warp
            # from B's. Explored independently they disagree (K_A = 0, K_B = 1 deadlocks,
            # no launch does that) and --param cannot tie them: both fixed to 256.
            args += ["--param", "2+4:u32=256", "--param", "4+4:u32=256"]
            what = ("GemmDefaultSm90, pingpong (two wgmma warpgroups alternating tiles, "
                    "ordered by named barriers), 128x192 tile (quack's default SM90 config "
                    "with cluster 1x1 instead of 2x1); K = 256 fixed")
        if name.endswith("-dynamic"):
            what += ("; quack's dynamic persistent scheduler: the scheduler warp takes each "
                     "next tile from a global counter (atom.global.inc on "
                     "tile_count_semaphore, shared by every CTA of the launch)")
        if name.endswith("-cluster2"):
            what = ("GemmDefaultSm90 in quack's default SM90 config: pingpong, 128x192 tile, "
                    "cluster 2x1 (TMA multicast, the tile scheduler's broadcast to the peer "
                    "CTA by st.async)")
        why = ("quack-kernels 0.6.5 GEMM (gemm_default_epi.py, D = A @ B), as quack's "
               "_compile_gemm compiles it: warp-specialized persistent, the TMA producer and "
               "the tile scheduler feeding the MMA warps through full/empty mbarrier "
               f"rings; bf16 A, B, D, fp32 accumulator; {what}; 6 tiles.")
    elif name.startswith("quack-"):
        kernels = {
            "softmax-fwd": "Softmax (online softmax), bf16, N = 4096",
            "softmax-bwd": "SoftmaxBackward, bf16, N = 4096",
            "rmsnorm-fwd": "RMSNorm forward, bf16 x/out/weight, fp32 rstd, N = 4096",
            "rmsnorm-bwd": ("RMSNormBackward, persistent over rows (a 2-stage ring of x and "
                            "dout tiles, a double-buffered reduction slot per row)"),
            "layernorm-fwd": ("RMSNorm as LayerNorm forward (mean and variance "
                              "reductions), bf16 x/out/weight/bias, fp32 mean/rstd, N = 4096"),
            "layernorm-bwd": ("RMSNormBackward as LayerNorm backward, persistent over rows "
                              "(cp.async ring; two values per row through a double-buffered "
                              "pair of reduction slots, a bar.sync each), bf16, fp32 dw and db "
                              "partials, N = 4096"),
            "cross-entropy-fwd-dx": ("CrossEntropy fused forward+backward (two-stage max/sum "
                                     "reduction, writes dx), bf16 logits, N = 4096"),
            "cross-entropy-fwd": "CrossEntropy forward (online softmax), bf16 logits, N = 4096",
            "topk": "TopK, bf16, N = 4096, k = 32 (bitonic sort in registers)",
        }
        key = next(k for k in kernels if name.startswith("quack-" + k + "-"))
        what = kernels[key]
        if name == "quack-rmsnorm-bwd-sm90":
            what += (": bf16 x/dout/dx/weight, fp32 dw_partial, N = 4096, Hopper heuristic "
                     "(cp.async loads, cp.async.wait_group 1)")
        elif name == "quack-rmsnorm-bwd-n256-sm90":
            what += (": the same at N = 256 (4 rows per CTA tile: the dw partials are summed "
                     "through shared memory over the x ring after the row loop)")
        elif name == "quack-rmsnorm-bwd-sm100":
            what += (": fp32 x/dout/dx/weight/dw_partial, N = 8192, Blackwell heuristic (256 "
                     "threads, TMA loads of x and dout into a 2-stage PipelineTmaAsync ring)")
        why = ("quack-kernels 0.6.5 row-reduction kernel as its compile function builds it "
               f"(fake tensors, rows dynamic), cluster size 1: {what}; rows explored.")
    elif name == "flashinfer-prefill-sm90":
        # Param 2 is the tile scheduler's Params: qo_len, kv_len (u32 @0, @4) and a
        # cutlass::FastDivmod for the GQA group size (divisor, multiplier, shift @8, 12, 16).
        # kv_len bounds the key/value loop. Explored, not fixed: the epilogue's no-waiter
        # (corpus/README.md) shows at qo_len = kv_len = 1, the first path with a tile; with
        # them fixed at 256 it was the same finding.
        why = ("FlashInfer's Hopper (FA3-style) single-request prefill attention kernel as its "
               "JIT instantiates it (fp16, head dim 128, no mask): a TMA producer warpgroup and "
               "two wgmma/softmax consumer warpgroups (CUTLASS PipelineTmaAsync, named-barrier "
               "warp scheduling), CTA tile 128x192; sizes explored.")
    elif name == "flashinfer-prefill-fp8-sm90":
        # The scheduler's Params (param 2) as in flashinfer-prefill-sm90: qo_len, kv_len
        # explored. The missing fence.proxy.async (corpus/README.md) shows on the third
        # path (qo_len = kv_len = 1).
        why = ("FlashInfer's Hopper FP8 single-request prefill attention kernel as its JIT "
               "instantiates it (e4m3 Q/K/V, fp16 O, head dim 128, no mask, "
               "DefaultFP8Attention): a producer warpgroup that loads Q, K and V by TMA and "
               "transposes each V tile in shared memory (ldmatrix/stmatrix) into a third "
               "pipeline read by two wgmma consumer warpgroups, CTA tile 128x192; sizes "
               "explored.")
    elif name == "flashinfer-decode-sm80":
        # The MHA instance (GQA group size 1): NUM_STAGES_SMEM 2, tile_size_per_bdx 8,
        # vec_size 8, bdx 16, bdy 1, bdz 8 (a 16x1x8 CTA; no .maxntid in the PTX).
        kernel = next(k for k in re.findall(r"\.entry\s+([\w$]+)\s*\(", text)
                      if k.startswith("_ZN10flashinfer29SingleDecodeWithKVCacheKernel")
                      and "ELj2ELj8ELj8ELj16ELj1ELj8E" in k)
        # Params: kv_len (u32 @80), kv_chunk_size (u32 @112): the kernel reads them as
        # min(kv_chunk_size, kv_len - chunk_start); both are explored.
        args = ["--threads", "16x1x8"]
        why = ("FlashInfer's SingleDecodeWithKVCacheKernel (flashinfer-python 0.7.2.post1, CUDA "
               "C++) as its JIT instantiates it: fp16, head dim 128, no RoPE, MHA (group size 1), "
               "2-stage cp.async pipeline of K and V tiles (one commit group each, "
               "cp.async.wait_group 3 + __syncthreads), sync_state merge through shared "
               "memory; 16x1x8 threads; kv_len and kv_chunk_size explored.")
    elif name == "flash-attn2-bwd-sm80":
        # No .maxntid in the PTX: Flash_bwd_kernel_traits<128, 64, 128, 8, ...>, 8 warps.
        # Flash_bwd_params extends Flash_fwd_params (same offsets): seqlen_k (i32 @184) and
        # deterministic (u8 @624) explored; BlockInfo's leftpad_k, seqused_k, knew_ptr (@240,
        # @248, @264) null as mha_bwd leaves them (weft names them, with seqlen_knew @188).
        # seqlen_q (@180) is fixed at 128 (two 64-row m-blocks: both sQ buffers, the Q/dO
        # prefetch): explored from 1 with seqlen_k it runs out of the exploration's budget
        # (39 paths; corpus/README.md); explored from 0 it
        # finds the race of seqlen_q = 0, which mha_bwd never launches (it zeroes dK, dV).
        args = ["--threads", "256", "--param", "0+240:u64=0", "--param", "0+248:u64=0",
                "--param", "0+264:u64=0", "--param", "0+180:u32=128"]
        why = ("FlashAttention-2's backward kernel flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel "
               "(PyPI sdist flash-attn 2.8.3.post2, CUDA C++ on CuTe) as run_mha_bwd_hdim128 "
               "launches it on an A100 (>= 144 KB shared memory): fp16, head dim 128, no causal "
               "mask, no dropout, Flash_bwd_kernel_traits<128, 64, 128, 8, 2, 4, 2>, 8 warps, "
               "Is_even_MN; K/V once and double-buffered Q, dO by cp.async, cp.async.wait_all + "
               "__syncthreads per m-block, P and dS staged in shared memory, dK/dV through "
               "shared memory over sK/sV. seqlen_k and deterministic explored, seqlen_q = 128 "
               "(two m-blocks); the varlen/kvcache pointers null (mha_bwd).")
    elif name.startswith("flash-attn2-fwd-sm80"):
        # No .maxntid in the PTX: Flash_fwd_kernel_traits<128, 128, 64, 4>, 4 warps.
        # Flash_fwd_params (flash.h): seqlen_q, seqlen_k (i32 @180, @184) explored: seqlen_q
        # decides the early exit, seqlen_k the n-block count (the K/V loop). Fixed, as
        # flash_api.cpp's mha_fwd sets them: the pointers that select other APIs and that
        # BlockInfo reads on every path -- leftpad_k (@240, mha_varlen_fwd/kvcache only),
        # seqused_k (@248, varlen only), knew_ptr (@264, mha_fwd_kvcache only) are null, and
        # for the uneven kernel (Varlen BlockInfo) cu_seqlens_q/k (@224, @232) too.
        args = ["--threads", "128"]
        if name.endswith("-uneven"):
            args += ["--param", "0+224:u64=0", "--param", "0+232:u64=0"]
        args += ["--param", "0+240:u64=0", "--param", "0+248:u64=0", "--param", "0+264:u64=0"]
        even = ("Is_even_MN = true (seqlen_q % 128 == 0, seqlen_k % 64 == 0: no row predicates)"
                if not name.endswith("-uneven") else
                "Is_even_MN = false (any sequence length: predicated row copies, zero-filled "
                "out-of-range V rows)")
        why = ("FlashAttention-2's forward kernel flash_fwd_kernel (PyPI sdist flash-attn "
               "2.8.3.post2, CUDA C++ on CuTe) as run_mha_fwd_hdim128 launches it on sm_80: fp16, "
               "head dim 128, no causal mask, no dropout, 128x64 tiles, 4 warps; Q and K/V tiles "
               "by cp.async (one commit group per tile), cp.async.wait_group 0 + __syncthreads "
               f"before each tile is read or refilled, O staged through shared memory; {even}. "
               "seqlen_q and seqlen_k explored; the varlen/kvcache pointers null (mha_fwd).")
    elif name == "triton-layernorm-bwd":
        why = ("Triton tutorial 05's layer-norm backward, _layer_norm_bwd_dx_fused (N = 1024 "
               "fp16 columns, num_warps 4, GROUP_SIZE_M 256): a spin lock on global memory "
               "(`while tl.atomic_cas(Lock, 0, 1) == 1: pass`; Triton issues the CAS from one "
               "thread and broadcasts it through shared memory between bar.syncs). How many "
               "trips the lock takes depends on other CTAs: weft must say so.")
    elif name == "cute-dsl-elementwise-add":
        why = ("CuTe DSL naive_elementwise_add from the elementwise_add notebook, 2048x2048 fp16 "
               "(static shapes), no synchronization.")
    elif name == "cute-dsl-pipeline-ws":
        why = ("CuTe DSL cutlass.pipeline.PipelineAsync: warp 0 produces into a 4-stage "
               "shared-memory ring, warp 1 consumes (full/empty mbarriers, 8 iterations, "
               "static shapes).")
    else:
        # K (param 5) bounds the pipelined k loop around the shared-memory stages: explored.
        why = ("Triton pipelined matmul (128x128x64 tiles, num_stages=3, wgmma) from the LLVM "
               "NVPTX back end; K explored.")
    entry = {"name": name, "ptx": ptx, "source": source, "kernel": kernel,
             "args": args, "why": why}
    if name in PENDING:
        entry["blocked"] = PENDING[name]
        pending.append(entry)
    else:
        entries.append(entry)
with open(sys.argv[1], "w") as f:
    json.dump({"samples": entries, "pending": pending}, f, indent=2)
    f.write("\n")
PY

echo "corpus: done in $(( $(date +%s) - start ))s: ${#built[@]} built, ${#failed[@]} failed ${failed[*]:-}" >&2
ls -la "$out"/*.ptx 2>/dev/null >&2
[ "${#failed[@]}" -eq 0 ]
