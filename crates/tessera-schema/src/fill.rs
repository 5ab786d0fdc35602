//! Fill values: what a cell holds that no write gave a value.

use crate::schema::CellValNum;
use tessera_tile::Datatype;

/// libtiledb's default fill value of a datatype: the minimum of signed
/// integers, the maximum of unsigned ones, NaN for floats, 0 for strings and
/// BOOL, `i8::MIN` for CHAR; one value per cell value (one for var-sized).
pub fn default_fill_value(t: Datatype, cvn: CellValNum) -> Vec<u8> {
    use tessera_tile::datatype::Physical;
    let one: Vec<u8> = match t {
        Datatype::Char => vec![0x80],
        Datatype::Bool | Datatype::Blob | Datatype::GeomWkb | Datatype::GeomWkt | Datatype::Any => {
            vec![0]
        }
        _ if t.is_string() => vec![0; t.size() as usize],
        _ => match t.physical() {
            Physical::Int(w) => {
                (i64::MIN >> (64 - 8 * w as u32)).to_le_bytes()[..w as usize].to_vec()
            }
            Physical::UInt(w) => vec![0xff; w as usize],
            Physical::Float(4) => f32::NAN.to_le_bytes().to_vec(),
            Physical::Float(_) => f64::NAN.to_le_bytes().to_vec(),
            Physical::Bytes => vec![0; t.size() as usize],
        },
    };
    let n = match cvn {
        CellValNum::Fixed(n) => n as usize,
        CellValNum::Var => 1,
    };
    one.repeat(n)
}
