"""Read UTF-8 text files so that a wrong encoding is an ``InputError`` naming the file and line.

Every lcrag loader reads UTF-8. A UTF-8 byte-order mark (BOM, as written by Excel or Notepad) at
the start of a file is accepted and dropped. Bytes that are not UTF-8 — latin-1 / cp1252 text,
UTF-16 (with or without its BOM) — raise :class:`lcrag.errors.InputError` naming the file, the
1-based line of the first bad byte, and the remedy (re-save the file as UTF-8). Line ends are
read like Python's text mode: ``\\r\\n`` becomes ``\\n``. A missing file still raises
``FileNotFoundError`` (an ``OSError``), as ``open`` does. A path that is not a regular file — a named pipe, a
device such as ``/dev/zero``, a directory, a socket, a symbolic-link loop — is an ``InputError`` saying what it is
(:func:`file_problem`), checked before anything is read, so a pipe cannot block and a device cannot fill memory.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..errors import ConfigError, InputError

UTF8_BOM = b"\xef\xbb\xbf"
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


def _decode_error(path: str | Path, chunk: bytes, exc: UnicodeDecodeError, line: int) -> InputError:
    utf16 = chunk.startswith(_UTF16_BOMS) or b"\x00" in chunk[:4096]
    kind = "UTF-16 text" if utf16 else "not UTF-8 text (latin-1/cp1252?)"
    return InputError(path, f"{kind}: {exc.reason} at byte {exc.start}; re-save the file as UTF-8", line=line)


def file_problem(path: str | Path) -> str | None:
    """What ``path`` is when it is not a regular file lcrag can read, or None for a regular file (module doc)."""
    import errno
    import os
    import stat

    try:
        st = os.stat(path)
    except FileNotFoundError:
        return "file not found" + (" (a symbolic link to a missing file)" if os.path.islink(path) else "")
    except OSError as e:
        if e.errno == errno.ELOOP:
            return "a loop of symbolic links (a link that leads back to itself); fix or remove the link"
        if e.errno == errno.EACCES:
            return "permission denied"
        if e.errno == errno.ENOTDIR:
            return "file not found (a parent of the path is a file, not a folder)"
        return f"cannot be read: {e.strerror or e}"
    m = st.st_mode
    if stat.S_ISREG(m):
        return None
    kind = ("a folder" if stat.S_ISDIR(m) else "a named pipe (FIFO)" if stat.S_ISFIFO(m) else
            "a character device" if stat.S_ISCHR(m) else "a block device" if stat.S_ISBLK(m) else
            "a socket" if stat.S_ISSOCK(m) else "not a regular file")
    return f"is {kind}, not a regular file; give the path of a data file"


def check_file(path: str | Path) -> None:
    """Raise ``InputError`` when ``path`` exists but is not a readable regular file (missing: ``FileNotFoundError``)."""
    bad = file_problem(path)
    if bad is None:
        return
    if bad.startswith("file not found"):
        raise FileNotFoundError(2, "No such file or directory", str(path))
    raise InputError(path, bad)


def read_text(path: str | Path) -> str:
    """The whole file as text (UTF-8, optional BOM dropped, ``\\r\\n`` -> ``\\n``)."""
    check_file(path)
    data = Path(path).read_bytes()
    if data.startswith(UTF8_BOM):
        data = data[len(UTF8_BOM):]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise _decode_error(path, data, e, data.count(b"\n", 0, e.start) + 1) from None
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def iter_lines(path: str | Path) -> Iterator[tuple[int, str]]:
    """``(1-based line number, line)`` of a UTF-8 file, streamed; each line keeps its ``\\n``."""
    check_file(path)
    with open(path, "rb") as f:
        for n, raw in enumerate(f, 1):
            if n == 1 and raw.startswith(UTF8_BOM):
                raw = raw[len(UTF8_BOM):]
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                raise _decode_error(path, raw, e, n) from None
            yield n, (line[:-2] + "\n" if line.endswith("\r\n") else line)


def read_yaml(path: str | Path) -> tuple[Any, str]:
    """``(document, text)`` of a YAML parameter file; bad YAML is a ``ConfigError`` naming the file and line."""
    import yaml

    from .yamlsafe import load as load_bounded  # duplicate keys, alias bombs and deep nesting are errors

    text = read_text(path)
    try:
        return load_bounded(text), text
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        raise ConfigError(path, f"invalid YAML: {getattr(e, 'problem', None) or e}",
                          line=(mark.line + 1) if mark else None, field=getattr(e, "field", None)) from None
    except ValueError as e:  # PyYAML lets a few bad escapes through as ValueError (e.g. "\\U00110000")
        raise ConfigError(path, f"invalid YAML: {e}") from None


def iter_jsonl(path: str | Path, *, what: str = "a JSON object") -> Iterator[tuple[int, dict]]:
    """``(1-based line number, object)`` for each non-blank line of a JSONL file.

    A line that is not valid JSON, or not an object, raises ``InputError`` naming the file and line.
    """
    import json

    for n, line in iter_lines(path):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            raise InputError(path, f"not valid JSON: {e.msg} (column {e.colno})", line=n) from None
        except RecursionError:  # e.g. metadata nested 100,000 levels deep
            raise InputError(path, "JSON nested too deeply to read (more than ~1,000 levels of objects/lists)",
                             line=n) from None
        if not isinstance(obj, dict):
            raise InputError(path, f"expected {what}, got {type(obj).__name__}", line=n)
        yield n, obj


def read_json(path: str | Path) -> Any:
    """A whole-file JSON document; invalid JSON is an ``InputError`` naming the file and line."""
    import json

    try:
        return json.loads(read_text(path))
    except json.JSONDecodeError as e:
        raise InputError(path, f"invalid JSON: {e.msg}", line=e.lineno) from None
    except RecursionError:
        raise InputError(path, "JSON nested too deeply to read (more than ~1,000 levels of objects/lists)") from None
