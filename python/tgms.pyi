"""tgms: an embedded, agent-native bi-temporal temporal-graph database (docs/python.md).

>>> import tgms, pyarrow as pa, polars as pl
>>> st = tgms.Store.create("/tmp/demo")
>>> st.write([{"op": "assert_edge", "src": "a", "dst": "b", "rel_type": "MSG", "vt_s": 10}])
>>> r = st.call("entity_history", uid="a", include_edges=True)
>>> pa.table(r)          # the rows, typed by the operator's declared contract
>>> pl.DataFrame(r)      # the same, through the Arrow PyCapsule interface
>>> r.meta               # result_digest, rows_total, complete, set_digest, ...
"""

from os import PathLike
from typing import Any, Literal, Mapping, Optional, Sequence, Union

__version__: str
OPEN_END: int
"""The open end of an interval (2^62 µs)."""

JSON = Any
StrPath = Union[str, PathLike[str]]

class TgmsError(Exception):
    """Base of every tgms error."""

    code: str
    """The error code, e.g. "E_INVALID_ARG"."""
    message: str
    details: JSON
    payload: dict[str, JSON]
    """The JSON error object `tgms` prints: {"error", "message", "details"}."""

class InvalidArgumentError(TgmsError):
    """E_SCHEMA / E_INVALID_ARG: a malformed argument, op, plan or input line."""

class NotFoundError(TgmsError):
    """E_NOT_FOUND: an unknown uid, trace or operator."""

class CostError(TgmsError):
    """E_COST / E_LIMIT: refused before execution (estimated cost over a ceiling)."""

class StateError(TgmsError):
    """E_STATE: I/O, a held writer lock, a read-only or closed handle, corruption."""

class PlanInvalidError(TgmsError):
    """E_PLAN_INVALID: `details` is the static verifier's report (a repair per violation)."""

class InternalError(TgmsError):
    """E_INTERNAL and any other code."""

class Result:
    """One operator envelope. Its main list (`rows`, else the operator's first list output)
    is an Arrow table through `__arrow_c_stream__`: `pyarrow.table(r)`, `polars.DataFrame(r)`.

    >>> r = st.call("snapshot_subgraph", at="2004-06-01")
    >>> t = pa.table(r); t.schema       # the declared schema, whatever rows came back
    >>> r.meta["rows_total"], r.complete, r.result_digest
    >>> pa.table(r.table("edges"))       # another list output
    """

    @property
    def op(self) -> str: ...
    @property
    def envelope_dict(self) -> dict[str, JSON]:
        """The whole envelope (what `tgms call` prints)."""
    def json(self) -> str:
        """The envelope as canonical JSON text, byte for byte `tgms call`'s output."""
    @property
    def meta(self) -> dict[str, JSON]:
        """The envelope without its lists, plus `complete`."""
    @property
    def result_digest(self) -> str: ...
    @property
    def complete(self) -> bool: ...
    @property
    def rows_total(self) -> Optional[int]: ...
    @property
    def truncated(self) -> bool: ...
    @property
    def cursor(self) -> Optional[str]: ...
    @property
    def lists(self) -> list[str]:
        """The operator's list outputs; the first is the main one."""
    def table(self, name: Optional[str] = None) -> Any:
        """A list output as an Arrow table object (has `__arrow_c_stream__`)."""
    def __len__(self) -> int: ...
    def __arrow_c_schema__(self) -> object: ...
    def __arrow_c_stream__(self, requested_schema: Optional[object] = None) -> object: ...

class PlanRun:
    """The outcome of `Store.run_plan`."""

    @property
    def ok(self) -> bool: ...
    @property
    def answer(self) -> JSON: ...
    @property
    def answer_complete(self) -> bool: ...
    @property
    def trace_id(self) -> str: ...
    @property
    def trace(self) -> dict[str, JSON]: ...
    @property
    def steps(self) -> dict[str, Result]: ...

def set_page_cache_bytes(n_bytes: Optional[int]) -> None:
    """Sets the page-cache budget in bytes (default 256 MiB; 0 turns it off; None restores
    the default): kept complete results that make the next pages reads."""

class Store:
    """A tgms store (a directory). One writer per store; any number of read-only handles,
    also beside a writer in another process.

    >>> st = tgms.Store.create("/tmp/s")
    >>> ro = tgms.Store.open("/tmp/s", read_only=True)
    """

    @staticmethod
    def create(path: StrPath, *, io: str = "mmap", eager: bool = False) -> "Store":
        """Creates an empty store in `path` and opens it for writing."""
    @staticmethod
    def open(
        path: StrPath, read_only: bool = False, *, io: str = "mmap", eager: bool = False
    ) -> "Store":
        """Opens a store for writing, or for reading with `read_only=True`. `io="pread"`
        reads segment files into memory instead of mapping them; `eager=True` decodes every
        segment at open."""
    @property
    def path(self) -> str: ...
    @property
    def read_only(self) -> bool: ...
    def refresh(self) -> None:
        """Read-only handles: re-read the store to see batches committed since opening."""
    def close(self) -> None:
        """Seals what is in memory and releases the writer lock."""
    def __enter__(self) -> "Store": ...
    def __exit__(self, *exc: object) -> bool: ...
    def write(
        self, ops: Union[Sequence[Mapping[str, JSON]], str], batch_key: Optional[str] = None
    ) -> dict[str, JSON]:
        """Writes one atomic batch; returns {"batch", "tt", "ops"} ("duplicate" when
        `batch_key` was already committed).

        >>> st.write([{"op": "assert_node", "uid": "alice", "label": "Person", "vt_s": "2004-07-22"}])
        """
    def call(
        self, op: str, args: Optional[Union[Mapping[str, JSON], str]] = None, **kwargs: JSON
    ) -> Result:
        """Calls an operator (`tgms tools` lists them); times as µs or ISO-8601 strings.

        >>> r = st.call("aggregate_events", window=["2004-01-01", "2005-01-01"], bucket="30d")
        """
    def run_plan(self, plan: Union[Mapping[str, JSON], str]) -> PlanRun:
        """Verifies and runs a plan; the trace is kept in the store directory."""
    def verify(
        self, answer: Union[Mapping[str, JSON], str], trace: Union[str, Mapping[str, JSON]]
    ) -> dict[str, JSON]:
        """The claim verifier's report on `answer` against a trace id or trace dict."""
    def ask(
        self,
        question: str,
        *,
        model: Optional[str] = None,
        base_url: Optional[str] = None,
        guided: Optional[str] = None,
        extra_body: Optional[Union[Mapping[str, JSON], str]] = None,
        timeout_s: Optional[int] = None,
        retries: Optional[int] = None,
        cache_dir: Optional[StrPath] = None,
        reporter: str = "model",
        as_of_tt: Optional[Union[int, str]] = None,
        max_repairs: int = 3,
        uids: Optional[list[str]] = None,
        grounding: bool = True,
        memory: bool = True,
    ) -> dict[str, JSON]:
        """As `tgms ask --json`: a plain-language question answered through a verified plan
        by an OpenAI-compatible model (`model=`/`base_url=` or TGMS_LLM_* variables).
        Returns `answer` (the gated answer object), `verification` (the verdict per claim),
        `ok`, `ask_id`, `record`, `record_path`."""
    def stats(self) -> dict[str, JSON]:
        """As `tgms stats --json`."""
    def history(self, uid: str, edges: bool = False) -> dict[str, JSON]:
        """As `tgms history UID --format json`."""
    def ingest(
        self,
        source: Union[StrPath, Any],
        *,
        src: Optional[str] = None,
        dst: Optional[str] = None,
        time: Optional[str] = None,
        end: Optional[str] = None,
        time_unit: Literal["s", "ms", "us"] = "us",
        rel_type: Optional[str] = None,
        rel_type_col: Optional[str] = None,
        disc: Optional[str] = None,
        props: Optional[Sequence[str]] = None,
        props_json: Optional[str] = None,
        only: Optional[Mapping[str, str]] = None,
        format: Optional[str] = None,
        uid_prefix: str = "",
        on_error: Literal["fail", "skip"] = "fail",
        batch_key: Optional[str] = None,
        again: bool = False,
    ) -> dict[str, JSON]:
        """Loads events as `tgms ingest` does; `source` is a path or any object with
        `__arrow_c_stream__` (pyarrow Table, polars / pandas DataFrame). Returns the summary.

        >>> st.ingest(pa.table({"a": ["x"], "b": ["y"], "t": [10]}),
        ...           src="a", dst="b", time="t", rel_type="MSG")
        """
