// Victim selection as a C++ port of SnapKV writes it with the standard library, comparing the
// pooled scores alone: linked into the kit's C template in place of its select_victims, so
// that the port is the C template with this one difference (tests/system/test_engine_ports.py
// builds it). MODE picks the idiom:
//   TOPK  torch.topk(scores, k, largest=False) on the CPU, as PyTorch's TopKImpl.h runs it:
//         std::partial_sort when k * 64 <= n, else std::nth_element at k - 1 and std::sort of
//         the k - 1 before it
//   SORT  std::sort of (score, index) pairs, the first k taken
//   NTH   std::nth_element at begin() + k, the first k taken (OpenVINO GenAI's call, without
//         its index tie-break)
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

typedef std::pair<double, long> elem;

static bool by_score(const elem& x, const elem& y) { return x.first < y.first; }

extern "C" void cxx_select_victims(const double* pooled, size_t candidates, size_t k,
                                   uint32_t* out) {
  std::vector<elem> queue(candidates);
  for (size_t i = 0; i < candidates; i++) queue[i] = elem(pooled[i], (long)i);
  if (k == 0) return;
#if defined(MODE_TOPK)
  if ((long)k * 64 <= (long)candidates) {
    std::partial_sort(queue.begin(), queue.begin() + k, queue.end(), by_score);
  } else {
    std::nth_element(queue.begin(), queue.begin() + k - 1, queue.end(), by_score);
    std::sort(queue.begin(), queue.begin() + k - 1, by_score);
  }
#elif defined(MODE_SORT)
  std::sort(queue.begin(), queue.end(), by_score);
#elif defined(MODE_NTH)
  std::nth_element(queue.begin(), queue.begin() + k, queue.end(), by_score);
#else
#error "define MODE_TOPK, MODE_SORT or MODE_NTH"
#endif
  for (size_t i = 0; i < k; i++) out[i] = (uint32_t)queue[i].second;
}
