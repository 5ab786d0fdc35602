//! [`AsyncStorage`] for [`ObjectStorage`]: the needs of a reader that does
//! no I/O of its own (`tessera_query::push::PushDecoder`) answered by
//! requests awaited, never waited for. They run as one task where the
//! storage's requests run (the caller's runtime, with
//! [`ObjectStorage::on_runtime`]), so any executor can await them; the
//! ranges go as one batch (merged, cut and in flight side by side as
//! every batch is), footers as one suffix request each, listings from the
//! ones kept or one LIST.

use crate::store::ObjectStorage;
use tessera_storage::{Answer, AnswersFuture, AsyncStorage, Data, Grouped, ListableStorage, Need};

impl AsyncStorage for ObjectStorage {
    fn answer(&self, needs: Vec<Need>) -> AnswersFuture {
        let asked = needs.clone();
        let me = self.clone();
        let task = self.start_awaited(async move { Ok(answered(&me, needs).await) });
        Box::pin(async move {
            match task.finish().await {
                Ok(answers) => answers,
                Err(e) => asked.into_iter().map(|n| (n, Err(e.copied()))).collect(),
            }
        })
    }
}

/// Every need answered by `storage`, from the task that awaits this.
async fn answered(storage: &ObjectStorage, needs: Vec<Need>) -> Vec<Answer> {
    let grouped = Grouped::of(needs);
    let mut out = Vec::with_capacity(grouped.len());
    for need in grouped.single {
        let got = match &need {
            Need::Size(path) => storage.size_async(path).await.map(Data::Size),
            Need::List(path) => storage.listing_async(path).await.map(Data::List),
            Need::Relist(path) => {
                storage.list_anew();
                storage.listing_async(path).await.map(Data::List)
            }
            Need::Exists(path) => Ok(Data::Exists(storage.exists_async(path).await)),
            Need::Range(..) | Need::Tail(..) => unreachable!("grouped apart"),
        };
        out.push((need, got));
    }
    for (max, files) in grouped.tails {
        let got = storage.read_tails_async(&files, max).await;
        out.extend(Grouped::tails_answered(files, max, got));
    }
    let ranges = grouped.ranges;
    if ranges.is_empty() {
        return out;
    }
    match storage.fetch_batch(&ranges).await {
        Ok(bytes) => out.extend(Grouped::ranges_answered(ranges, bytes)),
        // Each range alone, so that a failure is the range's own.
        Err(_) => {
            for (p, r) in ranges {
                let got = storage.fetch_batch(&[(p.clone(), r.clone())]).await;
                let got = got.map(|mut b| Data::Bytes(b.pop().unwrap_or_default()));
                out.push((Need::Range(p, r), got));
            }
        }
    }
    out
}
