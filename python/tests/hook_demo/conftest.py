# A Triton project's test suite with weft's hook: every kernel Triton compiles while these
# tests run is verified, and a kernel with a violation fails its test.
import sys
from pathlib import Path

import weft.triton

sys.path.insert(0, str(Path(__file__).parent.parent))  # kernels.py

weft.triton.enable()  # mode="raise"
