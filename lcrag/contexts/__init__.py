"""What a reader is shown: haystacks of numbered lines (:mod:`.haystack`), the shared control conditions
(:mod:`.controls`: no context, oracle evidence), context layouts (:mod:`.layouts`: RAG chunk orders, LC filler
structures) and the rendering of LC haystacks and RAG contexts with gold lines from evidence spans
(:mod:`.render`), used by the ``lc-rag`` task builder and the study folders that build the same contexts."""
