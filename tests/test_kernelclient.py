"""lcrag.kernelclient: the client nbclient gets from lcrag's kernel managers is ready once the kernel has
answered, and a cell executed right after sees only its own output (real kernels, as new processes)."""

from __future__ import annotations

import asyncio

from nbclient import NotebookClient
import nbformat

from lcrag.kernelclient import ReadyKernelClient
from lcrag.reproduce import kernel_manager_logging_to


def test_the_managers_hand_out_the_ready_client_and_it_waits_for_a_real_kernel(tmp_path):
    km = kernel_manager_logging_to(tmp_path / "k.log")(kernel_name="python3")

    async def run():
        await km.start_kernel(cwd=str(tmp_path))
        kc = km.client()
        kc.start_channels()
        try:
            assert isinstance(kc, ReadyKernelClient)
            await kc.wait_for_ready(timeout=60)
            msg_id = kc.execute("print('first cell')")
            outputs = []
            while True:  # everything on IOPub from here on, as nbclient reads it, unfiltered
                msg = await kc.iopub_channel.get_msg(timeout=30)
                outputs.append((msg["parent_header"].get("msg_id"), msg["msg_type"], msg["content"]))
                if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle" \
                        and msg["parent_header"].get("msg_id") == msg_id:
                    break
            return msg_id, outputs
        finally:
            kc.stop_channels()
            await km.shutdown_kernel(now=True)

    msg_id, outputs = asyncio.run(run())
    streams = [c["text"] for parent, kind, c in outputs if kind == "stream"]
    assert streams == ["first cell\n"]
    # only status messages of start-up's own requests may still arrive after the wait (nbclient keeps only the
    # messages of the cell it executes); everything else read here is the cell's
    assert all(parent == msg_id for parent, kind, c in outputs if kind != "status")


def test_a_notebook_executed_through_the_manager_keeps_exactly_its_cells_outputs(tmp_path):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print('a')"),
                                         nbformat.v4.new_code_cell("import sys; print('b', file=sys.stderr); 1 + 1")])
    km = kernel_manager_logging_to(tmp_path / "k.log")(kernel_name="python3")

    client = NotebookClient(nb, km=km, timeout=60, resources={"metadata": {"path": str(tmp_path)}})

    async def run():
        try:
            await client.async_execute()
        finally:
            # nbclient leaves the client of a manager it was handed running (owns_km is False); stopped here, or
            # its channels outlive the test and jupyter_client warns when the garbage collector reaches it
            if client.kc is not None:
                client.kc.stop_channels()
            if km.has_kernel:
                await km.shutdown_kernel(now=True)

    asyncio.run(run())
    first, second = (c["outputs"] for c in nb.cells)
    assert [(o["output_type"], o.get("text")) for o in first] == [("stream", "a\n")]
    assert [o["output_type"] for o in second] == ["stream", "execute_result"]
    assert second[0]["name"] == "stderr" and second[0]["text"] == "b\n"
    assert second[1]["data"]["text/plain"] == "2"
