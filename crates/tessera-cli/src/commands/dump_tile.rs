//! `tessera dump-tile`: show the framing of the tile at an offset (format debugging).

use crate::args::*;
use crate::storage::Stores;
use std::path::PathBuf;
use std::process::ExitCode;

/// Show the framing of the tile at an offset (format debugging).
#[derive(clap::Args)]
pub struct Args {
    /// A data file, or a generic tile file with --generic (a path or a
    /// URI).
    pub file: PathBuf,
    /// Byte offset of the tile.
    #[arg(long, default_value_t = 0)]
    pub offset: u64,
    /// The tile is a generic tile (schema, metadata, fragment metadata section).
    #[arg(long)]
    pub generic: bool,
    /// AES-256-GCM key, for encrypted generic tiles.
    #[arg(long)]
    pub key: Option<String>,
}

/// Runs `tessera dump-tile`.
pub fn run(args: Args, stores: &Stores) -> Result<ExitCode, BoxError> {
    let Args {
        file,
        offset,
        generic,
        key,
    } = args;
    // A local path or a URI: the bytes from the offset on.
    let (storage, path) = (&*stores.storage(&file)?, crate::storage::target(&file));
    let size = storage
        .size(&path)
        .map_err(|e| format!("{}: {e}", file.display()))?;
    if offset > size {
        return Err(format!(
            "offset {offset} is past the end of {} ({size} bytes)",
            file.display()
        )
        .into());
    }
    let bytes = storage
        .read_range(&path, offset..size)
        .map_err(|e| format!("{}: {e}", file.display()))?;
    let tail = &bytes[..];
    let mut base = 0;
    if generic {
        let h = tessera::tile::generic::GenericTileHeader::parse(tail, offset)?;
        base = h.size() as usize;
        println!("generic tile header: version {} persisted {} tile size {} datatype {} cell size {} encryption {:?} pipeline {} bytes", h.version, h.persisted_size, h.tile_size, h.datatype, h.cell_size, h.encryption, h.filter_pipeline.len());
        let dt =
            tessera::tile::Datatype::from_id(h.datatype).unwrap_or(tessera::tile::Datatype::Any);
        let (p, _) = tessera::filters::FilterPipeline::parse(&h.filter_pipeline, 0, h.version, dt)?;
        println!(
            "filters: {:?} (max chunk {})",
            p.filters
                .iter()
                .map(|f| f.filter_type().name())
                .collect::<Vec<_>>(),
            p.max_chunk_size
        );
    }
    let at = offset + base as u64;
    let chunks = tessera::tile::tile::ChunkList::parse(&tail[base..], at)?;
    println!(
        "tile at {at}: {} chunk(s), {} bytes unfiltered, {} bytes framed",
        chunks.chunks.len(),
        chunks.original_size(),
        chunks.framed_len
    );
    for (i, c) in chunks.chunks.iter().enumerate() {
        println!(
            "  chunk {i}: original {} filtered {} metadata {}",
            c.original_len,
            c.data.len(),
            c.metadata.len()
        );
    }
    if generic {
        let t = tessera::filters::read_generic_tile(tail, parse_key(&key)?.as_ref(), offset)?;
        println!("decoded ({} bytes): {}", t.data.len(), hex_preview(&t.data));
    } else if let Some(c) = chunks.chunks.first() {
        let d = &tail[base + c.data.start..base + c.data.end];
        println!("chunk 0 filtered data: {}", hex_preview(d));
    }
    Ok(ExitCode::SUCCESS)
}

/// The first 64 bytes as hex, for `dump-tile`.
fn hex_preview(b: &[u8]) -> String {
    let head: Vec<String> = b.iter().take(64).map(|x| format!("{x:02x}")).collect();
    format!(
        "{}{}",
        head.join(" "),
        if b.len() > 64 { " ..." } else { "" }
    )
}
