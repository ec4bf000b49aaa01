import sys
from pathlib import Path

# kernels.py (the Triton kernels) is imported by the tests as a plain module.
sys.path.insert(0, str(Path(__file__).parent))

# hook_demo/ is a test suite of its own, run in a child pytest by test_triton.py (it must
# fail on its buggy kernel), not collected here.
collect_ignore = ["hook_demo"]
