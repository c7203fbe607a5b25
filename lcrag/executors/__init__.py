"""Executors that run a study's reader calls beyond one process.

* :mod:`.governor` — one budget cap and per-endpoint 429 cool-downs shared by every worker
  (in-process, or held by one Ray actor);
* :mod:`.shards` — deterministic, length-balanced sharding of a task list, per-shard cache and
  results files, and the merge step that makes strict replay work afterwards;
* :mod:`.ray_executor` — ``lcrag run STUDY --executor ray``: shards over Ray workers
  (optional extra ``lcrag[ray]``; nothing here imports Ray unless that executor is used).
"""
