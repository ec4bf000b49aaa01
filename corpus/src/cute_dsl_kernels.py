"""Compile CuTe DSL (pip package nvidia-cutlass-dsl) kernels to PTX without a GPU.

`cute.compile` needs no device when its arguments are fake tensors
(`cutlass.cute.runtime.make_fake_compact_tensor`) and the target comes from
CUTE_DSL_ARCH (it defaults to sm_100 when no GPU is found). CUTE_DSL_KEEP=ptx makes it
write `<CUTE_DSL_DUMP_DIR>/<function>.<arch>.ptx`; the file only appears once the compiling
process has exited, so the compile runs in a child process and the parent copies the PTX.
CUTE_DSL_CACHE_DIR points at a fresh directory so that a cached compile does not skip
the dump.

    python corpus/src/cute_dsl_kernels.py elementwise-add OUT.ptx
    python corpus/src/cute_dsl_kernels.py pipeline-ws OUT.ptx

- elementwise-add: `naive_elementwise_add` from the CuTe DSL notebook
  examples/python/CuTeDSL/notebooks/elementwise_add.ipynb (shipped in the nvidia-cutlass
  package), 2048x2048 fp16, 256 threads, no synchronization.
- pipeline-ws: a warp-specialized producer/consumer written here around the DSL's own
  `cutlass.pipeline.PipelineAsync` (the full/empty mbarrier ring that the DSL's Hopper and
  Blackwell GEMMs use): warp 0 fills a 4-stage shared-memory ring, warp 1 drains it.
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


def build(which):
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


def main(which, out_path):
    with tempfile.TemporaryDirectory() as tmp:
        dump, cache = os.path.join(tmp, "dump"), os.path.join(tmp, "cache")
        os.makedirs(dump)
        os.makedirs(cache)
        env = dict(os.environ, CUTE_DSL_ARCH=ARCH, CUTE_DSL_KEEP="ptx",
                   CUTE_DSL_DUMP_DIR=dump, CUTE_DSL_CACHE_DIR=cache)
        subprocess.run([sys.executable, __file__, "--child", which], env=env,
                       stdout=subprocess.DEVNULL, check=True)
        ptx = glob.glob(os.path.join(dump, "*.ptx"))
        if len(ptx) != 1:
            raise SystemExit(f"expected one PTX in the dump directory, found {ptx}")
        shutil.copy(ptx[0], out_path)
        print(os.path.basename(ptx[0]))


if __name__ == "__main__":
    if sys.argv[1] == "--child":
        build(sys.argv[2])
    else:
        main(sys.argv[1], sys.argv[2])
