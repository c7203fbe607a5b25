"""Your own study: bring your own questions, documents and models (issue 10).

* :mod:`.schema` — the item schema (JSONL) and its validating loader;
* :mod:`.convert` — the built-in benchmarks expressed in that schema;
* :mod:`.example` — a small generated example corpus with two-hop questions;
* :mod:`.config` — the study YAML (pydantic), validated before any work;
* :mod:`.contexts` — LC haystacks and RAG contexts with gold lines from evidence spans;
* :mod:`.layouts` — RAG chunk orders (score, document, reverse, both ends) and LC fillers (shuffled, masked);
* :mod:`.route` — Self-Route rows (RAG, LC on abstention) composed from the two conditions' rows;
* :mod:`.conditions` — one study with every condition (notebook ``20_conditions``);
* :mod:`.study` — builds, runs and scores every condition (``lcrag run``);
* :mod:`.report` — the standard views of any run (``lcrag report``).

Extension points are in :mod:`lcrag.registry`.
"""
