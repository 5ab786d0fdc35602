//! Where a CSR fill puts its cells: arrays of its own, or the caller's.

use super::band::invalid;
use crate::SomaError;

/// Where placed cells go: the matrix's arrays, of which `stretch` gives
/// the next `data_bytes` and `index_bytes`.
pub(super) trait Output {
    fn stretch(
        &mut self,
        data_bytes: usize,
        index_bytes: usize,
    ) -> Result<(&mut [u8], &mut [u8]), SomaError>;
}

/// Arrays of the fill's own, grown as cells come.
#[derive(Default)]
pub(super) struct Growing {
    pub(super) data: Vec<u8>,
    pub(super) indices: Vec<u8>,
}

impl Output for Growing {
    fn stretch(
        &mut self,
        data_bytes: usize,
        index_bytes: usize,
    ) -> Result<(&mut [u8], &mut [u8]), SomaError> {
        let (d, i) = (self.data.len(), self.indices.len());
        self.data.resize(d + data_bytes, 0);
        self.indices.resize(i + index_bytes, 0);
        Ok((&mut self.data[d..], &mut self.indices[i..]))
    }
}

/// Arrays the caller gave, and the bytes of each used so far.
pub(super) struct Given<'o> {
    pub(super) data: &'o mut [u8],
    pub(super) indices: &'o mut [u8],
    pub(super) used: (usize, usize),
}

impl Output for Given<'_> {
    fn stretch(
        &mut self,
        data_bytes: usize,
        index_bytes: usize,
    ) -> Result<(&mut [u8], &mut [u8]), SomaError> {
        let (d, i) = self.used;
        let (d_end, i_end) = (d + data_bytes, i + index_bytes);
        if d_end > self.data.len() || i_end > self.indices.len() {
            return Err(invalid(format!(
                "the read returned more cells than the arrays given hold ({} bytes of values)",
                self.data.len()
            )));
        }
        self.used = (d_end, i_end);
        Ok((&mut self.data[d..d_end], &mut self.indices[i..i_end]))
    }
}
