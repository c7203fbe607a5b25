"""Small file helpers every layer uses: atomic writes (:mod:`.atomicio`), text and YAML reading (:mod:`.textio`,
:mod:`.yamlsafe`, :mod:`.yamlpos`: lines of YAML keys for error messages), SQLite in WAL mode (:mod:`.sqlitewal`),
the key scrubber of every writer (:mod:`.keyshapes`) and compaction of a results file (:mod:`.compaction`)."""
