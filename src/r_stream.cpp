// Glue for the futures' pass of a streamed fit (stream.hpp): each worker
// reads its blocks and calls r_stream_block(); the driver's glue
// (RSource::remote(), r_data.h) sums the blocks' terms in block order.
#include "r_data.h"

using nmfkit::Mat;

// One block's update (stream_block()): x the block (double matrix or
// dgCMatrix), plan from the pass, h its columns of H, h_plain (or NULL)
// those of the plain iterate when the plan pushes.
// [[Rcpp::export]]
Rcpp::List r_stream_block(SEXP x, Rcpp::List plan, Rcpp::NumericMatrix h,
                          SEXP h_plain, int threads) {
  const nmfkit::StreamPlan p = nmfkit_r::stream_plan(plan);
  Mat hb = Rcpp::as<Mat>(h), hp, hpush;
  if (p.push) {
    if (Rf_isNull(h_plain))
      throw std::invalid_argument("a push needs the plain iterate");
    hp = Rcpp::as<Mat>(h_plain);
  }
  const nmfkit::BlockSums s = nmfkit_r::with_data(
      x,
      [&](const auto& data) {
        return nmfkit::stream_block(data, p, hb, p.push ? &hp : nullptr,
                                    p.push ? &hpush : nullptr, threads);
      },
      threads, false);
  return Rcpp::List::create(Rcpp::Named("H") = hb,
                            Rcpp::Named("H_push") = hpush,
                            Rcpp::Named("sums") = nmfkit_r::block_sums_list(s));
}
