//! A query's result as text (`tgms sql`): an aligned table, CSV with a header line, or a
//! JSON array of row objects. Times print as ISO-8601 UTC in all three.

use datafusion::arrow::csv::WriterBuilder;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::arrow::error::ArrowError;
use datafusion::arrow::json::ArrayWriter;
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::arrow::util::pretty::pretty_format_batches;
use std::io::Write;

/// How a result prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// An aligned text table.
    Table,
    /// CSV with a header line (null is an empty field).
    Csv,
    /// One JSON array of row objects (a null column is left out of its row).
    Json,
}

/// Writes the result (`schema`, `batches`) to `w` in `format`.
pub fn write(
    w: &mut dyn Write,
    schema: &SchemaRef,
    batches: &[RecordBatch],
    format: Format,
) -> Result<(), ArrowError> {
    match format {
        Format::Table => {
            let empty;
            // An empty result still shows its header.
            let batches = if batches.is_empty() {
                empty = [RecordBatch::new_empty(schema.clone())];
                &empty[..]
            } else {
                batches
            };
            writeln!(w, "{}", pretty_format_batches(batches)?)?;
        }
        Format::Csv => {
            let mut cw = WriterBuilder::new().with_header(true).build(w);
            if batches.is_empty() {
                cw.write(&RecordBatch::new_empty(schema.clone()))?;
            }
            for b in batches {
                cw.write(b)?;
            }
        }
        Format::Json => {
            let mut jw = ArrayWriter::new(&mut *w);
            for b in batches {
                jw.write(b)?;
            }
            // `[]` when there are no rows.
            jw.finish()?;
            writeln!(w)?;
        }
    }
    Ok(())
}
