//! CSR matrices filled straight from the read hold exactly the cells a
//! plain read returns, placed by their rows' and columns' positions.

use std::collections::BTreeMap;
use tessera::{ReadRequest, ReadSession, Value};
use tessera_soma::{CsrFill, Positions, SomaError};

fn testdata(path: &str) -> String {
    format!("{}/../../testdata/soma/{path}", env!("CARGO_MANIFEST_DIR"))
}

/// The sparse 2-D arrays of the SOMA fixtures (X layers, obsp, varp).
const MATRICES: &[&str] = &[
    "experiment_appended/experiment/ms/RNA/X/data",
    "experiment_appended/experiment/ms/RNA/X/counts",
    "experiment_uns/experiment/ms/RNA/X/data",
    "experiment_uns/experiment/ms/RNA/obsp/distances",
    "experiment_uns/experiment/ms/RNA/varp/correlation",
];

/// Every cell as `(row, col) -> value bytes`, by a plain read.
fn cells(session: &ReadSession) -> BTreeMap<(i64, i64), Vec<u8>> {
    let r = session.execute(&ReadRequest::new()).unwrap();
    let int = |b: &[u8]| i64::from_le_bytes(b.try_into().unwrap());
    let w = r.columns[2].data.len() / r.cell_count.max(1);
    (0..r.cell_count)
        .map(|i| {
            let at = |c: usize| int(&r.columns[c].data[i * 8..i * 8 + 8]);
            (
                (at(0), at(1)),
                r.columns[2].data[i * w..(i + 1) * w].to_vec(),
            )
        })
        .collect()
}

/// The CSR matrix's cells as `(row position, column position) -> value`.
fn placed(csr: &tessera_soma::CsrChunks, width: usize) -> BTreeMap<(i64, i64), Vec<u8>> {
    let (values, cols, starts) = (csr.values(), csr.column_positions(), csr.row_starts());
    let mut out = BTreeMap::new();
    for row in 0..starts.len() - 1 {
        let mut last = None;
        for k in starts[row] as usize..starts[row + 1] as usize {
            let col = u32::from_le_bytes(cols[k * 4..k * 4 + 4].try_into().unwrap()) as i64;
            assert!(last < Some(col), "columns ascend within row {row}");
            last = Some(col);
            out.insert(
                (row as i64, col),
                values[k * width..(k + 1) * width].to_vec(),
            );
        }
    }
    out
}

#[test]
fn csr_holds_the_cells_of_a_plain_read() {
    for path in MATRICES {
        let session = tessera::open(testdata(path), None).unwrap();
        let all = cells(&session);
        let width = all.values().next().map_or(4, Vec::len);
        let n_rows = all.keys().map(|k| k.0 + 1).max().unwrap_or(0) as usize;
        // Every row as itself.
        let fill = CsrFill::new(
            session.array(),
            "soma_data",
            n_rows,
            4,
            Positions::Identity,
            Positions::Identity,
        )
        .unwrap();
        let csr = fill
            .read(&session, ReadRequest::new().budget(64), "soma_data")
            .unwrap();
        assert_eq!(placed(&csr, width), all, "{path}");
        // Every other row and column present, as positions among them.
        let rows: Vec<i64> = all
            .keys()
            .map(|k| k.0)
            .filter(|r| r % 2 == 0)
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        let cols: Vec<i64> = all
            .keys()
            .map(|k| k.1)
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        let mut request = ReadRequest::new().budget(64);
        for &r in &rows {
            request = request.range("soma_dim_0", Value::Int(r.into()), Value::Int(r.into()));
        }
        if rows.is_empty() {
            continue;
        }
        let fill = CsrFill::new(
            session.array(),
            "soma_data",
            rows.len(),
            4,
            Positions::new(Some(rows.clone())),
            Positions::new(Some(cols.clone())),
        )
        .unwrap();
        let csr = fill.read(&session, request, "soma_data").unwrap();
        let rank = |ids: &[i64], v: i64| ids.binary_search(&v).unwrap() as i64;
        let want: BTreeMap<_, _> = all
            .iter()
            .filter(|(k, _)| k.0 % 2 == 0)
            .map(|(k, v)| ((rank(&rows, k.0), rank(&cols, k.1)), v.clone()))
            .collect();
        assert_eq!(placed(&csr, width), want, "{path}: every other row");
    }
}

#[test]
fn cells_outside_the_rows_asked_for_are_an_error() {
    let session = tessera::open(testdata(MATRICES[0]), None).unwrap();
    let fill = CsrFill::new(
        session.array(),
        "soma_data",
        1,
        4,
        Positions::new(Some(vec![0])),
        Positions::Identity,
    )
    .unwrap();
    // The read covers every row, the matrix only row 0.
    let e = fill
        .read(&session, ReadRequest::new(), "soma_data")
        .unwrap_err();
    assert!(matches!(e, SomaError::Invalid(_)), "{e}");
    assert!(
        e.to_string()
            .contains("outside the rows and columns asked for"),
        "{e}"
    );
}

#[test]
fn arrays_it_does_not_take_say_so() {
    let dense = testdata("experiment_dense/experiment/ms/RNA/X/data");
    let session = tessera::open(dense, None).unwrap();
    let e = CsrFill::new(
        session.array(),
        "soma_data",
        7,
        4,
        Positions::Identity,
        Positions::Identity,
    )
    .err()
    .unwrap();
    assert!(matches!(e, SomaError::Unsupported(_)), "{e}");
    let sparse = tessera::open(testdata(MATRICES[0]), None).unwrap();
    let e = CsrFill::new(
        sparse.array(),
        "nope",
        7,
        4,
        Positions::Identity,
        Positions::Identity,
    )
    .err()
    .unwrap();
    assert!(e.to_string().contains("no attribute `nope`"), "{e}");
}
