"""``lcrag data download NAME``: fetch a dataset from its published location, verify it, put it where lcrag looks.

A :class:`Download` is one published file: its URL, its own size and SHA-256 when they are published
(``None`` = unknown: nothing published to check the download itself against), whether it is an archive
(``zip`` / ``tar``, any compression ``tarfile`` reads), and which registry files (:mod:`.registry`) it
holds — for an archive, ``members`` maps a member's file name to a registry key. Each benchmark's published
locations are registered with :func:`register_download` in its study folder's ``data_files.py``
(e.g. ``lcrag/studies/multihop_rag/data_files.py``).

Steps (:func:`download`):

1. **Refuse what cannot be checked.** A download is *verified* when its own SHA-256 is known, or when it is
   an archive and every registry file taken from it has a known SHA-256. Otherwise nothing would tell a
   good copy from a damaged or substituted one, and the download is refused unless ``trust_unverified``
   (``--trust-unverified``); a hash seen on a first download is never taken as the reference.
2. **Fetch with resume.** Bytes go to ``<data dir>/.downloads/<file>.part``. An existing part is continued
   with an HTTP ``Range: bytes=<have>-`` request (a server that answers 200 instead of 206 sends the whole
   file again, and the part restarts from zero). A connection lost mid-way keeps the part and raises
   :class:`DownloadError` saying that the same command resumes.
3. **Verify** the finished file: size, then streamed SHA-256 (:func:`.registry.sha256_file`), where known.
   A mismatch deletes the part (the bad bytes are not left to be resumed or used) and raises, naming the
   expected and actual values.
4. **Place**: a plain file moves to the first of its registry entry's ``paths`` under the data directory;
   an archive has its listed members extracted there (each checked against its registry entry's size and
   SHA-256 first, a mismatch removing the extracted file) and is then deleted.
5. **Record the licence** next to each placed file: ``<file>.source.json`` with the URL, licence, size,
   SHA-256, what was checked (``verified``: ``download`` / ``member`` / ``unverified``) and the UTC time.

The data directory is the one lcrag reads (``LCRAG_DATA_DIR``, or ``--data-dir``).
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import shutil
import tarfile
import urllib.error
import urllib.request
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import LcragError
from . import registry
from .registry import sha256_file


class DownloadError(LcragError):
    """A download that failed or was refused; the message says why and what to do."""


@dataclass(frozen=True)
class Download:
    """One published file of dataset ``dataset`` (module doc). ``key``: the registry key of a plain file;
    ``members``: ``{member file name: registry key}`` of an archive."""

    name: str
    dataset: str
    url: str
    filename: str
    license: str
    size: int | None = None
    sha256: str | None = None
    archive: str | None = None  # None (a plain file), "zip" or "tar"
    key: str | None = None
    members: dict[str, str] = field(default_factory=dict)
    note: str = ""

    def targets(self) -> list[registry.DataFile]:
        """The registry entries this download places."""
        return [registry.get(k) for k in ([self.key] if self.key else list(self.members.values()))]

    @property
    def verifiable(self) -> str | None:
        """``"download"`` (its own SHA-256 is known), ``"member"`` (an archive whose placed files all have a known
        SHA-256) or None (nothing to check against)."""
        if self.sha256:
            return "download"
        if self.archive and self.members and all(e.sha256 for e in self.targets()):
            return "member"
        return None


_DOWNLOADS: dict[str, Download] = {}


def register_download(d: Download, *, replace: bool = False) -> Download:
    if d.name in _DOWNLOADS and not replace:
        raise ValueError(f"download {d.name!r} is already registered")
    _DOWNLOADS[d.name] = d
    return d


def unregister_download(name: str) -> None:
    _DOWNLOADS.pop(name, None)


def downloads(name: str) -> list[Download]:
    """The downloads of a dataset (``multihop_rag``) or the one of a name / registry key (``multihop_rag/corpus``).
    Each study folder registers the published locations of its data in its ``data_files.py`` (loaded here)."""
    registry.load_catalog()
    found = [d for d in _DOWNLOADS.values() if name in (d.dataset, d.name, d.key) or name in d.members.values()]
    if not found:
        known = sorted({d.dataset for d in _DOWNLOADS.values()} | set(_DOWNLOADS))
        raise DownloadError(f"no published download for {name!r}; downloadable: {', '.join(known)} "
                            "(other datasets: lcrag data where says where to get them)")
    return found


def _fetch(url: str, part: Path, *, timeout: float, log: Callable[[str], None]) -> None:
    """Fetch ``url`` into ``part``, continuing an existing part with a Range request (module doc, step 2)."""
    have = part.stat().st_size if part.exists() else 0
    req = urllib.request.Request(url, headers={"User-Agent": "lcrag-data-download"})
    if have:
        req.add_header("Range", f"bytes={have}-")
    try:
        resp = urllib.request.urlopen(req, timeout=timeout)  # noqa: S310 - the registry's published https URLs
    except urllib.error.HTTPError as e:
        if e.code == 416 and have:  # the part is already whole (or longer): verification decides
            return
        raise DownloadError(f"{url}: HTTP {e.code} {e.reason}") from None
    except (urllib.error.URLError, OSError) as e:
        raise DownloadError(f"{url}: cannot connect ({getattr(e, 'reason', e)}); run the same command again to retry") from None
    with resp:
        resumed = have and resp.status == 206
        if have and not resumed:
            log(f"[lcrag] {url}: the server does not resume (HTTP {resp.status}); downloading from the start")
        elif resumed:
            log(f"[lcrag] resuming {part.name} after {have:,} bytes")
        got = have if resumed else 0
        length = resp.headers.get("Content-Length")
        expected = got + int(length) if length and length.isdigit() else None
        try:
            with open(part, "ab" if resumed else "wb") as f:
                while chunk := resp.read(1 << 16):
                    f.write(chunk)
                    got += len(chunk)
        except Exception as e:  # connection lost mid-way: OSError, http.client.IncompleteRead …
            raise DownloadError(f"{url}: interrupted after {got:,} bytes ({type(e).__name__}); the part is kept in "
                                f"{part}; run the same command again to resume") from None
        if expected is not None and got < expected:  # the server closed the connection early
            raise DownloadError(f"{url}: interrupted after {got:,} of {expected:,} bytes; the part is kept in {part}; "
                                "run the same command again to resume")


def _check(path: Path, size: int | None, sha: str | None, what: str, url: str) -> None:
    """Size then SHA-256 of ``path`` where known; a mismatch deletes ``path`` and raises (step 3)."""
    n = path.stat().st_size
    if size is not None and n != size:
        path.unlink()
        raise DownloadError(f"{what} from {url}: {n:,} bytes, expected {size:,}; the bad file was removed")
    if sha is not None:
        digest = sha256_file(path)
        if digest != sha:
            path.unlink()
            raise DownloadError(f"{what} from {url}: sha256 {digest} differs from the published {sha}; the bad "
                                "file was removed (damaged in transit, or not the published file)")


def _record(placed: Path, d: Download, entry: registry.DataFile, verified: str) -> Path:
    rec = {"key": entry.key, "file": placed.name, "url": d.url, "license": d.license or entry.license,
           "size": placed.stat().st_size, "sha256": sha256_file(placed), "verified": verified,
           "source": entry.source, "note": d.note,
           "downloaded": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")}
    out = placed.with_name(placed.name + ".source.json")
    out.write_text(json.dumps(rec, indent=2) + "\n", encoding="utf-8")
    return out


def _members(archive: Path, kind: str) -> dict[str, Callable]:
    """``{member base name: opener}`` of a zip or tar archive's regular files."""
    if kind == "zip":
        z = zipfile.ZipFile(archive)
        return {Path(i.filename).name: (lambda i=i: z.open(i)) for i in z.infolist() if not i.is_dir()}
    t = tarfile.open(archive)
    return {Path(m.name).name: (lambda m=m: t.extractfile(m)) for m in t.getmembers() if m.isfile()}


def download(name: str, data_dir: str | Path, *, trust_unverified: bool = False, force: bool = False,
             timeout: float = 60.0, log: Callable[[str], None] | None = None) -> list[Path]:
    """Download, verify, unpack and record the files of ``name`` into ``data_dir`` (module doc); returns the
    placed paths. A file already in place and matching its registry entry is kept (``force`` fetches again)."""
    log = log or (lambda s: print(s))
    root = Path(data_dir)
    root.mkdir(parents=True, exist_ok=True)
    placed: list[Path] = []
    for d in downloads(name):
        targets = d.targets()
        if not force and all(registry.verify_file(root / e.paths[0], e.key).ok for e in targets if e.sha256) \
                and all((root / e.paths[0]).is_file() for e in targets):
            log(f"[lcrag] {d.name}: already in place and verified ({', '.join(e.paths[0] for e in targets)})")
            placed += [root / e.paths[0] for e in targets]
            continue
        how = d.verifiable
        if how is None and not trust_unverified:
            raise DownloadError(f"{d.name}: no published sha256 for {d.url} (nor for the files it holds), so a download "
                                "cannot be verified; pass --trust-unverified to fetch it anyway (recorded as unverified)")
        tmp = root / ".downloads"
        tmp.mkdir(exist_ok=True)
        part = tmp / (d.filename + ".part")
        log(f"[lcrag] {d.name}: {d.url} -> {root}")
        _fetch(d.url, part, timeout=timeout, log=log)
        _check(part, d.size, d.sha256, d.filename, d.url)
        if d.archive is None:
            e = targets[0]
            dest = root / e.paths[0]
            dest.parent.mkdir(parents=True, exist_ok=True)
            os.replace(part, dest)
            placed.append(dest)
            log(f"[lcrag] {e.key}: {dest} ({'verified: size and sha256' if how else 'UNVERIFIED'}); "
                f"licence recorded in {_record(dest, d, e, how or 'unverified').name}")
            continue
        opened = _members(part, d.archive)
        for member, key in d.members.items():
            e = registry.get(key)
            if member not in opened:
                part.unlink()
                raise DownloadError(f"{d.filename} from {d.url} has no member {member}; it is not the published archive "
                                    "(removed)")
            dest = root / e.paths[0]
            dest.parent.mkdir(parents=True, exist_ok=True)
            with opened[member]() as src, open(dest.with_name(dest.name + ".tmp"), "wb") as out:
                shutil.copyfileobj(src, out)
            staged = dest.with_name(dest.name + ".tmp")
            try:
                _check(staged, e.size, e.sha256, f"{member} (in {d.filename})", d.url)
            except DownloadError:
                part.unlink(missing_ok=True)
                raise
            os.replace(staged, dest)
            placed.append(dest)
            log(f"[lcrag] {e.key}: {dest} ({'verified: ' + how if how else 'UNVERIFIED'}); licence recorded in "
                f"{_record(dest, d, e, how or 'unverified').name}")
        part.unlink()
    return placed


__all__ = ["Download", "DownloadError", "download", "downloads", "register_download", "unregister_download"]
