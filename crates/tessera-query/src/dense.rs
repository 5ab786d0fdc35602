//! The dense reader: tiles of every fragment placed into the result, band
//! by band, in parallel; fill values where nothing was written.

use crate::condition::Expr;
use crate::context::ReadContext;
use crate::decode::{
    decode_field_tile, decode_field_tile_span, decode_in_runs, decode_tile_runs, Fetched,
    FieldSpec, FieldTile, Runs,
};
use crate::dense_place::*;
use crate::geometry::{dense_grid, major_order};
use crate::key::Key;
use crate::read::Query;
use crate::result::{ColumnBuilder, ReadResult};
use crate::unfiltered::UnfilteredTile;
use crate::QueryError;
use rayon::prelude::*;
use std::sync::Arc;
use tessera_schema::ArraySchema;
use tessera_tile::storage::keep_files_open;
use tessera_tile::Layout;

/// A tile's fields as a dense read places them: decoded, or for those read
/// straight from unfiltered tiles, where their cells lie.
pub(crate) type TileFields = (Vec<Option<FieldTile>>, Vec<Option<UnfilteredTile>>);

/// A tile's streamed fields (by index) and the destinations of their runs,
/// taken by whichever thread decodes the tile.
pub(crate) type StreamRuns<'d> = std::sync::Mutex<Vec<(usize, Runs<'d>)>>;

/// Decoded bytes per group of tiles a dense read places at once.
pub(crate) const DENSE_GROUP_BYTES: u64 = 32 << 20;

impl<'a> Query<'a> {
    /// The dense read: every cell of the subarray, from the newest
    /// fragment that wrote it, else the fill value.
    pub(crate) fn dense(
        &self,
        schema: &Arc<ArraySchema>,
        attrs: &[String],
        layout: Layout,
    ) -> Result<ReadResult, QueryError> {
        let dims = &schema.dimensions;
        let nd = dims.len();
        // Domain, tile extents and the subarray, as integers.
        let mut dom = Vec::with_capacity(nd);
        let mut sub: Vec<Vec<(i128, i128)>> = Vec::with_capacity(nd);
        for j in 0..nd {
            let g = dense_grid(schema, j)?;
            dom.push((g.lo, g.hi, g.ext));
            let r: Vec<(i128, i128)> = if self.ranges[j].is_empty() {
                vec![(g.start, g.end)]
            } else {
                self.ranges[j]
                    .iter()
                    .map(|(a, b)| (a.as_int().unwrap_or(0), b.as_int().unwrap_or(0)))
                    .collect()
            };
            for (a, b) in &r {
                if a > b || *a < dom[j].0 || *b > dom[j].1 {
                    return Err(QueryError::OutOfDomain {
                        dimension: dims[j].name.clone(),
                        lo: *a,
                        hi: *b,
                        domain_lo: dom[j].0,
                        domain_hi: dom[j].1,
                    });
                }
            }
            sub.push(r);
        }
        let counts: Vec<u64> = sub
            .iter()
            .map(|r| r.iter().map(|(a, b)| (b - a + 1) as u64).sum())
            .collect();
        let total = counts
            .iter()
            .try_fold(1u64, |acc, &c| acc.checked_mul(c))
            .filter(|t| *t <= (1u64 << 40))
            .ok_or_else(|| QueryError::Invalid("the subarray has too many cells".into()))?;
        let n = total as usize;
        // Strides of the result layout.
        let mut strides = vec![0u64; nd];
        let mut s = 1u64;
        for j in major_order(layout, nd).into_iter().rev() {
            strides[j] = s;
            s *= counts[j];
        }
        // Dimensions from slowest to fastest in the schema's tile and cell orders.
        let tile_order = major_order(schema.tile_order, nd);
        let cell_order = major_order(schema.cell_order, nd);
        // Position of coordinate c of dimension j in the subarray.
        let pos_of = |j: usize, c: i128| -> Option<u64> {
            let mut base = 0u64;
            for (a, b) in &sub[j] {
                if c >= *a && c <= *b {
                    return Some(base + (c - a) as u64);
                }
                base += (b - a + 1) as u64;
            }
            None
        };
        // Outputs start as fill values, unless dense fragments with every
        // selected attribute cover the subarray: then each cell is written
        // anyway, and the output starts as whatever its memory held (zeros
        // from the kernel, or a recycled result's old cells): no pass.
        // Each fragment's non-empty domain, as integers (dense dimensions
        // are integers: `dense_grid` checked).
        let neds: Vec<Option<Vec<(i128, i128)>>> = self
            .array
            .fragments
            .iter()
            .map(|f| {
                let ned = f.footer.non_empty_domain.as_ref()?;
                Some(
                    ned.iter()
                        .zip(dims)
                        .map(|(r, d)| {
                            (
                                Key::decode(d.datatype, &r.lo).as_int().unwrap_or(0),
                                Key::decode(d.datatype, &r.hi).as_int().unwrap_or(0),
                            )
                        })
                        .collect(),
                )
            })
            .collect();
        // Per fragment: dense, holding every selected attribute. Such a
        // fragment writes every cell of its non-empty domain.
        let writes_all: Vec<bool> = self
            .array
            .fragments
            .iter()
            .map(|f| f.footer.dense && attrs.iter().all(|a| FieldSpec::named(f, a).is_some()))
            .collect();
        // Covered: along some dimension `d`, the fragments writing all
        // that span the subarray on every other dimension leave no gap in
        // it (one fragment, or row bands).
        let covered = (0..nd).any(|d| {
            let mut spans: Vec<(i128, i128)> = neds
                .iter()
                .zip(&writes_all)
                .filter(|(_, &all)| all)
                .filter_map(|(ned, _)| {
                    let ned = ned.as_ref()?;
                    ned.iter()
                        .zip(&sub)
                        .enumerate()
                        .all(|(j, ((lo, hi), ranges))| {
                            j == d || ranges.iter().all(|(a, b)| lo <= a && b <= hi)
                        })
                        .then_some(ned[d])
                })
                .collect();
            spans.sort_unstable();
            sub[d].iter().all(|&(a, b)| {
                // The first coordinate of [a, b] not yet covered.
                let mut next = a;
                for &(lo, hi) in &spans {
                    if lo > next {
                        break;
                    }
                    next = next.max(hi.saturating_add(1));
                }
                next > b
            })
        });
        let mut bufs: Vec<Arc<Vec<u8>>> = Vec::new();
        let mut outs: Vec<DenseOut> = Vec::new();
        for a in attrs {
            let at = schema.attribute(a).expect("checked");
            bufs.push(Arc::new(at.fill_value.clone()));
            let fill_id = (bufs.len() - 1) as u32;
            let cell = at.cell_size() as usize;
            let mut fill = at.fill_value.clone();
            fill.resize(if at.is_var() { fill.len() } else { cell }, 0);
            outs.push(DenseOut {
                fixed: (!at.is_var()).then(|| {
                    if covered {
                        self.context.result_overwritten(n * cell)
                    } else {
                        let mut b = self.context.result_buffer(n * cell);
                        if n > 0 {
                            b.extend_from_slice(&fill);
                        }
                        // Doubling copies of the fill value.
                        while b.len() < n * cell {
                            b.extend_from_within(..b.len().min(n * cell - b.len()));
                        }
                        b
                    }
                }),
                var: at
                    .is_var()
                    .then(|| vec![(fill_id, 0, at.fill_value.len() as u64); n]),
                validity: at
                    .nullable
                    .then(|| self.context.result_filled(n, at.fill_validity as u8)),
                cell,
            });
        }
        // Fragments in write order: later ones overwrite. Sparse fragments
        // (possible before TileDB 2.5) come after every dense one: libtiledb
        // (2.13 to 2.30) lets their cells win over later dense writes.
        let mut order: Vec<usize> = (0..self.array.fragments.len()).collect();
        order.sort_by_key(|&i| !self.array.fragments[i].footer.dense);
        // Per dimension, the smallest range holding the subarray.
        let hull: Vec<(i128, i128)> = sub
            .iter()
            .map(|r| {
                let lo = r.iter().map(|x| x.0).min().unwrap_or(0);
                (lo, r.iter().map(|x| x.1).max().unwrap_or(lo))
            })
            .collect();
        for (k, &fi) in order.iter().enumerate() {
            let frag = &self.array.fragments[fi];
            let specs: Vec<Option<FieldSpec>> =
                attrs.iter().map(|a| FieldSpec::named(frag, a)).collect();
            let Some(ned) = &neds[fi] else {
                continue;
            };
            // The non-empty domains of the fragments applied after this one
            // that write all: cells inside one of them are written again.
            // Only those meeting this fragment's domain inside the subarray
            // can cover one of its tiles: each tile is checked against
            // those alone, not against every later fragment.
            let later: Vec<&Vec<(i128, i128)>> = if self.tuning.skip_overwritten {
                order[k + 1..]
                    .iter()
                    .filter(|&&g| writes_all[g])
                    .filter_map(|&g| neds[g].as_ref())
                    .filter(|g| {
                        g.iter()
                            .zip(ned)
                            .zip(&hull)
                            .all(|((g, f), h)| g.0 <= f.1.min(h.1) && f.0.max(h.0) <= g.1)
                    })
                    .collect()
            } else {
                Vec::new()
            };
            if !frag.footer.dense {
                // A sparse fragment (TileDB before 2.5 accepted unordered
                // writes to dense arrays): its cells overwrite theirs.
                let mut whole = band_outs(&mut outs, &[(0, n)]);
                let outs = &mut whole[0];
                for mut tc in self.sparse_tiles(fi, frag, attrs, None)? {
                    let ids = var_ids(&mut tc.fields, outs, &mut bufs);
                    for &c in &tc.cells {
                        let mut ri = 0u64;
                        let mut inside = true;
                        for (j, d) in dims.iter().enumerate() {
                            let x = Key::decode(d.datatype, tc.dims[j].value(c as usize));
                            match x.as_int().and_then(|x| pos_of(j, x)) {
                                Some(p) => ri += p * strides[j],
                                None => inside = false,
                            }
                        }
                        if !inside {
                            continue;
                        }
                        for (k, o) in outs.iter_mut().enumerate() {
                            let at = schema.attribute(&attrs[k]).expect("checked");
                            let tile = tc.fields[k].as_ref();
                            put_cell(o, tile, c as usize, ri as usize, at, ids[k], &frag.name)?;
                        }
                    }
                }
                continue;
            }
            // The fragment's tile grid.
            let t_lo: Vec<i128> = (0..nd).map(|j| (ned[j].0 - dom[j].0) / dom[j].2).collect();
            let t_n: Vec<i128> = (0..nd)
                .map(|j| (ned[j].1 - dom[j].0) / dom[j].2 - t_lo[j] + 1)
                .collect();
            // Tiles meeting the subarray: per dimension, the tile coordinates any range touches.
            let mut per_dim: Vec<Vec<i128>> = Vec::with_capacity(nd);
            for j in 0..nd {
                let mut v = Vec::new();
                for (a, b) in &sub[j] {
                    let (a, b) = ((*a).max(ned[j].0), (*b).min(ned[j].1));
                    if a > b {
                        continue;
                    }
                    for t in (a - dom[j].0) / dom[j].2..=(b - dom[j].0) / dom[j].2 {
                        v.push(t);
                    }
                }
                v.sort_unstable();
                v.dedup();
                per_dim.push(v);
            }
            if per_dim.iter().any(Vec::is_empty) {
                continue;
            }
            let mut tiles: Vec<Vec<i128>> = vec![Vec::new()];
            for v in &per_dim {
                tiles = tiles
                    .into_iter()
                    .flat_map(|p| v.iter().map(move |t| [p.clone(), vec![*t]].concat()))
                    .collect();
            }
            // Box of a tile, clipped to the non-empty domain.
            let tile_box = |tc: &[i128]| -> (Vec<i128>, Vec<i128>) {
                (0..nd)
                    .map(|j| {
                        let t = dom[j].0 + tc[j] * dom[j].2;
                        (t.max(ned[j].0), (t + dom[j].2 - 1).min(ned[j].1))
                    })
                    .unzip()
            };
            // Tiles whose cells in the subarray a later fragment writes
            // again are neither read nor placed.
            tiles.retain(|tc| {
                let (lo, hi) = tile_box(tc);
                !later.iter().any(|g| {
                    (0..nd)
                        .all(|j| g[j].0 <= lo[j].max(hull[j].0) && hi[j].min(hull[j].1) <= g[j].1)
                })
            });
            if tiles.is_empty() {
                continue;
            }
            let tile_index = |tc: &[i128]| -> u64 {
                let mut idx = 0i128;
                for &j in &tile_order {
                    idx = idx * t_n[j] + (tc[j] - t_lo[j]);
                }
                idx as u64
            };
            let key = self.array.key;
            let numbers: Vec<u64> = tiles.iter().map(|tc| tile_index(tc)).collect();
            // Cell strides within a tile (cell order).
            let mut cs = vec![0i128; nd];
            let mut acc = 1i128;
            for &j in cell_order.iter().rev() {
                cs[j] = acc;
                acc *= dom[j].2;
            }
            // Per tile, the cells from the first to the last the subarray
            // needs (in cell order): chunks outside are not decoded.
            let spans: std::collections::HashMap<u64, std::ops::Range<u64>> = tiles
                .iter()
                .zip(&numbers)
                .filter_map(|(tc, &t)| {
                    let (mut first, mut last) = (0i128, 0i128);
                    let (lo, hi) = tile_box(tc);
                    for j in 0..nd {
                        let tile_lo = dom[j].0 + tc[j] * dom[j].2;
                        let inside = sub[j]
                            .iter()
                            .map(|(a, z)| ((*a).max(lo[j]), (*z).min(hi[j])));
                        let (a, z) = inside
                            .filter(|(a, z)| a <= z)
                            .reduce(|(x, y), (a, z)| (x.min(a), y.max(z)))?;
                        first += (a - tile_lo) * cs[j];
                        last += (z - tile_lo) * cs[j];
                    }
                    Some((t, first as u64..last as u64 + 1))
                })
                .collect();
            // Whether a row of a box (cells along the innermost result
            // dimension) is one run in both the tile and the result, for
            // every field: then rows are copied whole.
            let inner = if layout == Layout::ColMajor {
                0
            } else {
                nd - 1
            };
            let runs = cs[inner] == 1
                && strides[inner] == 1
                && outs.iter().all(|o| o.var.is_none())
                && specs
                    .iter()
                    .all(|s| s.as_ref().is_some_and(|s| !s.cell_val_num.is_var()));
            // Fields stored unfiltered, in tiles large enough, are read from
            // their files straight to their places when rows are runs: not
            // fetched ahead.
            let cells_per_tile: u64 = dom.iter().map(|d| d.2 as u64).product();
            let unfiltered: Vec<bool> = specs
                .iter()
                .map(|s| {
                    runs && s.as_ref().is_some_and(|s| {
                        self.reads_in_place(
                            &s.filters,
                            s.nullable,
                            s.cell_val_num.is_var(),
                            cells_per_tile.saturating_mul(s.cell_size()),
                        )
                    })
                })
                .collect();
            // The other fixed-sized fields without validity are decoded
            // chunk by chunk straight to the rows' places
            // (`decode_tile_runs`), with no buffer for the tile, where no
            // two rows share a place (ranges that overlap).
            let apart = sub.iter().all(|r| {
                let mut r = r.clone();
                r.sort_unstable();
                r.windows(2).all(|w| w[0].1 < w[1].0)
            });
            let streamed: Vec<bool> = specs
                .iter()
                .zip(&unfiltered)
                .zip(&outs)
                .map(|((s, &u), o)| {
                    runs && apart
                        && self.tuning.direct
                        && !u
                        && o.validity.is_none()
                        && s.as_ref().is_some_and(|s| !s.nullable)
                })
                .collect();
            let present: Vec<&FieldSpec> = specs
                .iter()
                .zip(&unfiltered)
                .filter(|(_, &u)| !u)
                .filter_map(|(s, _)| s.as_ref())
                .collect();
            // Bands: the tiles that share a coordinate on the result's
            // slowest dimension fill one contiguous region of the result.
            // Bands are placed in parallel, each into its own region; a
            // band's tiles go in groups of at most DENSE_GROUP_BYTES (shared
            // among the threads) decoded: a group is decoded, placed, and
            // its buffers recycled for the next, so a large read faults
            // fresh memory in for a few tiles only.
            let slow = major_order(layout, nd)[0];
            let found = dense_bands(&tiles, slow, &dom[slow], ned[slow], &sub[slow]);
            // Where bands are found, positions on the slowest dimension
            // grow with coordinates: a band's rows can be cut into slabs.
            let banded = found.is_some();
            let bands = found
                .map(|regions| {
                    regions
                        .into_iter()
                        .map(|(p, q, members)| {
                            let s = strides[slow] as usize;
                            ((p as usize * s, (q as usize + 1) * s), members)
                        })
                        .collect::<Vec<_>>()
                })
                .unwrap_or_else(|| vec![((0, n), (0..tiles.len()).collect())]);
            let per_tile: u64 = present
                .iter()
                .map(|s| (s.cell_size() + s.nullable as u64) * cells_per_tile)
                .sum();
            // A band of less than `band_bytes` decoded joins the next
            // (regions between them hold no tile of this fragment): a
            // small read stays one band, read with as few requests as one
            // run of tiles needs.
            let mut merged: Vec<((usize, usize), Vec<usize>)> = Vec::with_capacity(bands.len());
            for (region, members) in bands {
                match merged.last_mut() {
                    Some((r, m))
                        if (m.len() as u64).saturating_mul(per_tile)
                            < self.tuning.dense_band_bytes =>
                    {
                        r.1 = region.1;
                        m.extend(members);
                    }
                    _ => merged.push((region, members)),
                }
            }
            let bands = merged;
            let threads = rayon::current_num_threads().min(bands.len()).max(1) as u64;
            let group = (DENSE_GROUP_BYTES / threads / per_tile.max(1)).max(1) as usize;
            let regions: Vec<(usize, usize)> = bands.iter().map(|b| b.0).collect();
            let views = band_outs(&mut outs, &regions);
            let shared = std::sync::Mutex::new(std::mem::take(&mut bufs));
            let s_slow = strides[slow] as usize;
            // The boxes of tile `tc`'s cells in the subarray, those whose
            // positions on the slowest dimension are in `rows` (all, without).
            let boxes_of = |tc: &[i128], rows: Option<(u64, u64)>| -> Vec<Vec<(i128, i128)>> {
                let (lo, hi) = tile_box(tc);
                let mut boxes: Vec<Vec<(i128, i128)>> = vec![Vec::new()];
                for j in 0..nd {
                    let mut nb = Vec::new();
                    for b in &boxes {
                        for (a, z) in &sub[j] {
                            let (a, z) = ((*a).max(lo[j]), (*z).min(hi[j]));
                            if a <= z {
                                let mut x = b.clone();
                                x.push((a, z));
                                nb.push(x);
                            }
                        }
                    }
                    boxes = nb;
                }
                if let Some((p0, p1)) = rows {
                    // A box lies in one range, where positions run with
                    // coordinates: keep the coordinates at positions p0..p1.
                    boxes.retain_mut(|b| {
                        let (a, z) = b[slow];
                        let pa = pos_of(slow, a).unwrap_or(0) as i128;
                        let pz = pa + (z - a);
                        b[slow] = (
                            a + (p0 as i128 - pa).max(0),
                            z - (pz - (p1 as i128 - 1)).max(0),
                        );
                        b[slow].0 <= b[slow].1
                    });
                }
                boxes
            };
            // A coordinate's position in tile `tc` (cell order) and in the
            // region of the result from cell `first`.
            let locate = |tc: &[i128], first: usize, c: &[i128]| -> (usize, usize) {
                let (mut cell, mut ri) = (0i128, 0u64);
                for j in 0..nd {
                    cell += (c[j] - dom[j].0 - tc[j] * dom[j].2) * cs[j];
                    ri += pos_of(j, c[j]).unwrap_or(0) * strides[j];
                }
                (cell as usize, ri as usize - first)
            };
            // Where rows are runs: the rows of `boxes` of tile `tc`, each as
            // (first cell in the tile, first position in the region from
            // cell `first`, cells).
            let row_runs = |tc: &[i128], boxes: Vec<Vec<(i128, i128)>>, first: usize| {
                let mut wanted: Vec<(usize, usize, usize)> = Vec::new();
                for bx in boxes {
                    let len = (bx[inner].1 - bx[inner].0 + 1) as usize;
                    let mut c: Vec<i128> = bx.iter().map(|r| r.0).collect();
                    loop {
                        let (cell, ri) = locate(tc, first, &c);
                        wanted.push((cell, ri, len));
                        // Next row: advance the other dimensions.
                        let mut j = nd;
                        let mut done = true;
                        while j > 0 {
                            j -= 1;
                            if j == inner {
                                continue;
                            }
                            if c[j] < bx[j].1 {
                                c[j] += 1;
                                done = false;
                                break;
                            }
                            c[j] = bx[j].0;
                        }
                        if done {
                            break;
                        }
                    }
                }
                wanted
            };
            // Places the cells of tile `tc` whose positions on the slowest
            // dimension are in `rows` (all, without) into `outs`, the region
            // of the result from cell `first`. Streamed fields are placed
            // where their tiles are decoded.
            let place = |tc: &[i128],
                         t: u64,
                         (fields, direct): (&[Option<FieldTile>], &[Option<UnfilteredTile>]),
                         ids: &[u32],
                         outs: &mut [BandOut<'_>],
                         first: usize,
                         rows: Option<(u64, u64)>|
             -> Result<(), QueryError> {
                let mut boxes = boxes_of(tc, rows);
                // Fast path: when the innermost result dimension is also the
                // innermost cell dimension, a box row is one contiguous run in
                // both the tile and the result: copy it whole.
                if runs {
                    let wanted = row_runs(tc, std::mem::take(&mut boxes), first);
                    for (k, o) in outs.iter_mut().enumerate() {
                        if streamed[k] {
                            continue;
                        }
                        let Some(u) = &direct[k] else {
                            let tile = fields[k].as_ref().expect("runs: every field has a tile");
                            copy_runs(tile, o, &wanted, &frag.name)?;
                            continue;
                        };
                        if let Some(val) = &mut o.validity {
                            wanted
                                .iter()
                                .for_each(|&(_, ri, n)| val[ri..ri + n].fill(1));
                        }
                        if let Some(fx) = o.fixed.as_deref_mut() {
                            if let Some(dsts) = carve_runs(fx, o.cell, &wanted)? {
                                if u.read_runs(self.storage, &frag.name, t, dsts)? {
                                    continue;
                                }
                            }
                        }
                        // Runs that overlap, or a tile not laid out as
                        // predicted: read it the ordinary way.
                        let spec = specs[k].as_ref().expect("unfiltered fields have specs");
                        let tile = decode_field_tile(
                            &Fetched::nothing(self.storage, &self.context),
                            frag,
                            spec,
                            t,
                            key,
                        )?;
                        copy_runs(&tile, o, &wanted, &frag.name)?;
                        tile.recycle(&self.context);
                    }
                }
                for bx in boxes {
                    let mut c: Vec<i128> = bx.iter().map(|r| r.0).collect();
                    'cells: loop {
                        let (cell, ri) = locate(tc, first, &c);
                        for (k, o) in outs.iter_mut().enumerate() {
                            let at = schema.attribute(&attrs[k]).expect("checked");
                            put_cell(o, fields[k].as_ref(), cell, ri, at, ids[k], &frag.name)?;
                        }
                        // Next cell: advance the fastest dimension first.
                        for j in (0..nd).rev() {
                            if c[j] < bx[j].1 {
                                c[j] += 1;
                                continue 'cells;
                            }
                            c[j] = bx[j].0;
                        }
                        break;
                    }
                }
                Ok(())
            };
            bands.into_par_iter().zip(views).try_for_each(
                |(((first, end), members), mut outs)| {
                    for grp in members.chunks(group) {
                        let nums: Vec<u64> = grp.iter().map(|&i| numbers[i]).collect();
                        // The destinations of the streamed fields' runs, per
                        // tile: every tile's rows carved from the band's region.
                        let mut streams: std::collections::HashMap<u64, StreamRuns<'_>> =
                            nums.iter().map(|&t| (t, Default::default())).collect();
                        if streamed.contains(&true) {
                            let wanted: Vec<Vec<(usize, usize, usize)>> = grp
                                .iter()
                                .map(|&i| row_runs(&tiles[i], boxes_of(&tiles[i], None), first))
                                .collect();
                            let all = wanted.concat();
                            for (k, o) in outs.iter_mut().enumerate() {
                                let Some(fx) = o.fixed.as_deref_mut().filter(|_| streamed[k])
                                else {
                                    continue;
                                };
                                let mut carved = carve_runs(fx, o.cell, &all)?
                                    .ok_or_else(|| {
                                        QueryError::Invalid("rows of the result overlap".into())
                                    })?
                                    .into_iter();
                                for (t, w) in nums.iter().zip(&wanted) {
                                    let runs = carved.by_ref().take(w.len()).collect();
                                    streams
                                        .get_mut(t)
                                        .expect("every tile")
                                        .get_mut()
                                        .unwrap_or_else(|e| e.into_inner())
                                        .push((k, runs));
                                }
                            }
                        }
                        let decoded: Vec<TileFields> = decode_in_runs(
                            self.storage,
                            &self.context,
                            frag,
                            &present,
                            &nums,
                            |src, t| {
                                let span = spans.get(&t).cloned();
                                let mut fields = Vec::with_capacity(specs.len());
                                let mut direct = Vec::with_capacity(specs.len());
                                let mut mine = streams.get(&t).map(|m| {
                                    std::mem::take(
                                        &mut *m.lock().unwrap_or_else(|e| e.into_inner()),
                                    )
                                });
                                for (k, (s, &u)) in specs.iter().zip(&unfiltered).enumerate() {
                                    let Some(s) = s else {
                                        fields.push(None);
                                        direct.push(None);
                                        continue;
                                    };
                                    if streamed[k] {
                                        let runs = mine
                                            .as_mut()
                                            .and_then(|m| m.iter_mut().find(|r| r.0 == k))
                                            .map(|r| std::mem::take(&mut r.1))
                                            .unwrap_or_default();
                                        decode_tile_runs(src, frag, s, t, key, runs)?;
                                        fields.push(None);
                                        direct.push(None);
                                        continue;
                                    }
                                    let layout = match u {
                                        true => UnfilteredTile::of(self.storage, frag, s, t)?,
                                        false => None,
                                    };
                                    fields.push(match layout {
                                        Some(_) => None,
                                        None => Some(decode_field_tile_span(
                                            src,
                                            frag,
                                            s,
                                            t,
                                            key,
                                            span.clone(),
                                        )?),
                                    });
                                    direct.push(layout);
                                }
                                Ok((fields, direct))
                            },
                        )?;
                        drop(streams);
                        // Var-sized values keep their tile's buffer (moved,
                        // not copied), named by its id in the shared list.
                        let decoded: Vec<(usize, TileFields, Vec<u32>)> = grp
                            .iter()
                            .zip(decoded)
                            .map(|(&i, (mut fields, direct))| {
                                let mut b = shared.lock().unwrap_or_else(|e| e.into_inner());
                                let ids = var_ids(&mut fields, &outs, &mut b);
                                (i, (fields, direct), ids)
                            })
                            .collect();
                        let rows = ((end - first) / s_slow.max(1)) as u64;
                        // Places every decoded tile's cells in `rows` (all, without) in a region.
                        let place_all = |v: &mut [BandOut<'_>],
                                         first: usize,
                                         rows: Option<(u64, u64)>|
                         -> Result<(), QueryError> {
                            for (i, (fields, direct), ids) in &decoded {
                                let tile = (fields.as_slice(), direct.as_slice());
                                place(&tiles[*i], numbers[*i], tile, ids, v, first, rows)?;
                            }
                            Ok(())
                        };
                        if streamed.iter().all(|&s| s) {
                            // Every field is in its place already.
                        } else if banded && rows > 1 && self.tuning.dense_band_bytes != u64::MAX {
                            // Slabs of the band's rows, placed in parallel:
                            // each copies its rows of every tile.
                            let p_first = (first / s_slow) as u64;
                            let count = (rayon::current_num_threads() as u64 * 2).min(rows);
                            let slabs: Vec<(u64, u64)> = (0..count)
                                .map(|k| {
                                    (p_first + rows * k / count, p_first + rows * (k + 1) / count)
                                })
                                .collect();
                            let regions: Vec<(usize, usize)> = slabs
                                .iter()
                                .map(|&(p, q)| {
                                    (p as usize * s_slow - first, q as usize * s_slow - first)
                                })
                                .collect();
                            let views: Vec<BandOut<'_>> =
                                outs.iter_mut().map(BandOut::reborrow).collect();
                            split_views(views, &regions)
                                .into_par_iter()
                                .zip(slabs)
                                .try_for_each(|(mut v, (p, q))| {
                                    // Its rows of every tile, from one open file.
                                    keep_files_open(|| {
                                        place_all(&mut v, p as usize * s_slow, Some((p, q)))
                                    })
                                })?;
                        } else {
                            keep_files_open(|| place_all(&mut outs, first, None))?;
                        }
                        for (_, (fields, _), _) in decoded {
                            fields
                                .into_iter()
                                .flatten()
                                .for_each(|t| t.recycle(&self.context));
                        }
                    }
                    Ok::<(), QueryError>(())
                },
            )?;
            bufs = shared.into_inner().unwrap_or_else(|e| e.into_inner());
        }
        // Assemble columns: dimensions from positions, attributes from outputs.
        let mut result = ReadResult {
            cell_count: n,
            ..ReadResult::default()
        };
        if self.with_dimensions {
            // The coordinates in the order positions were given (global
            // order permutes them below, conditions read them as columns).
            let grid = crate::result::CoordinateGrid {
                dimensions: dims
                    .iter()
                    .zip(&sub)
                    .map(|(d, r)| crate::result::GridDimension {
                        name: d.name.clone(),
                        datatype: d.datatype,
                        ranges: r.clone(),
                    })
                    .collect(),
                order: major_order(layout, nd),
            };
            if self.describes_coordinates() {
                result.grid = Some(grid);
            } else {
                result.columns = grid.columns_in(&self.context);
            }
        }
        for (k, a) in attrs.iter().enumerate() {
            let at = schema.attribute(a).expect("checked");
            let o = &mut outs[k];
            let (data, offsets) = match (&mut o.fixed, &o.var) {
                (Some(f), _) => (std::mem::take(f), None),
                (None, Some(v)) => {
                    let mut data = Vec::new();
                    let mut offs = Vec::with_capacity(n + 1);
                    offs.push(0);
                    for (id, start, len) in v {
                        let b = &bufs[*id as usize];
                        data.extend_from_slice(&b[*start as usize..(*start + *len) as usize]);
                        offs.push(data.len() as u64);
                    }
                    (data, Some(offs))
                }
                _ => unreachable!(),
            };
            result.columns.push(crate::result::Column {
                name: a.clone(),
                is_dimension: false,
                datatype: at.datatype,
                cell_val_num: at.cell_val_num,
                data,
                offsets,
                validity: o.validity.take(),
            });
        }
        if let Some(c) = &self.condition {
            // Dense reads keep every cell; cells failing the condition read
            // as fill values, as in libtiledb.
            result = fill_unmatched(&self.context, result, c, schema);
        }
        if layout == Layout::GlobalOrder {
            // Global order: space tiles in tile order, cells in cell order.
            let coords: Vec<Vec<i128>> = sub
                .iter()
                .map(|r| r.iter().flat_map(|(a, b)| *a..=*b).collect())
                .collect();
            // One number per cell: its space tile's rank in tile order (over
            // the domain's tile grid), then its rank inside the tile in cell order.
            let tiles_per_dim: Vec<u128> = (0..nd)
                .map(|j| ((dom[j].1 - dom[j].0) / dom[j].2 + 1) as u128)
                .collect();
            let cells_per_tile: u128 = (0..nd).map(|j| dom[j].2 as u128).product();
            let key = |i: usize| -> u128 {
                let (mut t, mut c) = (0u128, 0u128);
                for &j in &tile_order {
                    let x = coords[j][((i as u64 / strides[j]) % counts[j]) as usize];
                    t = t * tiles_per_dim[j] + ((x - dom[j].0) / dom[j].2) as u128;
                }
                for &j in &cell_order {
                    let x = coords[j][((i as u64 / strides[j]) % counts[j]) as usize];
                    c = c * dom[j].2 as u128 + ((x - dom[j].0) % dom[j].2) as u128;
                }
                t * cells_per_tile + c
            };
            let keys: Vec<u128> = (0..n).map(key).collect();
            if keys.windows(2).all(|w| w[0] <= w[1]) {
                // Already in global order (one tile read in its cell order).
                return Ok(result);
            }
            let mut perm: Vec<usize> = (0..n).collect();
            perm.sort_by_key(|&i| keys[i]);
            result = permute(&self.context, result, &perm);
        }
        let _ = bufs;
        Ok(result)
    }
}

/// Reorders the cells of a result: cell `k` of the output is cell `perm[k]`.
pub(crate) fn permute(ctx: &ReadContext, r: ReadResult, perm: &[usize]) -> ReadResult {
    let columns = r
        .columns
        .iter()
        .map(|col| {
            let mut b = ColumnBuilder::new(
                ctx,
                &col.name,
                col.is_dimension,
                col.datatype,
                col.cell_val_num,
                col.validity.is_some(),
                perm.len(),
            );
            for &i in perm {
                b.push(col.value(i), col.is_valid(i));
            }
            b.col
        })
        .collect();
    ReadResult {
        columns,
        cell_count: perm.len(),
        grid: r.grid,
        context: r.context,
    }
}

/// Replaces the attribute values of cells failing `c` with fill values (dense reads).
pub(crate) fn fill_unmatched(
    ctx: &ReadContext,
    r: ReadResult,
    c: &Expr,
    schema: &ArraySchema,
) -> ReadResult {
    let cols = &r.columns;
    let c = c.compile_columns(cols);
    let pass: Vec<bool> = (0..r.cell_count)
        .into_par_iter()
        .map(|i| c.eval(&|at| (cols[at].value(i), cols[at].is_valid(i))))
        .collect();
    let columns = r
        .columns
        .iter()
        .map(|col| {
            if col.is_dimension {
                return col.clone();
            }
            let at = schema.attribute(&col.name);
            let mut b = ColumnBuilder::new(
                ctx,
                &col.name,
                false,
                col.datatype,
                col.cell_val_num,
                col.validity.is_some(),
                r.cell_count,
            );
            for (i, ok) in pass.iter().enumerate() {
                match (ok, at) {
                    (false, Some(at)) => b.push(&at.fill_value, at.fill_validity),
                    _ => b.push(col.value(i), col.is_valid(i)),
                }
            }
            b.col
        })
        .collect();
    ReadResult {
        columns,
        cell_count: r.cell_count,
        grid: r.grid,
        context: r.context,
    }
}
