//! Single-cell reads and writes of TileDB-SOMA experiments over tessera's
//! reads and writes: the work `tessera.soma` (Python) hands to Rust.
//!
//! - [`Positions`]: where a `soma_joinid` sits among the ids a query
//!   selected (the rows and columns of the result matrix).
//! - [`CsrFill`]: a 2-D sparse array's cells (an X layer, obsp, varp)
//!   straight into the arrays of a CSR matrix, its own or the caller's
//!   ([`CsrFill::read_into`]), a read batch's bands of rows in parallel,
//!   with no COO copy of the cells ever whole.
//! - [`BandWriter`]: a matrix's rows into one fragment of a 2-D sparse
//!   array, a band of rows sorted into the global order at a time.
//! - [`LabelRegistry`]: obs and var labels to `soma_joinid`s for an
//!   append, labels held keeping theirs and new ones following.
//!
//! ```
//! use tessera::{ReadRequest, Value};
//! use tessera_soma::{CsrFill, Positions};
//!
//! let x = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/soma/experiment_appended/experiment/ms/RNA/X/data");
//! let session = tessera::open(x, None).unwrap();
//! // Cells 2 and 5 as the matrix's rows 0 and 1, every gene as its own column.
//! let rows = Positions::new(Some(vec![2, 5]));
//! let fill = CsrFill::new(session.array(), "soma_data", 2, 4, rows, Positions::Identity).unwrap();
//! let request = ReadRequest::new()
//!     .range("soma_dim_0", Value::Int(2), Value::Int(2))
//!     .range("soma_dim_0", Value::Int(5), Value::Int(5));
//! let csr = fill.read(&session, request, "soma_data").unwrap();
//! let starts = csr.row_starts();
//! assert_eq!(starts.len(), 3);
//! assert_eq!(csr.values().len(), 4 * starts[2] as usize); // float32 values
//! ```

mod bands;
mod csr;
mod error;
mod positions;
mod registration;

pub use bands::BandWriter;
pub use csr::{CsrFill, CsrMatrix};
pub use error::SomaError;
pub use positions::Positions;
pub use registration::LabelRegistry;
