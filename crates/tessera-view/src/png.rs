//! A PNG encoder for RGBA images (8 bits a channel, no filtering), and
//! base64 for inlining them as `data:` URIs. Decoding is for tests: it
//! reads back exactly what [`encode_rgba`] writes.

use flate2::write::ZlibEncoder;
use flate2::{Compression, Crc};
use std::io::Write;

const SIGNATURE: [u8; 8] = [0x89, b'P', b'N', b'G', b'\r', b'\n', 0x1a, b'\n'];

/// An RGBA image, rows top to bottom.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rgba {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// `width * height` pixels, row-major.
    pub pixels: Vec<[u8; 4]>,
}

impl Rgba {
    /// A transparent image.
    pub fn new(width: u32, height: u32) -> Rgba {
        Rgba {
            width,
            height,
            pixels: vec![[0; 4]; width as usize * height as usize],
        }
    }

    /// The pixel at column `x`, row `y`.
    pub fn get(&self, x: u32, y: u32) -> [u8; 4] {
        self.pixels[y as usize * self.width as usize + x as usize]
    }

    /// Sets the pixel at column `x`, row `y`.
    pub fn set(&mut self, x: u32, y: u32, p: [u8; 4]) {
        self.pixels[y as usize * self.width as usize + x as usize] = p;
    }
}

fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    out.extend_from_slice(&(data.len() as u32).to_be_bytes());
    let start = out.len();
    out.extend_from_slice(kind);
    out.extend_from_slice(data);
    let mut crc = Crc::new();
    crc.update(&out[start..]);
    out.extend_from_slice(&crc.sum().to_be_bytes());
}

/// The image as a PNG file.
pub fn encode_rgba(image: &Rgba) -> Vec<u8> {
    let mut ihdr = Vec::with_capacity(13);
    ihdr.extend_from_slice(&image.width.to_be_bytes());
    ihdr.extend_from_slice(&image.height.to_be_bytes());
    // 8 bits a channel, colour type 6 (RGBA), deflate, no filter choice,
    // no interlace.
    ihdr.extend_from_slice(&[8, 6, 0, 0, 0]);
    let mut z = ZlibEncoder::new(Vec::new(), Compression::default());
    for row in image.pixels.chunks(image.width.max(1) as usize) {
        // Writing to a Vec cannot fail.
        let _ = z.write_all(&[0]);
        let _ = z.write_all(row.as_flattened());
    }
    let idat = z.finish().unwrap_or_default();
    let mut out = SIGNATURE.to_vec();
    chunk(&mut out, b"IHDR", &ihdr);
    chunk(&mut out, b"IDAT", &idat);
    chunk(&mut out, b"IEND", &[]);
    out
}

/// Reads a PNG that [`encode_rgba`] wrote (RGBA, 8 bits, unfiltered
/// rows); `None` for anything else.
pub fn decode_rgba(png: &[u8]) -> Option<Rgba> {
    use std::io::Read;
    let mut rest = png.strip_prefix(&SIGNATURE[..])?;
    let (mut width, mut height, mut idat) = (0, 0, Vec::new());
    while rest.len() >= 12 {
        let len = u32::from_be_bytes(rest[..4].try_into().ok()?) as usize;
        let kind = &rest[4..8];
        let data = rest.get(8..8 + len)?;
        match kind {
            b"IHDR" if data.get(8..13)? == [8, 6, 0, 0, 0] => {
                width = u32::from_be_bytes(data[..4].try_into().ok()?);
                height = u32::from_be_bytes(data[4..8].try_into().ok()?);
            }
            b"IHDR" => return None,
            b"IDAT" => idat.extend_from_slice(data),
            _ => {}
        }
        rest = rest.get(12 + len..)?;
    }
    let mut raw = Vec::new();
    flate2::read::ZlibDecoder::new(&idat[..])
        .read_to_end(&mut raw)
        .ok()?;
    let stride = 1 + 4 * width as usize;
    if raw.len() != stride * height as usize {
        return None;
    }
    let mut pixels = Vec::with_capacity(width as usize * height as usize);
    for row in raw.chunks(stride) {
        if row[0] != 0 {
            return None;
        }
        pixels.extend(row[1..].chunks(4).map(|p| [p[0], p[1], p[2], p[3]]));
    }
    Some(Rgba {
        width,
        height,
        pixels,
    })
}

const BASE64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Standard base64 with padding.
pub fn base64(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for c in bytes.chunks(3) {
        let n = (c[0] as u32) << 16
            | (*c.get(1).unwrap_or(&0) as u32) << 8
            | *c.get(2).unwrap_or(&0) as u32;
        for i in 0..4 {
            if i <= c.len() {
                out.push(BASE64[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// The inverse of [`base64`]; `None` on a character outside its alphabet.
pub fn unbase64(text: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len() / 4 * 3);
    let (mut acc, mut bits) = (0u32, 0);
    for ch in text.bytes().filter(|&b| b != b'=') {
        let v = BASE64.iter().position(|&b| b == ch)? as u32;
        acc = acc << 6 | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_round_trips_every_length() {
        assert_eq!(base64(b"Man"), "TWFu");
        assert_eq!(base64(b"Ma"), "TWE=");
        assert_eq!(base64(b"M"), "TQ==");
        for n in 0..20u8 {
            let v: Vec<u8> = (0..n).map(|i| i.wrapping_mul(37)).collect();
            assert_eq!(unbase64(&base64(&v)).unwrap(), v);
        }
    }

    #[test]
    fn png_round_trips_and_has_valid_crcs() {
        let mut img = Rgba::new(3, 2);
        img.set(2, 1, [1, 2, 3, 4]);
        img.set(0, 0, [255, 0, 0, 255]);
        let png = encode_rgba(&img);
        assert_eq!(decode_rgba(&png).unwrap(), img);
        // The IHDR chunk's CRC covers its type and data.
        let mut crc = Crc::new();
        crc.update(&png[12..12 + 4 + 13]);
        assert_eq!(png[29..33], crc.sum().to_be_bytes());
    }
}
