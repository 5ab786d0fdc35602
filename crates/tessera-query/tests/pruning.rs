//! Pruning by condition: for every sparse fixture array, conditions built
//! from its own values (bounds, middles, values absent from it, nulls)
//! return the same cells with pruning as without, and pruning leaves tiles
//! unread. The fast path, which tests the condition while it picks cells,
//! returns what the general path returns, in the same order.

mod common;

use tessera_fragment::condition::CompareOp;
use tessera_fragment::OpenArray;
use tessera_query::{Expr, Query, ReadResult};
use tessera_schema::CellValNum;
use tessera_tile::storage::{LocalFs, Recording};
use tessera_tile::Datatype;

/// Each cell as its field values, sorted: a multiset to compare.
fn rows(r: &ReadResult) -> Vec<Vec<(Vec<u8>, bool)>> {
    let mut v = cells(r);
    v.sort();
    v
}

/// The result's cells in order: each field's bytes and validity.
fn cells(r: &ReadResult) -> Vec<Vec<(Vec<u8>, bool)>> {
    (0..r.cell_count)
        .map(|i| {
            r.columns
                .iter()
                .map(|c| (c.value(i).to_vec(), c.is_valid(i)))
                .collect()
        })
        .collect()
}

fn cmp(field: &str, op: CompareOp, values: Vec<Vec<u8>>) -> Expr {
    Expr::Compare {
        field: field.into(),
        op,
        values,
    }
}

/// Conditions on one field, from the distinct non-null values it holds
/// (sorted in the field's order).
fn conditions(field: &str, nullable: bool, values: &[Vec<u8>], absent: Vec<u8>) -> Vec<Expr> {
    let mut out = Vec::new();
    let picks = [0, values.len() / 3, values.len() / 2, values.len() - 1];
    for &p in &picks {
        let v = values[p].clone();
        for op in [
            CompareOp::Lt,
            CompareOp::Le,
            CompareOp::Gt,
            CompareOp::Ge,
            CompareOp::Eq,
            CompareOp::Ne,
        ] {
            out.push(cmp(field, op, vec![v.clone()]));
        }
        out.push(cmp(field, CompareOp::NotIn, vec![v.clone()]));
    }
    let (lo, hi) = (values[0].clone(), values[values.len() - 1].clone());
    out.push(cmp(field, CompareOp::In, vec![lo.clone(), hi.clone()]));
    out.push(cmp(field, CompareOp::Eq, vec![absent.clone()]));
    out.push(cmp(field, CompareOp::In, vec![absent]));
    out.push(Expr::Or(vec![
        cmp(field, CompareOp::Lt, vec![lo.clone()]),
        cmp(field, CompareOp::Gt, vec![hi.clone()]),
    ]));
    out.push(Expr::And(vec![
        cmp(field, CompareOp::Ge, vec![lo]),
        cmp(field, CompareOp::Le, vec![hi]),
    ]));
    out.push(Expr::Not(Box::new(cmp(
        field,
        CompareOp::Eq,
        vec![values[picks[1]].clone()],
    ))));
    if nullable {
        for negated in [false, true] {
            out.push(Expr::IsNull {
                field: field.into(),
                negated,
            });
        }
    }
    out
}

/// A value of `t` no cell holds: past the greatest (numbers) or after it (strings).
fn absent(t: Datatype, greatest: &[u8]) -> Option<Vec<u8>> {
    use tessera_schema::Value;
    Some(match Value::decode(t, greatest) {
        Value::Int(x) => x
            .checked_add(1)?
            .to_le_bytes()
            .get(..t.size() as usize)?
            .to_vec(),
        Value::UInt(x) => x
            .checked_add(1)?
            .to_le_bytes()
            .get(..t.size() as usize)?
            .to_vec(),
        Value::Float(x) if t == Datatype::Float32 => {
            ((x as f32) * 2.0 + 1.0).to_le_bytes().to_vec()
        }
        Value::Float(x) => (x * 2.0 + 1.0).to_le_bytes().to_vec(),
        _ if t.size() == 1 => [greatest, b"~"].concat(),
        _ => return None,
    })
}

/// Bytes of data tiles (not fragment metadata) a read requested.
fn data_bytes(requests: &[String]) -> u64 {
    requests
        .iter()
        .filter(|r| r.starts_with("read ") && !r.contains("__fragment_metadata"))
        .filter_map(|r| {
            let (a, b) = r.rsplit(' ').next()?.split_once("..")?;
            Some(b.parse::<u64>().ok()? - a.parse::<u64>().ok()?)
        })
        .sum()
}

#[test]
fn pruned_reads_equal_unpruned_reads() {
    let (mut compared, mut bytes_pruned, mut bytes_full, mut skipped_all) = (0, 0, 0, 0);
    let mut failures = Vec::new();
    for (path, array) in common::fixture_arrays() {
        if array.schema.is_dense() {
            continue; // dense reads keep every cell: nothing to prune
        }
        let whole = Query::new(&LocalFs, &array).execute().unwrap();
        let fields = array
            .schema
            .attributes
            .iter()
            .map(|a| (&a.name, a.datatype, a.cell_val_num, a.nullable))
            .chain(
                array
                    .schema
                    .dimensions
                    .iter()
                    .map(|d| (&d.name, d.datatype, d.cell_val_num, false)),
            );
        for (name, t, n, nullable) in fields {
            let string = t.size() == 1 && n.is_var();
            if n != CellValNum::Fixed(1) && !string {
                continue;
            }
            let col = whole.column(name).unwrap();
            let mut values: Vec<Vec<u8>> = (0..whole.cell_count)
                .filter(|&i| col.is_valid(i))
                .map(|i| col.value(i).to_vec())
                .collect();
            let key = |v: &Vec<u8>| tessera_query::Key::decode(t, v);
            values.sort_by_key(key);
            values.dedup();
            // NaN orders last: the bounds' greatest value is the last other one.
            values.retain(|v| !matches!(key(v), tessera_query::Key::Float(x) if x.is_nan()));
            let Some(absent) = values.last().and_then(|g| absent(t, g)) else {
                continue;
            };
            for cond in conditions(name, nullable, &values, absent) {
                let read = |prune: bool, direct: bool| {
                    let rec = Recording::new(LocalFs, &path);
                    let a = OpenArray::open(&rec, &path, 0, u64::MAX, None).unwrap();
                    let opened = rec.requests().len();
                    let r = Query::new(&rec, &a)
                        .condition(cond.clone())
                        .tune(|t| t.prune = prune)
                        .tune(|t| t.direct = direct)
                        .execute();
                    (r, data_bytes(&rec.requests()[opened..]))
                };
                let ((pruned, b1), (full, b2)) = (read(true, true), read(false, true));
                let (general, _) = read(false, false);
                let at = format!("{} `{cond:?}`", path.display());
                match (&full, &general) {
                    (Ok(f), Ok(g)) if cells(f) != cells(g) => failures.push(format!(
                        "{at}: {} cells by the fast path, {} by the general one (or in another order)",
                        f.cell_count, g.cell_count
                    )),
                    (Ok(_), Ok(_)) => {}
                    (f, g) => failures.push(format!(
                        "{at}: fast path {:?} / general path {:?}",
                        f.as_ref().err(),
                        g.as_ref().err()
                    )),
                }
                match (pruned, full) {
                    (Ok(p), Ok(f)) => {
                        compared += 1;
                        bytes_pruned += b1;
                        bytes_full += b2;
                        if f.cell_count > 0 && b1 == 0 {
                            failures.push(format!("{at}: nothing read, yet cells match"));
                        }
                        if f.cell_count == 0 && b1 == 0 && b2 > 0 {
                            skipped_all += 1;
                        }
                        if rows(&p) != rows(&f) {
                            failures.push(format!(
                                "{at}: {} cells pruned, {} not",
                                p.cell_count, f.cell_count
                            ));
                        }
                    }
                    (p, f) => failures.push(format!("{at}: {:?} / {:?}", p.err(), f.err())),
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(compared > 1000, "only {compared} conditions compared");
    // Pruning pays: it reads less, and conditions no cell meets read no tile.
    assert!(
        bytes_pruned < bytes_full,
        "pruned reads took {bytes_pruned} bytes of tiles, unpruned {bytes_full}"
    );
    assert!(
        skipped_all > 50,
        "only {skipped_all} empty reads skipped every tile"
    );
    println!(
        "{compared} conditions; tile bytes read {bytes_pruned} pruned, {bytes_full} not; \
         {skipped_all} empty reads read no tile"
    );
}
