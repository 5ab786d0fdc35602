//! The enums TileDB stores on disk: datatypes, layouts and array types.

use serde::Serialize;
use std::fmt;

macro_rules! datatypes {
    ($($variant:ident = $id:literal, $name:literal, $size:literal;)*) => {
        /// A TileDB datatype, as stored in schemas, generic tiles and metadata.
        ///
        /// ```
        /// use tessera_tile::Datatype;
        /// let t = Datatype::from_id(41).unwrap();
        /// assert_eq!(t, Datatype::Bool);
        /// assert_eq!((t.name(), t.size()), ("BOOL", 1));
        /// ```
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
        #[repr(u8)]
        pub enum Datatype {
            $(
                #[doc = concat!("`TILEDB_", $name, "` (id ", stringify!($id), ")")]
                $variant = $id,
            )*
        }

        impl Datatype {
            /// Every datatype, in id order.
            pub const ALL: &'static [Datatype] = &[$(Datatype::$variant),*];

            /// The datatype with this on-disk id.
            pub fn from_id(id: u8) -> Option<Datatype> {
                match id {
                    $($id => Some(Datatype::$variant),)*
                    _ => None,
                }
            }

            /// TileDB's name for it, without the `TILEDB_` prefix.
            pub fn name(self) -> &'static str {
                match self { $(Datatype::$variant => $name,)* }
            }

            /// Size in bytes of one value.
            pub fn size(self) -> u64 {
                match self { $(Datatype::$variant => $size,)* }
            }
        }
    };
}

datatypes! {
    Int32 = 0, "INT32", 4;
    Int64 = 1, "INT64", 8;
    Float32 = 2, "FLOAT32", 4;
    Float64 = 3, "FLOAT64", 8;
    Char = 4, "CHAR", 1;
    Int8 = 5, "INT8", 1;
    UInt8 = 6, "UINT8", 1;
    Int16 = 7, "INT16", 2;
    UInt16 = 8, "UINT16", 2;
    UInt32 = 9, "UINT32", 4;
    UInt64 = 10, "UINT64", 8;
    StringAscii = 11, "STRING_ASCII", 1;
    StringUtf8 = 12, "STRING_UTF8", 1;
    StringUtf16 = 13, "STRING_UTF16", 2;
    StringUtf32 = 14, "STRING_UTF32", 4;
    StringUcs2 = 15, "STRING_UCS2", 2;
    StringUcs4 = 16, "STRING_UCS4", 4;
    Any = 17, "ANY", 1;
    DatetimeYear = 18, "DATETIME_YEAR", 8;
    DatetimeMonth = 19, "DATETIME_MONTH", 8;
    DatetimeWeek = 20, "DATETIME_WEEK", 8;
    DatetimeDay = 21, "DATETIME_DAY", 8;
    DatetimeHr = 22, "DATETIME_HR", 8;
    DatetimeMin = 23, "DATETIME_MIN", 8;
    DatetimeSec = 24, "DATETIME_SEC", 8;
    DatetimeMs = 25, "DATETIME_MS", 8;
    DatetimeUs = 26, "DATETIME_US", 8;
    DatetimeNs = 27, "DATETIME_NS", 8;
    DatetimePs = 28, "DATETIME_PS", 8;
    DatetimeFs = 29, "DATETIME_FS", 8;
    DatetimeAs = 30, "DATETIME_AS", 8;
    TimeHr = 31, "TIME_HR", 8;
    TimeMin = 32, "TIME_MIN", 8;
    TimeSec = 33, "TIME_SEC", 8;
    TimeMs = 34, "TIME_MS", 8;
    TimeUs = 35, "TIME_US", 8;
    TimeNs = 36, "TIME_NS", 8;
    TimePs = 37, "TIME_PS", 8;
    TimeFs = 38, "TIME_FS", 8;
    TimeAs = 39, "TIME_AS", 8;
    Blob = 40, "BLOB", 1;
    Bool = 41, "BOOL", 1;
    GeomWkb = 42, "GEOM_WKB", 1;
    GeomWkt = 43, "GEOM_WKT", 1;
}

/// How the bytes of a value are to be read as a number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Physical {
    /// Signed integer of the given byte width.
    Int(u8),
    /// Unsigned integer of the given byte width.
    UInt(u8),
    /// IEEE float of the given byte width (4 or 8).
    Float(u8),
    /// Not a number (strings, blobs).
    Bytes,
}

impl Datatype {
    /// The datatype TileDB names `name` (`"INT64"`, `"string_utf8"`: any
    /// case, with or without `TILEDB_`).
    ///
    /// ```
    /// use tessera_tile::Datatype;
    /// assert_eq!(Datatype::named("tiledb_float32"), Some(Datatype::Float32));
    /// assert_eq!(Datatype::named("FLOAT128"), None);
    /// ```
    pub fn named(name: &str) -> Option<Datatype> {
        let bare = name.trim();
        let bare = match bare.get(..7) {
            Some(p) if p.eq_ignore_ascii_case("TILEDB_") => &bare[7..],
            _ => bare,
        };
        Datatype::ALL
            .iter()
            .copied()
            .find(|t| t.name().eq_ignore_ascii_case(bare))
    }

    /// DATETIME_* types.
    pub fn is_datetime(self) -> bool {
        (18..=30).contains(&(self as u8))
    }
    /// TIME_* types.
    pub fn is_time(self) -> bool {
        (31..=39).contains(&(self as u8))
    }
    /// Text types whose values are bytes of characters (CHAR and STRING_*).
    pub fn is_string(self) -> bool {
        matches!(self, Datatype::Char) || (11..=16).contains(&(self as u8))
    }
    /// Raw byte types rendered as hex (BLOB and the geometry types).
    pub fn is_blob(self) -> bool {
        matches!(self, Datatype::Blob | Datatype::GeomWkb | Datatype::GeomWkt)
    }
    /// Integer types (including datetimes, times and BOOL's byte).
    pub fn is_integer(self) -> bool {
        matches!(self.physical(), Physical::Int(_) | Physical::UInt(_))
    }
    /// FLOAT32 and FLOAT64.
    pub fn is_float(self) -> bool {
        matches!(self, Datatype::Float32 | Datatype::Float64)
    }
    /// The numeric reading of the type's bytes.
    pub fn physical(self) -> Physical {
        use Datatype::*;
        match self {
            Int8 => Physical::Int(1),
            Int16 => Physical::Int(2),
            Int32 => Physical::Int(4),
            Int64 => Physical::Int(8),
            UInt8 | Bool => Physical::UInt(1),
            UInt16 => Physical::UInt(2),
            UInt32 => Physical::UInt(4),
            UInt64 => Physical::UInt(8),
            Float32 => Physical::Float(4),
            Float64 => Physical::Float(8),
            t if t.is_datetime() || t.is_time() => Physical::Int(8),
            _ => Physical::Bytes,
        }
    }
}

impl fmt::Display for Datatype {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Tile order, cell order and query layouts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum Layout {
    /// `TILEDB_ROW_MAJOR` (0).
    RowMajor = 0,
    /// `TILEDB_COL_MAJOR` (1).
    ColMajor = 1,
    /// `TILEDB_GLOBAL_ORDER` (2).
    GlobalOrder = 2,
    /// `TILEDB_UNORDERED` (3).
    Unordered = 3,
    /// `TILEDB_HILBERT` (4): a cell order for sparse arrays.
    Hilbert = 4,
}

impl Layout {
    /// The layout with this on-disk id.
    pub fn from_id(id: u8) -> Option<Layout> {
        Some(match id {
            0 => Layout::RowMajor,
            1 => Layout::ColMajor,
            2 => Layout::GlobalOrder,
            3 => Layout::Unordered,
            4 => Layout::Hilbert,
            _ => return None,
        })
    }
    /// TileDB-Py's name for it (`row-major`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Layout::RowMajor => "row-major",
            Layout::ColMajor => "col-major",
            Layout::GlobalOrder => "global-order",
            Layout::Unordered => "unordered",
            Layout::Hilbert => "hilbert",
        }
    }
}

impl fmt::Display for Layout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Dense or sparse.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum ArrayType {
    /// `TILEDB_DENSE` (0).
    Dense = 0,
    /// `TILEDB_SPARSE` (1).
    Sparse = 1,
}

impl ArrayType {
    /// The array type with this on-disk id.
    pub fn from_id(id: u8) -> Option<ArrayType> {
        match id {
            0 => Some(ArrayType::Dense),
            1 => Some(ArrayType::Sparse),
            _ => None,
        }
    }
}

impl fmt::Display for ArrayType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ArrayType::Dense => "dense",
            ArrayType::Sparse => "sparse",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip() {
        for t in Datatype::ALL {
            assert_eq!(Datatype::from_id(*t as u8), Some(*t));
        }
        assert_eq!(Datatype::ALL.len(), 44);
        assert_eq!(Datatype::from_id(44), None);
        assert_eq!(Datatype::Blob as u8, 40);
        assert!(Datatype::DatetimeNs.is_datetime() && !Datatype::TimeNs.is_datetime());
    }
}
