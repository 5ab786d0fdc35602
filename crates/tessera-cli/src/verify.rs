//! `tessera verify`: read every generic tile and data tile of every fragment
//! and report each problem with its fragment, file and tile.

use tessera::fragment::{Field, FileKind, OpenArray, Overlap};
use tessera::query::Value;
use tessera::query::{read_field_tile, FieldSpec};
use tessera::storage::Storage;

/// Checks an opened array; returns the problems found. `done` is called
/// after each fragment.
pub fn verify(storage: &dyn Storage, a: &OpenArray, done: &dyn Fn()) -> Vec<String> {
    let mut problems = Vec::new();
    if let Err(e) = a.metadata(storage) {
        problems.push(format!("array metadata: {e}"));
    }
    for f in &a.fragments {
        let s = &f.schema;
        let mut fields: Vec<Field> = (0..s.attributes.len()).map(Field::Attribute).collect();
        if !f.footer.dense {
            fields.extend((0..s.dimensions.len()).map(Field::Dimension));
        }
        if f.footer.has_timestamps {
            fields.push(Field::Timestamps);
        }
        if f.footer.has_delete_meta {
            fields.extend([Field::DeleteTimestamps, Field::DeleteConditionIndex]);
        }
        let tiles = f.tile_count();
        // The R-tree of a sparse fragment: one leaf per tile, levels covering the leaves.
        let rtree = if f.footer.dense {
            None
        } else {
            match f.rtree(storage) {
                Err(e) => {
                    problems.push(format!("fragment {}: R-tree: {e}", f.name));
                    None
                }
                Ok(rt) => {
                    if rt.leaves().len() as u64 != tiles {
                        problems.push(format!(
                            "fragment {}: R-tree has {} leaves for {tiles} tiles",
                            f.name,
                            rt.leaves().len()
                        ));
                    }
                    if rt.tiles_overlapping(&|_| Overlap::Partial).len() != rt.leaves().len() {
                        problems.push(format!(
                            "fragment {}: R-tree levels do not cover the leaves",
                            f.name
                        ));
                    }
                    Some(rt)
                }
            }
        };
        // Tile offsets: one per tile, increasing, inside the file.
        for field in &fields {
            let Some(idx) = f.field_index(*field) else {
                continue;
            };
            let spec = FieldSpec::of(f, *field);
            let mut kinds = vec![FileKind::Fixed];
            if spec.cell_val_num.is_var() {
                kinds.push(FileKind::Var);
            }
            if spec.nullable {
                kinds.push(FileKind::Validity);
            }
            for kind in kinds {
                let file = f.data_file(*field, kind);
                let name = file
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                match f.tile_offsets(storage, idx, kind) {
                    Err(e) => {
                        problems.push(format!("fragment {}: {name}: tile offsets: {e}", f.name))
                    }
                    Ok(offs) => {
                        if offs.len() as u64 != tiles {
                            problems.push(format!(
                                "fragment {}: {name}: {} tile offsets for {tiles} tiles",
                                f.name,
                                offs.len()
                            ));
                        }
                        if offs.windows(2).any(|w| w[0] > w[1]) {
                            problems.push(format!(
                                "fragment {}: {name}: tile offsets decrease",
                                f.name
                            ));
                        }
                        match storage.size(&file) {
                            Ok(size) if size != f.file_size(idx, kind) => problems.push(format!(
                                "fragment {}: {name}: {size} bytes on disk, the footer says {}",
                                f.name,
                                f.file_size(idx, kind)
                            )),
                            Err(e) => problems.push(format!("fragment {}: {name}: {e}", f.name)),
                            _ => {}
                        }
                    }
                }
            }
            for t in 0..tiles {
                // The error names the fragment, the file and the tile.
                match read_field_tile(storage, f, &spec, t, a.key) {
                    Err(e) => problems.push(e.to_string()),
                    // Sparse coordinates must lie inside their tile's MBR.
                    Ok(tile) => {
                        if let (Field::Dimension(j), Some(rt)) = (field, rtree) {
                            let d = &s.dimensions[*j];
                            let Some(mbr) = rt.leaves().get(t as usize) else {
                                continue;
                            };
                            let (lo, hi) = (
                                Value::decode(d.datatype, &mbr[*j].lo),
                                Value::decode(d.datatype, &mbr[*j].hi),
                            );
                            if (0..tile.cells as usize).any(|c| {
                                let k = Value::decode(d.datatype, tile.value(c));
                                k < lo || k > hi
                            }) {
                                problems.push(format!("fragment {}: tile {t}: a coordinate of `{}` lies outside its MBR", f.name, d.name));
                            }
                        }
                    }
                }
            }
        }
        done();
    }
    problems
}
