"""The kernels ``lcrag reproduce`` starts talk over Unix sockets on POSIX, not TCP ports picked ahead.

jupyter_client picks free TCP ports in the parent and the kernel binds them later; two workers'
kernels starting at once could collide ("Address already in use", kernel died before replying to
kernel_info). A real kernel is started and asked for its info over the ipc sockets.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
from pathlib import Path

import pytest

from lcrag.reproduction.kernels import kernel_manager_logging_to

pytestmark = pytest.mark.skipif(os.name != "posix", reason="ipc transport is POSIX-only; TCP is kept elsewhere")


def test_kernel_sockets_are_unix_sockets_per_kernel_under_tmp(tmp_path):
    cls = kernel_manager_logging_to(tmp_path / "k.log")
    a, b = cls(), cls()
    assert (a.transport, b.transport) == ("ipc", "ipc")
    assert a.ip != b.ip
    assert Path(a.ip).parent == Path(tempfile.gettempdir())


def test_a_real_kernel_answers_over_ipc_and_leaves_no_socket_files(tmp_path):
    km = kernel_manager_logging_to(tmp_path / "k.log")(kernel_name="python3")

    async def run():
        await km.start_kernel()
        kc = km.client()
        kc.start_channels()
        try:
            await kc.wait_for_ready(timeout=60)
            reply = await kc.kernel_info(reply=True, timeout=30)
            return reply["content"]["status"]
        finally:
            kc.stop_channels()
            await km.shutdown_kernel(now=True)

    assert asyncio.run(run()) == "ok"
    assert not list(Path(km.ip).parent.glob(Path(km.ip).name + "-*"))
