//! Raw LZ4 blocks (no size prefix), as libtiledb's LZ4 filter stores a
//! chunk: natively liblz4's `LZ4_compress_default`, which libtiledb calls,
//! so blocks are byte for byte libtiledb's; on WebAssembly the pure-Rust
//! `lz4_flex`, whose blocks any LZ4 reader decodes.

/// Decodes the block `input` into exactly `out.len()` bytes; how many it
/// gave.
#[cfg(not(target_family = "wasm"))]
pub(crate) fn decompress(input: &[u8], out: &mut [u8]) -> Result<usize, String> {
    let expect = out.len();
    let n = i32::try_from(expect)
        .map_err(|_| format!("{expect} bytes is too long for an LZ4 block"))?;
    lz4::block::decompress_to_buffer(input, Some(n), out).map_err(|e| e.to_string())
}

/// `input` as one block.
#[cfg(not(target_family = "wasm"))]
pub(crate) fn compress(input: &[u8]) -> Result<Vec<u8>, String> {
    lz4::block::compress(input, None, false).map_err(|e| e.to_string())
}

/// Decodes the block `input` into exactly `out.len()` bytes; how many it
/// gave.
#[cfg(target_family = "wasm")]
pub(crate) fn decompress(input: &[u8], out: &mut [u8]) -> Result<usize, String> {
    lz4_flex::block::decompress_into(input, out).map_err(|e| e.to_string())
}

/// `input` as one block.
#[cfg(target_family = "wasm")]
pub(crate) fn compress(input: &[u8]) -> Result<Vec<u8>, String> {
    Ok(lz4_flex::block::compress(input))
}

#[cfg(test)]
mod tests {
    /// A block round-trips, and a block that decodes to fewer bytes than
    /// asked is not taken for a whole one by the caller (it counts).
    #[test]
    fn blocks_round_trip() {
        let data: Vec<u8> = (0..10_000u32)
            .flat_map(|i| (i % 97).to_le_bytes())
            .collect();
        let block = super::compress(&data).expect("compress");
        assert!(block.len() < data.len());
        let mut out = vec![0u8; data.len()];
        assert_eq!(super::decompress(&block, &mut out), Ok(data.len()));
        assert_eq!(out, data);
        let mut short = vec![0u8; data.len() - 1];
        assert!(super::decompress(&block, &mut short).is_err());
    }
}
