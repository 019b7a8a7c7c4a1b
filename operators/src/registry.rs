//! The operator registry of `operators.md` §2: one [`OpSpec`] per operator holds its name,
//! manual, argument declarations (schema fragment, default, required, uid-typed paths),
//! validators, cost estimator and coefficient, output declarations (contract types, list row
//! keys, paging/capping, certificate fields) and its kernel. Everything else — the argument
//! JSON Schema, tool descriptions and definitions, the planner manual and the verifier
//! contracts — is generated from it ([`crate::tools`]).

use crate::args::Args;
use crate::contract::Contract;
use crate::cost::Estimate;
use crate::error::OpError;
use crate::output::Output;
use serde_json::{json, Map, Value};
use std::sync::OnceLock;
use tgms_engine::{Snapshot, Stats};

/// What a kernel reads: the one snapshot the whole call uses.
pub struct Ctx<'s> {
    /// The snapshot every read of the call goes through.
    pub snap: Snapshot<'s>,
}

/// A semantic validator (pipeline step 4).
pub type Validator = fn(&Args) -> Result<(), OpError>;
/// A cost estimator (§7): `(filled args, stats) → estimate`.
pub type CostFn = fn(&Args, &Stats) -> Estimate;
/// A kernel (pipeline step 7): fills the payload through `out`.
pub type Kernel = fn(&Ctx<'_>, &Args, &mut Output) -> Result<(), OpError>;

/// One argument declaration.
#[derive(Clone, Debug)]
pub struct ArgDecl {
    /// The argument's name in the call's args object.
    pub name: &'static str,
    /// JSON Schema fragment (without the `default` keyword; see `default`).
    pub schema: Value,
    /// The value filled in when the argument is absent (`None`: left absent).
    pub default: Option<Value>,
    /// The call must give the argument (then `default` is `None`).
    pub required: bool,
    /// Uid-typed paths relative to this argument: `""` (the argument itself), `"[*]"`
    /// (every element), `".seeds[*]"`, ...
    pub uid_paths: &'static [&'static str],
}

impl ArgDecl {
    /// A required argument.
    pub fn req(name: &'static str, schema: Value) -> Self {
        ArgDecl {
            name,
            schema,
            default: None,
            required: true,
            uid_paths: &[],
        }
    }
    /// An optional argument with a default (`Value::Null` is a real default: `null`).
    pub fn opt(name: &'static str, schema: Value, default: Value) -> Self {
        ArgDecl {
            name,
            schema,
            default: Some(default),
            required: false,
            uid_paths: &[],
        }
    }
    /// An optional argument without a default: when absent it stays absent, so adding one to
    /// an operator leaves the `args_echo` of every existing call byte-identical.
    pub fn opt_absent(name: &'static str, schema: Value) -> Self {
        ArgDecl {
            name,
            schema,
            default: None,
            required: false,
            uid_paths: &[],
        }
    }
    /// Marks uid-typed paths inside this argument.
    pub fn uids(mut self, paths: &'static [&'static str]) -> Self {
        self.uid_paths = paths;
        self
    }
    /// The property schema as published: the fragment plus `"default"`.
    pub fn published_schema(&self) -> Value {
        let mut s = self.schema.clone();
        if let (Some(d), Value::Object(m)) = (&self.default, &mut s) {
            m.insert("default".into(), d.clone());
        }
        s
    }
}

/// How a list output is cut.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cut {
    /// Cursor-paged (`rows`).
    Paged,
    /// Capped at `limit`, not paged.
    Capped,
}

/// The row key of a list (§6.3).
#[derive(Clone, Copy, Debug)]
pub enum RowKey {
    /// One field: the key value is that field's value.
    Field(&'static str),
    /// Several fields: the key value is the JSON array of their values.
    Fields(&'static [&'static str]),
    /// The whole element.
    Row,
    /// Computed by the kernel per row (e.g. `aggregate_events`: the array of the dimension
    /// column values of the call); the text names it for the verifier contract. Lists with
    /// this key are filled with [`crate::output::Output::paged_keyed`].
    Computed(&'static str),
    /// A derived key (e.g. `[a.vid, b.vid]`, the list of a path's eids): `spec` is the key as
    /// the spec writes it (published in the verifier contracts), `of` computes it.
    Derived {
        /// The key as the spec writes it.
        spec: &'static str,
        /// Computes the key value of one row.
        of: fn(&Value) -> Value,
    },
}

impl RowKey {
    /// The key value of one row.
    pub fn of(&self, row: &Value) -> Value {
        match self {
            RowKey::Field(f) => row.get(*f).cloned().unwrap_or(Value::Null),
            RowKey::Fields(fs) => Value::Array(
                fs.iter()
                    .map(|f| row.get(*f).cloned().unwrap_or(Value::Null))
                    .collect(),
            ),
            RowKey::Row => row.clone(),
            RowKey::Computed(_) => Value::Null,
            RowKey::Derived { of, .. } => of(row),
        }
    }
}

/// A certified list output.
#[derive(Clone, Debug)]
pub struct ListDecl {
    /// The row key the set digest is computed over.
    pub key: RowKey,
    /// Whether the list is cursor-paged or capped.
    pub cut: Cut,
    /// `<list>_total` (`rows_total` for `rows`).
    pub total_field: String,
    /// `<list>_set_digest` (`set_digest` for `rows`).
    pub digest_field: String,
    /// `<list>_truncated` when the operator publishes one (e.g. `edges_truncated`).
    pub truncated_field: Option<String>,
}

/// One top-level output field.
#[derive(Clone, Debug)]
pub struct OutputDecl {
    /// The field's name in the payload.
    pub name: String,
    /// The contract as written in the registry (spec notation).
    pub contract_text: String,
    /// The contract, parsed from `contract_text`.
    pub contract: Contract,
    /// The list certificate, for a certified list output.
    pub list: Option<ListDecl>,
    /// Present only under some arguments (e.g. `edges` with `include_edges`).
    pub conditional: bool,
}

/// One registry entry.
pub struct OpSpec {
    /// The operator's name (the tool name).
    pub name: &'static str,
    /// The reviewed manual text.
    pub manual: &'static str,
    /// The argument declarations.
    pub args: Vec<ArgDecl>,
    /// The semantic validators, run in order after the schema check (step 4).
    pub validators: Vec<Validator>,
    /// The cost estimator; `None` for operators without one (no cost guardrail).
    pub cost: Option<CostFn>,
    /// Time coefficient in ms per million units (§7.1).
    pub coeff: f64,
    /// The top-level output fields, each declared once.
    pub outputs: Vec<OutputDecl>,
    /// The kernel that computes the payload.
    pub kernel: Kernel,
}

/// Builder of the output declarations: every field once, lists with their certificate
/// fields derived by the §6.3 naming rule.
#[derive(Default)]
pub struct Outputs(Vec<OutputDecl>);

fn contract(text: &str) -> Contract {
    // Registry contracts are literals of this crate; a typo is caught by the registry test
    // (`registry_is_well_formed`), which parses every entry.
    Contract::parse(text).unwrap_or(Contract::Any)
}

impl Outputs {
    /// A plain field.
    pub fn field(mut self, name: &str, ty: &str) -> Self {
        self.0.push(OutputDecl {
            name: name.into(),
            contract_text: ty.into(),
            contract: contract(ty),
            list: None,
            conditional: false,
        });
        self
    }

    /// The cursor-paged `rows` list with `rows_total`, `truncated`, `cursor`, `set_digest`.
    pub fn rows(mut self, row_ty: &str, key: RowKey) -> Self {
        self.0.push(OutputDecl {
            name: "rows".into(),
            contract_text: format!("list<{row_ty}>"),
            contract: contract(&format!("list<{row_ty}>")),
            list: Some(ListDecl {
                key,
                cut: Cut::Paged,
                total_field: "rows_total".into(),
                digest_field: "set_digest".into(),
                truncated_field: None,
            }),
            conditional: false,
        });
        self.field("rows_total", "int")
            .field("truncated", "bool")
            .field("cursor", "str|null")
            .field("set_digest", "hex")
    }

    /// A capped list `L` with `L_total` (and `L_truncated` if `with_flag`) and
    /// `L_set_digest`, in that order.
    pub fn capped(mut self, name: &str, elem_ty: &str, key: RowKey, with_flag: bool) -> Self {
        let total = format!("{name}_total");
        let digest = format!("{name}_set_digest");
        let flag = with_flag.then(|| format!("{name}_truncated"));
        self.0.push(OutputDecl {
            name: name.into(),
            contract_text: format!("list<{elem_ty}>"),
            contract: contract(&format!("list<{elem_ty}>")),
            list: Some(ListDecl {
                key,
                cut: Cut::Capped,
                total_field: total.clone(),
                digest_field: digest.clone(),
                truncated_field: flag.clone(),
            }),
            conditional: false,
        });
        self = self.field(&total, "int");
        if let Some(f) = flag {
            self = self.field(&f, "bool");
        }
        self.field(&digest, "hex")
    }

    /// Marks the fields declared so far whose names are in `names` as conditional.
    pub fn conditional(mut self, names: &[&str]) -> Self {
        for d in &mut self.0 {
            if names.contains(&d.name.as_str()) {
                d.conditional = true;
            }
        }
        self
    }

    /// The declarations.
    pub fn build(self) -> Vec<OutputDecl> {
        self.0
    }
}

impl OpSpec {
    /// The argument JSON Schema (§2, artifact 1).
    pub fn arg_schema(&self) -> Value {
        let props: Map<String, Value> = self
            .args
            .iter()
            .map(|a| (a.name.to_string(), a.published_schema()))
            .collect();
        let required: Vec<&str> = self
            .args
            .iter()
            .filter(|a| a.required)
            .map(|a| a.name)
            .collect();
        json!({"type": "object", "additionalProperties": false, "properties": props, "required": required})
    }

    /// The output declaration of `name`.
    pub fn output(&self, name: &str) -> Option<&OutputDecl> {
        self.outputs.iter().find(|o| o.name == name)
    }

    /// Top-level output field names in declaration order.
    pub fn output_names(&self) -> Vec<&str> {
        self.outputs.iter().map(|o| o.name.as_str()).collect()
    }

    /// The tool description (§2, artifact 2).
    pub fn description(&self) -> String {
        format!(
            "{}\nOutput fields: {}.",
            self.manual.trim_end(),
            self.output_names().join(", ")
        )
    }
}

/// The registry, sorted by name.
pub fn registry() -> &'static [OpSpec] {
    static REG: OnceLock<Vec<OpSpec>> = OnceLock::new();
    REG.get_or_init(|| {
        let mut v = crate::ops::all();
        v.sort_by_key(|s| s.name);
        v
    })
}

/// The entry of `name`.
pub fn lookup(name: &str) -> Option<&'static OpSpec> {
    registry().iter().find(|s| s.name == name)
}

/// Sorted operator names.
pub fn names() -> Vec<&'static str> {
    registry().iter().map(|s| s.name).collect()
}

/// Shared schema fragments of §8.
pub mod frag {
    use crate::timeparse::{DURATION_PATTERN, TIME_PATTERN};
    use serde_json::{json, Value};
    use tgms_engine::OPEN_END;

    /// `TIMESTAMP`: integer µs, or a string of [`TIME_PATTERN`] that the pipeline resolves
    /// to µs before anything else sees it ([`crate::timeparse`]).
    pub fn timestamp() -> Value {
        json!({"type": ["integer", "string"], "minimum": 0, "maximum": OPEN_END, "pattern": TIME_PATTERN,
            "description": "int64 epoch microseconds, UTC; or ISO-8601 (\"2004-07-22\", \"2004-07-22T21:28:00Z\", \"…+02:00\") or \"open\""})
    }
    /// A duration in µs (`>= 1`), or a string of [`DURATION_PATTERN`] (`"7d"`, `"36h"`,
    /// `"3d 4h"`). `nullable` admits `null`; `what` is the description.
    pub fn duration(nullable: bool, what: &str) -> Value {
        let ty = if nullable {
            json!(["integer", "string", "null"])
        } else {
            json!(["integer", "string"])
        };
        json!({"type": ty, "minimum": 1, "pattern": DURATION_PATTERN,
            "description": format!("{what}: µs, or \"7d\", \"36h\", \"15m\", \"90s\", \"500ms\", \"3d 4h\"")})
    }
    /// A bucket width that may also be a calendar unit (`calendar.rs`).
    pub fn calendar_stride(nullable: bool) -> Value {
        let mut d = duration(nullable, "bucket width");
        d["pattern"] = json!(crate::timeparse::STRIDE_PATTERN);
        d["description"] = json!("bucket width: µs, \"7d\", \"36h\", \"15m\", \"3d 4h\", or a calendar unit \"day\", \"iso_week\", \"month\", \"year\" (local to `timezone`)");
        d
    }
    /// The `timezone` of calendar computations.
    pub fn timezone() -> Value {
        json!({"type": ["string", "null"], "minLength": 1,
            "description": "time zone of calendar buckets and units: an IANA name (\"Europe/Berlin\"), \"UTC\" or a fixed offset (\"+05:30\"); null = UTC"})
    }
    /// `WINDOW`.
    pub fn window() -> Value {
        json!({"type": "object", "additionalProperties": false,
            "properties": {"t_a": timestamp(), "t_b": timestamp()}, "required": ["t_a", "t_b"],
            "description": "half-open valid-time window [t_a, t_b)"})
    }
    /// `WINDOW` or null.
    pub fn window_or_null() -> Value {
        let mut w = window();
        w["type"] = json!(["object", "null"]);
        w
    }
    /// `AS_OF_TT` (without its default, which the declaration carries); takes the time
    /// strings of [`timestamp`].
    pub fn as_of_tt() -> Value {
        json!({"type": ["integer", "string"], "minimum": 0, "maximum": OPEN_END, "pattern": TIME_PATTERN,
            "description": "belief state (transaction time) to evaluate under, µs or ISO-8601; OPEN_END (or \"open\") = current beliefs"})
    }
    /// `LIMIT` (without its default).
    pub fn limit() -> Value {
        json!({"type": "integer", "minimum": 1, "maximum": 10000})
    }
    /// `CURSOR` (without its default).
    pub fn cursor() -> Value {
        json!({"type": ["string", "null"], "description": "opaque pagination cursor from a previous call"})
    }
    /// `UID`.
    pub fn uid() -> Value {
        json!({"type": "string", "minLength": 1})
    }
    /// `UID_LIST`.
    pub fn uid_list() -> Value {
        json!({"type": "array", "items": uid(), "minItems": 1, "maxItems": 10000})
    }
    /// `REL_TYPES` (without its default).
    pub fn rel_types() -> Value {
        json!({"type": ["array", "null"], "items": {"type": "string"}})
    }
}

/// Declarations of the shared arguments with their defaults.
pub mod common {
    use super::{frag, ArgDecl};
    use serde_json::{json, Value};
    use tgms_engine::OPEN_END;

    /// `as_of_tt = OPEN_END`.
    pub fn as_of_tt() -> ArgDecl {
        ArgDecl::opt("as_of_tt", frag::as_of_tt(), json!(OPEN_END))
    }
    /// `limit = 100`.
    pub fn limit() -> ArgDecl {
        ArgDecl::opt("limit", frag::limit(), json!(100))
    }
    /// `cursor = null`.
    pub fn cursor() -> ArgDecl {
        ArgDecl::opt("cursor", frag::cursor(), Value::Null)
    }
    /// `rel_types = null`.
    pub fn rel_types() -> ArgDecl {
        ArgDecl::opt("rel_types", frag::rel_types(), Value::Null)
    }
}
