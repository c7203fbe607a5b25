"""Where things live: the external data directory, caches and outputs.

The data directory holds third-party data that lcrag never ships or commits
(NoLiMa needles and haystacks, LongEval-RAG files, MultiHop-RAG, QASPER). It is found, in
order, from: an explicit argument, the ``LCRAG_DATA_DIR`` environment variable, then
``../shared/data`` next to the project checkout (the layout CI uses). ``None`` means no data
directory: every study then runs on data lcrag generates itself.
"""

from __future__ import annotations

import os
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
PACKAGE_ROOT = Path(__file__).resolve().parent
ENV_DATA_DIR = "LCRAG_DATA_DIR"
ENV_CACHE_DIR = "LCRAG_CACHE_DIR"
#: the local embedding model's store (an ``embeddings.sqlite`` file) when it is not ``<cache_dir>/embeddings.sqlite``
ENV_EMBEDDINGS_STORE = "LCRAG_EMBEDDINGS_STORE"
#: the dress rehearsal's one override (``lcrag reproduce --rehearse``): the base URL of the loopback stand-in
#: (:mod:`lcrag.llm.standin`) that every reader, embedding-endpoint and reranker profile then calls
ENV_REHEARSAL_URL = "LCRAG_REHEARSAL_URL"


def threads_from_env(name: str) -> int:
    """A thread count from the environment variable ``name`` (a whole number, 1 or more), else the CPUs
    this process may use (its affinity mask, else the CPU count). A malformed value raises, naming it."""
    raw = os.environ.get(name, "").strip()
    if raw:
        n = int(raw) if raw.lstrip("-").isdigit() else 0
        if n < 1:
            raise ValueError(f"{name}={raw!r}: expected a whole number of threads (1 or more)")
        return n
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def rehearsal_url() -> str | None:
    """The stand-in's base URL while a dress rehearsal runs (``LCRAG_REHEARSAL_URL``), else None.

    Set, it is the one place profiles resolve their endpoint from: every ``openai``-kind reader profile, every
    reranker profile and the ``openai:`` embedding endpoint call it instead of their own ``base_url`` (no key is
    needed: it is a loopback address, which :func:`lcrag.llm.profiles.is_loopback` checks); replies go to a separate
    response cache (:func:`response_cache_path`) and every saved table's source says ``rehearsal``
    (:func:`lcrag.provenance.table_source`). A value that is not a loopback ``http://`` URL is refused: a rehearsal
    must never send prompts elsewhere."""
    raw = (os.environ.get(ENV_REHEARSAL_URL) or "").strip()
    if not raw:
        return None
    from urllib.parse import urlparse

    u = urlparse(raw)
    host = u.hostname or ""
    if u.scheme != "http" or not (host in ("localhost", "::1") or host.startswith("127.")):
        from .errors import ConfigError

        raise ConfigError(ENV_REHEARSAL_URL, f"{raw!r} is not a loopback http:// URL (the rehearsal stand-in listens "
                                             "on 127.0.0.1)", field=ENV_REHEARSAL_URL)
    return raw.rstrip("/")


def response_cache_path() -> Path:
    """Default response cache file: ``<cache_dir>/responses.sqlite``, or ``<cache_dir>/rehearsal/responses.sqlite``
    during a rehearsal, so a stand-in's replies never enter the cache a real run reads."""
    if rehearsal_url():
        p = cache_dir() / "rehearsal"
        p.mkdir(parents=True, exist_ok=True)
        return p / "responses.sqlite"
    return cache_dir() / "responses.sqlite"


def data_dir(explicit: str | os.PathLike | None = None) -> Path | None:
    """Return the external data directory, or None when there is none.

    An explicit path or ``LCRAG_DATA_DIR`` that does not exist is an error (a typo should not
    silently fall back to generated data); the default ``../shared/data`` is optional.
    """
    for value, origin in ((explicit, "argument"), (os.environ.get(ENV_DATA_DIR) or None, ENV_DATA_DIR)):
        if value:
            p = Path(value).expanduser()
            if not p.is_dir():
                raise FileNotFoundError(f"data directory from {origin} does not exist: {p}")
            return p.resolve()
    default = PROJECT_ROOT.parent / "shared" / "data"
    return default.resolve() if default.is_dir() else None


def data_path(relative: str, explicit: str | os.PathLike | None = None) -> Path | None:
    """Path of ``relative`` inside the data directory, or None when absent."""
    root = data_dir(explicit)
    if root is None:
        return None
    p = root / relative
    return p if p.exists() else None


def cache_dir() -> Path:
    """Directory for response and embedding caches (``LCRAG_CACHE_DIR`` or ``.lcrag-cache``)."""
    p = Path(os.environ.get(ENV_CACHE_DIR) or PROJECT_ROOT / ".lcrag-cache")
    try:
        p.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):  # the variable names a file, or a path through one
        from .errors import ConfigError

        raise ConfigError(ENV_CACHE_DIR if os.environ.get(ENV_CACHE_DIR) else p,
                          f"{p} is a file, not a folder; point {ENV_CACHE_DIR} at a folder (it is created if missing)") from None
    except OSError as e:
        from .errors import ConfigError

        raise ConfigError(p, f"cannot create the cache folder: {e.strerror or e}; point {ENV_CACHE_DIR} elsewhere") from None
    return p


def embeddings_store_path() -> Path:
    """The store of the local embedding model's vectors (MiniLM, torch and onnx-int8): the file named by
    ``LCRAG_EMBEDDINGS_STORE``, else ``<cache_dir>/embeddings.sqlite``.

    A local model's vector is a deterministic function of the text, so one store may serve several cache
    directories (two checkouts, a test run beside a rehearsal). Endpoint models' vectors stay in
    ``<cache_dir>/embeddings.sqlite`` (:mod:`lcrag.embeddings.encoders`). The path is made absolute but symbolic
    links are not resolved: every process opens the file by the name it was given. A value naming a folder is
    refused; a missing parent folder is created."""
    raw = (os.environ.get(ENV_EMBEDDINGS_STORE) or "").strip()
    if not raw:
        return cache_dir() / "embeddings.sqlite"
    from .errors import ConfigError

    p = Path(os.path.abspath(os.path.expanduser(raw)))
    if p.is_dir():
        raise ConfigError(ENV_EMBEDDINGS_STORE, f"{p} is a folder; point {ENV_EMBEDDINGS_STORE} at a file, e.g. "
                                                f"{p / 'embeddings.sqlite'} (it is created if missing)")
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise ConfigError(ENV_EMBEDDINGS_STORE, f"{p.parent} is a file, not a folder; point {ENV_EMBEDDINGS_STORE} "
                                                "at a file in a folder") from None
    except OSError as e:
        raise ConfigError(ENV_EMBEDDINGS_STORE, f"cannot create the folder of {p}: {e.strerror or e}") from None
    return p


def params_dir() -> Path:
    return PROJECT_ROOT / "params"


def figures_dir() -> Path:
    p = PROJECT_ROOT / "figures"
    p.mkdir(parents=True, exist_ok=True)
    return p
