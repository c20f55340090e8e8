// One read of a dense data matrix for the R-side checks (check.R): whether
// every entry is finite, the smallest and largest entries, which rows and
// columns hold a nonzero, and how many entries are nonzero (`nnz`, the
// solver rule's share). The decisions and error messages stay in
// R; this is one pass instead of separate sum(), min(), max(), rowSums() and
// colSums() passes (and their long-double sums), which on a 2000 x 1000
// matrix cost as much as a fifth of a dense fit.
#include <RcppEigen.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>

// [[Rcpp::export]]
Rcpp::List r_dense_scan(SEXP x) {
  if (!Rf_isReal(x) || !Rf_isMatrix(x))
    Rcpp::stop("r_dense_scan() needs a double matrix");
  const Eigen::Index m = Rf_nrows(x);
  const Eigen::Index n = Rf_ncols(x);
  const double* v = REAL(x);
  double lo = std::numeric_limits<double>::infinity();
  double hi = -lo;
  bool finite = true;
  // largest |entry| of each row so far: a row is nonzero when it is > 0
  Eigen::ArrayXd row_abs = Eigen::ArrayXd::Zero(m);
  Rcpp::LogicalVector cols(n);
  double nnz = 0.0;
  for (Eigen::Index j = 0; j < n; ++j) {
    // a column at a time (it stays in cache), each step a vectorised pass;
    // min and max are only used when every entry is finite
    const Eigen::Map<const Eigen::ArrayXd> c(v + j * m, m);
    finite = finite && c.allFinite();
    if (m > 0) {
      lo = std::min(lo, c.minCoeff());
      hi = std::max(hi, c.maxCoeff());
    }
    row_abs = row_abs.max(c.abs());
    // nonzero and not NA/NaN: sum(x != 0, na.rm = TRUE), column by column
    nnz += static_cast<double>(((c != 0.0) && (c == c)).count());
    cols[j] = (c != 0.0).any();
    if ((j & 63) == 63) Rcpp::checkUserInterrupt();
  }
  Rcpp::LogicalVector rows(m);
  for (Eigen::Index i = 0; i < m; ++i) rows[i] = row_abs(i) > 0.0;
  return Rcpp::List::create(Rcpp::Named("finite") = finite,
                            Rcpp::Named("min") = lo, Rcpp::Named("max") = hi,
                            Rcpp::Named("rows") = rows,
                            Rcpp::Named("cols") = cols,
                            Rcpp::Named("nnz") = nnz);
}

// The same read for a dgCMatrix, over its slots, plus the compressed-column
// invariants the core relies on (p starts at 0, never decreases and ends at
// length(i) == length(x); row indices lie in [0, nrow) and increase strictly
// within a column). A malformed matrix gives valid = FALSE and nothing else:
// check_dgc_structure() then finds and words the problem in R. Rows and
// columns count as nonzero when they store a value that is neither 0 nor
// NA/NaN; `nnz` counts those values (a finite matrix's). The same checks in R (diff(), tabulate(), rep.int() over the
// nonzeros) cost 30-40 ms and most of the garbage collection of a sparse
// fit of 500k nonzeros.
// [[Rcpp::export]]
Rcpp::List r_dgc_scan(SEXP x) {
  const Rcpp::List invalid =
      Rcpp::List::create(Rcpp::Named("valid") = false);
  if (!Rf_isS4(x) || !R_has_slot(x, Rf_install("p")) ||
      !R_has_slot(x, Rf_install("i")) || !R_has_slot(x, Rf_install("x")) ||
      !R_has_slot(x, Rf_install("Dim")))
    return invalid;
  SEXP ps = R_do_slot(x, Rf_install("p"));
  SEXP is = R_do_slot(x, Rf_install("i"));
  SEXP xs = R_do_slot(x, Rf_install("x"));
  SEXP ds = R_do_slot(x, Rf_install("Dim"));
  if (TYPEOF(ps) != INTSXP || TYPEOF(is) != INTSXP || TYPEOF(xs) != REALSXP ||
      TYPEOF(ds) != INTSXP || Rf_xlength(ds) != 2)
    return invalid;
  const int m = INTEGER(ds)[0];
  const int n = INTEGER(ds)[1];
  if (m == NA_INTEGER || n == NA_INTEGER || m < 0 || n < 0 ||
      Rf_xlength(ps) != static_cast<R_xlen_t>(n) + 1)
    return invalid;
  const int* p = INTEGER(ps);
  const int* ii = INTEGER(is);
  const double* v = REAL(xs);
  const R_xlen_t nnz = Rf_xlength(is);
  if (p[0] != 0 || Rf_xlength(xs) != nnz || p[n] != nnz) return invalid;
  for (int j = 0; j < n; ++j)
    if (p[j + 1] < p[j]) return invalid;
  double lo = std::numeric_limits<double>::infinity();
  double hi = -lo;
  bool finite = true;
  Rcpp::LogicalVector rows(m);  // zero-filled
  Rcpp::LogicalVector cols(n);
  int* rw = LOGICAL(rows);
  int* cl = LOGICAL(cols);
  double nnz_values = 0.0;  // stored values neither 0 nor NA/NaN
  for (int j = 0; j < n; ++j) {
    int prev = -1;
    for (int q = p[j]; q < p[j + 1]; ++q) {
      const int r = ii[q];
      if (r <= prev || r >= m) return invalid;  // also catches r < 0
      prev = r;
      const double a = v[q];
      if (!std::isfinite(a)) {
        finite = false;
        continue;
      }
      lo = std::min(lo, a);
      hi = std::max(hi, a);
      if (a != 0.0) {
        rw[r] = 1;
        cl[j] = 1;
        nnz_values += 1.0;
      }
    }
    if ((j & 1023) == 1023) Rcpp::checkUserInterrupt();
  }
  return Rcpp::List::create(Rcpp::Named("valid") = true,
                            Rcpp::Named("finite") = finite,
                            Rcpp::Named("min") = lo, Rcpp::Named("max") = hi,
                            Rcpp::Named("rows") = rows,
                            Rcpp::Named("cols") = cols,
                            Rcpp::Named("nnz") = nnz_values);
}
