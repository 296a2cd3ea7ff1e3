"""Fixtures shared by the test modules (pytest loads this file first)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture
def one_torch_thread() -> Iterator[None]:
    """One PyTorch intra-op thread during the test, restored after: small networks and single
    observations run fastest so on a shared CPU, and the other core stays free. Modules that
    need it say ``pytestmark = pytest.mark.usefixtures("one_torch_thread")``."""
    torch = pytest.importorskip("torch")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
