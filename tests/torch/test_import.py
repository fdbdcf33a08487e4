"""``import fairot`` (and its non-torch packages) must not import torch; fairot.torch does."""

import subprocess
import sys

import pytest


@pytest.mark.integration
def test_fairot_does_not_import_torch():
    code = (
        "import sys, fairot, fairot.classification, fairot.experiments, fairot.metrics; "
        "assert 'torch' not in sys.modules, 'torch imported'; "
        "import fairot.torch; assert 'torch' in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
