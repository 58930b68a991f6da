"""Configuration: `math2.toml` (or `MATH2_CONFIG`), overridden by `MATH2_*` env vars."""

from __future__ import annotations

import os
import re
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError, model_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)
from pydantic_settings import SettingsError as PydanticSettingsError

from math2.errors import Math2Error
from math2.lean.limits import Limits


class LeanSettings(BaseModel):
    """Where Lean lives and how hard to drive it."""

    backend: str = Field("repl", description="repl | kimina | lake")
    project_dir: Path | None = Field(None, description="a Lake project with Mathlib built")
    repl_command: list[str] = Field(
        default_factory=lambda: ["lake", "env", "../repl/.lake/build/bin/repl"],
        description="argv that starts one REPL, run inside project_dir",
    )
    header: str = "import Mathlib"
    workers: int = 2
    timeout_s: float = 60.0
    header_timeout_s: float = 600.0
    memory_limit_mb: int = 8192
    recycle_after_uses: int = 500
    recycle_above_mb: int = 6144
    kimina_url: str = "http://127.0.0.1:8000"
    kimina_api_key: str | None = None
    toolchain: str | None = None
    mathlib_commit: str | None = None
    limits: Limits = Field(
        default_factory=Limits,
        description="caps on an item before it is read",
    )


class EndpointSettings(BaseModel):
    """Where one model is served, when it is not the default endpoint."""

    base_url: str | None = None
    api_key: str | None = None
    served_name: str | None = Field(None, description="the server's name for it, if different")
    json_schema: bool = True
    concurrency: int | None = None
    base_urls: list[str] = Field(
        default_factory=list,
        description="several servers of this model: calls balanced over them, `concurrency` each",
    )


class LLMSettings(BaseModel):
    """OpenAI-compatible endpoints (vLLM, SGLang, Ollama, llama.cpp's server or a hosted API)."""

    base_url: str | None = None
    api_key: str | None = None
    model: str | None = None
    concurrency: int = 8
    timeout_s: float = 300.0  # the cap: first token, and generation after it
    timeout_floor_s: float = 30.0  # the least a deadline derived from budget and speed allows
    stream: bool = Field(True, description="stream replies (a timeout keeps what was generated)")
    max_retries: int = 5
    down_after: int = Field(
        3,
        ge=0,
        description="calls in a row that could not connect before an endpoint counts as down "
        "(every later call fails at once with EndpointDown, and a run stops early); 0: never",
    )
    json_schema: bool = Field(True, description="the default endpoint honours JSON-schema output")
    endpoints: dict[str, EndpointSettings] = Field(
        default_factory=dict, description="per-model endpoints, keyed by the registered name"
    )


class DataSettings(BaseModel):
    """Where the local copies of sources are; `None` means look in the usual places."""

    # The external data sets of data/external.yaml (theorem lists, REPL transcripts, FATE-M,
    # checks-dev) in their layout (data/README.md): read from here, hash-checked, when given;
    # else from `cache_dir`/data, where `math2 data fetch` puts them.
    dir: Path | None = None
    # A data set fetched from another repository than the manifest's (a mirror), by set name.
    set_urls: dict[str, str] = Field(default_factory=dict)
    # The manifest of external data (default: math2's data/external.yaml).
    external: Path | None = None
    setmm: Path | None = None
    mathlib_dir: Path | None = None
    lean_scout_dir: Path | None = None
    agda_unimath_dir: Path | None = None
    afp_dir: Path | None = None
    mizar_dir: Path | None = None
    stacks_dir: Path | None = None
    theoremgraph_dir: Path | None = None
    # The other systems' checkouts (K6.6), each at its manifest pin.
    rocq_stdlib_dir: Path | None = None
    hol_light_dir: Path | None = None
    hol4_dir: Path | None = None
    naproche_dir: Path | None = None
    nasalib_dir: Path | None = None
    acl2_books_dir: Path | None = None
    # A saved copy of Wiedijk's "Formalizing 100 Theorems" page (facts only, K6.7).
    wiedijk_100: Path | None = None
    # The AI-written informal datasets (search aids, K6.4): a parquet/JSONL file or folder.
    herald_dir: Path | None = None
    frenzymath_mathlib_informal_dir: Path | None = None
    # Where `math2 build` fetches a pinned source from when no local copy is given (the
    # manifest's url when unset): `mathlib_url`, or `urls` by source name
    # (MATH2_DATA__URLS='{"hol4": "file:///srv/mirror/HOL"}'); and the folder its verified
    # checkouts are kept in.
    mathlib_url: str | None = None
    urls: dict[str, str] = Field(default_factory=dict)
    cache_dir: Path = Path(".math2/cache")


class RetrievalSettings(BaseModel):
    """The search index."""

    index_dir: Path = Path(".math2/index")
    # The libraries whose index gets the dense part by default (`math2 build`, `math2 index
    # build`; `--dense`/`--no-dense` decide for one build). None by default: over all of
    # Mathlib, on top of the lexical parts with formula shapes, reordering the lexical top 30
    # by bge-small moved the eight dev sets' mean nDCG@10 from 0.477 to 0.490 (Lean-style and
    # special cases up, LaTeX, nicknames and slogans down) for 28 minutes of two idle
    # cores to embed Mathlib and a default-path p95 of 24 ms against 10 ms (docs/benchmarks.md,
    # issue 24 final). `["mathlib"]` turns it on for Mathlib.
    dense_libraries: list[str] = []
    # The dense part's encoder: bge-small (retrieval-trained, onnxruntime int8) or minilm.
    encoder: Literal["bge-small", "minilm"] = "bge-small"

    @model_validator(mode="before")
    @classmethod
    def _renamed(cls, data):
        """`dense_in_build` (before issue 24's end) is read as `dense_libraries`: true means
        Mathlib, as it did, rather than being dropped without a word."""
        if isinstance(data, dict) and "dense_in_build" in data:
            data = dict(data)
            old = data.pop("dense_in_build")
            if old in (True, "true", "True", "1", 1) and "dense_libraries" not in data:
                data["dense_libraries"] = ["mathlib"]
        return data


class InputSettings(BaseModel):
    """Limits on what enters math2 (`math2.util.textlimit`)."""

    # Every text: a string of a JSONL/JSON/YAML input, a web form field, a model's terms.
    max_text_chars: int = Field(default=100_000, ge=1)


class RaySettings(BaseModel):
    """The Ray executor (`--executor ray`, docs/scale.md): where the cluster is and how a run's
    work is cut up; `--ray-option KEY=VALUE` sets one for a command, and `math2 runs resume`
    reuses the ones the run recorded."""

    model_config = {"extra": "forbid"}

    address: str | None = Field(
        None, description="ray://HOST:10001, auto, or None: a cluster started for the run"
    )
    batch_size: int = Field(32, ge=1, description="items the driver sends a worker at once")
    items_per_node: int | None = Field(
        None,
        ge=1,
        description="items in flight per node; None: from the model endpoints' concurrency and "
        "the node's REPLs (Little's law, docs/scale.md)",
    )
    lean_actors_per_node: int = Field(1, ge=1, description="REPL pools each item worker owns")
    workers_per_node: int = Field(
        1, ge=1, description="the run's item workers (long-lived actors) per node"
    )
    task_cpus: float = Field(0.5, ge=0, description="CPUs an item worker reserves")
    task_max_retries: int = Field(3, ge=0, description="tries of a batch whose worker died")
    actor_max_restarts: int = Field(
        8,
        ge=0,
        description="deaths of a node's item worker (with its Lean pools) before the node is "
        "given up",
    )
    lean_actor_cpus: float = Field(
        0,
        ge=0,
        description="CPUs each Lean pool reserves (its REPLs' share of the node's CPUs), added "
        "to its item worker's",
    )
    lean_actor_memory: int | None = Field(
        None, ge=1, description="bytes of memory each Lean pool reserves (None: none)"
    )
    runtime_env: dict[str, Any] | None = Field(
        None,
        description="Ray's runtime_env for the run's workers and actors (env_vars, pip, "
        "working_dir…); None: the cluster's own environment",
    )


class SelectSettings(BaseModel):
    """Node selection (K6.4): declarations a person asks for (signal 3)."""

    requests: list[str] = Field(default_factory=list)


def _default_manifest() -> Path:
    """`manifests/sources.yaml` here, else the one of the checkout math2 is installed from."""
    here = Path("manifests/sources.yaml")
    if here.exists():
        return here
    checkout = Path(__file__).resolve().parents[2] / "manifests" / "sources.yaml"
    return checkout if checkout.exists() else here


def _config_file() -> Path:
    return Path(os.environ.get("MATH2_CONFIG", "math2.toml"))


class SettingsError(Math2Error, ValueError):
    """A setting that cannot be read: a `MATH2_*` variable that is not JSON where a list, a
    table or a group is expected, a value of the wrong type, a config file that is not TOML."""


def _variables(field: str) -> str:
    """The `MATH2_*` variables set for a top-level field, as a user would look for them."""
    head = f"MATH2_{field.upper()}"
    names = sorted(v for v in os.environ if v.upper() == head or v.upper().startswith(head + "__"))
    return ", ".join(names) or head


class Settings(BaseSettings):
    """All of math2's settings; env vars override `math2.toml`.

    Read by pydantic-settings; whatever it cannot read becomes one `SettingsError` line naming
    the variable or the file (never a traceback)."""

    model_config = SettingsConfigDict(
        env_prefix="MATH2_", env_nested_delimiter="__", extra="ignore"
    )

    db_url: str = "sqlite:///math2.db"
    manifest: Path = Field(default_factory=lambda: _default_manifest())
    lean: LeanSettings = Field(default_factory=LeanSettings)
    llm: LLMSettings = Field(default_factory=LLMSettings)
    data: DataSettings = Field(default_factory=DataSettings)
    select: SelectSettings = Field(default_factory=SelectSettings)
    retrieval: RetrievalSettings = Field(default_factory=RetrievalSettings)
    input: InputSettings = Field(default_factory=InputSettings)
    ray: RaySettings = Field(default_factory=RaySettings)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        toml = TomlConfigSettingsSource(settings_cls, toml_file=_config_file())
        return (init_settings, env_settings, toml)

    def __init__(self, **values: Any) -> None:
        try:
            super().__init__(**values)
        except PydanticSettingsError as exc:
            m = re.search(r'field "([^"]+)" from source "EnvSettingsSource"', str(exc))
            if m is None:
                raise SettingsError(f"settings: {exc}") from None
            raise SettingsError(
                f"{_variables(m.group(1))}: not JSON ({m.group(1)} holds a list, a table or a "
                "group of settings; give it as JSON)"
            ) from None
        except tomllib.TOMLDecodeError as exc:
            raise SettingsError(f"{_config_file()}: not a TOML config file ({exc})") from None
        except ValidationError as exc:
            where = "; ".join(
                f"{'.'.join(str(x) for x in e['loc'])}: {e['msg']}" for e in exc.errors()[:3]
            )
            raise SettingsError(
                f"settings ({_config_file()} or MATH2_* variables): {where}"
            ) from None


def load_settings(**overrides: object) -> Settings:
    """Read the settings now (not at import time), with explicit overrides on top."""
    return Settings(**overrides)
