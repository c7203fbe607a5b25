"""Run-time machinery a user feels: stopping cleanly, one run at a time, resuming, local servers.

* :mod:`lcrag.runtime.interrupts` — Ctrl-C / SIGTERM stop a sweep after writing every finished row
  (``RunInterrupted``, exit status 128 + signal number);
* :mod:`lcrag.runtime.runlock` — one run at a time per results file (a lock file naming its holder);
* :mod:`lcrag.runtime.resume` — may a stored result row be reused, or must its task run again;
* :mod:`lcrag.runtime.serverreg` and :mod:`lcrag.runtime.procs` — the registry of local llama.cpp servers
  per owner process, so none outlives the runs that use it;

``lcrag reproduce``'s notebook execution (plain papermill kernels, ``--jobs N`` worker processes) is in
:mod:`lcrag.reproduction`.

The package imports nothing at import time; import the module you need.
"""
