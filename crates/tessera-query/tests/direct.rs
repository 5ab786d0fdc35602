//! The sparse fast path (tiles decoded straight into the result) returns
//! exactly what the general path returns, cell for cell and in the same
//! order, and reads no coordinates when none are asked for (nor tested:
//! a condition on an attribute over the whole array).

mod common;

use std::sync::Arc;
use tessera_fragment::condition::CompareOp;
use tessera_fragment::{Field, FileKind, OpenArray};
use tessera_query::{Expr, ReadRequest, ReadResult, ReadSession, Value};
use tessera_storage::{LocalFs, Recording, Storage};
use tessera_tile::Layout;

/// Sets a request up for one case.
type Setup = dyn Fn(ReadRequest) -> ReadRequest;

fn read(
    storage: Arc<dyn Storage>,
    a: &Arc<OpenArray>,
    direct: bool,
    setup: &Setup,
) -> Result<ReadResult, String> {
    let request = setup(ReadRequest::new().tune(|t| t.direct = direct));
    ReadSession::new(storage, a.clone())
        .execute(&request)
        .map_err(|e| e.to_string())
}

#[test]
fn direct_reads_equal_general_reads() {
    let mut compared = 0;
    for (path, a) in common::fixture_arrays() {
        if a.schema.is_dense() {
            continue;
        }
        let d0 = a.schema.dimensions[0].name.clone();
        let d0_half = d0.clone();
        let first_attr: Vec<String> = a
            .schema
            .attributes
            .iter()
            .take(1)
            .map(|x| x.name.clone())
            .collect();
        let span = common::first_dim_span(&a);
        let cond = attribute_condition(&a);
        let cond_in_half = cond.clone();
        let last = a.schema.dimensions.last().map(|d| d.name.clone());
        let (last_half, d0_last) = (last.clone(), d0.clone());
        let cases: Vec<(&str, Box<Setup>)> = vec![
            ("full", Box::new(|q| q)),
            ("global order", Box::new(|q| q.layout(Layout::GlobalOrder))),
            ("no coordinates", Box::new(|q| q.dimensions(false))),
            (
                "one attribute",
                Box::new(move |q| q.attributes(first_attr.clone()).dimensions(false)),
            ),
            (
                "last dimension",
                Box::new(move |q| q.dimension_names(last.clone())),
            ),
            // Tiles the range cuts test the first dimension, not returned.
            (
                "last dimension, first half",
                Box::new(move |q| match span {
                    Some((lo, hi)) => q.dimension_names(last_half.clone()).range(
                        &d0_last,
                        Value::Int(lo),
                        Value::Int(lo + (hi - lo) / 2),
                    ),
                    None => q,
                }),
            ),
            // Tiles partly inside the range take the general path.
            (
                "first half",
                Box::new(move |q| match span {
                    Some((lo, hi)) => q.range(&d0, Value::Int(lo), Value::Int(lo + (hi - lo) / 2)),
                    None => q,
                }),
            ),
            // Every tile's cells picked by the condition; in the first
            // half, tiles wholly inside and cut by the range alike.
            (
                "condition",
                Box::new(move |q| match &cond {
                    Some(c) => q.condition(c.clone()).dimensions(false),
                    None => q,
                }),
            ),
            (
                "condition in the first half",
                Box::new(move |q| match (&cond_in_half, span) {
                    (Some(c), Some((lo, hi))) => q.condition(c.clone()).range(
                        &d0_half,
                        Value::Int(lo),
                        Value::Int(lo + (hi - lo) / 2),
                    ),
                    _ => q,
                }),
            ),
        ];
        for (name, setup) in &cases {
            let general = read(Arc::new(LocalFs), &a, false, setup.as_ref());
            let direct = read(Arc::new(LocalFs), &a, true, setup.as_ref());
            let what = format!("{}: {name}: general and direct paths", path.display());
            common::assert_same_outcome(&what, &general, &direct);
            compared += 1;
        }
    }
    assert!(compared > 100, "only {compared} reads compared");
}

/// `a > 0` on the array's first fixed-sized number attribute of one value.
fn attribute_condition(a: &OpenArray) -> Option<Expr> {
    let at = a.schema.attributes.iter().find(|x| {
        x.cell_val_num == tessera_schema::CellValNum::Fixed(1)
            && !x.datatype.is_string()
            && x.datatype.size() <= 8
    })?;
    Some(Expr::Compare {
        field: at.name.clone(),
        op: CompareOp::Gt,
        values: vec![vec![0; at.datatype.size() as usize]],
    })
}

/// A single-fragment sparse array read without coordinates touches no
/// coordinate file, with or without a condition on an attribute; read for
/// its last dimension alone (coordinates split by dimension), no file of
/// the others.
#[test]
fn direct_reads_skip_coordinates_nobody_asked_for() {
    let (mut skipped, mut one_dimension) = (0, 0);
    for (path, a) in common::fixture_arrays() {
        let plain = |f: &tessera_fragment::FragmentMetadata| {
            !f.footer.has_timestamps && !f.footer.has_delete_meta
        };
        if a.schema.is_dense()
            || a.fragments.len() != 1
            || !a.fragments.iter().all(plain)
            || !a.delete_conditions.is_empty()
        {
            continue;
        }
        let rec = Arc::new(Recording::new(LocalFs, &path));
        let a = Arc::new(OpenArray::open(&*rec, &path, 0, u64::MAX, None).unwrap());
        let before = rec.requests().len();
        let session = ReadSession::new(rec.clone(), a.clone());
        session
            .execute(&ReadRequest::new().dimensions(false))
            .unwrap();
        if let Some(c) = attribute_condition(&a) {
            session
                .execute(&ReadRequest::new().dimensions(false).condition(c))
                .unwrap();
        }
        let nd = a.schema.dimensions.len();
        let fields = (0..nd).map(Field::Dimension).chain([Field::Coords]);
        let coordinate_reads = reads_of(&rec, before, &path, &a, fields);
        assert!(
            coordinate_reads.is_empty(),
            "{}: {coordinate_reads:?}",
            path.display()
        );
        skipped += 1;
        let split = a.fragments[0]
            .version()
            .has(tessera_fragment::gates::SPLIT_COORDINATES);
        if nd < 2 || !split {
            continue;
        }
        let before = rec.requests().len();
        let last = &a.schema.dimensions[nd - 1].name;
        let r = session
            .execute(&ReadRequest::new().dimension_names([last]))
            .unwrap();
        assert_eq!(&r.columns[0].name, last);
        let others = reads_of(&rec, before, &path, &a, (0..nd - 1).map(Field::Dimension));
        assert!(others.is_empty(), "{}: {others:?}", path.display());
        one_dimension += 1;
    }
    assert!(
        skipped > 10 && one_dimension > 10,
        "only {skipped} arrays checked, {one_dimension} for one dimension"
    );
}

/// The reads `rec` recorded from its `before`-th on of the files of
/// `fields` of `a`'s one fragment (the requests name files relative to
/// the array at `path`).
fn reads_of(
    rec: &Recording<LocalFs>,
    before: usize,
    path: &std::path::Path,
    a: &OpenArray,
    fields: impl Iterator<Item = Field>,
) -> Vec<String> {
    let frag = &a.fragments[0];
    let files: Vec<String> = fields
        .flat_map(|f| [FileKind::Fixed, FileKind::Var].map(|k| frag.data_file(f, k)))
        .map(|p| format!("read {} ", p.strip_prefix(path).unwrap().display()))
        .collect();
    let mut reads = rec.requests().split_off(before);
    reads.retain(|r| files.iter().any(|f| r.starts_with(f.as_str())));
    reads
}
