//! CSR matrices filled straight from the read hold exactly the cells a
//! plain read returns, placed by their rows' and columns' positions.

mod common;

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
fn placed(csr: &tessera_soma::CsrMatrix, width: usize) -> BTreeMap<(i64, i64), Vec<u8>> {
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

/// A 30 x 20 matrix of small tiles (four rows a band) in two fragments,
/// the second writing over some of the first's cells and adding others.
fn small_tiles() -> std::path::PathBuf {
    let dir = common::small_tiled_array("csr", "FLOAT32");
    for (rows, salt) in [(0..30i64, 0i64), (5..17, 1)] {
        let (mut r, mut c, mut v) = (Vec::new(), Vec::new(), Vec::new());
        for row in rows {
            for col in 0..20i64 {
                if (row * 31 + col * 17 + salt) % 5 < 2 {
                    r.push(row);
                    c.push(col);
                    v.extend_from_slice(&((row * 100 + col + salt * 10_000) as f32).to_le_bytes());
                }
            }
        }
        let options = tessera::write::WriteOptions::default();
        let mut w = tessera_soma::BandWriter::try_new(&dir, options).unwrap();
        w.push(&r, &c, &v).unwrap();
        w.finish().unwrap();
    }
    dir
}

#[test]
fn bands_cut_anywhere_by_batches_are_placed_whole() {
    let dir = small_tiles();
    let session = tessera::open(&dir, None).unwrap();
    let all = cells(&session);
    assert!(all.keys().any(|k| k.0 >= 5 && k.0 < 17));
    // Batches of a few cells up to the whole read: bands cut anywhere,
    // a band over several batches, several bands in one.
    for budget in [1, 40, 150, 700, 3000, 1 << 30] {
        let fill = CsrFill::new(
            session.array(),
            "soma_data",
            30,
            4,
            Positions::Identity,
            Positions::Identity,
        )
        .unwrap();
        let csr = fill
            .read(&session, ReadRequest::new().budget(budget), "soma_data")
            .unwrap();
        assert_eq!(placed(&csr, 4), all, "budget {budget}");
        // Rows 3 to 21 as positions 0 to 18, every third column.
        let cols: Vec<i64> = (0..20).step_by(3).collect();
        let fill = CsrFill::new(
            session.array(),
            "soma_data",
            19,
            4,
            Positions::new(Some((3..22).collect())),
            Positions::new(Some(cols.clone())),
        )
        .unwrap();
        let mut request =
            ReadRequest::new()
                .budget(budget)
                .range("soma_dim_0", Value::Int(3), Value::Int(21));
        for &c in &cols {
            request = request.range("soma_dim_1", Value::Int(c.into()), Value::Int(c.into()));
        }
        let csr = fill.read(&session, request, "soma_data").unwrap();
        let want: BTreeMap<_, _> = all
            .iter()
            .filter(|(k, _)| (3..22).contains(&k.0) && k.1 % 3 == 0)
            .map(|(k, v)| ((k.0 - 3, k.1 / 3), v.clone()))
            .collect();
        assert_eq!(placed(&csr, 4), want, "budget {budget}, rows 3 to 21");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn read_into_arrays_sized_by_the_bound_holds_what_read_returns() {
    let dir = small_tiles();
    let session = tessera::open(&dir, None).unwrap();
    let fill = || {
        CsrFill::new(
            session.array(),
            "soma_data",
            30,
            4,
            Positions::Identity,
            Positions::Identity,
        )
        .unwrap()
    };
    let request = || ReadRequest::new().budget(300);
    let want = fill().read(&session, request(), "soma_data").unwrap();
    let f = fill();
    let batches = f.batches(&session, request(), "soma_data").unwrap();
    let bound = batches.cell_bound().unwrap() as usize;
    // Two fragments writing some cells twice: the bound counts both.
    let cells = want.row_starts()[30] as usize;
    assert!(bound > cells, "{bound} against {cells}");
    let (mut data, mut indices) = (vec![0u8; bound * 4], vec![0u8; bound * 4]);
    let (n, starts) = f.read_into(batches, &mut data, &mut indices).unwrap();
    assert_eq!(n, cells);
    assert_eq!(starts, want.row_starts());
    assert_eq!(&data[..n * 4], want.values());
    assert_eq!(&indices[..n * 4], want.column_positions());
    // Arrays too small for the cells are an error, not a panic.
    let f = fill();
    let batches = f.batches(&session, request(), "soma_data").unwrap();
    let (mut data, mut indices) = (vec![0u8; cells * 2], vec![0u8; cells * 2]);
    let e = f.read_into(batches, &mut data, &mut indices).unwrap_err();
    assert!(
        e.to_string()
            .contains("more cells than the arrays given hold"),
        "{e}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
