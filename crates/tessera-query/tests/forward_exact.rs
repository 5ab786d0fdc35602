//! Forward filtering is bit-exact with libtiledb: every fixed-sized tile of
//! every fixture, unfiltered and filtered again by tessera, gives back the
//! bytes libtiledb wrote, whenever the pipeline's filters are deterministic
//! functions of their input (everything but the compressors, whose bytes
//! depend on the codec library's version, and AES-256-GCM, whose IV is
//! random; WebP is left out for the same reason).

mod common;

use std::collections::BTreeMap;
use tessera_filters::{
    filter_tile, filter_var_tile, unfilter_tile, FilterPipeline, FilterType, TileContext,
};
use tessera_fragment::{Field, FileKind, FragmentMetadata};
use tessera_query::tiles::FieldSpec;
use tessera_tile::storage::{LocalFs, Storage};

/// Filters whose output depends on a codec library or on randomness.
fn deterministic(t: FilterType) -> bool {
    !matches!(
        t,
        FilterType::Gzip
            | FilterType::Zstd
            | FilterType::Lz4
            | FilterType::Bzip2
            | FilterType::Aes256Gcm
            | FilterType::Webp
    )
}

/// Tiles compared per pipeline (and version): how many, how many differed.
type Checked = BTreeMap<String, (usize, usize)>;

/// Records one comparison of a tile as libtiledb wrote it (`raw`) with
/// tessera's refiltering (`again`); a difference fails the test when every
/// filter of the pipeline is deterministic.
fn compare(
    checked: &mut Checked,
    failures: &mut Vec<String>,
    (pipeline, what): (&FilterPipeline, &str),
    version: u32,
    at: String,
    raw: &[u8],
    again: &[u8],
) {
    let names: Vec<&str> = pipeline
        .filters
        .iter()
        .map(|x| x.filter_type().name())
        .collect();
    let e = checked
        .entry(format!("{what}{} v{version}", names.join("+")))
        .or_default();
    e.0 += 1;
    if again != raw {
        e.1 += 1;
        if pipeline
            .filters
            .iter()
            .all(|x| deterministic(x.filter_type()))
        {
            failures.push(format!(
                "{at} [{}]: {} bytes refiltered to {}",
                names.join(", "),
                raw.len(),
                again.len()
            ));
        }
    }
}

/// The bytes of tile `t` of a field's file.
fn tile_bytes(frag: &FragmentMetadata, f: Field, idx: usize, kind: FileKind, t: u64) -> Vec<u8> {
    let range = frag.tile_range(&LocalFs, idx, kind, t).unwrap();
    LocalFs.read_range(&frag.data_file(f, kind), range).unwrap()
}

#[test]
fn deterministic_pipelines_refilter_to_the_bytes_libtiledb_wrote() {
    let mut checked = Checked::new();
    let mut failures = Vec::new();
    for (path, array) in common::fixture_arrays() {
        for frag in &array.fragments {
            let s = &frag.schema;
            let v = frag.version();
            let fields = (0..s.attributes.len())
                .map(Field::Attribute)
                // Dense fragments store no coordinates.
                .chain(
                    (0..s.dimensions.len())
                        .filter(|_| !frag.footer.dense)
                        .map(Field::Dimension),
                );
            for f in fields {
                let spec = FieldSpec::of(frag, f);
                let Some(idx) = frag.field_index(f) else {
                    continue;
                };
                // Fixed-sized cells, and the offsets and values of var-sized ones.
                let var = spec.cell_val_num.is_var();
                if var && spec.filters.offsets_in_data(spec.datatype, s.version) {
                    continue;
                }
                let (pipeline, cell_size) = if var {
                    (&s.offsets_filters, 8)
                } else {
                    (&spec.filters, spec.cell_size())
                };
                for t in 0..frag.tile_count() {
                    let at = |what: &str| format!("{} {f:?} {what}tile {t}", path.display());
                    let raw = tile_bytes(frag, f, idx, FileKind::Fixed, t);
                    let ctx = TileContext::new(v, cell_size);
                    let cells = unfilter_tile(pipeline, &raw, &ctx).unwrap();
                    let again = filter_tile(pipeline, &cells, &ctx).unwrap();
                    compare(
                        &mut checked,
                        &mut failures,
                        (pipeline, ""),
                        v.0,
                        at(""),
                        &raw,
                        &again,
                    );
                    if var {
                        // The values tile, cut into chunks at cell boundaries.
                        let offsets: Vec<u64> = cells
                            .chunks_exact(8)
                            .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
                            .collect();
                        let raw = tile_bytes(frag, f, idx, FileKind::Var, t);
                        let ctx = TileContext::new(v, spec.datatype.size());
                        let values = unfilter_tile(&spec.filters, &raw, &ctx).unwrap();
                        let again =
                            filter_var_tile(&spec.filters, &values, &offsets, &ctx).unwrap();
                        let p = (&spec.filters, "var values: ");
                        compare(
                            &mut checked,
                            &mut failures,
                            p,
                            v.0,
                            at("var "),
                            &raw,
                            &again,
                        );
                    }
                }
            }
        }
    }
    for (k, (n, bad)) in &checked {
        eprintln!("{k}: {n} tiles, {bad} differ");
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // Every deterministic filter the fixtures use was held to its bytes.
    for f in [
        "BITSHUFFLE",
        "BYTESHUFFLE",
        "BIT_WIDTH_REDUCTION",
        "POSITIVE_DELTA",
        "DOUBLE_DELTA",
        "RLE",
        "CHECKSUM_MD5",
        "SCALE_FLOAT",
        "NONE",
    ] {
        let exact: usize = checked
            .iter()
            .filter(|(k, _)| k.split(' ').next() == Some(f))
            .map(|(_, (n, _))| n)
            .sum();
        assert!(exact > 0, "no tile of a {f} pipeline was checked");
    }
    let var: usize = checked
        .iter()
        .filter(|(k, _)| k.starts_with("var values:  v"))
        .map(|(_, (n, _))| n)
        .sum();
    assert!(var > 0, "no unfiltered var-sized tile was checked");
}
