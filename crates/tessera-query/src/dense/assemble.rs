//! A dense read's result: columns assembled from the outputs, cells
//! failing a condition set to fill values, and the global order.

use super::place::DenseOut;
use crate::context::ReadContext;
use crate::result::{Column, ColumnBuilder, ReadResult};
use rayon::prelude::*;
use std::sync::Arc;
use tessera_cells::Expr;
use tessera_schema::ArraySchema;

/// The attribute columns of `attrs` from their outputs `outs`; var-sized
/// cells copy their bytes from `bufs`, the buffers they name.
pub(crate) fn attribute_columns(
    schema: &ArraySchema,
    attrs: &[String],
    outs: &mut [DenseOut],
    bufs: &[Arc<Vec<u8>>],
    n: usize,
) -> Vec<Column> {
    let mut columns = Vec::with_capacity(attrs.len());
    for (k, a) in attrs.iter().enumerate() {
        let at = schema.attribute(a).expect("checked");
        let o = &mut outs[k];
        let (data, offsets) = match (&mut o.fixed, &o.var) {
            (Some(f), _) => (std::mem::take(f), None),
            (None, Some(v)) => {
                let mut data = Vec::new();
                let mut offs = Vec::with_capacity(n + 1);
                offs.push(0);
                for (id, start, len) in v {
                    let b = &bufs[*id as usize];
                    data.extend_from_slice(&b[*start as usize..(*start + *len) as usize]);
                    offs.push(data.len() as u64);
                }
                (data, Some(offs))
            }
            _ => unreachable!("a dense output is fixed-sized or var-sized"),
        };
        columns.push(Column {
            name: a.clone(),
            is_dimension: false,
            datatype: at.datatype,
            cell_val_num: at.cell_val_num,
            data,
            offsets,
            validity: o.validity.take(),
        });
    }
    columns
}

/// Reorders the cells of a result: cell `k` of the output is cell `perm[k]`.
pub(crate) fn permute(ctx: &ReadContext, r: ReadResult, perm: &[usize]) -> ReadResult {
    let columns = r
        .columns
        .iter()
        .map(|col| {
            let mut b = ColumnBuilder::new(
                ctx,
                &col.name,
                col.is_dimension,
                col.datatype,
                col.cell_val_num,
                col.validity.is_some(),
                perm.len(),
            );
            for &i in perm {
                b.push(col.value(i), col.is_valid(i));
            }
            b.col
        })
        .collect();
    ReadResult {
        columns,
        cell_count: perm.len(),
        grid: r.grid,
        context: r.context,
    }
}

/// Replaces the attribute values of cells failing `c` with fill values
/// (dense reads). The condition is tested a block of cells at a time; a
/// fixed-sized column has its failing cells overwritten in place, a
/// var-sized one is rebuilt.
pub(crate) fn fill_unmatched(
    ctx: &ReadContext,
    mut r: ReadResult,
    c: &Expr,
    schema: &ArraySchema,
) -> ReadResult {
    let pass = c
        .compile_columns(&r.columns)
        .select_columns(&r.columns, r.cell_count);
    if pass.iter().all(|&p| p) {
        return r;
    }
    for col in r.columns.iter_mut().filter(|col| !col.is_dimension) {
        let Some(at) = schema.attribute(&col.name) else {
            continue;
        };
        if let Some(validity) = &mut col.validity {
            for (v, _) in validity.iter_mut().zip(&pass).filter(|(_, p)| !**p) {
                *v = at.fill_validity as u8;
            }
        }
        let w = at.fill_value.len();
        if col.offsets.is_none() && w > 0 && col.data.len() == w * r.cell_count {
            col.data
                .par_chunks_mut(w)
                .zip(&pass)
                .filter(|(_, p)| !**p)
                .for_each(|(cell, _)| cell.copy_from_slice(&at.fill_value));
            continue;
        }
        let mut b = ColumnBuilder::new(
            ctx,
            &col.name,
            false,
            col.datatype,
            col.cell_val_num,
            col.validity.is_some(),
            r.cell_count,
        );
        for (i, ok) in pass.iter().enumerate() {
            match ok {
                false => b.push(&at.fill_value, at.fill_validity),
                true => b.push(col.value(i), col.is_valid(i)),
            }
        }
        *col = b.col;
    }
    r
}
