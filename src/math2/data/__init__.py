"""The external data math2 reads but does not carry (theorem lists, the Lean REPL's transcripts,
FATE-M, checks-dev): the manifest `data/external.yaml` (origin, pin, licence, the SHA-256 of
every file), where a set is on this machine (`MATH2_DATA__DIR`, else the data cache), and its
fetch at the pin (`math2 data fetch`). The shallow git fetch of a pinned commit (`math2.data.git`)
serves the libraries of `math2 build` too.

    folder = locate(settings, "1000-plus")      # hash-checked, or DataMissing / DataMismatch
    fetch_set(settings, "1000-plus", say)       # into the data cache, hash-checked
"""

from math2.data.fetch import fetch_set
from math2.data.git import FetchError, cached_checkout, fetch_pinned, head_commit
from math2.data.manifest import (
    DataFile,
    DataSet,
    ExternalData,
    FetchMethod,
    UnknownDataSet,
    load_external,
    manifest_path,
)
from math2.data.sets import (
    DataMismatch,
    DataMissing,
    Origin,
    SetStatus,
    cache_root,
    locate,
    status,
    verify,
)

__all__ = [
    "DataFile",
    "DataMismatch",
    "DataMissing",
    "DataSet",
    "ExternalData",
    "FetchError",
    "FetchMethod",
    "Origin",
    "SetStatus",
    "UnknownDataSet",
    "cache_root",
    "cached_checkout",
    "fetch_pinned",
    "fetch_set",
    "head_commit",
    "load_external",
    "locate",
    "manifest_path",
    "status",
    "verify",
]
