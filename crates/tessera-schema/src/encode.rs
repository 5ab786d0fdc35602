//! Writing an array schema as libtiledb stores it: [`ArraySchema::encode`]
//! mirrors [`ArraySchema::parse`] field by field, each field written where
//! the schema's format version has it.

use crate::gates;
use crate::schema::{
    encode_ndrange, Attribute, CellValNum, CurrentDomain, Dimension, DimensionLabel,
};
use crate::{ArraySchema, SchemaError};
use tessera_tile::FormatVersion;

/// Bytes of a schema being written.
struct Out(Vec<u8>);

impl Out {
    fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn bytes(&mut self, b: &[u8]) {
        self.0.extend_from_slice(b);
    }
    /// A name as a `uint32_t` length and its bytes.
    fn name(&mut self, s: &str) {
        self.u32(s.len() as u32);
        self.bytes(s.as_bytes());
    }
    fn cell_val_num(&mut self, c: CellValNum) {
        self.u32(match c {
            CellValNum::Fixed(n) => n,
            CellValNum::Var => u32::MAX,
        });
    }
}

impl ArraySchema {
    /// The unfiltered payload of this schema's generic tile, at its format
    /// version: what [`ArraySchema::parse`] reads back as this schema.
    /// Before per-dimension types every dimension shares the first one's
    /// type; a schema that cannot be written at its version (dimensions of
    /// several types before version 5) is an error.
    pub fn encode(&self) -> Result<Vec<u8>, SchemaError> {
        let v = self.version;
        let mut out = Out(Vec::new());
        out.u32(v.number());
        if v.has(gates::PER_DIMENSION_TYPES) {
            out.u8(self.allows_dups as u8);
        }
        out.u8(self.array_type as u8);
        out.u8(self.tile_order as u8);
        out.u8(self.cell_order as u8);
        out.u64(self.capacity);
        self.coords_filters.serialize(&mut out.0, v);
        self.offsets_filters.serialize(&mut out.0, v);
        if v.has(gates::NULLABLE) {
            self.validity_filters.serialize(&mut out.0, v);
        }
        let shared = !v.has(gates::PER_DIMENSION_TYPES);
        if shared {
            let t = self.dimensions[0].datatype;
            if self.dimensions.iter().any(|d| d.datatype != t) {
                return Err(SchemaError::invalid(
                    "domain datatype",
                    format!("format version {v} gives every dimension one type"),
                ));
            }
            out.u8(t as u8);
        }
        out.u32(self.dimensions.len() as u32);
        for d in &self.dimensions {
            self.encode_dimension(&mut out, d, shared);
        }
        out.u32(self.attributes.len() as u32);
        for a in &self.attributes {
            encode_attribute(&mut out, a, v);
        }
        if v.has(gates::DIMENSION_LABELS) {
            out.u32(self.dimension_labels.len() as u32);
            self.dimension_labels
                .iter()
                .for_each(|l| encode_label(&mut out, l));
        }
        if v.has(gates::ENUMERATIONS) {
            out.u32(self.enumerations.len() as u32);
            for e in &self.enumerations {
                out.name(&e.name);
                out.name(&e.path);
            }
        }
        if v.has(gates::CURRENT_DOMAIN) {
            let empty = CurrentDomain {
                version: 0,
                ndrectangle: None,
            };
            let c = self.current_domain.as_ref().unwrap_or(&empty);
            out.u32(c.version);
            out.u8(c.ndrectangle.is_none() as u8);
            if let Some(r) = &c.ndrectangle {
                out.u8(0); // an NDRectangle
                encode_ndrange(r, &self.dimensions, &mut out.0);
            }
        }
        Ok(out.0)
    }

    /// One dimension. Filters inherited from the coordinates' (the
    /// dimension stored none) are written as none again.
    fn encode_dimension(&self, out: &mut Out, d: &Dimension, shared: bool) {
        let v = self.version;
        out.name(&d.name);
        if !shared {
            out.u8(d.datatype as u8);
            out.cell_val_num(d.cell_val_num);
            match d.filters_inherited {
                true => tessera_filters::FilterPipeline::new(Vec::new(), d.filters.max_chunk_size)
                    .serialize(&mut out.0, v),
                false => d.filters.serialize(&mut out.0, v),
            }
            let size = d.domain.as_ref().map_or(0, |(lo, hi)| lo.len() + hi.len());
            out.u64(size as u64);
        }
        if let Some((lo, hi)) = &d.domain {
            out.bytes(lo);
            out.bytes(hi);
        }
        match &d.tile_extent {
            Some(e) => {
                out.u8(0);
                out.bytes(e);
            }
            None => out.u8(1),
        }
    }
}

/// One attribute, at format version `v`.
fn encode_attribute(out: &mut Out, a: &Attribute, v: FormatVersion) {
    out.name(&a.name);
    out.u8(a.datatype as u8);
    out.cell_val_num(a.cell_val_num);
    a.filters.serialize(&mut out.0, v);
    if v.has(gates::FILL_VALUE) {
        out.u64(a.fill_value.len() as u64);
        out.bytes(&a.fill_value);
    }
    if v.has(gates::NULLABLE) {
        out.u8(a.nullable as u8);
        out.u8(a.fill_validity as u8);
    }
    if v.has(gates::ATTRIBUTE_ORDER) {
        out.u8(a.order);
    }
    if v.has(gates::ENUMERATIONS) {
        out.name(a.enumeration.as_deref().unwrap_or(""));
    }
}

/// One dimension label (format 18 and later).
fn encode_label(out: &mut Out, l: &DimensionLabel) {
    out.u32(l.dimension);
    out.name(&l.name);
    out.u8(l.relative_uri as u8);
    out.u64(l.uri.len() as u64);
    out.bytes(l.uri.as_bytes());
    out.name(&l.attribute);
    out.u8(l.order);
    out.u8(l.datatype as u8);
    out.cell_val_num(l.cell_val_num);
    out.u8(l.external as u8);
}
