#include "swarmt/data/synthetic/long_qa.h"

#include <algorithm>
#include <cctype>

#include "swarmt/core/error.h"
#include "swarmt/data/long_context/long_context_dataset_haystack.h"
#include "swarmt/data/synthetic/synthetic_tasks_random.h"
#include "swarmt/data/synthetic/word_lists.h"

namespace swarmt::data {

namespace {

const std::vector<std::string>& organisation_kinds() {
  static const std::vector<std::string> kKinds = {
      "Office",    "Agency",     "Council",   "Board",       "Institute", "Bureau",  "Commission", "Authority",
      "Department", "Trust",     "Foundation", "Society",    "Museum",    "Archive", "Observatory", "Cooperative"};
  return kKinds;
}

const std::vector<std::string>& first_names() {
  static const std::vector<std::string> kNames = {
      "Amelia", "Arthur", "Beatrice", "Bruno",  "Camille", "Conrad", "Dalia",   "Edmund", "Elena",  "Felix",
      "Greta",  "Hector", "Ingrid",   "Jonas",  "Kira",    "Leon",   "Marta",   "Nils",   "Olga",   "Pavel",
      "Rosa",   "Silas",  "Tamara",   "Ulrich", "Vera",    "Walter", "Yusuf",   "Zora",   "Miriam", "Oscar"};
  return kNames;
}

const std::vector<std::string>& last_names() {
  static const std::vector<std::string> kNames = {
      "Abernathy", "Blackwood", "Castellan", "Draper",   "Eastwick", "Fairbanks", "Goodfellow", "Hollister",
      "Ironside",  "Jarrow",    "Kettering", "Lindqvist", "Marchetti", "Northcote", "Okonkwo",  "Pemberton",
      "Quintero",  "Ravensdale", "Szabo",    "Thorncroft", "Underhill", "Valdivia", "Whitcombe", "Yardley"};
  return kNames;
}

const std::vector<std::string>& city_names() {
  static const std::vector<std::string> kCities = {
      "Lisbon",  "Oslo",     "Tallinn",  "Valparaiso", "Montevideo", "Nairobi", "Hobart",   "Kraków",
      "Porto",   "Bergen",   "Tbilisi",  "Cordoba",    "Winnipeg",   "Adelaide", "Dakar",   "Ljubljana",
      "Trieste", "Halifax",  "Mombasa",  "Tampere",    "Arequipa",   "Dunedin", "Salzburg", "Antwerp"};
  return kCities;
}

// Values of the code-word template: colours and stones, none of them a noun of our entity names, none
// shorter than four letters (so that a value is not found inside ordinary words by a substring search).
const std::vector<std::string>& code_words() {
  static const std::vector<std::string> kWords = {
      "amber",    "azure",   "beryl",     "cobalt",   "crimson",  "garnet",    "indigo",   "jasper",
      "lilac",    "magenta", "maroon",    "ochre",    "onyx",     "opal",      "quartz",   "ruby",
      "saffron",  "scarlet", "sepia",     "topaz",    "umber",    "violet",    "bronze",   "mauve",
      "khaki",    "cerise",  "fuchsia",   "lavender", "orchid",   "sienna",    "tawny",    "turquoise",
      "vermilion", "zircon", "agate",     "basalt",   "flint",    "granite",   "obsidian", "slate",
      "cinnabar", "malachite", "lapis",   "citrine",  "peridot",  "tourmaline", "sapphire", "amethyst"};
  return kWords;
}

std::string capitalise(std::string word) {
  if (!word.empty()) word[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(word[0])));
  return word;
}

// 4512 -> "4,512"
std::string with_thousands(int64_t value) {
  std::string digits = std::to_string(value), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string lower(const std::string& s) {
  std::string out = s;
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

struct Fact {
  std::string entity;  // "the Harbor Office"
  int64_t year = 0;
  std::string value;
};

// One question template. The entity is written with its article ("the Harbor Office").
struct Template {
  std::string name;
  bool has_year;
  std::function<std::string(const Fact&)> sentence;
  std::function<std::string(const Fact&)> question;
  std::function<std::string(TaskRng&)> draw_value;
  std::function<std::string(const std::string&)> answer;  // value -> answer text
  // Templates that can be rewritten: a later statement that overrides the value, and the question for
  // the latest value. Empty for the others.
  std::function<std::string(const Fact&)> rewrite = {};
  std::function<std::string(const Fact&)> latest_question = {};
};

const std::vector<Template>& templates() {
  static const std::vector<Template> kTemplates = {
      {"budget", true,
       [](const Fact& f) { return "The budget of " + f.entity + " was " + f.value + " thousand dollars in " + std::to_string(f.year) + "."; },
       [](const Fact& f) { return "What was the budget of " + f.entity + " in " + std::to_string(f.year) + "?"; },
       [](TaskRng& rng) { return with_thousands(rng.uniform_int(1000, 99999)); },
       [](const std::string& v) { return v + " thousand dollars"; }},
      {"staff", true,
       [](const Fact& f) { return "In " + std::to_string(f.year) + ", " + f.entity + " employed " + f.value + " people."; },
       [](const Fact& f) { return "How many people did " + f.entity + " employ in " + std::to_string(f.year) + "?"; },
       [](TaskRng& rng) { return with_thousands(rng.uniform_int(20, 9999)); },
       [](const std::string& v) { return v; }},
      {"director", true,
       [](const Fact& f) { return "In " + std::to_string(f.year) + ", " + f.entity + " was led by " + f.value + "."; },
       [](const Fact& f) { return "Who led " + f.entity + " in " + std::to_string(f.year) + "?"; },
       [](TaskRng& rng) { return rng.choice(first_names()) + " " + rng.choice(last_names()); },
       [](const std::string& v) { return v; }},
      {"headquarters", true,
       [](const Fact& f) { return "In " + std::to_string(f.year) + ", " + f.entity + " moved its headquarters to " + f.value + "."; },
       [](const Fact& f) { return "Where did " + f.entity + " move its headquarters in " + std::to_string(f.year) + "?"; },
       [](TaskRng& rng) { return rng.choice(city_names()); },
       [](const std::string& v) { return v; }},
      {"founded", false,
       [](const Fact& f) { return capitalise(f.entity) + " was founded in " + f.value + "."; },
       [](const Fact& f) { return "In what year was " + f.entity + " founded?"; },
       [](TaskRng& rng) { return std::to_string(rng.uniform_int(1850, 2019)); },
       [](const std::string& v) { return v; }},
      {"code", false,
       [](const Fact& f) { return "The code word of " + f.entity + " is " + f.value + "."; },
       [](const Fact& f) { return "What is the code word of " + f.entity + "?"; },
       [](TaskRng& rng) { return rng.choice(code_words()); },
       [](const std::string& v) { return v; },
       [](const Fact& f) { return "The code word of " + f.entity + " was changed to " + f.value + "."; },
       [](const Fact& f) { return "What is the code word of " + f.entity + " now?"; }},
  };
  return kTemplates;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// True if `candidate` contains, or is contained in, any of `taken` (so no value or entity can be found
// inside another one by a substring search).
bool overlaps(const std::string& candidate, const std::vector<std::string>& taken) {
  for (const auto& t : taken)
    if (contains(candidate, t) || contains(t, candidate)) return true;
  return false;
}

}  // namespace

LongQaTask::LongQaTask(std::shared_ptr<const ProseCorpus> corpus, LongQaOptions options, QaLengthCounter counter)
    : corpus_(std::move(corpus)), options_(options), counter_(std::move(counter)) {
  SWARMT_CHECK_INPUT(options_.distractors >= 0 && options_.distractors <= 16, "long_qa: distractors must be in [0, 16] (got ",
                     options_.distractors, ")");
  SWARMT_CHECK_INPUT(corpus_ && !corpus_->passages.empty(), "long_qa: the corpus has no passages");
  SWARMT_CHECK_INPUT(options_.rewrites >= 0 && options_.rewrites <= 8, "long_qa: rewrites must be in [0, 8] (got ",
                     options_.rewrites, ")");
  if (options_.templates.empty()) options_.templates = long_qa_template_names();
  for (const auto& name : options_.templates) {
    auto it = std::find_if(templates().begin(), templates().end(), [&](const Template& t) { return t.name == name; });
    if (it == templates().end()) {
      std::string known;  // from the table itself, so a new template is listed without touching this
      for (const auto& t : templates()) known += (known.empty() ? "" : ", ") + t.name;
      throw_input_error("long_qa: templates: '", name, "' is not a template (", known, ")");
    }
    SWARMT_CHECK_INPUT(options_.rewrites == 0 || it->rewrite, "long_qa: template '", name,
                       "' cannot be rewritten (rewrites > 0 needs templates that can: code)");
    templates_.push_back(static_cast<size_t>(it - templates().begin()));
  }
}

const std::vector<std::string>& long_qa_template_names() {
  static const std::vector<std::string> kNames = [] {
    std::vector<std::string> names;
    for (const auto& t : templates()) names.push_back(t.name);
    return names;
  }();
  return kNames;
}

LongContextExample LongQaTask::generate(const ExampleRequest& request) const {
  TaskRng rng(request.seed);
  const auto& nouns = common_nouns();
  constexpr int kMaxAttempts = 16;
  for (int attempt = 0; attempt < kMaxAttempts; ++attempt) {
    const Template& t = templates()[rng.choice(templates_)];
    const size_t num_facts = static_cast<size_t>(options_.distractors) + 1;

    std::vector<std::string> entities;  // "the Harbor Office"
    while (entities.size() < num_facts) {
      std::string entity = "the " + capitalise(rng.choice(nouns)) + " " + rng.choice(organisation_kinds());
      if (!overlaps(entity, entities)) entities.push_back(entity);
    }
    std::vector<Fact> facts(num_facts);
    for (size_t i = 0; i < num_facts; ++i) {
      facts[i].entity = entities[i];
      facts[i].year = rng.uniform_int(1950, 2019);
    }
    // A hard negative: the same entity in another year, so the year in the question matters too.
    if (t.has_year && num_facts > 1 && rng.uniform_real() < 0.5) {
      facts[1].entity = facts[0].entity;
      while (facts[1].year == facts[0].year) facts[1].year = rng.uniform_int(1950, 2019);
    }
    // Values never contain (or hide in) another value, an entity name or a year of the facts.
    std::vector<std::string> taken;
    for (const auto& e : entities) taken.push_back(lower(e));
    if (t.has_year)
      for (const auto& f : facts) taken.push_back(std::to_string(f.year));
    std::vector<std::string> values;
    auto draw_value = [&](Fact& fact) {
      do fact.value = t.draw_value(rng);
      while (overlaps(fact.value, taken));
      taken.push_back(fact.value);
      values.push_back(fact.value);
    };
    for (auto& fact : facts) draw_value(fact);

    // The asked fact's statement comes after its earlier (overridden) values in the insert list, so that
    // statements sharing a sentence boundary still render in their order; answer_insert is its index.
    std::vector<ProseInsert> inserts;
    const double answer_depth = request.depth ? *request.depth : 100.0 * rng.uniform_real();
    size_t answer_insert = 0;
    if (options_.rewrites == 0) {
      inserts.push_back({t.sentence(facts[0]), answer_depth});
      for (size_t i = 1; i < num_facts; ++i) inserts.push_back({t.sentence(facts[i]), 100.0 * rng.uniform_real()});
    } else {
      // Entity i is stated count values in text order at the given depths: the first as a plain fact,
      // the others as rewrites; `last` is its final value (facts[i]).
      auto add_statements = [&](const Fact& last, int64_t count, std::vector<double> depths) {
        std::sort(depths.begin(), depths.end());
        for (int64_t c = 0; c < count; ++c) {
          Fact f = last;
          if (c + 1 < count) draw_value(f);
          inserts.push_back({c == 0 ? t.sentence(f) : t.rewrite(f), depths[static_cast<size_t>(c)]});
        }
      };
      std::vector<double> depths(static_cast<size_t>(options_.rewrites));
      for (auto& d : depths) d = answer_depth * rng.uniform_real();
      depths.push_back(answer_depth);
      add_statements(facts[0], options_.rewrites + 1, depths);
      answer_insert = inserts.size() - 1;
      for (size_t i = 1; i < num_facts; ++i) {
        const int64_t count = rng.uniform_int(1, options_.rewrites + 1);
        std::vector<double> at(static_cast<size_t>(count));
        for (auto& d : at) d = 100.0 * rng.uniform_real();
        add_statements(facts[i], count, at);
      }
    }

    // Background sentences may not mention an entity (its name without the article) or a value.
    std::vector<std::string> forbidden;
    for (const auto& e : entities) forbidden.push_back(lower(e.substr(4)));
    for (const auto& v : values) forbidden.push_back(lower(v));
    auto keep = [&forbidden](const std::string& sentence) {
      const std::string s = lower(sentence);
      for (const auto& f : forbidden)
        if (contains(s, f)) return false;
      return true;
    };

    const size_t first_passage = static_cast<size_t>(rng.uniform_int(0, static_cast<int64_t>(corpus_->passages.size()) - 1));
    auto build = [&](int64_t units) {
      ProseHaystack h = build_prose_haystack(*corpus_, first_passage, units, inserts, keep);
      return ContextDraft{std::move(h.text), h.depths[answer_insert]};
    };
    LongContextExample e;
    e.id = request.id;
    e.task = name();
    e.bucket = request.bucket;
    e.question =
        "Question: " + (options_.rewrites > 0 ? t.latest_question(facts[0]) : t.question(facts[0])) + "\nAnswer:";
    e.answer = t.answer(facts[0].value);
    FittedContext fit = fit_context(build, e.question, e.answer, request.target_tokens, counter_);
    e.context = std::move(fit.draft.context);
    e.depth = fit.draft.depth;
    e.length_tokens = fit.length_tokens;
    if (count_occurrences(e.context, e.answer) == 1) return e;
  }
  throw_input_error("long_qa: could not build an example whose answer occurs exactly once in the context after ",
                    kMaxAttempts, " attempts (corpus ", corpus_->name, ")");
}

}  // namespace swarmt::data
