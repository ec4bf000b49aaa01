"""CuTe DSL kernels for the tests, compiled for sm_90a without a GPU (fake tensors,
CUTE_DSL_ARCH). ``pipeline_ws``: warp 0 fills a 4-stage shared-memory ring through the DSL's
``cutlass.pipeline.PipelineAsync`` (full/empty mbarriers), warp 1 drains it; correct.
``release_early=True`` is the seeded bug: the consumer releases a stage to the producer
before reading it, so the producer's next write to that stage races with the read."""

import os

os.environ.setdefault("CUTE_DSL_ARCH", "sm_90a")

import cutlass  # noqa: E402
import cutlass.cute as cute  # noqa: E402
import cutlass.pipeline as pipeline  # noqa: E402
from cutlass.cute.runtime import make_fake_compact_tensor  # noqa: E402

STAGES = 4
N_ITERS = 8


def compile_pipeline_ws(release_early: bool):
    @cute.kernel
    def pipeline_ws_kernel(gIn: cute.Tensor, gOut: cute.Tensor):
        tidx, _, _ = cute.arch.thread_idx()
        warp = cute.arch.make_warp_uniform(cute.arch.warp_idx())
        lane = tidx % 32
        smem = cutlass.memory.SmemAllocator()
        buf = smem.allocate_tensor(cutlass.Float32, cute.make_layout((32, STAGES)), byte_alignment=16)
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
                if cutlass.const_expr(release_early):
                    h.release()
                    gOut[lane, i] = buf[lane, h.index] * 2.0
                else:
                    gOut[lane, i] = buf[lane, h.index] * 2.0
                    h.release()

    @cute.jit
    def pipeline_ws(mIn: cute.Tensor, mOut: cute.Tensor):
        pipeline_ws_kernel(mIn, mOut).launch(grid=(1, 1, 1), block=(64, 1, 1))

    t = [make_fake_compact_tensor(cutlass.Float32, (32, N_ITERS), assumed_align=16) for _ in range(2)]
    return cute.compile[cute.KeepPTX](pipeline_ws, *t)
