// The data interface of the streamed fits: a *source* of column blocks.
// In-memory data are one source (a block is any range of columns of a
// DenseData or SparseData, data.hpp); the R glue's RSource reads blocks of
// a DelayedMatrix through R; an accelerator backend would be one more.
//
// The contract of a Source:
//   Index rows(), cols()      m and n
//   double sq_norm()          ||X||^2 (the penalties' and trace's scale)
//   double stored()           stored entries (the passes' cost rule)
//   template <class F> bool for_blocks(F&& f)
//       calls f(j0, len, data) for every block of columns [j0, j0 + len),
//       in order, with the block's data object (DenseData, SparseData<...>:
//       rows(), cols(), left_mult(), left_mult_t(), add_entries_t(),
//       sq_norm(), and dense() or sparse()); false means the host
//       interrupted. f may run on another thread than the caller (RSource
//       overlaps reading block b + 1 with the work on block b), so f never
//       calls the hooks; the source polls them between blocks.
//   bool pass(const StreamPlan& plan, Mat& h, const Mat* h_plain,
//             Mat* h_push, BlockSums& total)
//       one pass of stream_block() (stream_block.hpp) over every block,
//       writing the blocks' columns of h (and *h_push) and adding their
//       BlockSums in block order: detail::block_pass(), or the same pass
//       run elsewhere (RSource: one future per block), with the same bits.
// Blocks may have any widths whose edges fall on the chunks of the
// Frobenius H update (StreamPlan::h.chunk, the chunks of the whole H). A
// block's work depends on the block and the plan only, never on which
// thread, process or machine runs it.
#pragma once

#include <algorithm>
#include <utility>

#include "stream_block.hpp"
#include "types.hpp"

namespace nmfkit {

/// What every source answers without reading a block: m, n, ||X||^2 and
/// the stored entries (the contract's first four members).
class SourceTotals {
 public:
  SourceTotals(Index m, Index n, double x2, double stored)
      : m_(m), n_(n), x2_(x2), stored_(stored) {}
  Index rows() const { return m_; }
  Index cols() const { return n_; }
  double sq_norm() const { return x2_; }
  double stored() const { return stored_; }

 protected:
  Index m_, n_;
  double x2_, stored_;
};

/// A source over data held in memory, cut into column blocks of `block`
/// columns (a multiple of the H update's chunk, or all columns): the core
/// tests' reference. with_block(j0, len, fn) calls fn(data) with the
/// block's data object (DenseData, SparseData).
template <class WithBlock>
class BlockSource : public SourceTotals {
 public:
  BlockSource(Index m, Index n, double x2, double stored, Index block,
              WithBlock with_block, int threads)
      : SourceTotals(m, n, x2, stored), block_(block),
        with_block_(std::move(with_block)), threads_(threads) {}
  template <class F>
  bool for_blocks(F&& f) {
    for (Index j0 = 0; j0 < n_; j0 += block_) {
      const Index len = std::min(block_, n_ - j0);
      with_block_(j0, len, [&](const auto& x) { f(j0, len, x); });
    }
    return true;
  }
  bool pass(const StreamPlan& plan, Mat& h, const Mat* h_plain, Mat* h_push,
            BlockSums& total) {
    return detail::block_pass(*this, plan, h, h_plain, h_push, total,
                              threads_);
  }

 private:
  Index block_;
  WithBlock with_block_;
  int threads_;
};

}  // namespace nmfkit
