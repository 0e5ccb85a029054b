// A SnapKV adapter in C++17, transcribed from SPEC.md (the policy of §2, the protocol of §3) as
// a porter who has only the spec would write it, with a planted mistake chosen at run time:
//
//   cxx_port [MISTAKE]        (or SNAPKV_MISTAKE=MISTAKE; none, or NONE, is the faithful port)
//
// One build serves every run (tests/system/test_cxx_port.py builds it once per session). The
// JSON tokenizer is the kit's C template's (adapters/c/json.c and decimal.c, linked in as C):
// it reads the line; everything after that (the request handling, the weight and parameter
// reading, the policy) is this file's. Each mistake is one a C++ porter plausibly makes; MISTAKES
// below lists them, each with the habit it models.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <strings.h>
#include <vector>
#include <xmmintrin.h>

extern "C" {
#include "decimal.h"
#include "json.h"
}

namespace {

enum class Mistake {
  None,
  FloatAccumulator,    // float total = 0; total += ring[s];
  ChronologicalSums,   // for (j = 0; j < obs; ++j) total += ring[(slot + j) % obs];
  StdSortByScore,      // std::sort of (pooled, index) pairs comparing .first only
  PartialSortByScore,  // std::partial_sort(begin, begin + k, end) comparing .first only
  NthElementByScore,   // std::nth_element(begin, begin + k, end) comparing .first only
  Stof,                // w = std::stof(text), out_of_range caught as invalid-attention
  Uint32Positions,     // uint32_t pos = value; checked only against the last position
  CaseInsensitiveParams,  // strcasecmp on parameter names
  MapFirstWins,        // params copied into a std::map with insert(): the first name stays
  NullAdvancesCursor,  // slot = (slot + 1) % obs on every step, null ones included
  CursorResetOnEvict,  // slot = 0 after removing victims ("compact the rings")
  RecentWindowOneShort,  // candidates = n - recent + 1
  PoolingWraps,        // neighbour index (i + d + n) % n instead of clamping
  PoolingOverCandidates,  // pooling clamped to the candidates, not to all kept entries
  VictimsInRankOrder,  // victims returned as selected, not sorted ascending
  TiesToHigher,        // comparator (a.pooled < b.pooled || (== && a.pos > b.pos))
  RefusedStepWrites,   // weights written while read; a bad one refuses after earlier writes
  FlushToZero,         // -ffast-math's crtfastmath: MXCSR FTZ|DAZ set at startup
};

struct Named {
  const char* name;
  Mistake mistake;
};

const Named MISTAKES[] = {
    {"NONE", Mistake::None},
    {"FLOAT_ACCUMULATOR", Mistake::FloatAccumulator},
    {"CHRONOLOGICAL_SUMS", Mistake::ChronologicalSums},
    {"STD_SORT_BY_SCORE", Mistake::StdSortByScore},
    {"PARTIAL_SORT_BY_SCORE", Mistake::PartialSortByScore},
    {"NTH_ELEMENT_BY_SCORE", Mistake::NthElementByScore},
    {"STOF", Mistake::Stof},
    {"UINT32_POSITIONS", Mistake::Uint32Positions},
    {"CASE_INSENSITIVE_PARAMS", Mistake::CaseInsensitiveParams},
    {"MAP_FIRST_WINS", Mistake::MapFirstWins},
    {"NULL_ADVANCES_CURSOR", Mistake::NullAdvancesCursor},
    {"CURSOR_RESET_ON_EVICT", Mistake::CursorResetOnEvict},
    {"RECENT_WINDOW_ONE_SHORT", Mistake::RecentWindowOneShort},
    {"POOLING_WRAPS", Mistake::PoolingWraps},
    {"POOLING_OVER_CANDIDATES", Mistake::PoolingOverCandidates},
    {"VICTIMS_IN_RANK_ORDER", Mistake::VictimsInRankOrder},
    {"TIES_TO_HIGHER", Mistake::TiesToHigher},
    {"REFUSED_STEP_WRITES", Mistake::RefusedStepWrites},
    {"FLUSH_TO_ZERO", Mistake::FlushToZero},
};

Mistake planted = Mistake::None;

constexpr int64_t INT31_MAX = 2147483647;
constexpr size_t NO_NODE = static_cast<size_t>(-1);

// §2: the policy.
struct Params {
  int64_t budget, recent, obs, kernel;
};

class SnapKV {
 public:
  explicit SnapKV(const Params& p) : p_(p) {}

  size_t kept() const { return positions_.size(); }

  // §2.3 rule 1.
  bool position_ok(int64_t pos) const {
    if (planted == Mistake::Uint32Positions) {
      return static_cast<uint32_t>(pos) > highest_ || highest_ < 0;
    }
    return pos >= 0 && pos <= INT31_MAX && pos > highest_;
  }

  void write(size_t i, float w) {
    std::vector<float>& ring = rings_[i];
    if (ring.size() <= slot_) ring.resize(slot_ + 1, 0.0f);
    ring[slot_] = w;
  }

  // §2.3 once both rules have passed: weights already written when written_early.
  void step(int64_t pos, const std::vector<float>* attn, bool written_early) {
    if (attn != nullptr) {
      if (!written_early)
        for (size_t i = 0; i < attn->size(); ++i) write(i, (*attn)[i]);
      advance();
    } else if (planted == Mistake::NullAdvancesCursor) {
      advance();
    }
    admit(pos);
  }

  void admit(int64_t pos) {
    if (planted == Mistake::Uint32Positions) pos = static_cast<uint32_t>(pos);
    positions_.push_back(pos);
    rings_.emplace_back();
    highest_ = pos;
  }

  // §2.4 steps 1 and 2.
  void score(std::vector<double>& sums, std::vector<double>& pooled) const {
    const size_t n = kept();
    sums.assign(n, 0.0);
    for (size_t i = 0; i < n; ++i) sums[i] = ring_sum(rings_[i]);
    pooled.assign(n, 0.0);
    const int64_t r = (p_.kernel - 1) / 2;
    size_t span = n;
    if (planted == Mistake::PoolingOverCandidates) span = candidates();
    for (size_t i = 0; i < n; ++i) {
      if (i >= span) {
        pooled[i] = sums[i];
        continue;
      }
      const int64_t last = static_cast<int64_t>(span) - 1;
      const int64_t at = static_cast<int64_t>(i);
      double best = sums[i];
      if (planted == Mistake::PoolingWraps) {
        const int64_t reach = std::min<int64_t>(r, static_cast<int64_t>(n));
        for (int64_t d = -reach; d <= reach; ++d) {
          const int64_t j = ((at + d) % static_cast<int64_t>(n) + static_cast<int64_t>(n)) %
                            static_cast<int64_t>(n);
          best = std::max(best, sums[static_cast<size_t>(j)]);
        }
      } else {
        const int64_t lo = std::max<int64_t>(0, at - std::min(r, at));
        const int64_t hi = std::min<int64_t>(last, at + std::min(r, last));
        for (int64_t j = lo; j <= hi; ++j) best = std::max(best, sums[static_cast<size_t>(j)]);
      }
      pooled[i] = best;
    }
  }

  size_t candidates() const {
    size_t protect = static_cast<size_t>(p_.recent);
    if (planted == Mistake::RecentWindowOneShort && protect > 0) protect -= 1;
    return kept() > protect ? kept() - protect : 0;
  }

  // §2.4.
  std::vector<int64_t> evict() {
    std::vector<int64_t> victims;
    const size_t n = kept();
    if (static_cast<int64_t>(n) <= p_.budget) return victims;
    const size_t k = n - static_cast<size_t>(p_.budget);
    std::vector<double> sums, pooled;
    score(sums, pooled);
    const size_t c = candidates();
    std::vector<size_t> order(c);
    for (size_t i = 0; i < c; ++i) order[i] = i;
    auto by_score = [&](size_t a, size_t b) { return pooled[a] < pooled[b]; };
    auto by_pair = [&](size_t a, size_t b) {
      if (pooled[a] != pooled[b]) return pooled[a] < pooled[b];
      if (planted == Mistake::TiesToHigher) return positions_[a] > positions_[b];
      return positions_[a] < positions_[b];
    };
    switch (planted) {
      case Mistake::StdSortByScore:
        std::sort(order.begin(), order.end(), by_score);
        break;
      case Mistake::PartialSortByScore:
        std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(k),
                          order.end(), by_score);
        break;
      case Mistake::NthElementByScore:
        std::nth_element(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(k),
                         order.end(), by_score);
        break;
      default:
        std::sort(order.begin(), order.end(), by_pair);
    }
    order.resize(k);
    for (size_t i : order) victims.push_back(positions_[i]);
    std::vector<bool> gone(n, false);
    for (size_t i : order) gone[i] = true;
    size_t w = 0;
    for (size_t i = 0; i < n; ++i) {
      if (gone[i]) continue;
      if (w != i) {  // a vector moved onto itself is left empty
        positions_[w] = positions_[i];
        rings_[w] = std::move(rings_[i]);
      }
      ++w;
    }
    positions_.resize(w);
    rings_.resize(w);
    if (planted != Mistake::VictimsInRankOrder) std::sort(victims.begin(), victims.end());
    if (planted == Mistake::CursorResetOnEvict && k > 0) slot_ = 0;
    return victims;
  }

  const std::vector<int64_t>& positions() const { return positions_; }

 private:
  void advance() { slot_ = (slot_ + 1) % static_cast<size_t>(p_.obs); }

  double ring_sum(const std::vector<float>& ring) const {
    if (planted == Mistake::FloatAccumulator) {
      float total = 0.0f;
      for (float w : ring) total += w;
      return total;
    }
    double total = 0.0;
    if (planted == Mistake::ChronologicalSums) {
      // From the oldest slot (the cursor) round to the newest; unwritten columns are zeros.
      for (size_t s = slot_; s < ring.size(); ++s) total += static_cast<double>(ring[s]);
      for (size_t s = 0; s < std::min(slot_, ring.size()); ++s)
        total += static_cast<double>(ring[s]);
      return total;
    }
    for (float w : ring) total += static_cast<double>(w);
    return total;
  }

  Params p_;
  std::vector<int64_t> positions_;
  std::vector<std::vector<float>> rings_;
  size_t slot_ = 0;
  int64_t highest_ = -1;
};

// §3: the protocol.
struct Refusal {
  std::string kind, message;
};

class Session {
 public:
  Session() { std::memset(&doc_, 0, sizeof doc_); }
  ~Session() { json_release(&doc_); }

  bool finished = false;

  std::string answer(const std::string& line) {
    Refusal refusal;
    std::string id = "null";
    std::string body;
    if (!json_valid_utf8(line.c_str(), line.size())) {
      refusal = {"bad-request", "the line is not UTF-8"};
    } else {
      const int parsed = json_parse(&doc_, line.c_str(), line.size());
      if (parsed < 0) {
        std::cerr << "cxx-port: out of memory\n";
        std::exit(70);
      }
      if (parsed == 0) {
        refusal = {"bad-request", std::string("not JSON: ") + doc_.error};
      } else if (doc_.nodes[0].type != JSON_OBJECT) {
        refusal = {"bad-request", "a request must be a JSON object"};
      } else {
        const size_t idn = json_member(&doc_, 0, "id");
        if (idn == NO_NODE) {
          refusal = {"bad-request", "the request has no id"};
        } else if (!integer(idn)) {
          refusal = {"bad-request", "id must be an integer"};
        } else {
          id = raw(idn);
          handle(refusal, body);
        }
      }
    }
    std::string out = "{\"id\":" + id;
    if (refusal.kind.empty()) {
      out += ",\"ok\":true" + body + "}";
    } else {
      out += ",\"ok\":false,\"error\":{\"kind\":\"" + refusal.kind + "\",\"message\":" +
             quote(refusal.message) + "}}";
    }
    return out;
  }

 private:
  bool integer(size_t i) const {
    return doc_.nodes[i].type == JSON_NUMBER && doc_.nodes[i].integral;
  }
  std::string raw(size_t i) const {
    return std::string(doc_.text + doc_.nodes[i].start, doc_.nodes[i].len);
  }
  static std::string quote(const std::string& text) {
    std::string out = "\"";
    for (unsigned char c : text) {
      if (c == '"' || c == '\\') {
        out += '\\';
        out += static_cast<char>(c);
      } else if (c < 0x20) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\u%04x", c);
        out += buf;
      } else {
        out += static_cast<char>(c);
      }
    }
    return out + "\"";
  }

  void handle(Refusal& refusal, std::string& body) {
    const size_t op = json_member(&doc_, 0, "op");
    if (op == NO_NODE) {
      refusal = {"bad-request", "the request has no op"};
      return;
    }
    for (const char* name : {"hello", "new", "step", "evict", "scores", "bye"}) {
      if (!json_string_is(&doc_, op, name)) continue;
      const std::string which = name;
      if (which == "hello") return hello(refusal, body);
      if (which == "new") return create(refusal);
      if (which == "bye") {
        finished = true;
        return;
      }
      if (which == "step") return step(refusal);
      if (policy_ == nullptr) {
        refusal = {"no-policy", "no policy: send an accepted new first"};
        return;
      }
      if (which == "evict") return evict(body);
      return scores(body);
    }
    refusal = {"bad-request", "unknown op " + raw(op)};
  }

  void hello(Refusal& refusal, std::string& body) {
    const size_t protocol = json_member(&doc_, 0, "protocol");
    if (protocol == NO_NODE) {
      refusal = {"bad-request", "hello needs protocol"};
    } else if (!integer(protocol) || raw(protocol) != "1") {
      refusal = {"unsupported", "this adapter speaks protocol 1 only"};
    } else {
      body = ",\"protocol\":1,\"implementation\":{\"name\":\"cxx-port\",\"language\":\"c++\","
             "\"version\":\"0\"},\"capabilities\":[\"scores\"]";
    }
  }

  bool name_is(size_t key, const char* name) const {
    if (planted == Mistake::CaseInsensitiveParams) {
      // The key's raw text, quotes stripped (names are plain ASCII in practice).
      const std::string text = raw(key);
      return strcasecmp(text.substr(1, text.size() - 2).c_str(), name) == 0;
    }
    return json_string_is(&doc_, key, name) != 0;
  }

  void create(Refusal& refusal) {
    static const char* const NAMES[4] = {"budget", "recentWindow", "obsWindow", "poolKernel"};
    const size_t params = json_member(&doc_, 0, "params");
    const size_t seed = json_member(&doc_, 0, "seed");
    if (params == NO_NODE || seed == NO_NODE) {
      refusal = {"bad-request", "new needs params and seed"};
      return;
    }
    if (!integer(seed)) {
      refusal = {"invalid-params", "seed must be an integer"};
      return;
    }
    if (doc_.nodes[params].type != JSON_OBJECT) {
      refusal = {"invalid-params", "params must be an object"};
      return;
    }
    std::map<std::string, size_t> found;  // name -> value node
    for (size_t i = params + 1; i < doc_.nodes[params].end; i = doc_.nodes[i + 1].end) {
      int which = -1;
      for (int k = 0; k < 4; ++k)
        if (name_is(i, NAMES[k])) which = k;
      if (which < 0) {
        refusal = {"invalid-params", "params has an unknown name " + raw(i)};
        return;
      }
      if (planted == Mistake::MapFirstWins)
        found.insert({NAMES[which], i + 1});
      else
        found[NAMES[which]] = i + 1;
    }
    int64_t values[4];
    for (int k = 0; k < 4; ++k) {
      auto at = found.find(NAMES[k]);
      if (at == found.end()) {
        refusal = {"invalid-params", std::string("params is missing ") + NAMES[k]};
        return;
      }
      if (!integer(at->second)) {
        refusal = {"invalid-params", std::string(NAMES[k]) + " must be an integer"};
        return;
      }
      values[k] = json_integer(&doc_, at->second);
      if (values[k] < 0 || values[k] > INT31_MAX) {
        refusal = {"invalid-params", std::string(NAMES[k]) + " is out of range"};
        return;
      }
    }
    const Params p{values[0], values[1], values[2], values[3]};
    if (p.budget < 1 || p.recent >= p.budget || p.obs < 1 || p.kernel < 1 || p.kernel % 2 == 0) {
      refusal = {"invalid-params", "params break SPEC §2.1"};
      return;
    }
    policy_ = std::make_unique<SnapKV>(p);
  }

  // §2.3 [S2.3-rounding]: nearest float64, then nearest float32; false when not a number or
  // when the float32 is infinite or negative.
  bool weight(size_t i, float& out) const {
    if (doc_.nodes[i].type != JSON_NUMBER) return false;
    if (planted == Mistake::Stof) {
      try {
        out = std::stof(raw(i));
      } catch (const std::out_of_range&) {
        return false;
      }
    } else {
      const double d = json_double(&doc_, i);
      if (std::fabs(d) >= 0x1.ffffffp+127) return false;
      out = static_cast<float>(d);
    }
    return std::isfinite(out) && !(out < 0.0f);
  }

  void step(Refusal& refusal) {
    const size_t pos = json_member(&doc_, 0, "pos");
    const size_t attn = json_member(&doc_, 0, "attn");
    if (pos == NO_NODE || attn == NO_NODE) {
      refusal = {"bad-request", "step needs pos and attn"};
      return;
    }
    if (policy_ == nullptr) {
      refusal = {"no-policy", "no policy: send an accepted new first"};
      return;
    }
    if (!integer(pos) || !policy_->position_ok(json_integer(&doc_, pos))) {
      refusal = {"invalid-position", "pos " + raw(pos) + " is not above every earlier one"};
      return;
    }
    const int64_t position = json_integer(&doc_, pos);
    const json_node& list = doc_.nodes[attn];
    if (list.type == JSON_NULL) {
      policy_->step(position, nullptr, false);
      return;
    }
    if (list.type != JSON_ARRAY || list.count != policy_->kept()) {
      refusal = {"invalid-attention", "attn must be null or one weight per kept position"};
      return;
    }
    std::vector<float> weights;
    const bool early = planted == Mistake::RefusedStepWrites;
    for (size_t i = attn + 1; i < list.end; i = doc_.nodes[i].end) {
      float w;
      if (!weight(i, w)) {
        refusal = {"invalid-attention", "attn[" + std::to_string(weights.size()) + "] " +
                                            raw(i) + " is not a finite float32 >= 0"};
        return;
      }
      if (early) policy_->write(weights.size(), w);
      weights.push_back(w);
    }
    policy_->step(position, &weights, early);
  }

  static std::string number(double v) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    return buf;
  }

  template <typename T, typename F>
  static std::string list(const std::vector<T>& values, F show) {
    std::string out = "[";
    for (size_t i = 0; i < values.size(); ++i) out += (i ? "," : "") + show(values[i]);
    return out + "]";
  }

  void evict(std::string& body) {
    const auto victims = policy_->evict();
    body = ",\"victims\":" + list(victims, [](int64_t v) { return std::to_string(v); });
  }

  void scores(std::string& body) {
    std::vector<double> sums, pooled;
    policy_->score(sums, pooled);
    body = ",\"positions\":" +
           list(policy_->positions(), [](int64_t v) { return std::to_string(v); }) +
           ",\"sums\":" + list(sums, number) + ",\"pooled\":" + list(pooled, number);
  }

  json_doc doc_;
  std::unique_ptr<SnapKV> policy_;
};

bool blank(const std::string& line) {
  return line.find_first_not_of(" \t\r") == std::string::npos;
}

}  // namespace

int main(int argc, char** argv) {
  const char* chosen = argc > 1 ? argv[1] : std::getenv("SNAPKV_MISTAKE");
  if (chosen != nullptr) {
    bool known = false;
    for (const Named& m : MISTAKES)
      if (std::strcmp(m.name, chosen) == 0) {
        planted = m.mistake;
        known = true;
      }
    if (!known) {
      std::cerr << "cxx-port: unknown mistake " << chosen << "; one of:";
      for (const Named& m : MISTAKES) std::cerr << ' ' << m.name;
      std::cerr << '\n';
      return 2;
    }
  }
  if (planted == Mistake::FlushToZero) _mm_setcsr(_mm_getcsr() | 0x8040);
  std::ios::sync_with_stdio(false);
  Session session;
  std::string line;
  while (!session.finished && std::getline(std::cin, line)) {
    if (blank(line)) continue;
    std::cout << session.answer(line) << '\n' << std::flush;
  }
  return 0;
}
