"""What a run leaves for a reader: reports, exports, views, plots, the scoreboard, the figures index, output checks.

* :mod:`.save` — ``save_table`` / ``save_figure`` with provenance; :mod:`.plots` — figure helpers;
* :mod:`.report` (``lcrag report RUN``), :mod:`.views` (the tables behind it), :mod:`.breakdowns`, :mod:`.paired`,
  :mod:`.position`, :mod:`.usage`, :mod:`.html` (one offline page);
* :mod:`.show` (``lcrag show``), :mod:`.runview` (``lcrag.open_run``), :mod:`.compare` (``lcrag compare``),
  :mod:`.richhtml` (their shared HTML pieces);
* :mod:`.export` and :mod:`.eee_export` (``lcrag export``);
* :mod:`.scoreboard` (paper values against ours), :mod:`.figures_index`, :mod:`.runsummary`,
  :mod:`.fidelity_doc` (``docs/fidelity.md``), :mod:`.checks` (what an executed notebook must hold).

This layer sits above the engine (:mod:`lcrag.experiment`): it reads run directories and rows; the engine never
imports it.
"""
