//! `az://` against Azurite, Azure's storage emulator
//! (`tessera_emulators::azurite`; CI sets `TESSERA_AZURITE`): every
//! fixture reads through `az://` as it reads locally (pushed too), and
//! writes, consolidation and vacuum leave an array that reads as the same
//! steps leave a local copy.

mod emulated;

use tessera_emulators::azurite::azurite;

#[test]
fn fixtures_read_through_azure_as_locally() {
    let Some(a) = azurite() else { return };
    emulated::fixtures_read_as_locally(&a);
}

#[test]
fn writes_and_maintenance_through_azure_as_locally() {
    let Some(a) = azurite() else { return };
    emulated::writes_and_maintenance_as_locally(&a, "az");
}

#[test]
fn conditional_puts_keep_the_first_writer() {
    let Some(a) = azurite() else { return };
    emulated::conditional_puts_keep_the_first_writer(&a, true);
}
