//! Update commits (`.upd`) written by real libtiledb releases: parsed,
//! reported with their values, and their stored (negated) condition applied
//! like a delete's.

use std::path::PathBuf;
use tessera_fragment::condition::{CompareOp, Condition};
use tessera_fragment::OpenArray;
use tessera_storage::LocalFs;

fn testdata() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata")
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

#[test]
fn update_commits_of_every_version_are_reported() {
    let mut seen = 0;
    for v in std::fs::read_dir(testdata()).unwrap() {
        let dir = v.unwrap().path().join("updates");
        if !dir.exists() {
            continue;
        }
        seen += 1;
        let expected: serde_json::Value =
            serde_json::from_slice(&std::fs::read(dir.join("expected.json")).unwrap()).unwrap();
        let written = &expected["case"]["update_commits"][0];
        let a = OpenArray::open(&LocalFs, &dir.join("array"), 0, u64::MAX, None).unwrap();
        assert_eq!(a.delete_conditions.len(), 1, "{}", dir.display());
        let u = &a.delete_conditions[0];
        assert!(u.is_update() && u.name.ends_with(".upd"), "{}", u.name);
        assert_eq!(u.timestamp, 2);
        // The writer asked for `a > 6`; libtiledb stores its negation.
        match &u.condition {
            Condition::Compare {
                field, op, value, ..
            } => {
                assert_eq!((field.as_str(), *op), ("a", CompareOp::Le));
                assert_eq!(hex(value), written["condition"]["value_hex"]);
            }
            c => panic!("unexpected condition {c:?}"),
        }
        let schema = &a.schema;
        let shown = u
            .condition
            .display_with(&|f| schema.attribute(f).map(|x| x.datatype));
        assert_eq!(shown, "a <= 6");
        let values = u.update_values.as_ref().unwrap();
        let got: Vec<serde_json::Value> = values
            .iter()
            .map(|v| serde_json::json!({"field": v.field, "value_hex": hex(&v.value)}))
            .collect();
        assert_eq!(serde_json::Value::from(got), written["values"]);

        // At timestamp 1 the update is not in force.
        let a = OpenArray::open(&LocalFs, &dir.join("array"), 0, 1, None).unwrap();
        assert!(a.delete_conditions.is_empty());
    }
    assert!(seen >= 5, "the updates fixture is missing from testdata");
}

#[test]
fn update_values_are_bounded_by_the_tile() {
    // `a <= 6`, then a count of update values far beyond the bytes present.
    let mut b = vec![1u8, 1];
    b.extend_from_slice(&1u32.to_le_bytes());
    b.push(b'a');
    b.extend_from_slice(&4u64.to_le_bytes());
    b.extend_from_slice(&6i32.to_le_bytes());
    let cond_len = b.len();
    b.extend_from_slice(&u64::MAX.to_le_bytes());
    let e = Condition::parse_update(&b).unwrap_err().to_string();
    assert!(e.contains("number of update values"), "{e}");

    // One value whose size runs past the end.
    b.truncate(cond_len);
    b.extend_from_slice(&1u64.to_le_bytes());
    b.extend_from_slice(&1u64.to_le_bytes());
    b.push(b'b');
    b.extend_from_slice(&100u64.to_le_bytes());
    b.extend_from_slice(&[0; 8]);
    let e = Condition::parse_update(&b).unwrap_err().to_string();
    assert!(e.contains("value") && e.contains("update values"), "{e}");

    // The same, well formed.
    b.truncate(b.len() - 16);
    b.extend_from_slice(&8u64.to_le_bytes());
    b.extend_from_slice(&(-1.5f64).to_le_bytes());
    let (c, v) = Condition::parse_update(&b).unwrap();
    assert_eq!(c.display_with(&|_| None), "a <= 0x06000000");
    assert_eq!(v[0].field, "b");
    assert_eq!(v[0].value, (-1.5f64).to_le_bytes());
}
