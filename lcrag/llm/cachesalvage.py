"""Reading response-cache rows straight from SQLite's b-tree pages, for caches SQLite itself cannot open.

SQLite stores the ``responses`` table as a b-tree of fixed-size pages. A truncated file loses the pages past
its end, a damaged header loses the page size and schema, a page overwritten mid-file loses that page: in each
case SQLite's own traversal stops at the first bad interior page and reads nothing below it, although every
leaf page that survives still holds whole rows. This module reads those leaf pages one by one, as SQLite's
recovery extension (``sqlite3_recover``) does, without needing the damaged file's header or interior pages:

* **Page size.** From the file header (bytes 16–17) when it is SQLite's; otherwise each power of two from 512
  to 65,536 is tried and the one under which the most pages parse as table leaves wins.
* **Leaf cells.** Every page whose first byte is ``0x0D`` (a table b-tree leaf; page 1 after its 100-byte file
  header) is parsed cell by cell (payload size, rowid, record header, values); a payload that spills over goes
  through its chain of overflow pages. A cell that does not parse is skipped, never guessed.
* **WAL.** The frames of ``<file>-wal`` (when it exists) are read as pages too, each later frame of a page
  replacing the earlier one, so rows written since the last checkpoint are found as well.
* **Index keys.** The leaf pages of the table's key index (``0x0A``) list the key of every row; the keys found
  there and in no readable row are the rows known to be lost (a lower bound: a row whose table and index pages
  were both lost leaves no trace).

Only rows with the ``responses`` shape (five or six values: key, created, model, request, response[, seal])
are returned; :func:`lcrag.llm.cachecheck.recover` then keeps only those whose key is the hash of their
request, so a half-read or foreign row is dropped, never invented.
"""

from __future__ import annotations

import mmap
import struct
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

HEADER = b"SQLite format 3\x00"
WAL_MAGIC = (0x377F0682, 0x377F0683)
PAGE_SIZES = tuple(1 << k for k in range(9, 17))


def _varint(b: bytes, i: int) -> tuple[int, int]:
    """SQLite's big-endian variable-length integer at ``b[i:]``: (value, next offset); IndexError past the end."""
    v = 0
    for k in range(8):
        c = b[i + k]
        v = (v << 7) | (c & 0x7F)
        if c < 0x80:
            return v, i + k + 1
    return (v << 8) | b[i + 8], i + 9


def _record(payload: bytes) -> list | None:
    """The values of one SQLite record, or None when it does not parse."""
    try:
        hlen, i = _varint(payload, 0)
        if hlen < 1 or hlen > len(payload):
            return None
        types = []
        while i < hlen:
            t, i = _varint(payload, i)
            types.append(t)
        if i != hlen:
            return None
        out: list = []
        j = hlen
        for t in types:
            if t == 0:
                out.append(None)
            elif 1 <= t <= 6:
                n = (1, 2, 3, 4, 6, 8)[t - 1]
                if j + n > len(payload):
                    return None
                out.append(int.from_bytes(payload[j:j + n], "big", signed=True))
                j += n
            elif t == 7:
                if j + 8 > len(payload):
                    return None
                out.append(struct.unpack(">d", payload[j:j + 8])[0])
                j += 8
            elif t in (8, 9):
                out.append(t - 8)
            elif t >= 12:
                n = (t - 12) // 2
                if j + n > len(payload):
                    return None
                raw = payload[j:j + n]
                if t % 2:
                    try:
                        out.append(raw.decode("utf-8"))
                    except UnicodeDecodeError:
                        return None
                else:
                    out.append(bytes(raw))
                j += n
            else:
                return None
        return out if j == len(payload) else None
    except IndexError:
        return None


@dataclass
class Salvage:
    """What :func:`scan` found: ``rows`` (value lists of the table's leaf cells, possibly several versions of
    one key), ``index_keys`` (keys listed in the key index's leaf pages), ``page_size``, ``pages`` read."""

    rows: list[list] = field(default_factory=list)
    index_keys: set[str] = field(default_factory=set)
    page_size: int = 0
    pages: int = 0


class _Pages:
    """Page images by page number: the main file's, replaced by the WAL's later frames."""

    def __init__(self, main, ps: int, wal: bytes | None):
        self.main, self.ps = main, ps
        self.latest: dict[int, bytes] = {}
        self.frames: list[tuple[int, bytes]] = []  # every WAL frame, older versions included
        if wal and len(wal) >= 32 and struct.unpack(">I", wal[:4])[0] in WAL_MAGIC:
            wps = struct.unpack(">I", wal[8:12])[0]
            if wps == ps:
                off = 32
                while off + 24 + ps <= len(wal):
                    pno = struct.unpack(">I", wal[off:off + 4])[0]
                    img = wal[off + 24:off + 24 + ps]
                    if pno:
                        self.latest[pno] = img
                        self.frames.append((pno, img))
                    off += 24 + ps

    def get(self, pno: int) -> bytes | None:
        if pno in self.latest:
            return self.latest[pno]
        a = (pno - 1) * self.ps
        if pno < 1 or a + self.ps > len(self.main):
            return None
        return self.main[a:a + self.ps]

    def count(self) -> int:
        return len(self.main) // self.ps

    def images(self) -> Iterator[tuple[int, bytes]]:
        for pno in range(1, self.count() + 1):
            yield pno, self.main[(pno - 1) * self.ps:pno * self.ps]
        yield from self.frames


def _cells(img: bytes, pno: int, usable: int, pages: _Pages | None) -> Iterator[tuple[int, list]]:
    """(flag, values) of each parsable cell of a table leaf (0x0D), index leaf (0x0A) or index interior (0x02)
    page image."""
    h = 100 if pno == 1 else 0
    if len(img) < h + 8:
        return
    flag = img[h]
    if flag not in (0x0D, 0x0A, 0x02):
        return
    hs = 12 if flag == 0x02 else 8  # an interior page's header ends with its right-most child
    ncells = int.from_bytes(img[h + 3:h + 5], "big")
    if ncells == 0 or h + hs + 2 * ncells > len(img):
        return
    maxlocal = usable - 35 if flag == 0x0D else (usable - 12) * 64 // 255 - 23
    minlocal = (usable - 12) * 32 // 255 - 23
    for c in range(ncells):
        ptr = int.from_bytes(img[h + hs + 2 * c:h + hs + 2 + 2 * c], "big")
        if ptr < h + hs + 2 * ncells or ptr >= usable:
            continue
        try:
            if flag == 0x02:
                ptr += 4  # the left child's page number
            size, i = _varint(img, ptr)
            if flag == 0x0D:
                _rowid, i = _varint(img, i)
            if size > 1 << 30:
                continue
            if size <= maxlocal:
                if i + size > usable:
                    continue
                payload = img[i:i + size]
            else:
                k = minlocal + (size - minlocal) % (usable - 4)
                local = k if k <= maxlocal else minlocal
                if i + local + 4 > usable or pages is None:
                    continue
                parts = [img[i:i + local]]
                got = local
                nxt = int.from_bytes(img[i + local:i + local + 4], "big")
                seen = set()
                while got < size and nxt and nxt not in seen:
                    seen.add(nxt)
                    ov = pages.get(nxt)
                    if ov is None:
                        break
                    take = min(size - got, usable - 4)
                    parts.append(ov[4:4 + take])
                    got += take
                    nxt = int.from_bytes(ov[:4], "big")
                if got < size:
                    continue
                payload = b"".join(parts)
        except IndexError:
            continue
        vals = _record(payload)
        if vals is not None:
            yield flag, vals


def _guess_page_size(data: bytes, wal: bytes | None) -> int:
    """The page size under which the most cells of table leaves parse into ``responses`` rows, overflow chains
    followed (the header being unreadable; the first 4,096 pages are tried under each size)."""
    best, best_n = 4096, -1
    for ps in PAGE_SIZES:
        pages = _Pages(data, ps, wal)
        n = 0
        for pno in range(1, min(len(data) // ps, 4096) + 1):
            img = data[(pno - 1) * ps:pno * ps]
            if img[100 if pno == 1 else 0] == 0x0D:
                n += sum(1 for flag, vals in _cells(img, pno, ps, pages) if len(vals) in (5, 6))
        if n > best_n:
            best, best_n = ps, n
    return best


def scan(path: str | Path) -> Salvage:
    """Every parsable ``responses`` row in the file at ``path`` and its ``-wal`` (module doc)."""
    p = Path(path)
    with open(p, "rb") as f:  # mapped, not read: a cache of several GB is paged in as it is scanned
        try:
            data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        except ValueError:  # a zero-length file cannot be mapped
            data = b""
    walp = Path(str(p) + "-wal")
    wal = walp.read_bytes() if walp.is_file() else None
    ps, reserved = 0, 0
    if data[:16] == HEADER and len(data) >= 100:
        raw = int.from_bytes(data[16:18], "big")
        ps = 65536 if raw == 1 else raw
        reserved = data[20]
        if ps not in PAGE_SIZES or reserved > 64:
            ps, reserved = 0, 0
    if not ps and wal and len(wal) >= 32 and struct.unpack(">I", wal[:4])[0] in WAL_MAGIC:
        wps = struct.unpack(">I", wal[8:12])[0]
        ps = wps if wps in PAGE_SIZES else 0
    if not ps:
        ps = _guess_page_size(data, wal)
    pages = _Pages(data, ps, wal)
    out = Salvage(page_size=ps)
    usable = ps - reserved
    for pno, img in pages.images():
        out.pages += 1
        for flag, vals in _cells(img, pno, usable, pages):
            if flag == 0x0D:
                if len(vals) in (5, 6) and isinstance(vals[0], str) and isinstance(vals[3], str) \
                        and isinstance(vals[4], str):
                    out.rows.append(vals)
            elif len(vals) == 2 and isinstance(vals[0], str) and len(vals[0]) == 64:
                out.index_keys.add(vals[0])
    if isinstance(data, mmap.mmap):
        data.close()
    return out
