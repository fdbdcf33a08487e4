"""Shared fixtures of the face tests: one fork server for the tests that run child processes."""

import multiprocessing

import pytest


@pytest.fixture(scope="session")
def forkserver():
    """A forkserver context whose server imported torch once: each child starts in milliseconds.

    (torch._dynamo: torch.optim.SGD imports it lazily, seconds on a busy machine.)
    """
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(
        [
            "torch",
            "torch._dynamo",
            "torch.distributed",
            "fairot.face",
            "fairot.cli",
            "tests.face.test_checkpoint",
            "tests.face.test_distributed",
        ]
    )
    return context
