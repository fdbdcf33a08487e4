"""keep_freed_memory: glibc stops faulting freed blocks in again (checked in a child process).

torch's CPU allocator, unlike NumPy's, does not ask for transparent huge pages, so each 4 KiB page
of a block that glibc returned to the kernel faults in again. With the memory kept, a block is
reused, except now and then when a small allocation splits the freed block (heap fragmentation:
measured 1, 3 or 5 blocks faulted over 20 rounds, where the default faults all 20).
"""

import subprocess
import sys

import pytest

ROUNDS = 20
CHILD = f"""
import resource, sys
import torch
from fairot.face import keep_freed_memory

kept = keep_freed_memory() if sys.argv[1] == "keep" else False
torch.ones(2**25).sum()  # a first 128 MiB block: faulted in either way
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range({ROUNDS}):
    torch.ones(2**25).sum()
print(kept, resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


def _page_faults(mode: str) -> tuple[bool, int]:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, mode], check=True, capture_output=True, text=True
    ).stdout.split()
    return out[0] == "True", int(out[1])


@pytest.mark.integration
def test_kept_memory_is_not_faulted_in_again():
    kept, faults_kept = _page_faults("keep")
    if not kept:
        pytest.skip("not glibc: keep_freed_memory changes nothing here")
    _, faults_default = _page_faults("default")
    pages_per_block = 2**27 // 4096
    # the default faults every block in again
    assert faults_default > (ROUNDS - 1) * pages_per_block
    # kept: reused, but for the odd block fragmentation splits (a quarter of the rounds at most)
    assert faults_kept <= ROUNDS / 4 * pages_per_block
