"""Where `math2 build` gets a source's data, and the words it uses to say so.

In order: a local copy the settings name (`MATH2_DATA__<FIELD>`, or the importer's own places),
else what an earlier build fetched at the pin (in `data.cache_dir`), else a fetch at the pin
when there is a network (never with `--offline`):

- `git`: a shallow fetch of exactly the pinned commit of the manifest's url (or
  `data.urls[NAME]`, `data.mathlib_url` for Mathlib) through `importers.fetch.fetch_pinned`,
  with its progress lines, verified before it is used;
- `hf`: a Hugging Face dataset at the pinned revision through the `datasets` library, saved as
  one parquet file named by the revision;
- `web`: a page without versions (Wiedijk's list), saved under the date it was read;
- `data`: an external data set of `data/external.yaml` (the theorem lists), from
  `MATH2_DATA__DIR` or the data cache, else fetched at its pin through `math2.data`, every file
  hash-checked (a file that differs is refused, never fetched over).

Each answer says which of these it was, so the build's line for the source does too.
"""

from __future__ import annotations

import datetime as dt
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from math2.config import Settings
    from math2.importers.registry import ImporterSpec
    from math2.sources.manifest import SourceEntry

_HF_URL = re.compile(r"huggingface\.co/datasets/([^/\s]+/[^/\s?#]+)")


@dataclass(frozen=True)
class Supplied:
    """A source's data on this machine (`path`), or why there is none; `how` says which."""

    path: Path | None
    how: str


def url_of(settings: Settings, entry: SourceEntry) -> str | None:
    """Where a source is fetched from: `data.urls[NAME]`, `data.<name>_url`, else the
    manifest's url."""
    field = f"{entry.name.replace('-', '_')}_url"
    return settings.data.urls.get(entry.name) or getattr(settings.data, field, None) or entry.url


def _supply_hint(entry: SourceEntry, spec: ImporterSpec, what: str) -> str:
    field = (spec.data_field or f"{entry.name.replace('-', '_')}_dir").upper()
    url_var = (
        f"MATH2_DATA__{entry.name.replace('-', '_').upper()}_URL"
        if entry.name == "mathlib"
        else f"MATH2_DATA__URLS='{{\"{entry.name}\": URL}}'"
    )
    return f"give {what} with MATH2_DATA__{field}=PATH, or a URL to fetch it from with {url_var}"


def supply(
    settings: Settings,
    entry: SourceEntry,
    spec: ImporterSpec,
    *,
    offline: bool,
    say: Callable[[str], None],
) -> Supplied:
    """The source's data: a local copy, what an earlier build fetched, or a fetch now.

    A configured copy is used as it is or refused, never passed over (issue 46 §3): a
    `MATH2_DATA__<FIELD>` that names nothing says so (a mistyped path is not silently replaced
    by a fetch), and for a Lean library pinned at a git commit the copy must be a git checkout,
    since only its HEAD shows it is at the pin."""
    given = getattr(settings.data, spec.data_field, None) if spec.data_field else None
    var = f"MATH2_DATA__{spec.data_field.upper()}" if spec.data_field else "its settings"
    if given is not None and not Path(given).exists():
        return Supplied(
            None,
            f"{var}={given} does not exist: fix the path, or unset {var} to use the usual "
            "places" + (" (a fetch at the pin)" if spec.fetch == "git" else ""),
        )
    path, why = spec.locate(settings)
    if path is not None:
        pin = entry.current_pin
        # a Lean library gives bindings, whose type hash and axioms come from the pinned build:
        # its copy must show its commit; another system's folder is read with a note that no
        # commit was checked (importers/systems.py)
        if (
            spec.fetch == "git"
            and entry.system == "lean4"
            and given is not None
            and Path(given) == path
            and pin is not None
            and pin.commit
            and not (path / ".git").exists()
        ):
            return Supplied(
                None,
                f"{var}={path} is not a git checkout (no .git): math2 cannot check that it "
                f"is {entry.name} at the pinned commit {pin.commit[:12]}; give a checkout of that "
                f"commit (git clone, then `git -C {path} checkout {pin.commit}`), or unset {var} "
                "to fetch it at the pin",
            )
        # a locator that found it may say where from (several variables)
        return Supplied(path, f"from {path} ({why or f'a local copy: {var}'})")
    if spec.fetch == "git":
        return _git(settings, entry, spec, offline, say)
    if spec.fetch == "hf":
        return _hf(settings, entry, spec, offline, say)
    if spec.fetch == "web":
        return _web(settings, entry, spec, offline, say)
    if spec.fetch == "data" and spec.data_set:
        return _data(settings, spec.data_set, offline, say)
    return Supplied(None, why)


def _git(
    settings: Settings,
    entry: SourceEntry,
    spec: ImporterSpec,
    offline: bool,
    say: Callable[[str], None],
) -> Supplied:
    from math2.importers.fetch import FetchError, cached_checkout, fetch_pinned

    pin = entry.current_pin
    commit = pin.commit if pin else None
    if not commit:
        return Supplied(None, "no commit pinned in the manifest to fetch")
    hint = _supply_hint(entry, spec, f"a checkout at commit {commit}")
    cache = Path(settings.data.cache_dir)
    if (done := cached_checkout(cache, entry.name, commit)) is not None:
        return Supplied(done, f"from {done} (fetched at pin {commit[:12]} by an earlier build)")
    url = url_of(settings, entry)
    if offline:
        return Supplied(
            None, f"not fetched (--offline): {entry.name} at {commit[:12]} from {url}; {hint}"
        )
    if not url:
        return Supplied(None, f"no URL to fetch {entry.name} from; {hint}")
    try:
        path = fetch_pinned(url, commit, cache, entry.name, progress=say)
    except FetchError as exc:
        return Supplied(
            None, f"could not fetch {entry.name} at {commit[:12]} from {url} ({exc}); {hint}"
        )
    return Supplied(path, f"fetched at pin {commit[:12]} from {url} into {path}")


def _hf(
    settings: Settings,
    entry: SourceEntry,
    spec: ImporterSpec,
    offline: bool,
    say: Callable[[str], None],
) -> Supplied:
    """A Hugging Face dataset at the pinned revision, saved once as parquet."""
    pin = entry.current_pin
    revision = pin.commit if pin else None
    url = url_of(settings, entry) or ""
    m = _HF_URL.search(url)
    if not revision or m is None:
        return Supplied(None, "no Hugging Face dataset and revision pinned in the manifest")
    repo = m.group(1)
    hint = _supply_hint(entry, spec, f"a parquet or JSONL copy at revision {revision}")
    cache = Path(settings.data.cache_dir)
    target = cache / f"{entry.name}-{revision}.parquet"
    if target.is_file():
        return Supplied(target, f"from {target} (fetched at revision {revision[:12]} earlier)")
    if offline:
        return Supplied(
            None, f"not fetched (--offline): {repo} at revision {revision[:12]}; {hint}"
        )
    try:
        import datasets  # type: ignore[import-untyped]  # the optional extra `hf`
    except ImportError:
        return Supplied(None, f"the `datasets` package is not installed to fetch {repo}; {hint}")
    say(f"fetching {repo} at revision {revision[:12]} (Hugging Face)")
    from math2.util.progress import stage

    try:
        with stage(f"fetch {repo} at {revision[:12]} (Hugging Face)"):  # a line on the clock
            ds = datasets.load_dataset(
                repo, revision=revision, split="train", cache_dir=str(cache / "hf")
            )
            cache.mkdir(parents=True, exist_ok=True)
            partial = target.with_name(f"{target.name}.partial-{os.getpid()}")
            ds.to_parquet(str(partial))
            partial.rename(target)  # whole, or not there
    except Exception as exc:  # the network, the hub, a revision it lacks: a skip that says so
        return Supplied(None, f"could not fetch {repo} at {revision[:12]} ({exc}); {hint}")
    return Supplied(target, f"fetched {repo} at revision {revision[:12]} into {target}")


def _web(
    settings: Settings,
    entry: SourceEntry,
    spec: ImporterSpec,
    offline: bool,
    say: Callable[[str], None],
) -> Supplied:
    """A page without versions, saved under the date it was read."""
    import httpx

    url = url_of(settings, entry)
    hint = _supply_hint(entry, spec, "a saved copy of the page")
    if not url:
        return Supplied(None, f"no URL to read {entry.name} from; {hint}")
    cache = Path(settings.data.cache_dir) / entry.name
    today = dt.date.today().isoformat()
    target = cache / f"page-{today}.html"
    if target.is_file():
        return Supplied(target, f"from {target} (read from {url} on {today})")
    if offline:
        return Supplied(None, f"not read (--offline): {url}; {hint}")
    say(f"reading {url}")
    from math2.util.progress import stage

    try:
        with stage(f"read {url}"):  # a line on the clock while the page comes
            res = httpx.get(url, timeout=httpx.Timeout(60, connect=10), follow_redirects=True)
            res.raise_for_status()
    except httpx.HTTPError as exc:
        return Supplied(None, f"could not read {url} ({exc}); {hint}")
    cache.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f"{target.name}.partial-{os.getpid()}")
    partial.write_bytes(res.content)
    partial.rename(target)
    return Supplied(target, f"read from {url} on {today} into {target}")


def _data(settings: Settings, name: str, offline: bool, say: Callable[[str], None]) -> Supplied:
    """An external data set from `MATH2_DATA__DIR` or the data cache, else fetched at its pin
    into the cache (unless offline); a set whose file differs from the manifest's hash is
    refused (the file and both hashes), not fetched over."""
    from math2.data import DataMismatch, DataMissing, FetchError, fetch_set, locate

    try:
        path = locate(settings, name)
        return Supplied(path, f"from {path} (data set {name}, hash-checked)")
    except DataMismatch as exc:
        return Supplied(None, str(exc))
    except DataMissing as exc:
        if offline:
            return Supplied(None, f"not fetched (--offline): {exc}")
    try:
        path = fetch_set(settings, name, progress=say)
    except (FetchError, DataMissing, DataMismatch) as exc:
        return Supplied(
            None,
            f"could not fetch data set {name} ({exc}); `math2 data fetch {name}` where there is "
            "a network, or MATH2_DATA__DIR (data/README.md)",
        )
    return Supplied(path, f"fetched data set {name} at its pin into {path}")
