// Reading the matrices cpp/bench_kernels_data.R writes, for the timing
// programs (bench_kernels.cpp, profile_fit.cpp): a dgCMatrix as int dims
// (rows, cols, nonzeros), then p, i and x.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nmfkit.hpp>
#include <vector>

inline nmfkit::SpMat read_sparse(const char* file) {
  std::ifstream in(file, std::ios::binary);
  int dims[3];
  in.read(reinterpret_cast<char*>(dims), sizeof dims);
  std::vector<int> pcol(dims[1] + 1), row(dims[2]);
  std::vector<double> val(dims[2]);
  in.read(reinterpret_cast<char*>(pcol.data()), sizeof(int) * pcol.size());
  in.read(reinterpret_cast<char*>(row.data()), sizeof(int) * row.size());
  in.read(reinterpret_cast<char*>(val.data()), sizeof(double) * val.size());
  if (!in) {
    std::fprintf(stderr, "cannot read a sparse matrix from %s\n", file);
    std::exit(1);
  }
  return Eigen::Map<const nmfkit::SpMat>(dims[0], dims[1], dims[2], pcol.data(),
                                         row.data(), val.data());
}
