# Compiles every kernel of kernels.py for sm_90a and sm_100a, as a Triton test suite would;
# weft's hook (conftest.py) verifies each one. Only the named barrier with 64 of the
# CTA's 128 threads has a violation.
import pytest

import kernels

caps = pytest.mark.parametrize("capability", kernels.CAPABILITIES)


@caps
def test_matmul_ws(capability):
    kernels.compile_matmul_ws(capability)


@caps
def test_row_sum(capability):
    kernels.compile_row_sum(capability)


@caps
def test_named_barrier(capability):
    kernels.compile_named_barrier(capability, 128)


@caps
def test_named_barrier_half_the_cta(capability):
    kernels.compile_named_barrier(capability, 64)
