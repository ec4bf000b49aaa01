# The Triton kernel that triton_row_sum.ptx imitates (the PTX is hand-written in the
# style of Triton's LLVM NVPTX output; this file only gives its `.loc` lines a source).
import triton
import triton.language as tl


@triton.jit
def row_sum_kernel(x_ptr, y_ptr, n_cols):
    # one program per row, BLOCK = 128 = num_warps * 32
    row = tl.program_id(0)
    offs = tl.arange(0, 128)
    mask = offs < n_cols
    x = tl.load(x_ptr + row * n_cols + offs, mask=mask, other=0.0)
    total = tl.sum(x, axis=0)
    y = x / total
    tl.store(y_ptr + row * n_cols + offs, y, mask=mask)
