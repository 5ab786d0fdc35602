//! The push decoder, which does no I/O, reads every fixture array as the
//! read over storage does: the same batches, in the same order, whether
//! its needs are answered by the synchronous driver or awaited by the
//! asynchronous one, from its path or from the array opened, in rounds
//! of answers bounded by its fragments and batches; the asynchronous
//! driver asks for a batch's successor before it hands the batch on. On
//! rayon's pool, a decoder answered by its storage inside each step and
//! one whose needs are awaited read the same batches too, and so does one
//! that begins later batches' tiles ahead, which are then fetched before
//! their batch's step. A file that stays missing ends the read in a few
//! rounds, with the error a read over storage gives. A dense read asks
//! for all its fragments' tiles in one round.

mod common;

use common::{assert_same_outcome, fixture_arrays, local, AwaitedLocal};
use futures::StreamExt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use tessera_query::push::{answer, decoded_on_pool, Convert, PushDecoder, Step};
use tessera_query::{QueryError, ReadRequest, ReadResult};
use tessera_storage::{LocalFs, Need};

/// The batches of a read over storage, or the error that ended it.
fn read_over_storage(
    array: &Arc<tessera_fragment::OpenArray>,
    request: &ReadRequest,
) -> Vec<Result<ReadResult, QueryError>> {
    match local(array).batches(request) {
        Ok(b) => b.collect(),
        Err(e) => vec![Err(e)],
    }
}

/// `got` holds the batches of `want`, or fails as it did.
fn assert_same_batches(
    name: &str,
    got: &[Result<ReadResult, QueryError>],
    want: &[Result<ReadResult, QueryError>],
) {
    assert_eq!(got.len(), want.len(), "{name}: batches");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert_same_outcome(&format!("{name}: batch {i}"), g, w);
    }
}

#[test]
fn pushed_reads_equal_reads_over_storage() {
    let (mut reads, mut batches) = (0, 0);
    for (path, array) in fixture_arrays() {
        let name = path.display();
        if name.to_string().contains("_large") {
            continue; // hundreds of batches at this budget; the same code as the rest
        }
        let request = ReadRequest::new().budget(64 << 10);
        let want = read_over_storage(&array, &request);
        let mut driven = PushDecoder::new(&path, None, request.clone()).read_from(&LocalFs);
        let got: Vec<_> = driven.by_ref().collect();
        let rounds = driven.decoder().rounds();
        let awaited: Vec<_> = futures::executor::block_on(
            PushDecoder::for_array(array.clone(), request)
                .into_stream(|needs| async move { answer(&LocalFs, needs) })
                .collect(),
        );
        assert_same_batches(&format!("{name} pushed"), &got, &want);
        assert_same_batches(&format!("{name} awaited"), &awaited, &want);
        // The folders' listings, the footers and schemas, consolidated
        // metadata and commits; then per batch its metadata and tiles, a
        // sparse read's fragment by fragment (coordinates, then the
        // attributes of the cells they keep beside the next fragment's
        // coordinates).
        let most = 6 + 2 * (array.fragments.len() + want.len());
        assert!(
            rounds <= most,
            "{name}: {rounds} rounds for {} batches of {} fragments",
            want.len(),
            array.fragments.len()
        );
        reads += 1;
        batches += want.len();
    }
    assert!(
        reads > 100 && batches > reads,
        "{reads} reads, {batches} batches"
    );
}

/// Each batch but the last is handed on with the next one's answers asked
/// for and not yet awaited: the I/O of batch n + 1 runs while the caller
/// works on batch n, where the fetch starts its requests when called.
#[test]
fn the_async_driver_asks_for_the_next_batch_first() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/tiledb-0.36.1");
    for case in ["sparse_2d", "dense_2d_types", "dense_3d_overlaps"] {
        let path = std::path::Path::new(root).join(case).join("array");
        let request = ReadRequest::new().budget(1 << 10);
        let (asked, answered) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let fetch = |needs| {
            asked.fetch_add(1, Ordering::SeqCst);
            let answered = answered.clone();
            async move {
                let got = answer(&LocalFs, needs);
                answered.fetch_add(1, Ordering::SeqCst);
                got
            }
        };
        let in_flight: Vec<usize> = futures::executor::block_on(
            PushDecoder::new(&path, None, request)
                .into_stream(fetch)
                .map(|b| {
                    b.unwrap();
                    asked.load(Ordering::SeqCst) - answered.load(Ordering::SeqCst)
                })
                .collect(),
        );
        assert!(in_flight.len() > 1, "{case}: {} batches", in_flight.len());
        let (last, before) = in_flight.split_last().unwrap();
        assert!(before.iter().all(|&n| n == 1), "{case}: {in_flight:?}");
        assert_eq!(*last, 0, "{case}: nothing is asked after the last batch");
    }
}

/// On rayon's pool, a decoder whose storage answers its needs inside each
/// step (local files) and one whose needs are awaited read every fixture
/// as the read over storage does, batch for batch.
#[test]
fn reads_decoded_on_the_pool_equal_reads_over_storage() {
    let mut reads = 0;
    for (path, array) in fixture_arrays() {
        let name = path.display().to_string();
        if name.contains("_large") {
            continue; // hundreds of batches at this budget; the same code as the rest
        }
        let request = ReadRequest::new().budget(64 << 10);
        let want = read_over_storage(&array, &request);
        let convert: Convert<ReadResult> = Arc::new(Ok);
        let inline =
            PushDecoder::for_array(array.clone(), request.clone()).answered_by(Arc::new(LocalFs));
        let got: Vec<_> =
            futures::executor::block_on(decoded_on_pool(inline, None, convert.clone()).collect());
        assert_same_batches(&format!("{name} answered inline"), &got, &want);
        let pushed = PushDecoder::for_array(array.clone(), request.clone());
        let awaited = decoded_on_pool(pushed, Some(Arc::new(AwaitedLocal)), convert.clone());
        let got: Vec<_> = futures::executor::block_on(awaited.collect());
        assert_same_batches(&format!("{name} awaited"), &got, &want);
        // Tiles begun ahead, within less than a batch and within several.
        for bytes in [16 << 10, 1 << 20] {
            let ahead = PushDecoder::for_array(array.clone(), request.clone()).ahead(bytes);
            let awaited = decoded_on_pool(ahead, Some(Arc::new(AwaitedLocal)), convert.clone());
            let got: Vec<_> = futures::executor::block_on(awaited.collect());
            assert_same_batches(&format!("{name} awaited, {bytes} B ahead"), &got, &want);
        }
        reads += 1;
    }
    assert!(reads > 100, "{reads} reads");
}

/// The needs `decoder` asks for at its steps while the ranges it begins
/// ahead are answered as soon as it names them, and its batches.
fn stepped_with_ahead_answered(mut decoder: PushDecoder) -> (Vec<Need>, Vec<ReadResult>) {
    let (mut asked, mut batches) = (Vec::new(), Vec::new());
    loop {
        let step = decoder.step().unwrap();
        let ahead = decoder.take_ahead();
        decoder.push(answer(&LocalFs, ahead));
        match step {
            Step::Need(needs) => {
                asked.extend(needs.iter().cloned());
                decoder.push(answer(&LocalFs, needs));
            }
            Step::Batch(b) => batches.push(b),
            Step::Done => return (asked, batches),
        }
    }
}

/// A dense read in batches that begins tiles ahead names the tiles of
/// the batches after the one it reads: answered then, their batches'
/// steps ask for none of them, so the read asks for fewer ranges in
/// fewer rounds, and reads the same batches.
#[test]
fn tiles_begun_ahead_are_not_asked_for_again() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/tiledb-0.36.1/dense_large/array"
    );
    let request = ReadRequest::new().budget(256 << 10);
    let ranges = |asked: &[Need]| {
        asked
            .iter()
            .filter(|n| matches!(n, Need::Range(..)))
            .count()
    };
    let plain = PushDecoder::new(path.as_ref(), None, request.clone());
    let (asked_plain, want) = stepped_with_ahead_answered(plain);
    let ahead = PushDecoder::new(path.as_ref(), None, request).ahead(4 << 20);
    let (asked_ahead, got) = stepped_with_ahead_answered(ahead);
    assert!(want.len() > 2, "{} batches", want.len());
    assert_eq!(got.len(), want.len());
    let ok = |b: Vec<ReadResult>| b.into_iter().map(Ok).collect::<Vec<_>>();
    assert_same_batches("dense_large, ahead", &ok(got), &ok(want));
    let (n_plain, n_ahead) = (ranges(&asked_plain), ranges(&asked_ahead));
    assert!(
        n_ahead < n_plain && asked_ahead.len() < asked_plain.len(),
        "ranges asked: {n_ahead} ahead, {n_plain} not; needs {} and {}",
        asked_ahead.len(),
        asked_plain.len()
    );
}

/// A read in batches that begins tiles ahead holds the bytes pushed for
/// them until it reads them, and nothing once it is over: the decoder
/// drops what it was given (listings too) when the read ends.
#[test]
fn a_finished_read_holds_no_answers() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/tiledb-0.36.1/dense_large/array"
    );
    let request = ReadRequest::new().budget(256 << 10);
    let mut decoder = PushDecoder::new(path.as_ref(), None, request).ahead(4 << 20);
    let (mut held, mut batches) = (0, 0);
    loop {
        let step = decoder.step().unwrap();
        let ahead = decoder.take_ahead();
        decoder.push(answer(&LocalFs, ahead));
        held = held.max(decoder.buffered_bytes());
        match step {
            Step::Need(needs) => decoder.push(answer(&LocalFs, needs)),
            Step::Batch(_) => batches += 1,
            Step::Done => break,
        }
    }
    assert!(batches > 2, "{batches} batches");
    assert!(held > 0, "no bytes held during the read");
    assert_eq!(decoder.buffered_bytes(), 0);
}

/// A copy of the fixture `case` (0.36.1) in a fresh temporary folder.
fn copied(case: &str, test: &str) -> std::path::PathBuf {
    fn copy(from: &std::path::Path, to: &std::path::Path) {
        std::fs::create_dir_all(to).expect("temp dir");
        for e in std::fs::read_dir(from).expect("fixture").flatten() {
            match e.path().is_dir() {
                true => copy(&e.path(), &to.join(e.file_name())),
                false => drop(std::fs::copy(e.path(), to.join(e.file_name())).expect("copy")),
            }
        }
    }
    let from = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/tiledb-0.36.1");
    let to = std::env::temp_dir().join(format!("tessera-push-{test}-{}", std::process::id()));
    std::fs::remove_dir_all(&to).ok();
    copy(&std::path::Path::new(from).join(case).join("array"), &to);
    to
}

/// An array whose listed fragment lost its metadata file stays that way
/// however often it is listed again: the decoder lists anew a bounded
/// number of times over the whole read, as a read over storage does
/// (each attempt replays the open, which alone would list anew at every
/// round, forever), then fails naming the file, as that read does.
#[test]
fn a_file_that_stays_missing_ends_the_read_in_bounded_rounds() {
    let dir = copied("sparse_2d", "missing");
    let fragments = std::fs::read_dir(dir.join("__fragments")).expect("fragments");
    let first = fragments.flatten().next().expect("a fragment").path();
    std::fs::remove_file(first.join("__fragment_metadata.tdb")).expect("remove");
    let over_storage = local_at(&dir).map(|_| ());
    let mut decoder = PushDecoder::new(&dir, None, ReadRequest::new());
    let mut rounds = 0;
    let outcome = loop {
        match decoder.step() {
            Ok(Step::Need(needs)) => decoder.push(answer(&LocalFs, needs)),
            Ok(Step::Batch(_)) => {}
            Ok(Step::Done) => break Ok(()),
            Err(e) => break Err(e),
        }
        rounds += 1;
        assert!(rounds < 100, "still asking after {rounds} rounds");
    };
    let (pushed, read) = (
        outcome.expect_err("a file is missing"),
        over_storage.expect_err("same"),
    );
    assert!(
        pushed.to_string().contains("__fragment_metadata.tdb"),
        "{pushed}"
    );
    assert_eq!(pushed.to_string(), read.to_string());
    std::fs::remove_dir_all(&dir).ok();
}

/// Every cell of the array at `dir`, read over local storage.
fn local_at(dir: &std::path::Path) -> Result<Vec<ReadResult>, QueryError> {
    let session = tessera_query::ReadSession::open(Arc::new(LocalFs), dir, None)?;
    session.batches(&ReadRequest::new())?.collect()
}

/// A dense read of fragments placed one after another (they overlap:
/// each is placed once those before it are) asks for every fragment's
/// tiles in one round, not one fragment a round, each round decoding
/// again the fragments before it.
#[test]
fn a_dense_read_asks_for_all_its_fragments_tiles_at_once() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/tiledb-0.36.1/dense_3d_overlaps/array");
    let mut decoder = PushDecoder::new(&path, None, ReadRequest::new());
    let mut tile_rounds = Vec::new();
    let mut cells = 0;
    loop {
        match decoder.step().unwrap() {
            Step::Need(needs) => {
                let fragments: std::collections::BTreeSet<_> = (needs.iter())
                    .filter_map(|n| match n {
                        Need::Range(p, _)
                            if p.file_name().unwrap() != "__fragment_metadata.tdb" =>
                        {
                            p.parent().map(|f| f.to_path_buf())
                        }
                        _ => None,
                    })
                    .collect();
                if !fragments.is_empty() {
                    tile_rounds.push(fragments.len());
                }
                decoder.push(answer(&LocalFs, needs));
            }
            Step::Batch(b) => cells += b.cell_count,
            Step::Done => break,
        }
    }
    assert_eq!(cells, 216);
    assert_eq!(
        tile_rounds,
        [3],
        "fragments whose tiles each round asked for"
    );
}
