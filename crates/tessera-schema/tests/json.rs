//! The schema's JSON form against every schema libtiledb wrote: printed,
//! read back and printed again gives the same document (every format
//! version); and for schemas of the version tessera writes (22), the schema
//! read back from JSON encodes to exactly the bytes libtiledb stored, so
//! `tessera schema --json | tessera create` makes the schema libtiledb made.

mod common;

use common::{stored_schemas, StoredSchema};
use tessera_schema::json::{schema_from_json, schema_to_json, WRITTEN_VERSION};
use tessera_schema::load_enumerations;
use tessera_storage::LocalFs;

#[test]
fn every_stored_schema_round_trips_through_json() {
    let (mut checked, mut byte_exact) = (0, 0);
    let mut failures = Vec::new();
    for stored in stored_schemas() {
        let StoredSchema {
            array,
            file: f,
            payload,
            schema,
            key,
        } = &stored;
        if !schema.dimension_labels.is_empty() {
            continue; // not created yet: refused, as tested below
        }
        let Ok(enums) = load_enumerations(&LocalFs, array, schema, *key) else {
            continue;
        };
        let at = format!("{} {}", array.display(), f.name);
        let json = schema_to_json(schema, &enums);
        let doc = match schema_from_json(&json) {
            Ok(d) => d,
            Err(e) => {
                failures.push(format!("{at}: {e}\n{json:#}"));
                continue;
            }
        };
        let again = schema_to_json(&doc.schema, &doc.enumerations);
        let mut json_at_22 = json.clone();
        json_at_22["format_version"] = WRITTEN_VERSION.number().into();
        if again != json_at_22 {
            failures.push(format!(
                "{at}: JSON differs after a round trip:\n{json:#}\n{again:#}"
            ));
            continue;
        }
        checked += 1;
        if schema.version == WRITTEN_VERSION {
            let mut s = doc.schema;
            s.name.clone_from(&schema.name);
            s.timestamp_range = schema.timestamp_range;
            for (ours, theirs) in s.enumerations.iter_mut().zip(&schema.enumerations) {
                ours.path.clone_from(&theirs.path);
            }
            if s.encode().unwrap() != *payload {
                failures.push(format!(
                    "{at}: the schema read from JSON encodes to other bytes"
                ));
            }
            for (ours, theirs) in doc.enumerations.iter().zip(&enums) {
                if (ours.datatype, ours.cell_val_num, ours.ordered, &ours.values)
                    != (
                        theirs.datatype,
                        theirs.cell_val_num,
                        theirs.ordered,
                        &theirs.values,
                    )
                {
                    failures.push(format!("{at}: enumeration {} differs", ours.name));
                }
            }
            byte_exact += 1;
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert!(
        checked > 100 && byte_exact > 30,
        "{checked} schemas, {byte_exact} byte-exact"
    );
}

#[test]
fn hand_written_mistakes_are_errors_naming_the_field() {
    let cases = [
        (r#"{"array_type": "sparse", "dimensions": [{"name": "x", "type": "INT64", "domain": [0, 9]}], "capacity": 5, "capacitty": 6}"#,
         "invalid schema: schema: unknown field `capacitty`"),
        (r#"{"array_type": "sparse", "dimensions": [{"name": "x", "type": "INT46", "domain": [0, 9]}]}"#,
         "invalid schema: dimensions[0].type: unknown datatype `INT46`"),
        (r#"{"array_type": "dense", "dimensions": [{"name": "x", "type": "INT8", "domain": [0, 300]}]}"#,
         "invalid schema: dimensions[0].domain[1]: expected a INT8 value, found 300"),
        (r#"{"array_type": "sparse", "dimensions": [{"name": "x", "type": "INT64", "domain": [0, 9]}], "attributes": [{"name": "a", "type": "INT32", "filters": [{"name": "zstd", "window": 3}]}]}"#,
         "invalid schema: attributes[0].filters[0]: unknown field `window`"),
        (r#"{"array_type": "sparse", "dimensions": [{"name": "x", "type": "INT64", "domain": [0, 9]}], "attributes": [{"name": "a", "type": "INT32", "filters": [{"name": "zstd", "max_window": 3}]}]}"#,
         "invalid schema: attributes[0].filters[0].max_window: the zstd filter takes no option `max_window`"),
        (r#"{"array_type": "sparse", "dimensions": [{"name": "x", "type": "INT64", "domain": [0, 9]}], "attributes": [{"name": "a", "type": "INT32", "cell_val_num": 2, "fill_value": 1}]}"#,
         "invalid schema: attributes[0].fill_value: 4 bytes, but a cell holds 8"),
        (r#"{"array_type": "sparse", "dimensions": [{"name": "x", "type": "INT64", "domain": [0, 9]}], "attributes": [{"name": "a", "type": "INT32", "enumeration": "e"}]}"#,
         "invalid schema: attributes[0].enumeration: no enumeration `e` in `enumerations`"),
        (r#"{"dimensions": []}"#, "invalid schema: array_type: required: dense or sparse"),
        (r#"{"array_type": "sparse", "dimensions": [{"name": "x", "type": "INT64", "domain": [0, 9]}], "dimension_labels": [{}]}"#,
         "invalid schema: dimension_labels[0].name: required"),
        (r#"{"array_type": "sparse", "dimensions": [{"name": "x", "type": "INT64", "domain": [0, 9]}], "dimension_labels": [{"name": "l", "dimension": 1, "type": "FLOAT64"}]}"#,
         "invalid schema: dimension_labels[0].dimension: no dimension 1: the schema has 1"),
        (r#"{"array_type": "sparse", "dimensions": [{"name": "x", "type": "FLOAT64", "domain": [0, 9]}], "dimension_labels": [{"name": "l", "dimension": 0, "type": "INT32"}]}"#,
         "invalid schema: dimension_labels[0].dimension: `x` is FLOAT64; labels go on integer"),
        (r#"{"array_type": "sparse", "dimensions": [{"name": "x", "type": "INT64", "domain": [0, 9]}], "dimension_labels": [{"name": "x", "dimension": 0, "type": "INT32"}]}"#,
         "invalid schema: dimension_labels[0]: the name `x` is already a dimension, attribute or label"),
        (r#"{"array_type": "sparse", "dimensions": [{"name": "x", "type": "INT64", "domain": [0, 9]}], "dimension_labels": [{"name": "l", "dimension": 0, "type": "INT32", "order": "unordered"}]}"#,
         "invalid schema: dimension_labels[0].order: `unordered` is not increasing or decreasing"),
        (r#"{"array_type": "sparse", "dimensions": [{"name": "x", "type": "INT64", "domain": [0, 9]}], "dimension_labels": [{"name": "l", "dimension": 0, "type": "INT32", "tile_extent": 0}]}"#,
         "invalid schema: dimension_labels[0]: its label array: invalid schema: dimension `index`: tile extent must be positive"),
    ];
    for (doc, want) in cases {
        let v: serde_json::Value = serde_json::from_str(doc).unwrap();
        let got = schema_from_json(&v).unwrap_err().to_string();
        assert!(got.starts_with(want), "{doc}\n got: {got}\nwant: {want}");
    }
}

#[test]
fn omitted_fields_take_libtiledbs_defaults() {
    let v: serde_json::Value = serde_json::from_str(
        r#"{"array_type": "dense", "dimensions": [{"name": "x", "type": "UINT8", "domain": [1, 200]}],
            "attributes": [{"name": "a", "type": "INT16"}, {"name": "s", "type": "STRING_UTF8", "cell_val_num": "var"}]}"#,
    )
    .unwrap();
    let doc = schema_from_json(&v).unwrap();
    insta::assert_json_snapshot!(schema_to_json(&doc.schema, &doc.enumerations));
}
