//! The engine's one error enum and the typed kind of a corrupt file. Every variant maps to
//! a spec error code (`operators.md` §5); the agent-facing payload
//! `{"error", "message", "details"}` is built from the variant's fields by
//! `tgms-operators` (`error.rs`), not here.

use std::path::PathBuf;

/// Result alias for the engine.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in the engine.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Well-typed but ill-formed write input (`E_INVALID_ARG`).
    #[error("{message}")]
    InvalidArg {
        /// What is wrong with the input.
        message: String,
    },
    /// Missing target version (`E_NOT_FOUND`).
    #[error("{message}")]
    NotFound {
        /// Which version was asked for.
        message: String,
    },
    /// Store state problem: lock, read-only, clock, invariant (`E_STATE`); `about` holds
    /// what the payload's `details` say.
    #[error("{message}")]
    State {
        /// What is wrong, in words.
        message: String,
        /// The structured details.
        about: StateAbout,
    },
    /// A write-ahead-log record before the final one is damaged (`E_STATE`); never repaired.
    #[error("event log damaged at record {record}: {kind}")]
    LogDamaged {
        /// The log file.
        file: PathBuf,
        /// 0-based number of the damaged record.
        record: u64,
        /// Byte offset of the damaged record's frame in the file.
        offset: u64,
        /// What is wrong with it.
        kind: CorruptionKind,
    },
    /// A store file is not what its format says (`E_STATE`).
    #[error("corrupt store file {file} at offset {offset}: {kind}")]
    Corruption {
        /// The file.
        file: PathBuf,
        /// Byte offset of the problem in the file.
        offset: u64,
        /// What is wrong.
        kind: CorruptionKind,
    },
    /// An input file (event file, JSONL log, batch) is malformed (`E_INVALID_ARG`).
    #[error("{file}:{line}: {reason}")]
    BadInput {
        /// The input file.
        file: PathBuf,
        /// 1-based number of the offending line.
        line: u64,
        /// What is wrong with the line.
        reason: String,
    },
    /// An op of a batch given as user input has an unknown field or op kind, or lacks a
    /// required field (`E_INVALID_ARG`, `op_input.rs`); `index` is its 0-based place in the
    /// batch, `suggestion` the nearest valid name.
    #[error("op {index}: {message}")]
    BadOp {
        /// 0-based place of the op in the batch.
        index: usize,
        /// The field at fault, when one is.
        field: Option<String>,
        /// What is wrong with the op.
        message: String,
        /// The nearest valid field or op name, when one is close.
        suggestion: Option<String>,
    },
    /// An operating-system I/O failure (`E_STATE`).
    #[error("I/O error on {path}: {source}")]
    Io {
        /// The file or directory the operation was on.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// An earlier fsync failed; the handle refuses all work until the store is reopened.
    #[error("store handle is poisoned by an earlier failed write; reopen the store")]
    Poisoned,
    /// Writing or syncing a batch record failed after the append began: the record may be
    /// whole on disk, so the batch may be applied by the next open (`E_STATE`, with
    /// `details.outcome = "unknown"`). The handle is poisoned.
    #[error(
        "the outcome of batch {seq} (tt {tt}) is unknown: {cause}; it is committed if the next \
         open finds its record. Reopen the store and look (n_batches > {seq} means committed), \
         or retry with the same batch key, which is acknowledged without being applied twice"
    )]
    OutcomeUnknown {
        /// 0-based number of the batch among the store's batches.
        seq: u64,
        /// The transaction time (µs) assigned to the batch.
        tt: i64,
        /// 0-based log record number its record would have.
        record: u64,
        /// The batch key it was written under, if any.
        batch_key: Option<String>,
        /// The failure of the write or sync.
        cause: String,
    },
}

/// What an [`Error::State`] is about: the fields of its payload's `details` (built in
/// `tgms-operators`, `error.rs`).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum StateAbout {
    /// Nothing beyond the message (`details` is `{}`).
    Nothing,
    /// Another process holds the writer lock: its pid when the lock file names one.
    Locked {
        /// The pid of the holder, when the lock file names one.
        holder_pid: Option<u64>,
        /// The lock file.
        lock_file: PathBuf,
    },
    /// A store cannot be created in a directory that holds files.
    NotEmpty {
        /// The directory.
        path: PathBuf,
    },
    /// No store (no log) at `path`.
    NoStore {
        /// The directory searched.
        path: PathBuf,
    },
    /// The log's good records end before the manifest's checkpoint: a shortened history.
    ShortenedLog {
        /// The log file.
        file: PathBuf,
        /// Bytes of the log up to the end of its last good record.
        log_good_bytes: u64,
        /// Good records in the log.
        log_good_records: u64,
        /// The log byte offset of the manifest's checkpoint.
        checkpoint_offset: u64,
        /// The log record number of the manifest's checkpoint.
        checkpoint_record: u64,
    },
    /// `file` is not a TGMS event log (no header line).
    NotAnEventLog {
        /// The file given.
        file: PathBuf,
    },
    /// Line `line` of event log `file` has a `batch_id` that does not match its content.
    BatchIdMismatch {
        /// The event log.
        file: PathBuf,
        /// 1-based line number.
        line: u64,
        /// The `batch_id` the line carries.
        found: String,
        /// The `batch_id` its content hashes to.
        expected: String,
    },
    /// A store error raised while importing line `line` of event log `file`.
    AtLine {
        /// The event log.
        file: PathBuf,
        /// 1-based line number.
        line: u64,
        /// The details of the store error.
        about: Box<StateAbout>,
    },
}

/// What is wrong with a store file: the `kind` of [`Error::Corruption`] and
/// [`Error::LogDamaged`] and of `tgms check`'s problems. Its text (`Display`) is the
/// `details.kind` an agent reads, so each variant's wording is part of the error payload.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CorruptionKind {
    /// The file does not start with the magic of its format (`format`: `segment`,
    /// `manifest`, `write-ahead log`): it is not a file of that kind.
    #[error("bad magic: not a tgms {format}")]
    BadMagic {
        /// The format the file should have.
        format: &'static str,
    },
    /// A checksum stored for some bytes does not match them; `what` names the bytes
    /// (`header`, `footer`, `chunk 12`, `record`).
    #[error("{what} checksum mismatch")]
    ChecksumMismatch {
        /// The bytes whose checksum failed.
        what: String,
    },
    /// A format version this build does not read; `what` names the version field
    /// (`segment major`), `reads` the version it does read where there is one.
    #[error("{what} version {version} is not supported{}", reads_note(*.reads))]
    UnsupportedVersion {
        /// The version field.
        what: &'static str,
        /// The version the file has.
        version: u16,
        /// The version this build reads, where there is one.
        reads: Option<u16>,
    },
    /// A problem inside chunk `chunk` of a segment file.
    #[error("chunk {chunk}: {kind}")]
    InChunk {
        /// The chunk's index in the segment.
        chunk: u16,
        /// What is wrong inside it.
        kind: Box<CorruptionKind>,
    },
    /// A field needs more bytes than are left (a record, payload or chunk ends early).
    #[error("needs {need} bytes, {left} left")]
    Truncated {
        /// The field's length in bytes.
        need: usize,
        /// The bytes left after the field's start.
        left: usize,
    },
    /// Bytes follow the last field of a record, payload or chunk.
    #[error("{left} bytes left over")]
    LeftOver {
        /// How many.
        left: usize,
    },
    /// A problem at byte `at` of a record's payload.
    #[error("at payload byte {at}: {kind}")]
    AtByte {
        /// The byte offset within the payload.
        at: usize,
        /// What is wrong there.
        kind: Box<CorruptionKind>,
    },
    /// Bytes that break another rule of the format; the text names the rule and the place.
    #[error("{0}")]
    Malformed(String),
}

impl CorruptionKind {
    /// This problem, found inside chunk `chunk`.
    pub fn in_chunk(self, chunk: u16) -> Self {
        CorruptionKind::InChunk {
            chunk,
            kind: Box::new(self),
        }
    }
}

/// The ` (this build reads N)` note of [`CorruptionKind::UnsupportedVersion`].
fn reads_note(reads: Option<u16>) -> String {
    reads.map_or(String::new(), |r| format!(" (this build reads {r})"))
}

impl From<String> for CorruptionKind {
    fn from(text: String) -> Self {
        CorruptionKind::Malformed(text)
    }
}

impl From<&str> for CorruptionKind {
    fn from(text: &str) -> Self {
        CorruptionKind::Malformed(text.to_owned())
    }
}

/// The spec error code of an engine error (`operators.md` §5.2); a failed batch's outcome
/// record in the log keeps its spelling.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorCode {
    /// `E_INVALID_ARG`: well-typed input that cannot be used.
    InvalidArg,
    /// `E_NOT_FOUND`: no such version.
    NotFound,
    /// `E_STATE`: the store's state (lock, damage, I/O, poisoning, an unknown outcome).
    State,
}

impl ErrorCode {
    /// The spec spelling (`E_STATE`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InvalidArg => "E_INVALID_ARG",
            ErrorCode::NotFound => "E_NOT_FOUND",
            ErrorCode::State => "E_STATE",
        }
    }
}

impl Error {
    /// `E_INVALID_ARG` with `message`.
    pub fn invalid(message: impl Into<String>) -> Self {
        Error::InvalidArg {
            message: message.into(),
        }
    }

    /// `E_NOT_FOUND` with `message`.
    pub fn not_found(message: impl Into<String>) -> Self {
        Error::NotFound {
            message: message.into(),
        }
    }

    /// `E_STATE` with `message` and nothing more.
    pub fn state(message: impl Into<String>) -> Self {
        Error::State {
            message: message.into(),
            about: StateAbout::Nothing,
        }
    }

    /// `E_STATE`: `dir` holds no store (no `wal.log`).
    pub fn no_store(dir: &std::path::Path) -> Self {
        Error::State {
            message: format!("no tgms store at {}", dir.display()),
            about: StateAbout::NoStore {
                path: dir.to_path_buf(),
            },
        }
    }

    /// Wraps an I/O error with the path it concerns.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }

    /// The spec error code.
    pub fn code(&self) -> ErrorCode {
        match self {
            Error::InvalidArg { .. } | Error::BadInput { .. } | Error::BadOp { .. } => {
                ErrorCode::InvalidArg
            }
            Error::NotFound { .. } => ErrorCode::NotFound,
            Error::State { .. }
            | Error::LogDamaged { .. }
            | Error::Corruption { .. }
            | Error::Io { .. }
            | Error::Poisoned
            | Error::OutcomeUnknown { .. } => ErrorCode::State,
        }
    }

    /// The message of the spec payload. For a damaged log it is exactly
    /// `event log damaged at record <n>` (`data-model.md` §8.2).
    pub fn message(&self) -> String {
        match self {
            Error::LogDamaged { record, .. } => format!("event log damaged at record {record}"),
            other => other.to_string(),
        }
    }
}
