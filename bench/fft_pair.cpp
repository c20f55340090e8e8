// Seconds per FFTW r2c + c2r pair of one image size: the unit of
// bench/shift.R's lower bound. Bench only (not part of the package);
// bench/shift.R compiles it with Rcpp::sourceCpp() against the source
// tree's headers (inst/include) and FFTW.
// [[Rcpp::plugins(cpp17)]]
// [[Rcpp::depends(RcppEigen)]]
#include <Rcpp.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "nmfkit/fft.hpp"

// Median of `reps` runs of 50 pairs each.
// [[Rcpp::export]]
double fft_pair_seconds(Rcpp::IntegerVector image_dim, std::string group,
                        std::string planner, int reps = 7) {
  using nmfkit::Index;
  const auto g = group == "circular1d" ? nmfkit::ShiftGroup::circular1d
                                       : nmfkit::ShiftGroup::torus2d;
  const auto p = planner == "measure" ? nmfkit::FftPlanner::measure
                                      : nmfkit::FftPlanner::estimate;
  const nmfkit::Fft fft(image_dim[0], image_dim[1], g, p);
  nmfkit::FftWork w = fft.make_work();
  nmfkit::FftBuffer<double> out(fft.n());
  for (Index i = 0; i < fft.n(); ++i) w.real[i] = double(i % 7) / 7.0;
  std::vector<double> times;
  constexpr int kPairs = 50;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < kPairs; ++i) {
      fft.forward(w.real.data(), w.spec.data());
      fft.inverse(w.spec.data(), out.data());
    }
    const auto t1 = std::chrono::steady_clock::now();
    times.push_back(std::chrono::duration<double>(t1 - t0).count() / kPairs);
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}
