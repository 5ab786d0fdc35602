//! WebP (`format_spec/filters/webp.md`).
//!
//! Decoding WebP tiles is not implemented yet: tiles under this filter are
//! reported with a clear error instead of being misread.

use super::ChunkCx;
use crate::FilterError;

/// Reverse: not yet supported.
pub(crate) fn reverse(
    _meta: &[u8],
    _data: &[u8],
    cx: &ChunkCx<'_>,
) -> Result<(Vec<u8>, Vec<u8>), FilterError> {
    Err(FilterError::Unsupported(format!(
        "chunk {}: the WebP filter (id 18) is not supported by tessera yet",
        cx.chunk
    )))
}
