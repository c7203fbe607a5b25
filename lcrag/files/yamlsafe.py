"""A bounded YAML loader for parameter files: duplicate keys, alias bombs and deep nesting are errors.

PyYAML's ``safe_load`` lets the last of two equal keys win silently (a second ``prompts:`` runs the wrong
prompt), and expands aliases without limit (a "billion laughs" document of a few lines in ``extra_body``
becomes gigabytes once anything walks it). :func:`load` is ``safe_load`` with three limits:

* **Duplicate keys**: two equal scalar keys in one mapping raise :class:`YAMLLimitError` at the second one's
  line (merge keys ``<<`` may still be overridden by an explicit key, as YAML intends).
* **Expanded size**: the document's node count with every alias expanded (each reference counted in full,
  computed once per node, so the check itself is linear in the text) may not exceed ``MAX_NODES``.
* **Nesting depth**: at most ``MAX_DEPTH`` levels of mappings and sequences (deeper input would exhaust
  Python's recursion limit in the parser and in every consumer).

Lines in errors are 1-based, as everywhere in lcrag.
"""

from __future__ import annotations

from typing import Any

import yaml

MAX_NODES = 1_000_000  # scalars + collections after alias expansion; a large study file has a few thousand
MAX_DEPTH = 100  # nested mappings/sequences; parameter files use fewer than ten


class YAMLLimitError(yaml.YAMLError):
    """A document that breaks one of the limits; ``problem_mark`` is where (``line`` is 0-based, as in PyYAML)."""

    def __init__(self, problem: str, mark: yaml.Mark | None, field: str | None = None):
        super().__init__(problem)
        self.problem = problem
        self.problem_mark = mark
        self.field = field

    def __str__(self) -> str:
        where = f" (line {self.problem_mark.line + 1})" if self.problem_mark is not None else ""
        return f"{self.problem}{where}"


class BoundedLoader(yaml.SafeLoader):
    """``SafeLoader`` that refuses duplicate keys, deep nesting and alias expansion above the limits."""

    max_depth = MAX_DEPTH

    def __init__(self, stream):
        super().__init__(stream)
        self._depth = 0
        self._path: list[str] = []  # keys / [i] of the collections being composed, for the error's field

    def compose_node(self, parent, index):  # noqa: D401 - PyYAML hook
        step = (f"[{index}]" if isinstance(index, int) else getattr(index, "value", None)) if parent is not None else None
        if step is not None:
            self._path.append(str(step))
        try:
            if self.check_event(yaml.MappingStartEvent, yaml.SequenceStartEvent):
                self._depth += 1
                try:
                    if self._depth > self.max_depth:
                        raise YAMLLimitError(f"nesting deeper than {self.max_depth} levels", self.peek_event().start_mark,
                                             field=field_of(self._path[:6]) + ("…" if len(self._path) > 6 else "")
                                             if self._path else None)
                    return super().compose_node(parent, index)
                finally:
                    self._depth -= 1
            return super().compose_node(parent, index)
        finally:
            if step is not None:
                self._path.pop()

    def construct_mapping(self, node, deep=False):
        if isinstance(node, yaml.MappingNode):
            seen: dict[tuple[str, str], yaml.Mark] = {}
            for key_node, _ in node.value:
                if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == "tag:yaml.org,2002:merge":
                    continue
                k = (key_node.tag, key_node.value)
                if k in seen:
                    raise YAMLLimitError(f"duplicate key {key_node.value!r} (first on line {seen[k].line + 1}); "
                                         f"keep one", key_node.start_mark, field=key_node.value)
                seen[k] = key_node.start_mark
        return super().construct_mapping(node, deep=deep)


def field_of(path: list[str]) -> str | None:
    """``["readers", "[0]", "extra_body"]`` -> ``"readers[0].extra_body"`` (None for the document itself)."""
    out = ""
    for p in path:
        out += p if p.startswith("[") or not out else f".{p}"
    return out or None


def _path_to(root: yaml.Node, target: yaml.Node) -> str | None:
    """Dotted field of the first way from ``root`` to ``target`` (each node visited once)."""
    seen: set[int] = set()
    stack: list[tuple[yaml.Node, list[str]]] = [(root, [])]
    while stack:
        n, path = stack.pop()
        if n is target:
            return field_of(path)
        if id(n) in seen:
            continue
        seen.add(id(n))
        if isinstance(n, yaml.MappingNode):
            stack.extend((v, [*path, str(k.value)]) for k, v in reversed(n.value))
        elif isinstance(n, yaml.SequenceNode):
            stack.extend((v, [*path, f"[{i}]"]) for i, v in reversed(list(enumerate(n.value))))
    return None


def expanded_size(node: yaml.Node, limit: int = MAX_NODES) -> int:
    """Node count of ``node`` with aliases expanded (memoised per node); raises ``YAMLLimitError`` above ``limit``."""
    sizes: dict[int, int] = {}
    open_: set[int] = set()  # nodes whose children are being sized: meeting one again is a recursive alias
    # iterative post-order walk: shared (aliased) nodes are sized once and counted at every reference
    stack: list[tuple[yaml.Node, bool]] = [(node, False)]
    while stack:
        n, done = stack.pop()
        if id(n) in sizes:
            continue
        kids = ([x for kv in n.value for x in kv] if isinstance(n, yaml.MappingNode)
                else list(n.value) if isinstance(n, yaml.SequenceNode) else [])
        if done or not kids:
            open_.discard(id(n))
            total = 1 + sum(sizes.get(id(k), 0) for k in kids)
            if total > limit:
                raise YAMLLimitError(f"the document expands to more than {limit:,} values through its aliases "
                                     f"(&anchor/*alias); write the values out or reduce the references", n.start_mark,
                                     field=_path_to(node, n))
            sizes[id(n)] = total
            continue
        if id(n) in open_:
            raise YAMLLimitError("a recursive alias (a value that contains itself)", n.start_mark)
        open_.add(id(n))
        stack.append((n, True))
        stack.extend((k, False) for k in kids if id(k) not in sizes)
    return sizes[id(node)]


def load(text: str, *, max_nodes: int = MAX_NODES) -> Any:
    """``yaml.safe_load(text)`` under the limits of the module doc (``YAMLLimitError``, a ``yaml.YAMLError``)."""
    loader = BoundedLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        expanded_size(node, max_nodes)
        return loader.construct_document(node)
    finally:
        loader.dispose()
