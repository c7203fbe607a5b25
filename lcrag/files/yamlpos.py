"""Positions in YAML text: the 1-based line of a field, for error messages that name file, line and field.

Low-level and free of lcrag imports beyond the standard YAML parser, so that every loader of a YAML file
(study configs, reader profiles, prompt templates, reproduce plans, variant files) can point at the line a
user has to fix.
"""

from __future__ import annotations

import yaml


def node_line(text: str, field: str | None) -> int | None:
    """1-based line of the YAML node at the dotted ``field`` path (or of its nearest parent that exists).

    ``field`` uses dots for mapping keys and ``[i]`` for sequence items (0-based), e.g. ``"rag.k[1]"``;
    the line is that of the mapping key (for a key) or of the item (for an item). ``None`` when the text
    is not YAML, is empty, or not even the first part of the path exists.
    """
    try:
        node = yaml.compose(text)
    except yaml.YAMLError:
        return None
    if node is None:
        return None
    line = None
    parts = [p for p in (field or "").replace("[", ".[").split(".") if p]
    for p in parts:
        if isinstance(node, yaml.MappingNode):
            nxt = next(((k, v) for k, v in node.value if getattr(k, "value", None) == p), None)
            if nxt is None:
                break
            line, node = nxt[0].start_mark.line + 1, nxt[1]
        elif isinstance(node, yaml.SequenceNode) and p.startswith("["):
            i = int(p.strip("[]"))
            if i >= len(node.value):
                break
            node = node.value[i]
            line = node.start_mark.line + 1
        else:
            break
    return line
