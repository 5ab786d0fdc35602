//! A matrix written band by band reads back as the same cells written by
//! tessera's sorting fragment writer, in one fragment, in global order;
//! rows of an earlier band after a later one, and a cell given twice, are
//! refused.

mod common;

use tessera::query::Column;
use tessera::schema::CellValNum;
use tessera::tile::{Datatype, Layout};
use tessera::write::{FragmentWriter, WriteOptions};
use tessera_soma::BandWriter;

fn array(name: &str) -> std::path::PathBuf {
    common::small_tiled_array(&format!("bands-{name}"), "FLOAT64")
}

/// Cells of a 30 x 20 matrix, row by row, columns in a scrambled order.
fn cells() -> (Vec<i64>, Vec<i64>, Vec<f64>) {
    let (mut r, mut c, mut v) = (Vec::new(), Vec::new(), Vec::new());
    for row in 0..30i64 {
        for k in 0..20i64 {
            let col = (k * 7 + row) % 20;
            if (row * 31 + col * 17) % 5 < 2 {
                r.push(row);
                c.push(col);
                v.push((row * 100 + col) as f64);
            }
        }
    }
    (r, c, v)
}

fn global_read(dir: &std::path::Path) -> Vec<(Vec<u8>, Vec<u8>, Vec<u8>)> {
    let session = tessera::open(dir, None).unwrap();
    let r = session
        .execute(&tessera::ReadRequest::new().layout(Layout::GlobalOrder))
        .unwrap();
    let col = |n: &str| r.columns.iter().find(|c| c.name == n).unwrap();
    let (a, b, c) = (col("soma_dim_0"), col("soma_dim_1"), col("soma_data"));
    (0..r.cell_count as usize)
        .map(|i| {
            (
                a.value(i).to_vec(),
                b.value(i).to_vec(),
                c.value(i).to_vec(),
            )
        })
        .collect()
}

#[test]
fn bands_write_what_the_sorting_writer_writes() {
    let (r, c, v) = cells();
    let values: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
    let banded = array("banded");
    let mut w = BandWriter::try_new(&banded, WriteOptions::default()).unwrap();
    // In chunks that cut bands anywhere.
    for (start, end) in [(0, 13), (13, 100), (100, 101), (101, r.len())] {
        w.push(&r[start..end], &c[start..end], &values[start * 8..end * 8])
            .unwrap();
    }
    assert_eq!(w.finish().unwrap().len(), 1);
    let sorted = array("sorted");
    let bytes = |x: &[i64]| x.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>();
    let column = |name: &str, dim, t, data| Column {
        name: name.into(),
        is_dimension: dim,
        datatype: t,
        cell_val_num: CellValNum::Fixed(1),
        data,
        offsets: None,
        validity: None,
    };
    let mut f = FragmentWriter::try_new(&sorted, WriteOptions::default()).unwrap();
    f.write(&[
        column("soma_dim_0", true, Datatype::Int64, bytes(&r)),
        column("soma_dim_1", true, Datatype::Int64, bytes(&c)),
        column("soma_data", false, Datatype::Float64, values.clone()),
    ])
    .unwrap();
    f.finish().unwrap();
    let got = global_read(&banded);
    assert_eq!(got.len(), r.len());
    assert_eq!(got, global_read(&sorted));
    for dir in [banded, sorted] {
        std::fs::remove_dir_all(dir).unwrap();
    }
}

#[test]
fn earlier_bands_and_repeated_cells_are_refused() {
    let dir = array("refused");
    let one = 1f64.to_le_bytes();
    let mut w = BandWriter::try_new(&dir, WriteOptions::default()).unwrap();
    w.push(&[9], &[0], &one).unwrap();
    let err = w.push(&[2], &[0], &one).unwrap_err().to_string();
    assert!(
        err.contains("row 2 comes after rows of a later band"),
        "{err}"
    );
    let mut w = BandWriter::try_new(&dir, WriteOptions::default()).unwrap();
    let two: Vec<u8> = [one, one].concat();
    w.push(&[5, 5], &[3, 3], &two).unwrap();
    let err = w.finish().unwrap_err().to_string();
    assert!(err.contains("cell (5, 3) is given twice"), "{err}");
    std::fs::remove_dir_all(dir).unwrap();
}
