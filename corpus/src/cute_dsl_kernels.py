"""Compile CuTe DSL (pip package nvidia-cutlass-dsl) kernels to PTX without a GPU.

`cute.compile` needs no device when its arguments are fake tensors
(`cutlass.cute.runtime.make_fake_compact_tensor`) and the target comes from
CUTE_DSL_ARCH (it defaults to sm_100 when no GPU is found). CUTE_DSL_KEEP=ptx makes it
write `<CUTE_DSL_DUMP_DIR>/<function>.<arch>.ptx`; the file only appears once the compiling
process has exited, so the compile runs in a child process and the parent copies the PTX.
CUTE_DSL_CACHE_DIR points at a fresh directory so that a cached compile does not skip
the dump. CUTE_DSL_LINEINFO=1 keeps source locations (.file/.loc) in the PTX.

    python corpus/src/cute_dsl_kernels.py elementwise-add OUT.ptx
    python corpus/src/cute_dsl_kernels.py pipeline-ws OUT.ptx
    python corpus/src/cute_dsl_kernels.py hopper-dense-gemm OUT.ptx EXAMPLES
    python corpus/src/cute_dsl_kernels.py hopper-dense-gemm-persistent OUT.ptx EXAMPLES
    python corpus/src/cute_dsl_kernels.py hopper-fmha OUT.ptx EXAMPLES
    python corpus/src/cute_dsl_kernels.py blackwell-dense-gemm OUT.ptx EXAMPLES
    python corpus/src/cute_dsl_kernels.py blackwell-dense-gemm-persistent OUT.ptx EXAMPLES
    python corpus/src/cute_dsl_kernels.py blackwell-fmha OUT.ptx EXAMPLES
    python corpus/src/cute_dsl_kernels.py blackwell-dense-gemm-persistent-dynamic OUT.ptx EXAMPLES
    python corpus/src/cute_dsl_kernels.py blackwell-dense-blockscaled-gemm-persistent OUT.ptx EXAMPLES
    python corpus/src/cute_dsl_kernels.py blackwell-dense-gemm-alpha-beta-persistent OUT.ptx EXAMPLES
    python corpus/src/cute_dsl_kernels.py blackwell-dense-gemm-software-pipeline OUT.ptx EXAMPLES
    python corpus/src/cute_dsl_kernels.py blackwell-fmha-bwd OUT.ptx EXAMPLES
    python corpus/src/cute_dsl_kernels.py blackwell-grouped-gemm OUT.ptx EXAMPLES
    python corpus/src/cute_dsl_kernels.py blackwell-mamba2-ssd OUT.ptx EXAMPLES

- elementwise-add: `naive_elementwise_add` from the CuTe DSL notebook
  examples/python/CuTeDSL/notebooks/elementwise_add.ipynb (shipped in the nvidia-cutlass
  package), 2048x2048 fp16, 256 threads, no synchronization.
- pipeline-ws: a warp-specialized producer/consumer written here around the DSL's own
  `cutlass.pipeline.PipelineAsync` (the full/empty mbarrier ring that the DSL's Hopper and
  Blackwell GEMMs use): warp 0 fills a 4-stage shared-memory ring, warp 1 drains it.
- hopper-*: CUTLASS's own CuTe DSL Hopper examples, used unmodified from EXAMPLES, the
  `examples/python/CuTeDSL` directory of a CUTLASS source tree (corpus/build.sh takes it
  from the flashinfer-python wheel, which bundles CUTLASS 4.5). The examples import torch
  only inside their `run()` drivers; here the kernel classes are called with fake tensors
  (the drivers' layouts) and a fake stream instead:
  - hopper-dense-gemm: `hopper/dense_gemm.py`, `HopperWgmmaGemmKernel` (TMA + wgmma,
    one warpgroup that both loads and multiplies), fp16, 128x128 tile, cluster 1x1,
    M=N=128, K=256, L=1 static, A/B K-major, C N-major.
  - hopper-dense-gemm-persistent: `hopper/dense_gemm_persistent.py`,
    `HopperWgmmaGemmPersistentKernel`, warp-specialized (a DMA warpgroup with setmaxnreg
    feeding an MMA warpgroup through a full/empty mbarrier ring), same problem, one
    persistent cluster.
  - hopper-fmha: `hopper/fmha.py`, `HopperFusedMultiHeadAttentionForward`, warp-specialized
    flash attention (a load warpgroup, two MMA/softmax warpgroups, Q and K/V mbarrier
    pipelines), fp16 in/out, fp32 accumulators, 64x128 MMA tile, head dim 64, no mask,
    non-persistent. Shapes are dynamic as in the example's driver (`mark_layout_dynamic`:
    its tile scheduler requires them), so the sequence lengths, heads and batch are
    kernel parameters; corpus/build.sh's manifest fixes them.
- blackwell-dense-gemm: `blackwell/dense_gemm.py`, `DenseGemmKernel`, compiled for sm_100a:
  warp-specialized (a TMA warp, an MMA warp issuing `tcgen05.mma` into tensor memory and
  committing with `tcgen05.commit`, epilogue warps reading tensor memory), fp16 in,
  fp32 accumulator, fp16 out, 128x128 MMA tile, one CTA per cluster (no 2-CTA
  instructions), TMA-store epilogue, M=N=128, K=256, L=1 static.
- blackwell-dense-gemm-persistent: `blackwell/dense_gemm_persistent.py`,
  `PersistentDenseGemmKernel`: the same GEMM warp-specialized with a persistent tile
  scheduler (a TMA warp, an MMA warp, epilogue warps; accumulator pipeline in tensor
  memory), one persistent cluster.
- blackwell-dense-gemm-persistent-dynamic: `blackwell/dense_gemm_persistent_dynamic.py`,
  the same GEMM with the cluster-launch-control tile scheduler
  (`utils.ClcDynamicPersistentTileScheduler`: a scheduler warp asks
  `clusterlaunchcontrol.try_cancel` for the next tile and hands it out through a
  `PipelineClcFetchAsync`), M=N=K=256, L=1 static. One line is changed, in a copy: the
  `clc_response` buffer is declared 16-byte aligned (`cute.struct.Align[..., 16]`, as FA4's
  kernels declare theirs), since nvidia-cutlass-dsl 4.8.1 loads the answer with one
  128-bit copy and rejects the 4-byte-aligned buffer of this CUTLASS 4.5 example; the copy
  is written to `blackwell/weft_aligned/` of EXAMPLES.
- blackwell-dense-blockscaled-gemm-persistent: `blackwell/dense_blockscaled_gemm_persistent.py`,
  `Sm100BlockScaledPersistentDenseGemmKernel` through the example's `scaled_mm`: NVFP4 (4-bit
  A and B, an 8-bit scale factor per 16 elements copied into tensor memory by `tcgen05.cp`,
  `tcgen05.mma.kind::mxf4nvf4.block_scale`), fp16 C, 128x128 MMA tile, cluster 1x1,
  persistent; the problem shape is a runtime parameter (torch served as an inert stand-in,
  as for blackwell-fmha).
- blackwell-fmha: `blackwell/fmha.py`, `BlackwellFusedMultiHeadAttentionForward`, compiled
  for sm_100a: 512 threads in 16 warps (softmax warpgroups 0-3 and 4-7, correction warps
  8-11, MMA warp 12, TMA load warp 13, TMA-store epilogue warp 14, warp 15 idle), fp16 in
  and out, fp32 accumulators, head dim 128, 128x128 MMA tile (two Q tiles per CTA), no mask
  (`WINDOW_MASK` without a window, as the driver picks for key lengths that are multiples
  of 128), non-persistent (the driver's default). Unlike the other examples this one
  imports torch at module level (for its `run()` driver only): it is served as an inert
  stand-in, as in corpus/src/fa4_kernels.py. The driver passes raw pointers and the problem
  size as `Int32` runtime values, so every extent is a kernel parameter.
- blackwell-dense-gemm-alpha-beta-persistent: `blackwell/dense_gemm_alpha_beta_persistent.py`,
  `SM100PersistentDenseGemmAlphaBetaKernel` (D = alpha * A B + beta * C): 224 threads, four
  epilogue warps, an MMA warp, a TMA warp and an epilogue-load warp that brings C in by TMA
  through a 2-stage `PipelineTmaAsync`; fp16, fp32 accumulator and epilogue, 128x128 MMA
  tile, cluster 1x1, M=N=128, K=256, L=1 static.
- blackwell-dense-gemm-software-pipeline: `blackwell/dense_gemm_software_pipeline.py`,
  `DenseGemmKernel`: warp 0 loads and multiplies in one `cutlass.range(...,
  prefetch_stages=...)` loop (the DSL pipelines it), all four warps run the TMA-store
  epilogue; fp16, 128x128 MMA tile, M=N=128, K=1024 (16 k-tiles through the 6-stage ring).
- blackwell-fmha-bwd: `blackwell/fmha_bwd.py`, `BlackwellFusedMultiHeadAttentionBackward`
  (three kernels in one module: sum_OdO, bwd, convert; bwd is the warp-specialized one: 512
  threads, reduce warps 0-3, compute warps 4-11, MMA warp 12, load warp 13); fp16, fp32
  accumulators, head dim 128, 128x128 tile, no varlen, WINDOW_MASK_BWD without a window
  (the driver's choice for s_q a multiple of 128). Shapes dynamic as in the driver (head
  dim static); the problem shape is `Int32` runtime values. Imports torch at module level:
  inert stand-in.
- blackwell-grouped-gemm: `blackwell/grouped_gemm.py`, `GroupedGemmKernel`: two groups,
  per-group sizes, strides and pointers in device tensors (as in the driver), tensor maps
  rewritten in shared memory; 128x128 MMA tile, cluster 1x1.
- blackwell-mamba2-ssd: `blackwell/mamba2_ssd/mamba2_ssd.py`, `SSDKernel`: 512 threads in
  16 warps (inter and intra MMA warps, two TMA warps, pre-inter, pre-intra and epilogue
  warpgroups, 12 mbarrier pipelines); bf16 I/O, fp32 cumsum and accumulators, D fused as a
  vector; G = B = E = H = 1, C = 4 chunks, D = 64, L = N = 128, static.
"""
import glob
import os
import shutil
import subprocess
import sys
import tempfile

ARCH = "sm_90a"
STAGES = 4
N_ITERS = 8


def arch_of(which):
    return "sm_100a" if which.startswith("blackwell-") else ARCH


def build(which, examples=None):
    if which.startswith("blackwell-"):
        return build_blackwell_example(which, examples)
    if which.startswith("hopper-"):
        return build_hopper_example(which, examples)
    import cutlass
    import cutlass.cute as cute
    import cutlass.pipeline as pipeline
    from cutlass.cute.runtime import make_fake_compact_tensor

    @cute.kernel
    def naive_elementwise_add_kernel(gA: cute.Tensor, gB: cute.Tensor, gC: cute.Tensor):
        tidx, _, _ = cute.arch.thread_idx()
        bidx, _, _ = cute.arch.block_idx()
        bdim, _, _ = cute.arch.block_dim()
        thread_idx = bidx * bdim + tidx
        m, n = gA.shape
        ni = thread_idx % n
        mi = thread_idx // n
        a_val = gA[mi, ni]
        b_val = gB[mi, ni]
        gC[mi, ni] = a_val + b_val

    @cute.jit
    def naive_elementwise_add(mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor):
        num_threads_per_block = 256
        m, n = mA.shape
        kernel = naive_elementwise_add_kernel(mA, mB, mC)
        kernel.launch(grid=((m * n) // num_threads_per_block, 1, 1),
                      block=(num_threads_per_block, 1, 1))

    @cute.kernel
    def pipeline_ws_kernel(gIn: cute.Tensor, gOut: cute.Tensor):
        tidx, _, _ = cute.arch.thread_idx()
        warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())
        lane = tidx % 32
        smem = cutlass.memory.SmemAllocator()
        buf = smem.allocate_tensor(cutlass.Float32, cute.make_layout((32, STAGES)),
                                   byte_alignment=16)
        pipe = pipeline.PipelineAsync.create(
            num_stages=STAGES,
            producer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, 32),
            consumer_group=pipeline.CooperativeGroup(pipeline.Agent.Thread, 32),
        )
        producer, consumer = pipe.make_participants()
        if warp == 0:
            for i in cutlass.range(N_ITERS):
                h = producer.acquire_and_advance()
                buf[lane, h.index] = gIn[lane, i]
                h.commit()
        if warp == 1:
            for i in cutlass.range(N_ITERS):
                h = consumer.wait_and_advance()
                gOut[lane, i] = buf[lane, h.index] * 2.0
                h.release()

    @cute.jit
    def pipeline_ws(mIn: cute.Tensor, mOut: cute.Tensor):
        pipeline_ws_kernel(mIn, mOut).launch(grid=(1, 1, 1), block=(64, 1, 1))

    if which == "elementwise-add":
        t = [make_fake_compact_tensor(cutlass.Float16, (2048, 2048), assumed_align=16)
             for _ in range(3)]
        cute.compile(naive_elementwise_add, *t)
    elif which == "pipeline-ws":
        t = [make_fake_compact_tensor(cutlass.Float32, (32, N_ITERS), assumed_align=16)
             for _ in range(2)]
        cute.compile(pipeline_ws, *t)
    else:
        raise SystemExit(f"unknown kernel {which}")


def gemm_tensors(m, n, k, l):
    """Fake fp16 GEMM operands as the examples' drivers lay them out
    (`create_and_permute_tensor`): A (M, K, L) and B (N, K, L) K-major, C (M, N, L) N-major,
    16-byte aligned."""
    import cutlass
    from cutlass.cute.runtime import make_fake_compact_tensor

    def tensor(shape):
        return make_fake_compact_tensor(cutlass.Float16, shape, stride_order=(1, 0, 2),
                                        assumed_align=16)

    return tensor((m, k, l)), tensor((n, k, l)), tensor((m, n, l))


def build_hopper_example(which, examples):
    import cutlass
    import cutlass.cute as cute
    from cutlass.cute.runtime import make_fake_compact_tensor, make_fake_tensor
    from cutlass.runtime import make_fake_stream

    sys.path.insert(0, examples)  # `from helpers import fmha_helpers`
    sys.path.insert(0, os.path.join(examples, "hopper"))
    stream = make_fake_stream()
    if which in ("hopper-dense-gemm", "hopper-dense-gemm-persistent"):
        m, n, k, l = 128, 128, 256, 1
        # (M, K, L) K-major, (N, K, L) K-major, (M, N, L) N-major, as the driver's
        # create_and_permute_tensor lays them out.
        a, b, c = gemm_tensors(m, n, k, l)
        if which == "hopper-dense-gemm":
            import dense_gemm
            gemm = dense_gemm.HopperWgmmaGemmKernel(cutlass.Float32, (128, 128), (1, 1))
            cute.compile(gemm, a, b, c, stream)
        else:
            import dense_gemm_persistent
            gemm = dense_gemm_persistent.HopperWgmmaGemmPersistentKernel(
                cutlass.Float32, (128, 128), (1, 1), 1, True)
            cute.compile(gemm, a, b, c, 1, stream)  # max_active_clusters = 1
    elif which == "hopper-fmha":
        import fmha
        from helpers import fmha_helpers

        d = 64

        def qkvo(dtype, head_dim):
            # The driver's (b, s, h_k, h_r, d) tensor permuted to (s, d, h_r, h_k, b), then
            # mark_layout_dynamic(leading_dim=1): every extent and stride dynamic except
            # the head dimension (static here, as the kernel's tiles need) and its unit
            # stride.
            shape = (cute.sym_int32(), head_dim, cute.sym_int32(), cute.sym_int32(),
                     cute.sym_int32())
            stride = (cute.sym_int64(), 1, cute.sym_int64(), cute.sym_int64(),
                      cute.sym_int64())
            return make_fake_tensor(dtype, shape, stride, assumed_align=16)

        q, k, v, o = (qkvo(cutlass.Float16, d) for _ in range(4))
        lse = qkvo(cutlass.Float32, 1)
        attn = fmha.HopperFusedMultiHeadAttentionForward(
            cutlass.Float32, cutlass.Float32, (64, 128, d), False,
            fmha_helpers.MaskEnum.WINDOW_MASK)
        # log2(e)/sqrt(d), 1/sqrt(d), output scale 1; no sliding window.
        cute.compile(attn, q, k, v, o, lse, 0.18033688, 0.125, 1.0, None, None, stream)
    else:
        raise SystemExit(f"unknown kernel {which}")


def build_blackwell_example(which, examples):
    import cutlass
    import cutlass.cute as cute
    from cutlass.cute.runtime import make_fake_compact_tensor
    from cutlass.runtime import make_fake_stream

    sys.path.insert(0, examples)
    sys.path.insert(0, os.path.join(examples, "blackwell"))
    stream = make_fake_stream()
    if which in ("blackwell-dense-gemm", "blackwell-dense-gemm-persistent"):
        m, n, k, l = 128, 128, 256, 1
        # A (M, K, L) and B (N, K, L) K-major, C (M, N, L) N-major, as in the Hopper GEMMs.
        a, b, c = gemm_tensors(m, n, k, l)
        # acc fp32, no 2-CTA instructions, 128x128 MMA tile, cluster 1x1, TMA store.
        if which == "blackwell-dense-gemm":
            import dense_gemm
            gemm = dense_gemm.DenseGemmKernel(cutlass.Float32, False, (128, 128), (1, 1), True)
            cute.compile(gemm, a, b, c, stream)
        else:
            import dense_gemm_persistent
            gemm = dense_gemm_persistent.PersistentDenseGemmKernel(
                cutlass.Float32, False, (128, 128), (1, 1), True)
            cute.compile(gemm, a, b, c, 1, stream)  # max_active_clusters = 1
    elif which == "blackwell-dense-gemm-persistent-dynamic":
        # The example, with its answer buffer 16-byte aligned (module docs), as a module of
        # a directory beside it searched first (inside the build tree, so that the PTX's
        # source paths name a file that stays).
        src = os.path.join(examples, "blackwell", "dense_gemm_persistent_dynamic.py")
        with open(src) as f:
            text = f.read()
        old = "clc_response: cute.struct.MemRange[cutlass.Int32, 4]"
        if text.count(old) != 1:
            raise SystemExit(f"{src}: the clc_response declaration to align is not there")
        text = text.replace(
            old, "clc_response: cute.struct.Align[cute.struct.MemRange[cutlass.Int32, 4], 16]")
        patched = os.path.join(examples, "blackwell", "weft_aligned")
        os.makedirs(patched, exist_ok=True)
        with open(os.path.join(patched, "dense_gemm_persistent_dynamic.py"), "w") as f:
            f.write(text)
        sys.path.insert(0, patched)
        import dense_gemm_persistent_dynamic

        m, n, k, l = 256, 256, 256, 1
        a, b, c = gemm_tensors(m, n, k, l)
        # acc fp32, no 2-CTA instructions, 128x128 MMA tile, cluster 1x1, TMA store.
        gemm = dense_gemm_persistent_dynamic.PersistentDenseGemmKernel(
            cutlass.Float32, False, (128, 128), (1, 1), True)
        cute.compile(gemm, a, b, c, 1, stream)  # max_active_clusters = 1
    elif which == "blackwell-dense-blockscaled-gemm-persistent":
        # The example imports torch at module level (its reference check only): served as
        # an inert stand-in, as for blackwell-fmha below.
        from fa4_kernels import _InertFinder
        sys.meta_path.insert(0, _InertFinder())
        import dense_blockscaled_gemm_persistent as bs

        # NVFP4 as the example's driver builds it: Float4E2M1FN A and B, a Float8E4M3FN
        # scale factor per 16 elements, fp16 C; 128x128 MMA tile, cluster 1x1; A and B
        # K-major, C N-major; one active cluster. `scaled_mm` passes raw pointers and the
        # problem shape (m, n, k, l) as Int32 runtime values: every size is a parameter.
        gemm = bs.Sm100BlockScaledPersistentDenseGemmKernel(16, (128, 128), (1, 1))
        bs.scaled_mm(gemm, cutlass.Float4E2M1FN, cutlass.Float16, cutlass.Float8E4M3FN,
                     "k", "k", "n", 1, stream)
    elif which == "blackwell-dense-gemm-alpha-beta-persistent":
        import dense_gemm_alpha_beta_persistent as ab
        m, n, k, l = 128, 128, 256, 1
        # A, B K-major; C (read by the epilogue-load warp) and D N-major, all fp16.
        a, b, c = gemm_tensors(m, n, k, l)
        _, _, d = gemm_tensors(m, n, k, l)
        # acc fp32, epilogue fp32, no 2-CTA instructions, 128x128 MMA tile, cluster 1x1.
        gemm = ab.SM100PersistentDenseGemmAlphaBetaKernel(
            cutlass.Float32, cutlass.Float32, False, (128, 128), (1, 1))
        # alpha, beta runtime Float32; max_active_clusters = 1.
        cute.compile(gemm, a, b, c, d, cutlass.Float32(1.0), cutlass.Float32(0.5), 1, stream)
    elif which == "blackwell-dense-gemm-software-pipeline":
        import dense_gemm_software_pipeline as sp
        # K = 1024: 16 k-tiles through the 6-stage ring (at K = 256 no stage is refilled).
        m, n, k, l = 128, 128, 1024, 1
        a, b, c = gemm_tensors(m, n, k, l)
        # acc fp32, no 2-CTA instructions, 128x128 MMA tile, cluster 1x1, TMA store.
        gemm = sp.DenseGemmKernel(cutlass.Float32, False, (128, 128), (1, 1), True)
        cute.compile(gemm, a, b, c, stream)
    elif which == "blackwell-fmha-bwd":
        # fmha_bwd.py imports torch at module level (its driver): inert stand-in.
        from fa4_kernels import _InertFinder
        sys.meta_path.insert(0, _InertFinder())
        import fmha_bwd
        from helpers import fmha_helpers
        from cutlass.cute.runtime import make_fake_tensor

        d = 128

        def qkvo(dtype, head_dim):
            # The driver's (b, s, h_k, h_r, d) permuted to (s, d, h_r, h_k, b),
            # mark_layout_dynamic(leading_dim=1) and mark_compact_shape_dynamic(mode=1,
            # divisibility=64): dynamic except the head dim (static here) and its unit
            # stride; the compact strides are multiples of d, so divisible by 64.
            shape = (cute.sym_int32(), head_dim, cute.sym_int32(), cute.sym_int32(),
                     cute.sym_int32())
            stride = (cute.sym_int64(64), 1, cute.sym_int64(64), cute.sym_int64(64),
                      cute.sym_int64(64))
            return make_fake_tensor(dtype, shape, stride, assumed_align=16)

        q, k, v, o, dq, dk, dv, do = (qkvo(cutlass.Float16, d) for _ in range(8))
        # LSE (s_q, h_r, h_k, b) fp32, leading dim 0.
        lse = make_fake_tensor(cutlass.Float32, tuple(cute.sym_int32() for _ in range(4)),
                               (1, cute.sym_int64(), cute.sym_int64(), cute.sym_int64()),
                               assumed_align=16)
        workspace = make_fake_tensor(cutlass.Uint8, (cute.sym_int32(),), (1,),
                                     assumed_align=16)
        I = cutlass.Int32
        # (s_q_max, s_k_max, d, ((h_r, h_k), b)) as Int32 runtime values.
        problem_shape = (I(1024), I(1024), I(d), ((I(1), I(1)), I(1)))
        # The driver's defaults: fp16, fp32 acc, 128x128 tile, no varlen, no causal, no
        # window, s_q a multiple of 128: WINDOW_MASK_BWD with no window.
        attn = fmha_bwd.BlackwellFusedMultiHeadAttentionBackward(
            cutlass.Float16, cutlass.Float32, (128, 128, d), False,
            fmha_helpers.MaskEnum.WINDOW_MASK_BWD)
        cute.compile(attn, problem_shape, q, k, v, o, dq, dk, dv, do, lse, None, None,
                     cutlass.Float32(0.08838835), None, None, workspace, stream)
    elif which == "blackwell-grouped-gemm":
        # grouped_gemm.py imports torch at module level (its driver): inert stand-in.
        from fa4_kernels import _InertFinder
        sys.meta_path.insert(0, _InertFinder())
        import grouped_gemm as gg

        # Two groups of M=N=128, K=256, L=1, fp16, A/B K-major, C N-major; acc fp32, no
        # 2-CTA instructions, 128x128 MMA tile, cluster 1x1, tensor maps updated in shared
        # memory (the driver's default). As in the driver, the "initial" A/B/C tensors carry
        # only dtype and majorness (8x8x1 here); the per-group sizes, strides and pointers
        # are device tensors the kernel reads at run time.
        groups = 2
        init_a, init_b, init_c = gemm_tensors(8, 8, 8, 1)
        sizes = make_fake_compact_tensor(cutlass.Int32, (groups, 4), assumed_align=16)
        strides = make_fake_compact_tensor(cutlass.Int32, (groups, 3, 2), assumed_align=16)
        ptrs = make_fake_compact_tensor(cutlass.Int64, (groups, 3), assumed_align=16)
        tensormaps = make_fake_compact_tensor(
            cutlass.Int64, (1, gg.GroupedGemmKernel.num_tensormaps,
                            gg.GroupedGemmKernel.bytes_per_tensormap // 8),
            assumed_align=16)
        gemm = gg.GroupedGemmKernel(cutlass.Float32, False, (128, 128), (1, 1))
        # group_count 2, total_num_clusters 2 (one 128x128 tile per group),
        # max_active_clusters 1.
        cute.compile(gemm, init_a, init_b, init_c, groups, sizes, strides, ptrs, 2,
                     tensormaps, 1, stream)
    elif which == "blackwell-mamba2-ssd":
        # mamba2_ssd.py imports its torch reference at module level: inert stand-in.
        from fa4_kernels import _InertFinder
        sys.meta_path.insert(0, _InertFinder())
        sys.path.insert(0, os.path.join(examples, "blackwell", "mamba2_ssd"))
        import mamba2_ssd

        # The driver's layouts (its create_and_permute_tensor), static here: G = B = E = H
        # = 1, C = 4 chunks (each 2-stage ring is refilled), D = 64, L = N = 128; bf16
        # I/O, fp32 cumsum and accumulators, D fused as a vector (the driver's defaults).
        G, B, EH, C, D, L, N = 1, 1, 1, 4, 64, 128, 128
        bf16 = cutlass.BFloat16

        def t(dtype, shape, order):
            return make_fake_compact_tensor(dtype, shape, stride_order=order,
                                            assumed_align=16)

        x = t(bf16, (D, L, C, EH, B), (2, 0, 1, 3, 4))
        cumsum_delta = t(cutlass.Float32, (L, C, EH, B), (0, 1, 2, 3))
        delta = t(bf16, (L, C, EH, B), (0, 1, 2, 3))
        b = t(bf16, (L, N, C, G, B), (0, 2, 1, 3, 4))
        c = t(bf16, (L, N, C, G, B), (0, 2, 1, 3, 4))
        y = t(bf16, (L, D, C, EH, B), (0, 2, 1, 3, 4))
        fstate = t(bf16, (D, N, EH, B), (1, 0, 2, 3))
        d = t(bf16, (D, EH), (0, 1))
        ssd = mamba2_ssd.SSDKernel(bf16, cutlass.Float32, cutlass.Float32, L, D, N, True,
                                   True)
        cute.compile(ssd, x, cumsum_delta, delta, b, c, y, fstate, d, 1, stream)
    elif which == "blackwell-fmha":
        # fmha.py imports torch at module level (its run() driver needs it; the kernel
        # class never calls it): served as an inert stand-in, as in corpus/src/fa4_kernels.py.
        from fa4_kernels import _InertFinder
        sys.meta_path.insert(0, _InertFinder())
        import fmha
        from helpers import fmha_helpers
        from cutlass.cute.runtime import make_ptr

        d = 128
        # The driver passes raw pointers and the problem size [b, s_q, s_lse, s_k, h_q, h_k,
        # d] as Int32 runtime values (the kernel builds its layouts from them): here b =
        # h_q = h_k = 1 and d = 128 as in the manifest, sequence lengths left to it.
        q, k, v, o = (make_ptr(cutlass.Float16, 0, cute.AddressSpace.gmem, assumed_align=16)
                      for _ in range(4))
        problem_size = tuple(cutlass.Int32(x) for x in (1, 256, 256, 256, 1, 1, d))
        # acc fp32 both, 128x128 MMA tile (2 Q tiles per CTA), non-persistent (the
        # driver's default), no mask: WINDOW_MASK with no window, as the driver picks when
        # s_k is a multiple of 128 and no window or causal flag is given.
        attn = fmha.BlackwellFusedMultiHeadAttentionForward(
            cutlass.Float32, cutlass.Float32, (128, 128, d), False,
            fmha_helpers.MaskEnum.WINDOW_MASK)
        # log2(e)/sqrt(d), 1/sqrt(d), output scale 1; no varlen, no LSE, no window.
        cute.compile(attn, q, k, v, o, problem_size, None, None, None,
                     0.12751743, 0.08838835, 1.0, None, None, stream)
    else:
        raise SystemExit(f"unknown kernel {which}")


def main(which, out_path, examples=None):
    with tempfile.TemporaryDirectory() as tmp:
        dump, cache = os.path.join(tmp, "dump"), os.path.join(tmp, "cache")
        os.makedirs(dump)
        os.makedirs(cache)
        # CUTE_DSL_LINEINFO adds .file/.loc lines (source locations in weft's reports) and
        # changes no instruction.
        env = dict(os.environ, CUTE_DSL_ARCH=arch_of(which), CUTE_DSL_KEEP="ptx", CUTE_DSL_LINEINFO="1",
                   CUTE_DSL_DUMP_DIR=dump, CUTE_DSL_CACHE_DIR=cache)
        child = [sys.executable, __file__, "--child", which]
        if examples:
            child.append(os.path.abspath(examples))
        subprocess.run(child, env=env, stdout=subprocess.DEVNULL, check=True)
        ptx = glob.glob(os.path.join(dump, "*.ptx"))
        if len(ptx) != 1:
            raise SystemExit(f"expected one PTX in the dump directory, found {ptx}")
        shutil.copy(ptx[0], out_path)
        print(os.path.basename(ptx[0]))


if __name__ == "__main__":
    if sys.argv[1] == "--child":
        build(*sys.argv[2:])
    else:
        main(*sys.argv[1:])
