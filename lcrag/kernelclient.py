"""The kernel client of ``lcrag reproduce``'s notebooks: ready as soon as the kernel has answered.

jupyter_client's ``wait_for_ready`` sends ``kernel_info`` until the kernel replies and IOPub delivers a
message, then flushes IOPub until no message has arrived for 0.2 s. That closing silence is waited for on
every kernel start, a core left idle for 0.2 s per notebook (``benchmarks/bench_kernel_start.py``: a forked
kernel ready in 0.22 s with this client, 0.40 s with jupyter_client's wait, the kernel's own CPU time to
ready 0.09 s either way). :class:`ReadyKernelClient` waits the same way up to the IOPub
check, then drops only the IOPub messages already received. Nothing that arrives later can reach a cell:
nbclient keeps, of IOPub, only the messages whose parent is the request of the cell it executes.
"""

from __future__ import annotations

import time
from queue import Empty

from jupyter_client.asynchronous import AsyncKernelClient
from jupyter_client.utils import ensure_async


class ReadyKernelClient(AsyncKernelClient):
    """``AsyncKernelClient`` whose ``wait_for_ready`` does not wait for 0.2 s of IOPub silence at the end."""

    async def wait_for_ready(self, timeout: float | None = None) -> None:
        """Send ``kernel_info`` until the kernel replies on the shell channel and IOPub is connected (a
        message arrives on it within 0.2 s), as jupyter_client does; then drop the IOPub messages already
        received. Raises ``RuntimeError`` when the kernel dies first or ``timeout`` seconds pass."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            self.kernel_info()
            try:
                msg = await ensure_async(self.shell_channel.get_msg(timeout=1))
            except Empty:
                msg = None
            if msg is not None and msg["msg_type"] == "kernel_info_reply":
                try:
                    await ensure_async(self.iopub_channel.get_msg(timeout=0.2))
                except Empty:
                    pass  # IOPub not connected yet: ask again
                else:
                    self._handle_kernel_info_reply(msg)
                    break
            if not await self._async_is_alive():
                raise RuntimeError("Kernel died before replying to kernel_info")
            if deadline is not None and time.monotonic() > deadline:
                raise RuntimeError(f"Kernel didn't respond in {timeout:.0f} seconds")
        while True:  # what start-up sent (its status messages): dropped without waiting for more
            try:
                await ensure_async(self.iopub_channel.get_msg(timeout=0))
            except Empty:
                break
