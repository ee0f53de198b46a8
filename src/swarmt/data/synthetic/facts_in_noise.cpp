#include "swarmt/data/synthetic/facts_in_noise.h"

#include <algorithm>
#include <set>

#include "swarmt/core/error.h"
#include "swarmt/data/long_context/long_context_dataset_haystack.h"
#include "swarmt/data/synthetic/synthetic_tasks_random.h"

namespace swarmt::data {

namespace {

// bAbI's cast and places, extended so that stories of up to 8 moves never repeat a place.
const std::vector<std::string>& story_people() {
  static const std::vector<std::string> kPeople = {"Mary",  "John",  "Daniel", "Sandra", "Emma", "Oliver",
                                                    "Lucas", "Sophia", "Bill",  "Fred",   "Julie", "Jeff"};
  return kPeople;
}

const std::vector<std::string>& places() {
  static const std::vector<std::string> kPlaces = {"kitchen", "garden",  "office",   "bathroom", "hallway",
                                                   "bedroom", "cellar",  "attic",    "balcony",  "pantry",
                                                   "garage",  "cinema",  "park",     "school",   "greenhouse",
                                                   "lobby",   "terrace", "workshop", "basement", "laundry"};
  return kPlaces;
}

const std::vector<std::string>& objects() {
  static const std::vector<std::string> kObjects = {"apple", "football", "milk",  "book",   "key",    "umbrella",
                                                    "kettle", "violin",  "camera", "basket", "hammer", "lantern"};
  return kObjects;
}

const std::vector<std::string>& move_verbs() {
  static const std::vector<std::string> kVerbs = {"went to", "moved to", "travelled to", "journeyed to",
                                                  "went back to"};
  return kVerbs;
}

const std::vector<std::string>& pick_verbs() {
  static const std::vector<std::string> kVerbs = {"picked up", "grabbed", "got", "took"};
  return kVerbs;
}

// Depths for `count` facts spread in order over [low, high] (sorted uniform draws).
std::vector<double> ordered_depths(TaskRng& rng, size_t count, double low, double high) {
  std::vector<double> depths(count);
  for (auto& d : depths) d = low + (high - low) * rng.uniform_real();
  std::sort(depths.begin(), depths.end());
  return depths;
}

}  // namespace

FactsInNoiseTask::FactsInNoiseTask(std::shared_ptr<const ProseCorpus> corpus, FactsInNoiseOptions options,
                                   QaLengthCounter counter)
    : corpus_(std::move(corpus)), options_(std::move(options)), counter_(std::move(counter)) {
  SWARMT_CHECK_INPUT(options_.variant == "qa1" || options_.variant == "qa2" || options_.variant == "mixed",
                     "facts_in_noise: variant must be qa1, qa2 or mixed (got '", options_.variant, "')");
  SWARMT_CHECK_INPUT(options_.min_facts >= 3 && options_.min_facts <= options_.max_facts && options_.max_facts <= 8,
                     "facts_in_noise: the number of facts must satisfy 3 <= min <= max <= 8 (got ", options_.min_facts,
                     "..", options_.max_facts, ")");
  SWARMT_CHECK_INPUT(corpus_ && !corpus_->passages.empty(), "facts_in_noise: the corpus has no passages");
}

LongContextExample FactsInNoiseTask::generate(const ExampleRequest& request) const {
  TaskRng rng(request.seed);
  constexpr int kMaxAttempts = 16;
  for (int attempt = 0; attempt < kMaxAttempts; ++attempt) {
    const bool two_facts = options_.variant == "qa2" || (options_.variant == "mixed" && rng.uniform_real() < 0.5);
    const auto num_facts = static_cast<size_t>(rng.uniform_int(options_.min_facts, options_.max_facts));
    const size_t num_moves = two_facts ? num_facts - 1 : num_facts;

    std::vector<std::string> cast;
    for (int64_t i : rng.sample_without_replacement(static_cast<int64_t>(story_people().size()), rng.uniform_int(2, 4)))
      cast.push_back(story_people()[static_cast<size_t>(i)]);
    std::vector<std::string> story_places;
    for (int64_t i : rng.sample_without_replacement(static_cast<int64_t>(places().size()), static_cast<int64_t>(num_moves)))
      story_places.push_back(places()[static_cast<size_t>(i)]);
    const std::string& target = cast[0];
    const std::string object = rng.choice(objects());
    auto anyone = [&] { return rng.choice(cast); };
    auto someone_else = [&] { return cast[static_cast<size_t>(rng.uniform_int(1, static_cast<int64_t>(cast.size()) - 1))]; };

    // The story in time order: moves before the supporting one (for qa2 with the pick-up among them;
    // after the pick-up the holder stays put until the supporting move), the supporting move, then moves
    // of the others.
    const size_t moves_before = static_cast<size_t>(rng.uniform_int(0, static_cast<int64_t>(num_moves) - 1));
    const size_t pickup_at = two_facts ? static_cast<size_t>(rng.uniform_int(0, static_cast<int64_t>(moves_before))) : 0;
    std::vector<std::string> before, after;
    size_t next_place = 0;
    auto move_fact = [&](const std::string& person) {
      return person + " " + rng.choice(move_verbs()) + " the " + story_places[next_place++] + ".";
    };
    for (size_t i = 0; i < moves_before; ++i) {
      if (two_facts && i == pickup_at) before.push_back(target + " " + rng.choice(pick_verbs()) + " the " + object + ".");
      before.push_back(move_fact(two_facts && i >= pickup_at ? someone_else() : anyone()));
    }
    if (two_facts && pickup_at == moves_before) before.push_back(target + " " + rng.choice(pick_verbs()) + " the " + object + ".");
    const std::string answer = story_places[next_place];
    const std::string support = move_fact(target);
    while (next_place < num_moves) after.push_back(move_fact(someone_else()));

    const double depth = request.depth ? *request.depth : 100.0 * rng.uniform_real();
    std::vector<ProseInsert> inserts;
    inserts.push_back({support, depth});
    const auto before_depths = ordered_depths(rng, before.size(), 0.0, depth);
    const auto after_depths = ordered_depths(rng, after.size(), depth, 100.0);
    // Inserts at one boundary keep the caller's order, so list the story in time order around the support.
    std::vector<ProseInsert> ordered;
    for (size_t i = 0; i < before.size(); ++i) ordered.push_back({before[i], before_depths[i]});
    const size_t support_index = ordered.size();
    ordered.push_back(inserts[0]);
    for (size_t i = 0; i < after.size(); ++i) ordered.push_back({after[i], after_depths[i]});

    std::set<std::string> forbidden;
    for (const auto& p : cast) forbidden.insert(lowercase_words(p)[0]);
    for (const auto& p : story_places) forbidden.insert(p);
    forbidden.insert(object);
    auto keep = [&forbidden](const std::string& sentence) {
      for (const auto& w : lowercase_words(sentence))
        if (forbidden.count(w)) return false;
      return true;
    };
    const size_t first_passage = static_cast<size_t>(rng.uniform_int(0, static_cast<int64_t>(corpus_->passages.size()) - 1));
    auto build = [&](int64_t units) {
      ProseHaystack h = build_prose_haystack(*corpus_, first_passage, units, ordered, keep);
      return ContextDraft{std::move(h.text), h.depths[support_index]};
    };

    LongContextExample e;
    e.id = request.id;
    e.task = name();
    e.bucket = request.bucket;
    e.question = std::string("Question: Where is ") + (two_facts ? "the " + object : target) + "?\nAnswer:";
    e.answer = answer;
    FittedContext fit = fit_context(build, e.question, e.answer, request.target_tokens, counter_);
    e.context = std::move(fit.draft.context);
    e.depth = fit.draft.depth;
    e.length_tokens = fit.length_tokens;
    if (count_word_occurrences(e.context, e.answer) == 1) return e;
  }
  throw_input_error("facts_in_noise: could not build an example whose answer occurs exactly once in the context after ",
                    kMaxAttempts, " attempts (corpus ", corpus_->name, ")");
}

}  // namespace swarmt::data
