//! From which format version each filter-pipeline field or behaviour exists.

/// The delta filter's options carry a reinterpret datatype.
pub const DELTA_REINTERPRET_DATATYPE: u32 = 19;
/// The double-delta filter's options carry a reinterpret datatype.
pub const DOUBLE_DELTA_REINTERPRET_DATATYPE: u32 = 20;
/// Each filter sees the previous filter's output datatype (libtiledb 2.17);
/// before, every filter of a pipeline used the field's datatype.
pub const FILTER_DATATYPE_CHAINING: u32 = 20;
/// Bit-width reduction and positive delta act on datetime and time types.
pub const REDUCTION_ON_DATETIMES: u32 = 20;
/// ASCII strings under RLE: offsets are folded into the data tile.
pub const RLE_ASCII_OFFSETS_IN_DATA: u32 = 12;
/// ASCII strings under dictionary encoding: offsets folded into the data tile.
pub const DICTIONARY_ASCII_OFFSETS_IN_DATA: u32 = 13;
/// UTF-8 strings under RLE or dictionary encoding: offsets folded into the data tile.
pub const UTF8_OFFSETS_IN_DATA: u32 = 17;
