//! The schema's JSON form: what `tessera schema ARRAY --json` prints and
//! `tessera create --schema FILE.json` reads, written by people as often as
//! by tools. Datatypes as TileDB names them (`"INT64"`), domains, tile
//! extents and fill values as JSON values, filters by name with their
//! options. Fields left out take libtiledb's defaults; a field the form does
//! not know is an error naming it. `docs/SCHEMA_JSON.md` documents it.
//!
//! ```
//! use tessera_schema::json::{schema_from_json, schema_to_json};
//! let doc: serde_json::Value = serde_json::from_str(r#"{
//!     "array_type": "sparse",
//!     "dimensions": [{"name": "x", "type": "INT64", "domain": [0, 99], "tile_extent": 10}],
//!     "attributes": [{"name": "v", "type": "FLOAT64", "filters": [{"name": "zstd", "level": 3}]}]
//! }"#).unwrap();
//! let parsed = schema_from_json(&doc).unwrap();
//! assert_eq!(parsed.schema.capacity, 10_000); // libtiledb's default
//! let back = schema_to_json(&parsed.schema, &parsed.enumerations);
//! assert_eq!(back["dimensions"][0]["domain"], serde_json::json!([0, 99]));
//! assert_eq!(back["attributes"][0]["fill_value"], "NaN");
//! ```

mod document;
mod fields;
mod filters;
mod labels;
mod values;

pub use document::{
    attribute_from_json, current_domain_from_json, enumeration_from_json, schema_from_json,
    schema_to_json, SchemaDocument, WRITTEN_VERSION,
};

use fields::invalid;
use tessera_tile::Datatype;

/// A datatype by TileDB's name (`"INT64"`, `"STRING_UTF8"`; any case, with
/// or without `TILEDB_`).
pub(crate) fn datatype_from_name(name: &str, path: &str) -> Result<Datatype, crate::SchemaError> {
    Datatype::named(name).ok_or_else(|| {
        invalid(
            path,
            format!("unknown datatype `{name}` (TileDB's names: INT64, FLOAT64, STRING_UTF8, ...)"),
        )
    })
}
