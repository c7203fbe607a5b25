"""Loopback fakes of the endpoints lcrag calls, for tests and benchmarks only (not part of the installed package).

``faultserver.FaultServer``: an OpenAI-compatible chat / embeddings endpoint with per-request faults;
``batchserver.FakeBatchServer``: the Files and Batches endpoints. Tests import them as ``fakes.<module>``
(pytest puts ``tests/`` on the path); ``benchmarks/`` scripts add the checkout's ``tests/`` to ``sys.path``.
"""
