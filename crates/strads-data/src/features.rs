//! Feature matrices: rows as read (sparse or dense), and columns for coordinate descent.
//!
//! Readers produce rows because every format is row-oriented and because a worker owns a range
//! of rows. Coordinate descent needs columns, so each worker turns its own row range into
//! [`Columns`] once; the hot loops then touch raw index and value slices only. A caller that
//! already holds columns (a column-major array from Python) hands them over as
//! [`Features::Columns`], and nothing is transposed.

use std::ops::Range;
use std::sync::Arc;

use sprs::CsMatI;

/// A sparse matrix in compressed rows, with `u32` column indices.
pub type SparseRows = CsMatI<f64, u32, usize>;

/// `len` zeros whose memory is written now, not lazily mapped to the kernel's zero page.
///
/// `vec![0.0; n]` gets zeroed pages from the allocator; the first read of a page maps the shared
/// zero page, and the first write after it must then flush that mapping from every core's TLB,
/// which in a process with several threads is an interrupt to each other core: on a virtual
/// machine, tens of microseconds per 4 KiB page. A coefficient vector of 100,000 features read in
/// a gap check and then updated paid that 196 times per worker (bench/results/
/// lasso-prefault-2026-12-08.md). Writing the zeros up front costs one pass over the memory.
pub fn written_zeros<T: Copy + Default>(len: usize) -> Vec<T> {
    let mut v = Vec::with_capacity(len);
    // An opaque value, so that the compiler cannot turn the writes back into a zeroed allocation.
    v.resize(len, std::hint::black_box(T::default()));
    v
}

/// Dense rows, row-major.
#[derive(Clone, Debug, PartialEq)]
pub struct DenseRows {
    /// Number of rows.
    pub rows: usize,
    /// Number of columns.
    pub cols: usize,
    /// `rows * cols` values, row after row.
    pub data: Vec<f64>,
}

/// Feature rows as read from a file, or columns handed over by a caller that holds them.
#[derive(Clone, Debug, PartialEq)]
pub enum Features {
    /// Compressed sparse rows.
    Sparse(SparseRows),
    /// Dense rows.
    Dense(DenseRows),
    /// Columns as coordinate descent reads them, shared rather than copied by
    /// [`Features::shared_columns`].
    Columns(Arc<Columns>),
}

impl Features {
    /// Multiplies row `i` by `scales[i]` (one scale per row), sharing nothing with other copies.
    pub fn scale_rows(&mut self, scales: &[f64]) {
        match self {
            Features::Sparse(m) => {
                let mut view = m.view_mut();
                for (i, mut row) in view.outer_iterator_mut().enumerate() {
                    for (_, v) in row.iter_mut() {
                        *v *= scales[i];
                    }
                }
            }
            Features::Dense(d) => {
                for (row, &s) in d.data.chunks_mut(d.cols.max(1)).zip(scales) {
                    row.iter_mut().for_each(|v| *v *= s);
                }
            }
            Features::Columns(c) => match Arc::make_mut(c) {
                Columns::Sparse(m) => {
                    for (v, &i) in m.data.iter_mut().zip(&m.indices) {
                        *v *= scales[i as usize];
                    }
                }
                Columns::Dense(d) => {
                    for column in d.data.chunks_mut(d.rows.max(1)) {
                        column.iter_mut().zip(scales).for_each(|(v, &s)| *v *= s);
                    }
                }
            },
        }
    }

    /// Number of rows (samples).
    pub fn rows(&self) -> usize {
        match self {
            Features::Sparse(m) => m.rows(),
            Features::Dense(d) => d.rows,
            Features::Columns(c) => c.rows(),
        }
    }

    /// Number of columns (features).
    pub fn cols(&self) -> usize {
        match self {
            Features::Sparse(m) => m.cols(),
            Features::Dense(d) => d.cols,
            Features::Columns(c) => c.cols(),
        }
    }

    /// Number of stored values.
    pub fn nnz(&self) -> usize {
        match self {
            Features::Sparse(m) => m.nnz(),
            Features::Dense(d) => d.data.len(),
            Features::Columns(c) => c.nnz(),
        }
    }

    /// Stored values per row, to balance row shards by work rather than by row count.
    pub fn row_weights(&self) -> Vec<u64> {
        match self {
            Features::Sparse(m) => m.indptr().raw_storage().windows(2).map(|w| (w[1] - w[0]) as u64 + 1).collect(),
            Features::Dense(d) => vec![d.cols as u64 + 1; d.rows],
            Features::Columns(c) => match &**c {
                Columns::Sparse(m) => {
                    let mut weights = vec![1u64; m.rows];
                    for &i in &m.indices {
                        weights[i as usize] += 1;
                    }
                    weights
                }
                Columns::Dense(d) => vec![d.cols as u64 + 1; d.rows],
            },
        }
    }

    /// The rows in `range`, with every column kept.
    pub fn slice_rows(&self, range: Range<usize>) -> Features {
        match self {
            Features::Sparse(m) => Features::Sparse(m.slice_outer(range).to_owned()),
            Features::Dense(d) => Features::Dense(DenseRows {
                rows: range.len(),
                cols: d.cols,
                data: d.data[range.start * d.cols..range.end * d.cols].to_vec(),
            }),
            Features::Columns(c) => Features::Columns(Arc::new(c.slice_rows(range))),
        }
    }

    /// The rows at `rows` (in that order), with every column kept.
    pub fn select_rows(&self, rows: &[usize]) -> Features {
        match self {
            Features::Sparse(m) => {
                let mut indptr = Vec::with_capacity(rows.len() + 1);
                indptr.push(0);
                let (mut indices, mut data) = (Vec::new(), Vec::new());
                for &i in rows {
                    if let Some(row) = m.outer_view(i) {
                        indices.extend(row.indices());
                        data.extend(row.data());
                    }
                    indptr.push(data.len());
                }
                Features::Sparse(CsMatI::new((rows.len(), m.cols()), indptr, indices, data))
            }
            Features::Dense(d) => Features::Dense(DenseRows {
                rows: rows.len(),
                cols: d.cols,
                data: rows.iter().flat_map(|&i| d.data[i * d.cols..(i + 1) * d.cols].iter().copied()).collect(),
            }),
            Features::Columns(c) => c.to_rows().select_rows(rows),
        }
    }

    /// The same rows as columns, for coordinate access.
    pub fn to_columns(&self) -> Columns {
        match self {
            Features::Sparse(m) => {
                let (rows, cols) = m.shape();
                let (indptr, indices, data) = m.to_other_storage().into_raw_storage();
                Columns::Sparse(SparseColumns { rows, cols, indptr, indices, data })
            }
            Features::Dense(d) => {
                let mut data = vec![0.0; d.data.len()];
                for i in 0..d.rows {
                    for j in 0..d.cols {
                        data[j * d.rows + i] = d.data[i * d.cols + j];
                    }
                }
                Columns::Dense(DenseColumns { rows: d.rows, cols: d.cols, data })
            }
            Features::Columns(c) => (**c).clone(),
        }
    }

    /// The columns to share between the workers that read every row: those handed over, or the
    /// rows transposed once.
    pub fn shared_columns(&self) -> Arc<Columns> {
        match self {
            Features::Columns(c) => Arc::clone(c),
            _ => Arc::new(self.to_columns()),
        }
    }

    /// `X beta` for every row.
    pub fn mul(&self, beta: &[f64]) -> Vec<f64> {
        match self {
            Features::Sparse(m) => m
                .outer_iterator()
                .map(|row| row.iter().map(|(j, v)| v * beta.get(j).copied().unwrap_or(0.0)).sum())
                .collect(),
            Features::Dense(d) => d
                .data
                .chunks(d.cols.max(1))
                .take(d.rows)
                .map(|row| row.iter().zip(beta).map(|(x, b)| x * b).sum())
                .collect(),
            Features::Columns(c) => {
                let mut out = vec![0.0; c.rows()];
                for (j, &b) in beta.iter().enumerate().take(c.cols()) {
                    if b != 0.0 {
                        c.axpy(j, b, &mut out);
                    }
                }
                out
            }
        }
    }
}

/// `sum_k values[k] * v[indices[k]]`, with four running sums: a single sum makes every
/// addition wait for the previous one.
#[inline]
fn sparse_dot(indices: &[u32], values: &[f64], v: &[f64]) -> f64 {
    let mut sums = [0.0; 4];
    let chunks = indices.len() / 4;
    for c in 0..chunks {
        let k = 4 * c;
        for lane in 0..4 {
            sums[lane] += values[k + lane] * v[indices[k + lane] as usize];
        }
    }
    let mut tail = 0.0;
    for k in 4 * chunks..indices.len() {
        tail += values[k] * v[indices[k] as usize];
    }
    (sums[0] + sums[1]) + (sums[2] + sums[3]) + tail
}

/// `a . b` with four running sums.
#[inline]
fn dense_dot(a: &[f64], b: &[f64]) -> f64 {
    let mut sums = [0.0; 4];
    let (a4, a_tail) = a.split_at(a.len() / 4 * 4);
    let (b4, b_tail) = b[..a.len().min(b.len())].split_at(a4.len().min(b.len()));
    for (x, y) in a4.chunks_exact(4).zip(b4.chunks_exact(4)) {
        for lane in 0..4 {
            sums[lane] += x[lane] * y[lane];
        }
    }
    let tail: f64 = a_tail.iter().zip(b_tail).map(|(x, y)| x * y).sum();
    (sums[0] + sums[1]) + (sums[2] + sums[3]) + tail
}

/// Compressed sparse columns with raw slices.
#[derive(Clone, Debug, PartialEq)]
pub struct SparseColumns {
    /// Number of rows.
    pub rows: usize,
    /// Number of columns.
    pub cols: usize,
    /// Column `j` holds entries `indptr[j]..indptr[j + 1]`.
    pub indptr: Vec<usize>,
    /// Row index of each entry.
    pub indices: Vec<u32>,
    /// Value of each entry.
    pub data: Vec<f64>,
}

impl SparseColumns {
    /// Checked compressed columns: `indptr` rises from 0 to the number of entries over `cols + 1`
    /// offsets, and each column's row indices are below `rows` and strictly increasing.
    pub fn try_new(
        rows: usize,
        cols: usize,
        indptr: Vec<usize>,
        indices: Vec<u32>,
        data: Vec<f64>,
    ) -> Result<SparseColumns, String> {
        if indptr.len() != cols + 1 {
            return Err(format!("{} column offsets for {cols} columns (expected {})", indptr.len(), cols + 1));
        }
        if indices.len() != data.len() {
            return Err(format!("{} row indices for {} values", indices.len(), data.len()));
        }
        if indptr[0] != 0 || indptr[cols] != data.len() || indptr.windows(2).any(|w| w[0] > w[1]) {
            return Err(format!("column offsets must rise from 0 to the {} values", data.len()));
        }
        for j in 0..cols {
            let column = &indices[indptr[j]..indptr[j + 1]];
            if column.iter().any(|&i| i as usize >= rows) {
                return Err(format!("column {j} has a row index beyond the {rows} rows"));
            }
            if column.windows(2).any(|w| w[0] >= w[1]) {
                return Err(format!("column {j}'s row indices are not strictly increasing"));
            }
        }
        Ok(SparseColumns { rows, cols, indptr, indices, data })
    }
}

/// Dense columns, column-major.
#[derive(Clone, Debug, PartialEq)]
pub struct DenseColumns {
    /// Number of rows.
    pub rows: usize,
    /// Number of columns.
    pub cols: usize,
    /// `rows * cols` values, column after column.
    pub data: Vec<f64>,
}

/// A feature matrix by columns: what coordinate descent reads and writes through.
#[derive(Clone, Debug, PartialEq)]
pub enum Columns {
    /// Sparse columns.
    Sparse(SparseColumns),
    /// Dense columns.
    Dense(DenseColumns),
}

impl Columns {
    /// Number of rows.
    pub fn rows(&self) -> usize {
        match self {
            Columns::Sparse(m) => m.rows,
            Columns::Dense(d) => d.rows,
        }
    }

    /// Number of columns.
    pub fn cols(&self) -> usize {
        match self {
            Columns::Sparse(m) => m.cols,
            Columns::Dense(d) => d.cols,
        }
    }

    /// Number of stored values.
    pub fn nnz(&self) -> usize {
        match self {
            Columns::Sparse(m) => m.data.len(),
            Columns::Dense(d) => d.data.len(),
        }
    }

    /// Stored values in column `j`.
    pub fn col_nnz(&self, j: usize) -> usize {
        match self {
            Columns::Sparse(m) => m.indptr[j + 1] - m.indptr[j],
            Columns::Dense(d) => d.rows,
        }
    }

    /// `x_j . v`.
    #[inline]
    pub fn dot(&self, j: usize, v: &[f64]) -> f64 {
        match self {
            Columns::Sparse(m) => {
                let range = m.indptr[j]..m.indptr[j + 1];
                sparse_dot(&m.indices[range.clone()], &m.data[range], v)
            }
            Columns::Dense(d) => dense_dot(&d.data[j * d.rows..(j + 1) * d.rows], v),
        }
    }

    /// `v += a x_j`.
    #[inline]
    pub fn axpy(&self, j: usize, a: f64, v: &mut [f64]) {
        match self {
            Columns::Sparse(m) => {
                let range = m.indptr[j]..m.indptr[j + 1];
                for (&i, &x) in m.indices[range.clone()].iter().zip(&m.data[range]) {
                    v[i as usize] += a * x;
                }
            }
            Columns::Dense(d) => {
                for (y, x) in v.iter_mut().zip(&d.data[j * d.rows..(j + 1) * d.rows]) {
                    *y += a * x;
                }
            }
        }
    }

    /// Calls `f(row, value)` for every stored value of column `j`, in row order.
    #[inline]
    pub fn for_each_entry(&self, j: usize, mut f: impl FnMut(usize, f64)) {
        match self {
            Columns::Sparse(m) => {
                let range = m.indptr[j]..m.indptr[j + 1];
                for (&i, &x) in m.indices[range.clone()].iter().zip(&m.data[range]) {
                    f(i as usize, x);
                }
            }
            Columns::Dense(d) => {
                for (i, &x) in d.data[j * d.rows..(j + 1) * d.rows].iter().enumerate() {
                    f(i, x);
                }
            }
        }
    }

    /// `max_i |x_ij|` (0 for an empty column).
    pub fn max_abs(&self, j: usize) -> f64 {
        self.values(j).iter().fold(0.0f64, |m, x| m.max(x.abs()))
    }

    /// `||x_j||^2`.
    pub fn sq_norm(&self, j: usize) -> f64 {
        self.values(j).iter().map(|x| x * x).sum()
    }

    /// The sum of column `j`'s entries.
    pub fn sum(&self, j: usize) -> f64 {
        self.values(j).iter().sum()
    }

    /// The stored values of column `j`.
    fn values(&self, j: usize) -> &[f64] {
        match self {
            Columns::Sparse(m) => &m.data[m.indptr[j]..m.indptr[j + 1]],
            Columns::Dense(d) => &d.data[j * d.rows..(j + 1) * d.rows],
        }
    }

    /// `x_j . x_k`.
    pub fn dot_columns(&self, j: usize, k: usize) -> f64 {
        match self {
            Columns::Sparse(m) => {
                let (a, b) = (m.indptr[j]..m.indptr[j + 1], m.indptr[k]..m.indptr[k + 1]);
                let (ia, va) = (&m.indices[a.clone()], &m.data[a]);
                let (ib, vb) = (&m.indices[b.clone()], &m.data[b]);
                let (mut p, mut q, mut sum) = (0, 0, 0.0);
                while p < ia.len() && q < ib.len() {
                    match ia[p].cmp(&ib[q]) {
                        std::cmp::Ordering::Less => p += 1,
                        std::cmp::Ordering::Greater => q += 1,
                        std::cmp::Ordering::Equal => {
                            sum += va[p] * vb[q];
                            p += 1;
                            q += 1;
                        }
                    }
                }
                sum
            }
            Columns::Dense(d) => {
                let a = &d.data[j * d.rows..(j + 1) * d.rows];
                let b = &d.data[k * d.rows..(k + 1) * d.rows];
                a.iter().zip(b).map(|(x, y)| x * y).sum()
            }
        }
    }

    /// `X^T v`, one entry per column.
    pub fn transpose_mul(&self, v: &[f64]) -> Vec<f64> {
        (0..self.cols()).map(|j| self.dot(j, v)).collect()
    }

    /// The rows in `range` (numbered from 0), every column kept.
    pub fn slice_rows(&self, range: Range<usize>) -> Columns {
        match self {
            Columns::Sparse(m) => {
                let (mut indptr, mut indices, mut data) = (Vec::with_capacity(m.cols + 1), Vec::new(), Vec::new());
                indptr.push(0);
                for j in 0..m.cols {
                    let column = &m.indices[m.indptr[j]..m.indptr[j + 1]];
                    let from = m.indptr[j] + column.partition_point(|&i| (i as usize) < range.start);
                    let to = m.indptr[j] + column.partition_point(|&i| (i as usize) < range.end);
                    indices.extend(m.indices[from..to].iter().map(|&i| i - range.start as u32));
                    data.extend_from_slice(&m.data[from..to]);
                    indptr.push(data.len());
                }
                Columns::Sparse(SparseColumns { rows: range.len(), cols: m.cols, indptr, indices, data })
            }
            Columns::Dense(d) => Columns::Dense(DenseColumns {
                rows: range.len(),
                cols: d.cols,
                data: (0..d.cols)
                    .flat_map(|j| d.data[j * d.rows + range.start..j * d.rows + range.end].iter().copied())
                    .collect(),
            }),
        }
    }

    /// The same matrix as rows.
    pub fn to_rows(&self) -> Features {
        match self {
            Columns::Sparse(m) => {
                let csc = CsMatI::new_csc((m.rows, m.cols), m.indptr.clone(), m.indices.clone(), m.data.clone());
                Features::Sparse(csc.to_other_storage())
            }
            Columns::Dense(d) => {
                let mut data = vec![0.0; d.data.len()];
                for j in 0..d.cols {
                    for i in 0..d.rows {
                        data[i * d.cols + j] = d.data[j * d.rows + i];
                    }
                }
                Features::Dense(DenseRows { rows: d.rows, cols: d.cols, data })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> (Features, Features) {
        // [[1, 0, 2], [0, 3, 0], [4, 0, 5], [0, 0, 6]]
        let dense = DenseRows { rows: 4, cols: 3, data: vec![1., 0., 2., 0., 3., 0., 4., 0., 5., 0., 0., 6.] };
        let sparse = SparseRows::try_new(
            (4, 3),
            vec![0, 2, 3, 5, 6],
            vec![0, 2, 1, 0, 2, 2],
            vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
        )
        .unwrap();
        (Features::Dense(dense), Features::Sparse(sparse))
    }

    #[test]
    fn every_layout_scales_its_rows_alike() {
        let (dense, sparse) = sample();
        let scales = [2.0, 0.5, 0.0, 3.0];
        // [[2, 0, 4], [0, 1.5, 0], [0, 0, 0], [0, 0, 18]], by columns.
        let expected = vec![2.0, 0.0, 0.0, 0.0, 0.0, 1.5, 0.0, 0.0, 4.0, 0.0, 0.0, 18.0];
        let layouts = [
            dense.clone(),
            sparse.clone(),
            Features::Columns(Arc::new(dense.to_columns())),
            Features::Columns(Arc::new(sparse.to_columns())),
        ];
        for mut features in layouts {
            let shared = features.shared_columns();
            features.scale_rows(&scales);
            let columns = features.to_columns();
            let mut by_columns = vec![0.0; 12];
            for j in 0..3 {
                columns.for_each_entry(j, |i, v| by_columns[j * 4 + i] = v);
            }
            assert_eq!(by_columns, expected, "{features:?}");
            // A copy shared before is not scaled with it.
            assert_eq!(shared.sum(2), 13.0);
        }
    }

    #[test]
    fn sparse_and_dense_columns_agree() {
        let (dense, sparse) = sample();
        let v = [1.0, -1.0, 0.5, 2.0];
        for features in [&dense, &sparse] {
            let cols = features.to_columns();
            assert_eq!(cols.transpose_mul(&v), vec![3.0, -3.0, 16.5]);
            assert_eq!(cols.sq_norm(2), 4.0 + 25.0 + 36.0);
            assert_eq!(cols.sum(0), 5.0);
            assert_eq!(cols.dot_columns(0, 2), 2.0 + 20.0);
            assert_eq!(cols.dot_columns(1, 2), 0.0);
            let mut r = v.to_vec();
            cols.axpy(2, -1.0, &mut r);
            assert_eq!(r, vec![-1.0, -1.0, -4.5, -4.0]);
            assert_eq!(features.mul(&[1.0, 1.0, 1.0]), vec![3.0, 3.0, 9.0, 6.0]);
        }
        assert_eq!(sparse.nnz(), 6);
        assert_eq!(sparse.row_weights(), vec![3, 2, 3, 2]);
    }

    #[test]
    fn columns_handed_over_behave_as_the_rows_they_transpose() {
        let (dense, sparse) = sample();
        for rows in [&dense, &sparse] {
            let given = Features::Columns(Arc::new(rows.to_columns()));
            assert_eq!((given.rows(), given.cols(), given.nnz()), (rows.rows(), rows.cols(), rows.nnz()));
            assert_eq!(given.row_weights(), rows.row_weights());
            assert_eq!(given.mul(&[1.0, -2.0, 0.5]), rows.mul(&[1.0, -2.0, 0.5]));
            assert_eq!(given.to_columns(), rows.to_columns());
            assert!(Arc::ptr_eq(&given.shared_columns(), &given.shared_columns()));
            for range in [0..4, 1..3, 2..4, 3..3] {
                assert_eq!(given.slice_rows(range.clone()).to_columns(), rows.slice_rows(range).to_columns());
            }
            assert_eq!(given.select_rows(&[3, 0, 2]), rows.select_rows(&[3, 0, 2]));
        }
        let Columns::Sparse(m) = sparse.to_columns() else { unreachable!() };
        let again = SparseColumns::try_new(m.rows, m.cols, m.indptr.clone(), m.indices.clone(), m.data.clone());
        assert_eq!(again.as_ref(), Ok(&m));
        let bad = |indptr: Vec<usize>, indices: Vec<u32>| SparseColumns::try_new(4, 3, indptr, indices, vec![1.0; 6]);
        assert!(bad(vec![0, 2, 3, 6], vec![0, 2, 1, 0, 2, 4]).unwrap_err().contains("beyond the 4 rows"));
        assert!(bad(vec![0, 2, 3, 6], vec![2, 0, 1, 0, 2, 3]).unwrap_err().contains("strictly increasing"));
        assert!(bad(vec![0, 2, 3, 5], vec![0, 2, 1, 0, 2, 3]).unwrap_err().contains("rise from 0"));
        assert!(bad(vec![0, 2, 6], vec![0, 2, 1, 0, 2, 3]).unwrap_err().contains("column offsets for 3 columns"));
    }

    #[test]
    fn row_slices_keep_columns() {
        let (dense, sparse) = sample();
        for features in [&dense, &sparse] {
            let slice = features.slice_rows(2..4);
            assert_eq!((slice.rows(), slice.cols()), (2, 3));
            assert_eq!(slice.to_columns().transpose_mul(&[1.0, 1.0]), vec![4.0, 0.0, 11.0]);
        }
    }
}
