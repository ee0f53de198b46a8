#include "swarmt/tokenizer/bpe_model.h"

#include <cstdio>
#include <mutex>
#include <queue>
#include <shared_mutex>
#include <unordered_map>

#include "swarmt/core/error.h"
#include "swarmt/core/json.h"
#include "swarmt/tokenizer/utf8.h"

namespace swarmt::tokenizer {

// (left id, right id) -> (rank, merged id), as an open-addressing table: this lookup is the inner loop
// of BPE, and 515k Gemma merges in std::unordered_map nodes cost both load time and cache misses.
struct BpeModel::MergeTable {
  struct Slot {
    uint64_t key = kEmpty;
    int32_t rank = 0;
    int32_t new_id = 0;
  };
  static constexpr uint64_t kEmpty = ~uint64_t{0};  // ids are < 2^24, so no real pair has this key
  std::vector<Slot> slots;
  uint64_t mask = 0;
  size_t size = 0;

  static uint64_t key_of(int32_t left, int32_t right) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
  }
  static uint64_t mix(uint64_t x) {  // splitmix64 finaliser
    x ^= x >> 30;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 27;
    x *= 0x94D049BB133111EBull;
    return x ^ (x >> 31);
  }
  explicit MergeTable(size_t expected) {
    size_t capacity = 16;
    while (capacity < expected * 2) capacity <<= 1;  // load factor <= 1/2
    slots.resize(capacity);
    mask = capacity - 1;
  }
  // Later duplicates overwrite earlier ones, as HF's HashMap collect does.
  void insert(int32_t left, int32_t right, int32_t rank, int32_t new_id) {
    uint64_t key = key_of(left, right);
    for (uint64_t i = mix(key) & mask;; i = (i + 1) & mask) {
      Slot& slot = slots[i];
      if (slot.key == kEmpty) ++size;
      if (slot.key == kEmpty || slot.key == key) {
        slot = {key, rank, new_id};
        return;
      }
    }
  }
  const Slot* find(int32_t left, int32_t right) const {
    uint64_t key = key_of(left, right);
    for (uint64_t i = mix(key) & mask;; i = (i + 1) & mask) {
      const Slot& slot = slots[i];
      if (slot.key == key) return &slot;
      if (slot.key == kEmpty) return nullptr;
    }
  }
};

struct BpeModel::WordCache {
  static constexpr size_t kMaxWordBytes = 256;
  static constexpr size_t kCapacity = 65536;  // words; the table is cleared when full
  std::shared_mutex mutex;
  std::unordered_map<std::string, std::vector<int32_t>> words;
};

BpeModel::BpeModel(Vocabulary vocab, const std::vector<std::pair<std::string, std::string>>& merges, BpeOptions options,
                   const std::string& source)
    : vocab_(std::move(vocab)),
      options_(std::move(options)),
      merges_(std::make_unique<MergeTable>(merges.size())),
      cache_(std::make_unique<WordCache>()) {
  const size_t prefix_len = options_.continuing_subword_prefix.size();
  std::string merged;
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    // Plain references, not a structured binding: C++17 lambdas cannot capture bindings (clang rejects it).
    const std::string& left = merges[rank].first;
    const std::string& right = merges[rank].second;
    auto missing = [&](const std::string& token) {
      throw_input_error(source, ": model.merges[", rank, "] (", json_preview(Json(left)), ", ",
                        json_preview(Json(right)), ") uses token ", json_preview(Json(token)),
                        ", which is not in model.vocab");
    };
    auto left_id = vocab_.find(left);
    if (!left_id) missing(left);
    auto right_id = vocab_.find(right);
    if (!right_id) missing(right);
    // The merged token drops the right part's continuing-subword prefix: "a" + "##b" -> "ab".
    SWARMT_CHECK_INPUT(right.compare(0, prefix_len, options_.continuing_subword_prefix) == 0, source, ": model.merges[",
                       rank, "]: right part ", json_preview(Json(right)),
                       " does not start with continuing_subword_prefix ",
                       json_preview(Json(options_.continuing_subword_prefix)));
    merged.assign(left);
    merged.append(right, prefix_len, std::string::npos);
    auto merged_id = vocab_.find(merged);
    if (!merged_id) missing(merged);
    merges_->insert(*left_id, *right_id, static_cast<int32_t>(rank), *merged_id);
  }
  if (options_.unk_token) {
    unk_id_ = vocab_.find(*options_.unk_token);
    SWARMT_CHECK_INPUT(unk_id_.has_value(), source, ": model.unk_token ", json_preview(Json(*options_.unk_token)),
                       " is not in model.vocab");
  }
  byte_fallback_ids_.assign(256, -1);
  char name[8];
  for (int byte = 0; byte < 256; ++byte) {
    std::snprintf(name, sizeof(name), "<0x%02X>", byte);
    if (auto id = vocab_.find(name)) byte_fallback_ids_[byte] = *id;
  }
}

BpeModel::~BpeModel() = default;

size_t BpeModel::num_merges() const { return merges_->size; }

void BpeModel::encode_word(std::string_view word, std::vector<int32_t>& out) const {
  if (word.empty()) return;
  if (options_.ignore_merges) {
    if (auto id = vocab_.find(word)) {
      out.push_back(*id);
      return;
    }
  }
  const bool cacheable = word.size() < WordCache::kMaxWordBytes;
  if (cacheable) {
    std::shared_lock<std::shared_mutex> lock(cache_->mutex);
    auto it = cache_->words.find(std::string(word));
    if (it != cache_->words.end()) {
      out.insert(out.end(), it->second.begin(), it->second.end());
      return;
    }
  }
  size_t start = out.size();
  merge_word(word, out);
  if (cacheable) {
    std::vector<int32_t> ids(out.begin() + static_cast<std::ptrdiff_t>(start), out.end());
    std::unique_lock<std::shared_mutex> lock(cache_->mutex);
    if (cache_->words.size() >= WordCache::kCapacity) cache_->words.clear();
    cache_->words.emplace(std::string(word), std::move(ids));
  }
}

namespace {

struct Symbol {
  int32_t id;
  int32_t prev;  // index of the previous live symbol, -1 if none
  int32_t next;  // index of the next live symbol, -1 if none
  bool alive;
};

struct MergeCandidate {
  int32_t rank;
  int32_t pos;  // index of the left symbol
  int32_t new_id;
  // std::priority_queue is a max-heap: "less" means lower priority = higher rank, then further right.
  bool operator<(const MergeCandidate& other) const { return rank != other.rank ? rank > other.rank : pos > other.pos; }
};

}  // namespace

void BpeModel::merge_word(std::string_view word, std::vector<int32_t>& out) const {
  // 1. Initial symbols, one per code point (or per byte with byte fallback).
  std::vector<Symbol> symbols;
  symbols.reserve(word.size());
  auto add_symbol = [&](int32_t id) {
    int32_t index = static_cast<int32_t>(symbols.size());
    symbols.push_back({id, index - 1, -1, true});
    if (index > 0) symbols[index - 1].next = index;
  };
  int32_t pending_unk = -1;  // an unk id waiting to be fused with following unknown code points
  std::string piece;
  size_t pos = 0;
  while (pos < word.size()) {
    size_t begin = pos;
    pos += utf8_sequence_length(static_cast<unsigned char>(word[pos]));
    if (pos > word.size()) pos = word.size();
    std::string_view code_point = word.substr(begin, pos - begin);
    bool is_first = begin == 0, is_last = pos == word.size();
    std::string_view lookup = code_point;
    if ((!is_first && !options_.continuing_subword_prefix.empty()) ||
        (is_last && !options_.end_of_word_suffix.empty())) {
      piece.clear();
      if (!is_first) piece += options_.continuing_subword_prefix;
      piece += code_point;
      if (is_last) piece += options_.end_of_word_suffix;
      lookup = piece;
    }
    if (auto id = vocab_.find(lookup)) {
      if (pending_unk >= 0) add_symbol(pending_unk);
      pending_unk = -1;
      add_symbol(*id);
      continue;
    }
    if (options_.byte_fallback) {
      bool all_bytes_known = true;
      for (char c : lookup) all_bytes_known = all_bytes_known && byte_fallback_ids_[static_cast<unsigned char>(c)] >= 0;
      if (all_bytes_known) {
        // HF does not flush a pending unk here, so it lands after the bytes; keep that order.
        for (char c : lookup) add_symbol(byte_fallback_ids_[static_cast<unsigned char>(c)]);
        continue;
      }
    }
    if (unk_id_) {
      if (pending_unk >= 0 && !options_.fuse_unk) add_symbol(pending_unk);
      if (pending_unk < 0 || !options_.fuse_unk) pending_unk = *unk_id_;
    }
    // Without an unk token the code point is dropped, as HF does.
  }
  if (pending_unk >= 0) add_symbol(pending_unk);

  // 2. Merge by (rank, position) with a heap; stale entries are skipped when popped.
  std::priority_queue<MergeCandidate> queue;
  for (size_t i = 0; i + 1 < symbols.size(); ++i) {
    if (const auto* merge = merges_->find(symbols[i].id, symbols[i + 1].id))
      queue.push({merge->rank, static_cast<int32_t>(i), merge->new_id});
  }
  while (!queue.empty()) {
    MergeCandidate top = queue.top();
    queue.pop();
    Symbol& left = symbols[top.pos];
    if (!left.alive || left.next < 0) continue;
    Symbol& right = symbols[left.next];
    const auto* merge = merges_->find(left.id, right.id);
    if (merge == nullptr || merge->new_id != top.new_id) continue;  // the pair changed since it was queued
    left.id = top.new_id;
    right.alive = false;
    left.next = right.next;
    if (right.next >= 0) symbols[right.next].prev = top.pos;
    if (left.prev >= 0) {
      if (const auto* m = merges_->find(symbols[left.prev].id, left.id)) queue.push({m->rank, left.prev, m->new_id});
    }
    if (left.next >= 0) {
      if (const auto* m = merges_->find(left.id, symbols[left.next].id)) queue.push({m->rank, top.pos, m->new_id});
    }
  }
  for (const Symbol& symbol : symbols)
    if (symbol.alive) out.push_back(symbol.id);
}

}  // namespace swarmt::tokenizer
