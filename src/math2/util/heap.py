"""Keeping freed memory for reuse: a search makes a few dozen temporary arrays of a few MB
each (a score per document of all of Mathlib is 1.1 MB as float32, 2.2 MB as float64), and
glibc's allocator gives each such block its own `mmap` and returns it to the system when
freed, so that the next one is zero-filled again page by page (a minor page fault every 4 KB):
that cost a query's BM25 sum 6 ms of CPU where the arithmetic costs 1.4 ms (issue 45 §6,
docs/benchmarks.md `perf45`). `keep_freed_blocks` tells glibc (`mallopt`) to serve such
blocks from its heap and to keep up to `TRIM` bytes of freed heap instead of trimming it.
No values change. glibc keeps `TRIM` per arena, one arena per thread that allocates, so a
process that searches on many threads (`math2 index serve`'s worker threads, a Ray worker)
would hold up to `TRIM` more memory per thread at rest: measured 520 MB against 218-275 MB
idle after 8 threads, 1,065 MB against 368 MB after 16 (review of perf45). Only `math2
search`, one query on one thread, calls it (`math2.cli.main`), and the benchmarks that
measure that call. Elsewhere than glibc (macOS, musl) it does nothing.
"""

from __future__ import annotations

import ctypes
import functools
import sys

MMAP_THRESHOLD = 32 << 20  # blocks below this come from the heap (glibc's own maximum)
TRIM = 256 << 20  # freed heap kept for reuse
_M_TRIM_THRESHOLD = -1  # glibc's <malloc.h>
_M_MMAP_THRESHOLD = -3


@functools.cache
def keep_freed_blocks() -> bool:
    """Set glibc's thresholds once per process; whether they were set."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt  # the C library the interpreter runs on
    except (OSError, AttributeError):  # not glibc (musl has no mallopt)
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(
        mallopt(_M_TRIM_THRESHOLD, TRIM)
    )
