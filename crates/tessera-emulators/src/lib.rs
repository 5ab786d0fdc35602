//! Object-store emulators for tests: moto (S3), Azurite (Azure Blob
//! Storage) and fake-gcs-server (GCS), each started on a free port of
//! loopback with its bucket made, and the environment that points
//! `object_store` at it. The programs come from the environment
//! (`TESSERA_MOTO_SERVER`, `TESSERA_AZURITE`, `TESSERA_FAKE_GCS`); outside
//! CI a test without them is skipped, saying so, and in CI (`CI=true`)
//! their absence fails it. Servers a test starts itself take their ports
//! from [`free_ports`].

pub mod azurite;
mod emulator;
pub mod fake_gcs;
pub mod moto;
mod ports;

pub use emulator::{program, Emulator};
pub use ports::{free_port, free_ports};
