"""Starting or joining Ray (optional extra ``lcrag[ray]``): shared by the Ray executor
(:mod:`lcrag.executors.ray_executor`) and parallel corpus embedding (:mod:`lcrag.retrieval.faiss_index`),
so that neither layer imports the other for it.
"""

from __future__ import annotations

import os

from ..errors import LcragError


def require_ray():
    try:
        import ray
    except ImportError:  # pragma: no cover - depends on the install
        raise LcragError("the Ray executor needs the optional extra: pip install 'lcrag[ray]'") from None
    return ray


def init_ray(address: str | None = None, num_cpus: int | None = None, attempts: int = 3):
    """Connect to ``address`` (a running cluster, e.g. ``ray://head:10001`` or ``auto``) or start a local instance.

    A local start is tried up to ``attempts`` times: Ray gives a new node a fixed 30 s to come
    up, which a heavily loaded machine can miss.
    """
    ray = require_ray()
    if ray.is_initialized():
        return ray
    if address:
        ray.init(address=address, log_to_driver=False)
        return ray
    for attempt in range(attempts):
        try:
            ray.init(num_cpus=num_cpus or os.cpu_count() or 1, include_dashboard=False, log_to_driver=False)
            return ray
        except Exception as e:
            ray.shutdown()
            if attempt == attempts - 1 or "timed out during startup" not in str(e):
                raise
    return ray
