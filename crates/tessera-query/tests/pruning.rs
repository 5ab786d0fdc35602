//! Pruning by condition: for every sparse fixture array, conditions built
//! from its own values (bounds, middles, values absent from it, nulls)
//! return the same cells with pruning as without, and pruning leaves tiles
//! unread. The fast path, which tests the condition while it picks cells,
//! returns what the general path returns, in the same order.

mod common;

use std::path::Path;
use std::sync::Arc;
use tessera_fragment::condition::CompareOp;
use tessera_fragment::OpenArray;
use tessera_query::push::PushDecoder;
use tessera_query::{Column, Expr, ReadRequest, ReadResult, ReadSession};
use tessera_schema::CellValNum;
use tessera_storage::{LocalFs, Recording};
use tessera_tile::Datatype;

/// Cell `i` of `r` against cell `j` of `q`: field by field, bytes then
/// validity (no copy of either: the results are large).
fn cell_order(r: &ReadResult, i: usize, q: &ReadResult, j: usize) -> std::cmp::Ordering {
    r.columns
        .iter()
        .zip(&q.columns)
        .map(|(a, b)| (a.value(i), a.is_valid(i)).cmp(&(b.value(j), b.is_valid(j))))
        .find(|o| o.is_ne())
        .unwrap_or(std::cmp::Ordering::Equal)
}

/// The same cells in the same order.
fn same_cells(r: &ReadResult, q: &ReadResult) -> bool {
    r.cell_count == q.cell_count
        && r.columns.len() == q.columns.len()
        && (0..r.cell_count).all(|i| cell_order(r, i, q, i).is_eq())
}

/// The same cells, in any order (a multiset). Most often in the same
/// order too, which is checked first (sorting is most of the test's time).
fn same_rows(r: &ReadResult, q: &ReadResult) -> bool {
    if same_cells(r, q) {
        return true;
    }
    let sorted = |x: &ReadResult| {
        let mut idx: Vec<usize> = (0..x.cell_count).collect();
        idx.sort_unstable_by(|&a, &b| cell_order(x, a, x, b));
        idx
    };
    r.cell_count == q.cell_count
        && r.columns.len() == q.columns.len()
        && (sorted(r).iter().zip(&sorted(q))).all(|(&i, &j)| cell_order(r, i, q, j).is_eq())
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
        Value::Int(x) => {
            let next = x.checked_add(1)?;
            let b = next.to_le_bytes().get(..t.size() as usize)?.to_vec();
            // Past the type's greatest value there is none.
            (Value::decode(t, &b) == Value::Int(next)).then_some(b)?
        }
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

/// What comparing the reads of one array found.
#[derive(Default)]
struct Tally {
    compared: usize,
    bytes_pruned: u64,
    bytes_full: u64,
    skipped_all: usize,
    failures: Vec<String>,
}

impl Tally {
    fn add(mut self, other: Tally) -> Tally {
        self.compared += other.compared;
        self.bytes_pruned += other.bytes_pruned;
        self.bytes_full += other.bytes_full;
        self.skipped_all += other.skipped_all;
        self.failures.extend(other.failures);
        self
    }
}

#[test]
fn pruned_reads_equal_unpruned_reads() {
    use rayon::prelude::*;
    // Arrays side by side: the test is the workspace's longest.
    // Every condition of every array, side by side: the test is the
    // workspace's longest, most of it one array's (sparse_big_tiles).
    let arrays = common::fixture_arrays();
    let jobs: Vec<(&Path, Expr)> = arrays
        .iter()
        .filter(|(_, array)| !array.schema.is_dense()) // dense reads keep every cell
        .flat_map(|(path, array)| {
            let conditions = conditions_of(array);
            conditions.into_iter().map(move |c| (path.as_path(), c))
        })
        .collect();
    let t = jobs
        .par_iter()
        .map(|(path, cond)| check(path, cond))
        .reduce(Tally::default, Tally::add);
    assert!(t.failures.is_empty(), "{}", t.failures.join("\n"));
    assert!(t.compared > 1000, "only {} conditions compared", t.compared);
    // Pruning pays: it reads less, and conditions no cell meets read no tile.
    assert!(
        t.bytes_pruned < t.bytes_full,
        "pruned reads took {} bytes of tiles, unpruned {}",
        t.bytes_pruned,
        t.bytes_full
    );
    assert!(
        t.skipped_all > 50,
        "only {} empty reads skipped every tile",
        t.skipped_all
    );
    println!(
        "{} conditions; tile bytes read {} pruned, {} not; {} empty reads read no tile",
        t.compared, t.bytes_pruned, t.bytes_full, t.skipped_all
    );
}

/// The conditions built from the values of `array`'s fields.
fn conditions_of(array: &Arc<OpenArray>) -> Vec<Expr> {
    let mut out = Vec::new();
    let whole = ReadSession::new(Arc::new(LocalFs), array.clone())
        .execute(&ReadRequest::new())
        .unwrap();
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
        let key = |v: &Vec<u8>| tessera_query::Value::decode(t, v);
        values.sort_by_key(key);
        values.dedup();
        // NaN orders last: the bounds' greatest value is the last other one.
        values.retain(|v| !key(v).is_nan());
        let Some(absent) = values.last().and_then(|g| absent(t, g)) else {
            continue;
        };
        out.extend(conditions(name, nullable, &values, absent));
    }
    out
}

/// `cond` read with and without pruning, and by the general path.
fn check(path: &Path, cond: &Expr) -> Tally {
    let mut found = Tally::default();
    let read = |prune: bool, direct: bool| {
        let rec = Arc::new(Recording::new(LocalFs, path));
        let a = Arc::new(OpenArray::open(&*rec, path, 0, u64::MAX, None).unwrap());
        let opened = rec.requests().len();
        let r = ReadSession::new(rec.clone(), a.clone()).execute(
            &ReadRequest::new()
                .condition(cond.clone())
                .tune(|t| t.prune = prune)
                .tune(|t| t.direct = direct),
        );
        (r, data_bytes(&rec.requests()[opened..]))
    };
    let ((pruned, b1), (full, b2)) = (read(true, true), read(false, true));
    let (general, _) = read(false, false);
    let at = format!("{} `{cond:?}`", path.display());
    match (&full, &general) {
        (Ok(f), Ok(g)) if !same_cells(f, g) => found.failures.push(format!(
            "{at}: {} cells by the fast path, {} by the general one (or in another order)",
            f.cell_count, g.cell_count
        )),
        (Ok(_), Ok(_)) => {}
        (f, g) => found.failures.push(format!(
            "{at}: fast path {:?} / general path {:?}",
            f.as_ref().err(),
            g.as_ref().err()
        )),
    }
    match (pruned, full) {
        (Ok(p), Ok(f)) => {
            found.compared += 1;
            found.bytes_pruned += b1;
            found.bytes_full += b2;
            if f.cell_count > 0 && b1 == 0 {
                found
                    .failures
                    .push(format!("{at}: nothing read, yet cells match"));
            }
            if f.cell_count == 0 && b1 == 0 && b2 > 0 {
                found.skipped_all += 1;
            }
            if !same_rows(&p, &f) {
                found.failures.push(format!(
                    "{at}: {} cells pruned, {} not",
                    p.cell_count, f.cell_count
                ));
            }
        }
        (p, f) => found
            .failures
            .push(format!("{at}: {:?} / {:?}", p.err(), f.err())),
    }
    found
}

/// A dense read in batches with a prune condition returns every cell of
/// the whole read that satisfies it, or whose condition fields hold a NaN
/// (SQL orders NaN above every number), with the same values; and over
/// the dense fixtures it leaves cells unread.
#[test]
fn dense_prunes_keep_every_passing_cell() {
    use rayon::prelude::*;
    let arrays = common::fixture_arrays();
    // Each array's whole read, once: every condition is checked against it.
    let wholes: Vec<Whole> = arrays
        .iter()
        .filter(|(_, array)| array.schema.is_dense())
        .map(|(path, array)| Whole::read(path, array))
        .collect();
    let jobs: Vec<(&Whole, Expr)> = wholes
        .iter()
        .flat_map(|whole| {
            let conditions = conditions_of(whole.array);
            conditions.into_iter().map(move |c| (whole, c))
        })
        .collect();
    let (failures, read, whole): (Vec<String>, usize, usize) = jobs
        .par_iter()
        .map(|(whole, cond)| check_dense(whole, cond))
        .reduce(
            || (Vec::new(), 0, 0),
            |mut a, b| {
                a.0.extend(b.0);
                (a.0, a.1 + b.1, a.2 + b.2)
            },
        );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(jobs.len() > 500, "only {} conditions", jobs.len());
    assert!(
        read < whole,
        "pruned reads returned {read} of {whole} cells"
    );
    println!("{} conditions; {read} of {whole} cells read", jobs.len());
}

/// One cell's coordinates, in `key` (cleared first).
fn coordinates(dims: &[&Column], i: usize, key: &mut Vec<u8>) {
    key.clear();
    for c in dims {
        key.extend_from_slice(c.value(i));
    }
}

/// The columns of `r` named by `fields`, in their order.
fn columns_of<'r>(r: &'r ReadResult, fields: impl Iterator<Item = &'r String>) -> Vec<&'r Column> {
    fields.map(|f| r.column(f).unwrap()).collect()
}

/// A dense array read whole, and where each of its cells is by its
/// coordinates.
struct Whole<'a> {
    path: &'a Path,
    array: &'a Arc<OpenArray>,
    result: ReadResult,
    at: std::collections::HashMap<Vec<u8>, usize>,
}

impl<'a> Whole<'a> {
    fn read(path: &'a Path, array: &'a Arc<OpenArray>) -> Whole<'a> {
        let result = common::local(array).execute(&ReadRequest::new()).unwrap();
        let dims = columns_of(&result, array.schema.dimensions.iter().map(|d| &d.name));
        let mut at = std::collections::HashMap::new();
        for i in 0..result.cell_count {
            let mut key = Vec::new();
            coordinates(&dims, i, &mut key);
            at.insert(key, i);
        }
        Whole {
            path,
            array,
            result,
            at,
        }
    }

    /// Whether cell `i` of `batch` is cell `j` of the whole read, value
    /// for value.
    fn same_cell(&self, batch: &ReadResult, i: usize, j: usize) -> bool {
        self.array.schema.attributes.iter().all(|a| {
            let (b, w) = (
                batch.column(&a.name).unwrap(),
                self.result.column(&a.name).unwrap(),
            );
            b.value(i) == w.value(j) && b.is_valid(i) == w.is_valid(j)
        })
    }
}

/// `cond` as a prune of the array read in one-tile batches, against the
/// whole read: failures, cells the pruned read returned, cells in all.
fn check_dense(whole_read: &Whole, cond: &Expr) -> (Vec<String>, usize, usize) {
    let (path, array, whole) = (whole_read.path, whole_read.array, &whole_read.result);
    let session = common::local(array);
    let request = ReadRequest::new().budget(1).prune(cond.clone());
    // Which cells of the whole read the pruned read returned, unchanged.
    let mut returned = vec![false; whole.cell_count];
    let mut read = 0;
    let mut failures = Vec::new();
    let mut key = Vec::new();
    // The push decoder reads the same batches: its attempts lack tile
    // metadata the pruning reads, and a piece put back is pruned again.
    let mut pushed = PushDecoder::for_array(array.clone(), request.clone()).read_from(&LocalFs);
    for (i, batch) in session.batches(&request).unwrap().enumerate() {
        let batch = batch.unwrap();
        read += batch.cell_count;
        if !pushed
            .next()
            .is_some_and(|p| p.is_ok_and(|p| common::same_result(&p, &batch)))
        {
            failures.push(format!(
                "{}: `{cond:?}`: pushed batch {i} differs",
                path.display()
            ));
        }
        let dims = columns_of(&batch, array.schema.dimensions.iter().map(|d| &d.name));
        for c in 0..batch.cell_count {
            coordinates(&dims, c, &mut key);
            match whole_read.at.get(&key[..]) {
                Some(&j) if whole_read.same_cell(&batch, c, j) => returned[j] = true,
                _ => {
                    failures.push(format!(
                        "{}: `{cond:?}`: batch {i} cell {c} is not the whole read's",
                        path.display()
                    ));
                    break;
                }
            }
        }
    }
    if pushed.next().is_some() {
        failures.push(format!(
            "{}: `{cond:?}`: more batches pushed",
            path.display()
        ));
    }
    let mut fields = Vec::new();
    cond.fields(&mut fields);
    let columns = columns_of(whole, fields.iter());
    for (i, &was_returned) in returned.iter().enumerate() {
        let get = |name: &str| {
            let k = fields.iter().position(|f| f == name)?;
            let t = array.schema.attribute(name).map(|a| a.datatype)?;
            Some((t, columns[k].value(i), columns[k].is_valid(i)))
        };
        let nan = fields.iter().any(|f| {
            get(f).is_some_and(|(t, v, ok)| ok && tessera_query::Value::decode(t, v).is_nan())
        });
        if (nan || cond.eval(&get)) && !was_returned {
            failures.push(format!(
                "{}: `{cond:?}`: cell {i} passes, not read",
                path.display()
            ));
            break;
        }
    }
    (failures, read, whole.cell_count)
}
