//! The format versions the readers branch on. They are fragment format
//! gates (`tessera_fragment::gates`), named here for what the readers need
//! of them, so that each version branch of this crate reads
//! `version.has(gates::X)` from one visible place.

use tessera_tile::Gate;

/// Each dimension's coordinates in tiles of their own (before format 5:
/// one `__coords` tile of all dimensions). The sparse fast paths read
/// coordinates per dimension and pick cells dimension by dimension; they
/// leave older fragments to the general path.
pub(crate) const COORDINATES_PER_DIMENSION: Gate = tessera_fragment::gates::SPLIT_COORDINATES;
