//! `gs://` against fake-gcs-server (`tessera_emulators::fake_gcs`, which
//! says how it is made to take object_store's uploads; CI sets
//! `TESSERA_FAKE_GCS`): every fixture reads through `gs://` as it reads
//! locally (pushed too), and writes, consolidation and vacuum leave an
//! array that reads as the same steps leave a local copy.

mod emulated;

use tessera_emulators::fake_gcs::fake_gcs;

#[test]
fn fixtures_read_through_gcs_as_locally() {
    let Some(g) = fake_gcs() else { return };
    emulated::fixtures_read_as_locally(&g);
}

#[test]
fn writes_and_maintenance_through_gcs_as_locally() {
    let Some(g) = fake_gcs() else { return };
    emulated::writes_and_maintenance_as_locally(&g, "gs");
}

/// fake-gcs-server ignores the precondition object_store sends with a
/// conditional put (`x-goog-if-generation-match: 0`, which GCS honours):
/// here only that the put is taken.
#[test]
fn conditional_puts_keep_the_first_writer() {
    let Some(g) = fake_gcs() else { return };
    emulated::conditional_puts_keep_the_first_writer(&g, false);
}
