//! `tessera read --format arrow|parquet` writes files that read back (with
//! arrow-rs) to exactly the RecordBatches of the same read.

mod common;
use common::testdata;
use std::process::Command;
use std::sync::Arc;
use tessera::fragment::OpenArray;
use tessera::query::{ReadRequest, ReadSession};
use tessera::storage::LocalFs;

const CASES: &[&str] = &[
    "tiledb-0.36.1/dense_2d_types",
    "tiledb-0.36.1/dense_nullable_var",
    "tiledb-0.36.1/sparse_strings",
    "tiledb-0.36.1/sparse_dim_types",
    "tiledb-0.36.1/sparse_datetime_dim",
    "tiledb-0.36.1/multi_value",
    "tiledb-0.36.1/enumerations",
    "tiledb-0.19.1/dense_nullable_var",
];

#[test]
fn arrow_and_parquet_files_hold_the_read() {
    let bin = env!("CARGO_BIN_EXE_tessera");
    let dir = std::env::temp_dir().join(format!("tessera-export-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for case in CASES {
        let array = testdata().join(case).join("array");
        let a = Arc::new(OpenArray::open(&LocalFs, &array, 0, u64::MAX, None).unwrap());
        let expect = ReadSession::new(Arc::new(LocalFs), a.clone())
            .execute(&ReadRequest::new())
            .unwrap()
            .into_record_batch()
            .unwrap();
        for format in ["arrow", "parquet"] {
            let out = dir.join(format!("{}.{format}", case.replace('/', "_")));
            let st = Command::new(bin)
                .args(["read", array.to_str().unwrap(), "--format", format, "-o"])
                .arg(&out)
                .status()
                .unwrap();
            assert!(st.success(), "{case} {format}: exit {st}");
            let f = std::fs::File::open(&out).unwrap();
            let got: Vec<_> = if format == "arrow" {
                arrow_ipc::reader::FileReader::try_new(f, None)
                    .unwrap()
                    .map(Result::unwrap)
                    .collect()
            } else {
                parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(f)
                    .unwrap()
                    .build()
                    .unwrap()
                    .map(Result::unwrap)
                    .collect()
            };
            assert_eq!(got.len(), 1, "{case} {format}: one batch");
            assert_eq!(got[0].num_rows(), expect.num_rows(), "{case} {format}");
            for (k, f) in expect.schema().fields().iter().enumerate() {
                assert_eq!(
                    got[0].column(k).to_data(),
                    expect.column(k).to_data(),
                    "{case} {format}: column {}",
                    f.name()
                );
            }
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}
