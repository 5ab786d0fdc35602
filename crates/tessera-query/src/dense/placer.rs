//! Placing one dense fragment's tiles into the result: how each field is
//! read (decoded, streamed to its places, or read unfiltered in place),
//! the bands of tiles placed in parallel, and the groups of tiles decoded
//! and placed in turn inside a band.

use super::group_fetch::{Begun, GroupFetch};
use super::place::*;
use super::subarray::DenseSubarray;
use super::tile_grid::{FragmentTiles, RowRun};
use crate::decode::{
    decode_field_tile, decode_field_tile_span, decode_in_runs, decode_tile_runs, Fetched,
    FieldSpec, FieldTile, Runs, TileRuns,
};
use crate::read::Read;
use crate::unfiltered::UnfilteredTile;
use crate::QueryError;
use rayon::prelude::*;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use tessera_fragment::FragmentMetadata;
use tessera_schema::Attribute;
use tessera_storage::KeptFile;

/// A tile's fields as a dense read places them: decoded, or for those read
/// straight from unfiltered tiles, where their cells lie.
pub(crate) type TileFields = (Vec<Option<FieldTile>>, Vec<Option<UnfilteredTile>>);

/// A tile's streamed fields (by index) and the destinations of their runs,
/// taken by whichever thread decodes the tile.
pub(crate) type StreamRuns<'d> = Mutex<Vec<(usize, Runs<'d>)>>;

/// A decoded tile ready to place: its index in the fragment's tiles, its
/// fields, and the buffer ids of its var-sized values.
type DecodedTile = (usize, TileFields, Vec<u32>);

/// Decoded bytes per group of tiles a dense read places at once. Where
/// each request costs a round trip (object stores), a group's tiles are
/// one batch, and the groups after it are in flight while it decodes
/// ([`GroupFetch`]).
pub(crate) const DENSE_GROUP_BYTES: u64 = 32 << 20;

/// One band of a fragment's tiles: its region of the result, whether its
/// rows can be cut into slabs, and the var-sized buffers shared by all.
struct Band<'b, 's> {
    /// Result positions `[first, end)`.
    region: (usize, usize),
    banded: bool,
    shared: &'b Mutex<Vec<Arc<Vec<u8>>>>,
    /// Where requests cost a round trip: the groups' batches, begun ahead.
    ahead: Option<&'b Ahead<'b, 's>>,
}

/// How each selected attribute of one fragment is read.
struct FieldPlan {
    /// Per attribute, its spec in the fragment (`None`: the fragment
    /// predates it, its cells read as fill values).
    specs: Vec<Option<FieldSpec>>,
    /// Rows of boxes are runs in tile and result alike, for every field:
    /// rows are copied whole.
    runs: bool,
    /// Per attribute, read from its unfiltered tiles straight to its
    /// places, not fetched ahead.
    unfiltered: Vec<bool>,
    /// Per attribute, decoded chunk by chunk straight to the rows' places,
    /// with no buffer for the tile (`decode_tile_runs`).
    streamed: Vec<bool>,
}

impl FieldPlan {
    fn new(
        query: &Read<'_>,
        frag: &FragmentMetadata,
        attrs: &[String],
        tiles: &FragmentTiles<'_>,
        outs: &[DenseOut],
    ) -> FieldPlan {
        let specs: Vec<Option<FieldSpec>> = attrs
            .iter()
            .map(|a| FieldSpec::named(frag, &query.array.schema, a))
            .collect();
        let runs = tiles.rows_are_runs()
            && outs.iter().all(|o| o.var.is_none())
            && specs
                .iter()
                .all(|s| s.as_ref().is_some_and(|s| !s.cell_val_num.is_var()));
        // Fields stored unfiltered, in tiles large enough, are read from
        // their files straight to their places when rows are runs.
        let cells_per_tile = tiles.subarray().cells_per_tile();
        let unfiltered: Vec<bool> = specs
            .iter()
            .map(|s| {
                runs && s.as_ref().is_some_and(|s| {
                    query.reads_in_place(
                        &s.filters,
                        s.nullable,
                        s.cell_val_num.is_var(),
                        cells_per_tile.saturating_mul(s.cell_size()),
                    )
                })
            })
            .collect();
        // The other fixed-sized fields without validity are streamed,
        // where no two rows share a place (ranges that overlap).
        let apart = tiles.subarray().ranges_apart();
        let streamed = specs
            .iter()
            .zip(&unfiltered)
            .zip(outs)
            .map(|((s, &u), o)| {
                runs && apart
                    && query.request.tuning.direct
                    && !u
                    && o.validity.is_none()
                    && s.as_ref().is_some_and(|s| !s.nullable)
            })
            .collect();
        FieldPlan {
            specs,
            runs,
            unfiltered,
            streamed,
        }
    }

    /// The specs of the fields whose tiles are fetched.
    fn fetched(&self) -> Vec<&FieldSpec> {
        self.specs
            .iter()
            .zip(&self.unfiltered)
            .filter(|(_, &u)| !u)
            .filter_map(|(s, _)| s.as_ref())
            .collect()
    }
}

/// A fragment's tiles cut into bands: per band, its region of the result
/// (positions `[first, end)`) and its members (indexes into the
/// fragment's tiles), in the order of their regions.
type BandList = Vec<((usize, usize), Vec<usize>)>;

/// Places the tiles of one dense fragment into a dense read's outputs.
pub(crate) struct FragmentPlacer<'r> {
    query: &'r Read<'r>,
    /// The selected attributes, in the array schema.
    attributes: Vec<&'r Attribute>,
    frag: &'r FragmentMetadata,
    tiles: FragmentTiles<'r>,
    plan: FieldPlan,
    bands: BandList,
    /// Whether the bands' rows can be cut into slabs: where bands are
    /// found, positions on the slowest dimension grow with coordinates.
    banded: bool,
    /// Decoded bytes of one tile's fetched fields.
    per_tile: u64,
}

impl<'r> FragmentPlacer<'r> {
    /// A placer for `tiles` of `frag`, attributes `attributes` (named
    /// `attrs`) into `outs`.
    pub(crate) fn new(
        query: &'r Read<'r>,
        attributes: Vec<&'r Attribute>,
        attrs: &[String],
        frag: &'r FragmentMetadata,
        tiles: FragmentTiles<'r>,
        outs: &[DenseOut],
    ) -> FragmentPlacer<'r> {
        let plan = FieldPlan::new(query, frag, attrs, &tiles, outs);
        let sub = tiles.subarray();
        let per_tile: u64 = plan
            .fetched()
            .iter()
            .map(|s| (s.cell_size() + s.nullable as u64) * sub.cells_per_tile())
            .sum();
        let (bands, banded) = find_bands(&tiles, per_tile, query.request.tuning.dense_band_bytes);
        FragmentPlacer {
            query,
            attributes,
            frag,
            tiles,
            plan,
            bands,
            banded,
            per_tile,
        }
    }

    fn sub(&self) -> &DenseSubarray {
        self.tiles.subarray()
    }

    /// Tiles per group of this fragment's bands when `threads` threads
    /// place bands at once: each group of at most [`DENSE_GROUP_BYTES`]
    /// decoded, shared among the threads.
    fn group_tiles(&self, threads: u64) -> usize {
        (DENSE_GROUP_BYTES / threads / self.per_tile.max(1)).max(1) as usize
    }

    /// Plans the group of tiles `numbers` and begins its batch.
    fn begin_group(&self, numbers: &[u64]) -> Result<Begun<'r>, QueryError> {
        let storage = self.query.storage;
        let runs = TileRuns::plan(storage, self.frag, &self.plan.fetched(), numbers)?;
        let pending = runs.begin(storage);
        Ok((runs, pending))
    }

    /// Places band `b`'s tiles into its views `outs`, in groups of `group`
    /// tiles numbered from `first_group`.
    fn place_band(
        &self,
        (b, first_group, group): (usize, usize, usize),
        shared: &Mutex<Vec<Arc<Vec<u8>>>>,
        ahead: Option<&Ahead<'_, 'r>>,
        outs: &mut [BandOut<'_>],
    ) -> Result<(), QueryError> {
        let (region, members) = &self.bands[b];
        let band = Band {
            region: *region,
            banded: self.banded,
            shared,
            ahead,
        };
        for (j, grp) in members.chunks(group).enumerate() {
            self.place_group(&band, first_group + j, grp, outs)?;
        }
        Ok(())
    }

    /// Decodes a group of a band's tiles (indexes `grp` into the
    /// fragment's tiles) and places them into the band's views `outs`;
    /// their buffers are recycled after.
    fn place_group(
        &self,
        band: &Band<'_, 'r>,
        id: usize,
        grp: &[usize],
        outs: &mut [BandOut<'_>],
    ) -> Result<(), QueryError> {
        let q = self.query;
        let nums: Vec<u64> = grp.iter().map(|&i| self.tiles.numbers[i]).collect();
        let streams = self.stream_destinations(grp, &nums, band.region.0, outs)?;
        let fetched = self.plan.fetched();
        let decode = |src: &Fetched<'_>, t| self.decode_tile(src, t, streams.get(&t));
        let decoded: Vec<TileFields> = match band.ahead {
            Some(ahead) => {
                // Each thread's share of the read-ahead.
                let share = q.storage.read_ahead() / rayon::current_num_threads().max(1) as u64;
                let (runs, pending) = ahead.fetch.take(id, share, ahead.begin)?;
                runs.decode_batch(q.storage, &q.context, pending.wait(), decode)?
            }
            None => decode_in_runs(
                q.storage,
                &q.context,
                q.storage.read_ahead(),
                self.frag,
                &fetched,
                &nums,
                decode,
            )?,
        };
        drop(streams);
        // Var-sized values keep their tile's buffer (moved, not copied),
        // named by its id in the shared list.
        let decoded: Vec<DecodedTile> = grp
            .iter()
            .zip(decoded)
            .map(|(&i, (mut fields, direct))| {
                let mut b = band.shared.lock().unwrap_or_else(|e| e.into_inner());
                let ids = var_ids(&mut fields, outs, &mut b);
                (i, (fields, direct), ids)
            })
            .collect();
        self.place_decoded(band, &decoded, outs)?;
        for (_, (fields, _), _) in decoded {
            fields
                .into_iter()
                .flatten()
                .for_each(|t| t.recycle(&q.context));
        }
        Ok(())
    }

    /// The destinations of the streamed fields' runs, per tile of `nums`
    /// (the tiles `grp`): every tile's rows carved from the band's region
    /// `outs`, which starts at result position `first`.
    fn stream_destinations<'o>(
        &self,
        grp: &[usize],
        nums: &[u64],
        first: usize,
        outs: &'o mut [BandOut<'_>],
    ) -> Result<HashMap<u64, StreamRuns<'o>>, QueryError> {
        let mut streams: HashMap<u64, StreamRuns<'o>> =
            nums.iter().map(|&t| (t, Default::default())).collect();
        if !self.plan.streamed.contains(&true) {
            return Ok(streams);
        }
        let tiles = &self.tiles;
        let wanted: Vec<Vec<RowRun>> = grp
            .iter()
            .map(|&i| {
                let tc = &tiles.coords[i];
                tiles.row_runs(tc, tiles.boxes_of(tc, None), first)
            })
            .collect();
        let all = wanted.concat();
        for (k, o) in outs.iter_mut().enumerate() {
            let Some(fx) = o.fixed.as_deref_mut().filter(|_| self.plan.streamed[k]) else {
                continue;
            };
            let mut carved = carve_runs(fx, o.cell, &all)?
                .ok_or_else(|| QueryError::Invalid("rows of the result overlap".into()))?
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
        Ok(streams)
    }

    /// Decodes tile `t`'s fields from bytes fetched ahead: streamed fields
    /// straight to their destinations `streams`, unfiltered ones located,
    /// the others decoded (only the chunks holding the subarray's cells).
    fn decode_tile(
        &self,
        src: &Fetched<'_>,
        t: u64,
        streams: Option<&StreamRuns<'_>>,
    ) -> Result<TileFields, QueryError> {
        let frag = self.frag;
        let key = self.query.array.key;
        let span = self.tiles.spans.get(&t).cloned();
        let specs = &self.plan.specs;
        let mut fields = Vec::with_capacity(specs.len());
        let mut direct = Vec::with_capacity(specs.len());
        let mut mine =
            streams.map(|m| std::mem::take(&mut *m.lock().unwrap_or_else(|e| e.into_inner())));
        for (k, (s, &u)) in specs.iter().zip(&self.plan.unfiltered).enumerate() {
            let Some(s) = s else {
                fields.push(None);
                direct.push(None);
                continue;
            };
            if self.plan.streamed[k] {
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
                true => UnfilteredTile::of(self.query.storage, frag, s, t)?,
                false => None,
            };
            fields.push(match layout {
                Some(_) => None,
                None => Some(decode_field_tile_span(src, frag, s, t, key, span.clone())?),
            });
            direct.push(layout);
        }
        Ok((fields, direct))
    }

    /// Places the decoded tiles of a group into the band's views `outs`:
    /// where the band's rows can be cut, slabs of them in parallel, each
    /// copying its rows of every tile.
    fn place_decoded(
        &self,
        band: &Band<'_, 'r>,
        decoded: &[DecodedTile],
        outs: &mut [BandOut<'_>],
    ) -> Result<(), QueryError> {
        let (first, end) = band.region;
        let s_slow = self.sub().strides[self.sub().slowest()] as usize;
        let rows = ((end - first) / s_slow.max(1)) as u64;
        if self.plan.streamed.iter().all(|&s| s) {
            // Every field is in its place already.
            return Ok(());
        }
        if !(band.banded && rows > 1 && self.query.request.tuning.dense_band_bytes != u64::MAX) {
            return self.place_tiles(decoded, outs, first, None);
        }
        let p_first = (first / s_slow) as u64;
        let count = (rayon::current_num_threads() as u64 * 2).min(rows);
        let slabs: Vec<(u64, u64)> = (0..count)
            .map(|k| (p_first + rows * k / count, p_first + rows * (k + 1) / count))
            .collect();
        let regions: Vec<(usize, usize)> = slabs
            .iter()
            .map(|&(p, q)| (p as usize * s_slow - first, q as usize * s_slow - first))
            .collect();
        let views: Vec<BandOut<'_>> = outs.iter_mut().map(BandOut::reborrow).collect();
        split_views(views, &regions)
            .into_par_iter()
            .zip(slabs)
            .try_for_each(|(mut v, (p, q))| {
                self.place_tiles(decoded, &mut v, p as usize * s_slow, Some((p, q)))
            })
    }

    /// Places every decoded tile's cells whose positions on the slowest
    /// dimension are in `rows` (all, without) into `outs`, the region of
    /// the result from position `first`. Rows read straight from a field's
    /// files come from one open file while its tiles share it.
    fn place_tiles(
        &self,
        decoded: &[DecodedTile],
        outs: &mut [BandOut<'_>],
        first: usize,
        rows: Option<(u64, u64)>,
    ) -> Result<(), QueryError> {
        let mut kept: Vec<KeptFile> = outs.iter().map(|_| KeptFile::new()).collect();
        for (i, (fields, direct), ids) in decoded {
            let tile = PlacedTile {
                coords: &self.tiles.coords[*i],
                number: self.tiles.numbers[*i],
                fields,
                direct,
                ids,
            };
            self.place_tile(&tile, outs, first, rows, &mut kept)?;
        }
        Ok(())
    }

    /// Places the cells of one tile whose positions on the slowest
    /// dimension are in `rows` (all, without) into `outs`, the region of
    /// the result from position `first`. Streamed fields were placed where
    /// their tiles were decoded.
    fn place_tile(
        &self,
        tile: &PlacedTile<'_>,
        outs: &mut [BandOut<'_>],
        first: usize,
        rows: Option<(u64, u64)>,
        kept: &mut [KeptFile],
    ) -> Result<(), QueryError> {
        let mut boxes = self.tiles.boxes_of(tile.coords, rows);
        // When the innermost result dimension is also the innermost cell
        // dimension, a box row is one contiguous run in both the tile and
        // the result: copy it whole.
        if self.plan.runs {
            let wanted = self
                .tiles
                .row_runs(tile.coords, std::mem::take(&mut boxes), first);
            self.place_runs(tile, outs, &wanted, kept)?;
        }
        let name = &self.frag.name;
        self.tiles
            .for_each_cell(tile.coords, boxes, first, |cell, ri| {
                for (k, o) in outs.iter_mut().enumerate() {
                    let at = self.attributes[k];
                    put_cell(o, tile.fields[k].as_ref(), cell, ri, at, tile.ids[k], name)?;
                }
                Ok(())
            })
    }

    /// Copies the rows `wanted` of one tile into `outs`: from its decoded
    /// fields, or read from unfiltered tiles straight to their places
    /// (through each field's file kept open in `kept`).
    fn place_runs(
        &self,
        tile: &PlacedTile<'_>,
        outs: &mut [BandOut<'_>],
        wanted: &[RowRun],
        kept: &mut [KeptFile],
    ) -> Result<(), QueryError> {
        let q = self.query;
        let name = &self.frag.name;
        for (k, o) in outs.iter_mut().enumerate() {
            if self.plan.streamed[k] {
                continue;
            }
            let Some(u) = &tile.direct[k] else {
                let decoded = tile.fields[k]
                    .as_ref()
                    .expect("runs: every field has a tile");
                copy_runs(decoded, o, wanted, name)?;
                continue;
            };
            if let Some(val) = &mut o.validity {
                wanted
                    .iter()
                    .for_each(|&(_, ri, n)| val[ri..ri + n].fill(1));
            }
            if let Some(fx) = o.fixed.as_deref_mut() {
                if let Some(dsts) = carve_runs(fx, o.cell, wanted)? {
                    if u.read_runs(q.storage, &mut kept[k], name, tile.number, dsts)? {
                        continue;
                    }
                }
            }
            // Runs that overlap, or a tile not laid out as predicted: read
            // it the ordinary way.
            let spec = self.plan.specs[k]
                .as_ref()
                .expect("unfiltered fields have specs");
            let fetched = Fetched::nothing(q.storage, &q.context);
            let decoded = decode_field_tile(&fetched, self.frag, spec, tile.number, q.array.key)?;
            copy_runs(&decoded, o, wanted, name)?;
            decoded.recycle(&q.context);
        }
        Ok(())
    }
}

/// A fragment's bands (the tiles of `tiles` that share a coordinate on
/// the result's slowest dimension, filling one contiguous region of the
/// result), those of less than `band_bytes` decoded (`per_tile` a tile)
/// joined to the next; one band of the whole result where bands are not
/// found. True with them if bands were found: positions on the slowest
/// dimension then grow with coordinates, and a band's rows can be cut
/// into slabs.
fn find_bands(tiles: &FragmentTiles<'_>, per_tile: u64, band_bytes: u64) -> (BandList, bool) {
    let sub = tiles.subarray();
    let slow = sub.slowest();
    let found = dense_bands(
        &tiles.coords,
        slow,
        &sub.axes[slow],
        tiles.ned[slow],
        &sub.ranges[slow],
    );
    let banded = found.is_some();
    let s = sub.strides[slow] as usize;
    let bands: BandList = match found {
        Some(regions) => regions
            .into_iter()
            .map(|(p, q, members)| ((p as usize * s, (q as usize + 1) * s), members))
            .collect(),
        None => vec![((0, sub.cells), (0..tiles.coords.len()).collect())],
    };
    (merge_small(bands, per_tile, band_bytes), banded)
}

/// Joins a band of less than `band_bytes` decoded (`per_tile` a tile) to
/// the next (regions between them hold no tile of the fragment): a small
/// read stays one band, read with as few requests as one run of tiles
/// needs.
fn merge_small(bands: BandList, per_tile: u64, band_bytes: u64) -> BandList {
    let mut merged: BandList = Vec::with_capacity(bands.len());
    for (region, members) in bands {
        match merged.last_mut() {
            Some((r, m)) if (m.len() as u64).saturating_mul(per_tile) < band_bytes => {
                r.1 = region.1;
                m.extend(members);
            }
            _ => merged.push((region, members)),
        }
    }
    merged
}

/// One decoded tile as placed: its coordinates in the tile grid, its
/// number in the fragment, its fields and var-sized buffer ids.
struct PlacedTile<'t> {
    coords: &'t [i128],
    number: u64,
    fields: &'t [Option<FieldTile>],
    direct: &'t [Option<UnfilteredTile>],
    ids: &'t [u32],
}

/// Where requests cost a round trip (object stores): the batches of the
/// groups of every band placed at once, numbered in the order of the
/// bands' regions, each begun at most once, ahead by whichever thread
/// takes a group before it ([`GroupFetch`]), whatever fragment it is of.
struct Ahead<'b, 's> {
    fetch: &'b GroupFetch<'s>,
    /// Plans and begins group `k`'s batch.
    begin: &'b (dyn Fn(usize) -> Result<Begun<'s>, QueryError> + Sync),
}

/// Dense fragments waiting to be placed at once ([`place_fragments`]),
/// and the regions of the result their bands fill.
#[derive(Default)]
pub(crate) struct Waiting<'r> {
    placers: Vec<FragmentPlacer<'r>>,
    /// Every waiting band's region `[first, end)`, by `first`: apart from
    /// each other, so their ends grow with their starts.
    regions: BTreeMap<usize, usize>,
}

impl<'r> Waiting<'r> {
    /// True if a band of `placer` fills a region that meets a waiting
    /// band's: `placer` is then placed after them. Of the waiting regions
    /// that start before a band ends, the last ends last.
    pub(crate) fn meets(&self, placer: &FragmentPlacer<'_>) -> bool {
        placer.bands.iter().any(|&((first, end), _)| {
            (self.regions.range(..end).next_back()).is_some_and(|(_, &e)| e > first)
        })
    }

    /// Adds `placer` to those waiting.
    pub(crate) fn push(&mut self, placer: FragmentPlacer<'r>) {
        self.regions.extend(placer.bands.iter().map(|b| b.0));
        self.placers.push(placer);
    }

    /// Places every waiting fragment ([`place_fragments`]); none waits
    /// after.
    pub(crate) fn place(
        &mut self,
        outs: &mut [DenseOut],
        bufs: &mut Vec<Arc<Vec<u8>>>,
    ) -> Result<(), QueryError> {
        self.regions.clear();
        place_fragments(&std::mem::take(&mut self.placers), outs, bufs)
    }
}

/// Places every tile of `placers`, fragments whose bands fill regions of
/// the result apart from each other's ([`Waiting::meets`]):
/// all their bands in parallel, each into its own region; a band's tiles
/// go in groups of at most [`DENSE_GROUP_BYTES`] (shared among the
/// threads) decoded: a group is decoded, placed, and its buffers recycled
/// for the next, so a large read faults fresh memory in for a few tiles
/// only. Var-sized values are kept in `bufs`.
fn place_fragments<'r>(
    placers: &[FragmentPlacer<'r>],
    outs: &mut [DenseOut],
    bufs: &mut Vec<Arc<Vec<u8>>>,
) -> Result<(), QueryError> {
    // Every band, as (fragment, band), in the order of their regions.
    let mut order: Vec<(usize, usize)> = (placers.iter().enumerate())
        .flat_map(|(p, placer)| (0..placer.bands.len()).map(move |b| (p, b)))
        .collect();
    let Some(first) = placers.first() else {
        return Ok(());
    };
    order.sort_unstable_by_key(|&(p, b)| placers[p].bands[b].0);
    let regions: Vec<(usize, usize)> = order.iter().map(|&(p, b)| placers[p].bands[b].0).collect();
    if regions.windows(2).any(|w| w[1].0 < w[0].1) {
        return Err(QueryError::Invalid(
            "fragments placed at once fill regions of the result that meet".into(),
        ));
    }
    let threads = rayon::current_num_threads().min(order.len()).max(1) as u64;
    let group: Vec<usize> = placers.iter().map(|p| p.group_tiles(threads)).collect();
    // Groups numbered band after band, as each band's thread takes them;
    // their fragments and tile numbers listed only where batches are
    // begun ahead.
    let batched = first.query.storage.prefers_batches();
    let mut bands = Vec::with_capacity(order.len());
    let mut groups: Vec<(usize, Vec<u64>)> = Vec::new();
    let mut count = 0;
    for &(p, b) in &order {
        bands.push((p, (b, count, group[p])));
        let members = &placers[p].bands[b].1;
        count += members.len().div_ceil(group[p]);
        if batched {
            let numbers = |grp: &[usize]| {
                let tiles = &placers[p].tiles;
                (p, grp.iter().map(|&i| tiles.numbers[i]).collect())
            };
            groups.extend(members.chunks(group[p]).map(numbers));
        }
    }
    let fetch = GroupFetch::new(groups.len());
    let begin = |k: usize| placers[groups[k].0].begin_group(&groups[k].1);
    let ahead = Ahead {
        fetch: &fetch,
        begin: &begin,
    };
    let ahead = batched.then_some(&ahead);
    let views = band_outs(outs, &regions);
    let shared = Mutex::new(std::mem::take(bufs));
    bands
        .into_par_iter()
        .zip(views)
        .try_for_each(|((p, band), mut outs)| {
            placers[p].place_band(band, &shared, ahead, &mut outs)
        })?;
    *bufs = shared.into_inner().unwrap_or_else(|e| e.into_inner());
    Ok(())
}
