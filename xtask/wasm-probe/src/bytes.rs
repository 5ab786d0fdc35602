//! Reading the little-endian records a host writes into the module's
//! memory: an array's files, a step's answers.

/// The next `N` bytes of `blob` (`what`, for the error), taken off it.
pub(crate) fn take<const N: usize>(blob: &mut &[u8], what: &str) -> Result<[u8; N], String> {
    let head = take_bytes(blob, N, what)?;
    head.try_into().map_err(|_| format!("the {what}"))
}

/// The next `n` bytes of `blob` (`what`, for the error), taken off it.
pub(crate) fn take_bytes<'b>(
    blob: &mut &'b [u8],
    n: usize,
    what: &str,
) -> Result<&'b [u8], String> {
    if blob.len() < n {
        return Err(format!("the bytes end inside the {what}"));
    }
    let (head, rest) = blob.split_at(n);
    *blob = rest;
    Ok(head)
}

/// A `u64` length taken off `blob`, as a `usize`.
pub(crate) fn take_len(blob: &mut &[u8], what: &str) -> Result<usize, String> {
    let n = u64::from_le_bytes(take(blob, what)?);
    usize::try_from(n).map_err(|e| format!("the {what}: {e}"))
}

/// A UTF-8 string of a `u32` length taken off `blob`.
pub(crate) fn take_str(blob: &mut &[u8], what: &str) -> Result<String, String> {
    let n = u32::from_le_bytes(take(blob, what)?) as usize;
    let text = take_bytes(blob, n, what)?;
    String::from_utf8(text.to_vec()).map_err(|e| format!("the {what}: {e}"))
}
