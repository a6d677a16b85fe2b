// The waiting jobs of one site by queue position, indexed by width (internal
// to the space-sharing simulator): "the first waiting job at or after
// position i that fits F free nodes" costs O(log n) instead of a scan of the
// queue. A tree of minimum widths over positions 0..n-1, an empty position
// counting as infinitely wide. Not thread-safe.
#pragma once

#include <algorithm>
#include <climits>
#include <cstddef>
#include <vector>

namespace piranha::rigid {

class FitIndex {
 public:
  explicit FitIndex(std::size_t n) : n_(n) {
    while (size_ < n) size_ *= 2;
    least_.assign(2 * size_, INT_MAX);
  }

  // Position i holds a waiting job of `width` >= 1 nodes.
  void set(std::size_t i, int width) { update(i, width); }
  // Position i is empty.
  void clear(std::size_t i) { update(i, INT_MAX); }

  // The first position >= i that holds a job; n when none does.
  std::size_t next(std::size_t i) const { return next_fit(i, INT_MAX - 1); }

  // The first position >= i whose job is at most `free` wide; n when none is.
  std::size_t next_fit(std::size_t i, int free) const {
    if (i >= n_) return n_;
    std::size_t v = i + size_;
    if (least_[v] > free) {
      // Up while v is a right child, then across to the subtree just after it.
      for (;;) {
        while (v & 1) {
          v >>= 1;
          if (v == 0) return n_;
        }
        ++v;
        if (least_[v] <= free) break;
      }
      while (v < size_) {
        v *= 2;
        if (least_[v] > free) ++v;
      }
    }
    return v - size_;
  }

 private:
  void update(std::size_t i, int width) {
    std::size_t v = i + size_;
    least_[v] = width;
    for (v >>= 1; v > 0; v >>= 1) least_[v] = std::min(least_[2 * v], least_[2 * v + 1]);
  }

  std::size_t n_;
  std::size_t size_ = 1;
  std::vector<int> least_;  // least_[1] the root; leaves from size_
};

}  // namespace piranha::rigid
