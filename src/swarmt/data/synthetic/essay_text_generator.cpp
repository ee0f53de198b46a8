// The built-in essay text: essay-like English prose from a small grammar and our own vocabulary.
//
// It stands in for the Paul Graham essays of RULER's `essay` haystack, which cannot be shipped. What
// the NIAH tasks need from the haystack is natural-looking English with ordinary sentence boundaries,
// enough variety that a model cannot predict the next sentence, and no digits that look like the
// 7-digit needle values; the grammar below gives that. Everything is drawn from a fixed seed, so the
// text (and every essay-haystack prompt built from it) is identical on every machine.
#include <array>
#include <cctype>

#include "swarmt/data/synthetic/essay_text.h"
#include "swarmt/data/synthetic/synthetic_tasks_random.h"
#include "swarmt/data/synthetic/word_lists.h"

namespace swarmt::data {
namespace {

struct Verb {
  const char* base;
  const char* past;
};

// Transitive verbs that read naturally with people, things and ideas as objects.
const std::vector<Verb>& verbs() {
  static const std::vector<Verb> kVerbs = {
      {"build", "built"},       {"change", "changed"},       {"choose", "chose"},       {"find", "found"},
      {"keep", "kept"},         {"make", "made"},            {"lose", "lost"},          {"need", "needed"},
      {"notice", "noticed"},    {"protect", "protected"},    {"remember", "remembered"}, {"share", "shared"},
      {"teach", "taught"},      {"test", "tested"},          {"trust", "trusted"},      {"understand", "understood"},
      {"improve", "improved"},  {"explore", "explored"},     {"ignore", "ignored"},     {"measure", "measured"},
      {"borrow", "borrowed"},   {"carry", "carried"},        {"fix", "fixed"},          {"follow", "followed"},
      {"forget", "forgot"},     {"hold", "held"},            {"imagine", "imagined"},   {"invent", "invented"},
      {"join", "joined"},       {"leave", "left"},           {"love", "loved"},         {"miss", "missed"},
      {"move", "moved"},        {"open", "opened"},          {"paint", "painted"},      {"plan", "planned"},
      {"prepare", "prepared"},  {"question", "questioned"},  {"repair", "repaired"},    {"replace", "replaced"},
      {"respect", "respected"}, {"sell", "sold"},            {"study", "studied"},      {"support", "supported"},
      {"visit", "visited"},     {"watch", "watched"},        {"describe", "described"}, {"discover", "discovered"},
      {"earn", "earned"},       {"examine", "examined"},     {"finish", "finished"},    {"guard", "guarded"},
      {"hide", "hid"},          {"inspect", "inspected"},    {"praise", "praised"},     {"seek", "sought"},
      {"solve", "solved"},      {"welcome", "welcomed"},     {"admire", "admired"},     {"avoid", "avoided"},
      {"collect", "collected"}, {"copy", "copied"},          {"design", "designed"},    {"doubt", "doubted"},
      {"draw", "drew"},         {"enjoy", "enjoyed"},        {"explain", "explained"},  {"feed", "fed"},
      {"grow", "grew"},         {"judge", "judged"},         {"mention", "mentioned"},  {"organize", "organized"},
      {"publish", "published"}, {"reach", "reached"},        {"reject", "rejected"},    {"rebuild", "rebuilt"},
      {"simplify", "simplified"}, {"steal", "stole"},        {"throw", "threw"},        {"value", "valued"}};
  return kVerbs;
}

const std::vector<std::string>& people() {
  static const std::vector<std::string> kPeople = {
      "founder", "writer", "student", "teacher", "engineer", "investor", "reader", "programmer", "painter",
      "scientist", "manager", "customer", "neighbor", "stranger", "child", "parent", "critic", "beginner",
      "expert", "designer", "hacker", "farmer", "doctor", "builder", "traveler", "editor", "musician", "friend"};
  return kPeople;
}

const std::vector<std::string>& ideas() {
  static const std::vector<std::string> kIdeas = {
      "idea", "problem", "question", "habit", "decision", "plan", "mistake", "reason", "project", "skill",
      "argument", "theory", "method", "goal", "choice", "risk", "pattern", "story", "rule", "tradition",
      "startup", "company", "essay", "language", "tool", "market", "city", "school", "job", "design",
      "conversation", "lesson", "experiment", "opinion", "promise", "secret", "trick", "compromise", "draft"};
  return kIdeas;
}

const std::array<const char*, 12> kFrequency = {"often", "rarely", "usually", "seldom", "always", "never",
                                                 "sometimes", "quietly", "eventually", "gradually", "already",
                                                 "almost never"};
const std::array<const char*, 6> kModal = {"can", "will", "should", "might", "must", "would"};
const std::array<const char*, 24> kOpeners = {
    "In practice",      "At first",           "Over time",         "In the long run",   "For most people",
    "Looking back",     "In my experience",   "Surprisingly",      "Of course",         "As a rule",
    "Sooner or later",  "On the other hand",  "For a while",       "In a small town",   "Even so",
    "Most of the time", "To a beginner",      "In the end",        "After a few years", "By contrast",
    "Strangely enough", "Without exception",  "For better or worse", "Now and then"};
const std::array<const char*, 12> kPrepositions = {"in", "near", "after", "before", "without", "with",
                                                    "behind", "under", "beside", "around", "inside", "beyond"};
const std::array<const char*, 9> kDeterminers = {"the", "the", "a", "a", "every", "this", "that", "one", "no"};

bool is_vowel(char c) { return c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u'; }

std::string third_person(const std::string& verb) {
  auto ends = [&](const char* suffix) {
    std::string s = suffix;
    return verb.size() >= s.size() && verb.compare(verb.size() - s.size(), s.size(), s) == 0;
  };
  if (ends("s") || ends("sh") || ends("ch") || ends("x") || ends("z") || ends("o")) return verb + "es";
  if (ends("y") && verb.size() > 1 && !is_vowel(verb[verb.size() - 2])) return verb.substr(0, verb.size() - 1) + "ies";
  return verb + "s";
}

std::string plural(const std::string& noun) {
  static const std::vector<std::pair<std::string, std::string>> kIrregular = {
      {"child", "children"}, {"person", "people"}, {"mouse", "mice"},     {"tooth", "teeth"},
      {"goose", "geese"},    {"woman", "women"},   {"sheep", "sheep"},    {"fish", "fish"},
      {"deer", "deer"},      {"cattle", "cattle"}, {"leaf", "leaves"},    {"knife", "knives"},
      {"wolf", "wolves"},    {"shelf", "shelves"}, {"scissors", "scissors"}, {"jeans", "jeans"},
      {"potato", "potatoes"}, {"tomato", "tomatoes"}, {"hero", "heroes"}, {"volcano", "volcanoes"},
      {"cactus", "cacti"},   {"mosquito", "mosquitoes"}, {"echo", "echoes"}, {"thief", "thieves"}};
  for (const auto& [singular, plural_form] : kIrregular)
    if (noun == singular) return plural_form;
  auto ends = [&](const char* suffix) {
    std::string s = suffix;
    return noun.size() >= s.size() && noun.compare(noun.size() - s.size(), s.size(), s) == 0;
  };
  if (ends("s") || ends("sh") || ends("ch") || ends("x") || ends("z")) return noun + "es";
  if (ends("y") && noun.size() > 1 && !is_vowel(noun[noun.size() - 2])) return noun.substr(0, noun.size() - 1) + "ies";
  return noun + "s";
}

// "a" or "an" by the sound of the next word (vowel letter, with the common exceptions).
std::string indefinite_article(const std::string& next) {
  static const char* const kConsonantSound[] = {"uni", "use", "usu", "uti", "eu", "one", "once"};
  static const char* const kVowelSound[] = {"hour", "honest", "honor", "heir"};
  for (const char* p : kConsonantSound)
    if (next.rfind(p, 0) == 0) return "a";
  for (const char* p : kVowelSound)
    if (next.rfind(p, 0) == 0) return "an";
  return !next.empty() && is_vowel(next[0]) ? "an" : "a";
}

class EssayWriter {
 public:
  explicit EssayWriter(uint64_t seed) : rng_(seed) {}

  std::string text(size_t min_bytes) {
    std::string out;
    out.reserve(min_bytes + 4096);
    while (out.size() < min_bytes) {
      out += title();
      out += "\n\n";
      int paragraphs = static_cast<int>(rng_.uniform_int(4, 9));
      for (int p = 0; p < paragraphs; ++p) {
        int sentences = static_cast<int>(rng_.uniform_int(3, 8));
        for (int s = 0; s < sentences; ++s) {
          if (s) out += ' ';
          out += sentence();
        }
        out += "\n\n";
      }
    }
    return out;
  }

 private:
  template <size_t N>
  std::string pick(const std::array<const char*, N>& items) {
    return items[static_cast<size_t>(rng_.uniform_int(0, N - 1))];
  }
  const std::string& pick(const std::vector<std::string>& items) { return rng_.choice(items); }
  bool coin(double p) { return rng_.uniform_real() < p; }

  std::string adjective() { return pick(common_adjectives()); }
  std::string thing() { return pick(common_nouns()); }
  std::string noun() {
    double r = rng_.uniform_real();
    return r < 0.45 ? thing() : r < 0.75 ? pick(ideas()) : pick(people());
  }

  // A singular noun phrase with a determiner: "the careful founder", "an old habit", "every bridge".
  std::string singular_phrase() {
    std::string head = coin(0.5) ? adjective() + " " + noun() : noun();
    std::string det = pick(kDeterminers);
    if (det == "a") det = indefinite_article(head);
    return det + " " + head;
  }
  std::string plural_phrase() {
    std::string head = plural(noun());
    if (coin(0.4)) head = adjective() + " " + head;
    static const std::array<const char*, 6> kQuantifiers = {"", "most", "many", "some", "few", "all the"};
    std::string q = pick(kQuantifiers);
    return q.empty() ? head : q + " " + head;
  }
  std::string object() { return coin(0.7) ? singular_phrase() : plural_phrase(); }
  std::string person_subject() {
    std::string p = pick(people());
    return coin(0.5) ? "the " + adjective() + " " + p : indefinite_article(p) + " " + p;
  }
  std::string subject() { return coin(0.6) ? person_subject() : singular_phrase(); }
  std::string place() { return pick(kPrepositions) + " " + singular_phrase(); }

  // Present-tense clause with a singular subject: "a founder rarely notices the quiet market".
  std::string clause() {
    const Verb& v = rng_.choice(verbs());
    std::string s = subject() + " ";
    if (coin(0.3)) s += pick(kFrequency) + " ";
    s += third_person(v.base) + " " + object();
    if (coin(0.25)) s += " " + place();
    return s;
  }
  std::string modal_clause() {
    const Verb& v = rng_.choice(verbs());
    return subject() + " " + pick(kModal) + " " + v.base + " " + object();
  }
  std::string past_clause() {
    const Verb& v = rng_.choice(verbs());
    return person_subject() + " " + v.past + " " + object() + " " + place();
  }

  std::string sentence() {
    std::string s;
    switch (rng_.uniform_int(0, 11)) {
      case 0: case 1: s = clause() + "."; break;
      case 2: s = pick(kOpeners) + ", " + clause() + "."; break;
      case 3: s = clause() + " because " + clause() + "."; break;
      case 4: s = clause() + ", but " + modal_clause() + "."; break;
      case 5: s = "If " + clause() + ", " + modal_clause() + "."; break;
      case 6: {
        const Verb& v = rng_.choice(verbs());
        s = coin(0.5) ? "Why does " + subject() + " " + v.base + " " + object() + "?"
                      : "What happens when " + clause() + "?";
        break;
      }
      case 7: s = "The point is not " + singular_phrase() + " but " + singular_phrase() + "."; break;
      case 8: {
        const Verb& v = rng_.choice(verbs());
        s = "It is " + adjective() + " to " + v.base + " " + object() + " " + place() + ".";
        break;
      }
      case 9: s = pick(kOpeners) + ", " + past_clause() + "."; break;
      case 10: s = "That is why " + modal_clause() + "."; break;
      default: s = clause() + ", and " + clause() + "."; break;
    }
    s[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(s[0])));
    return s;
  }

  std::string title() {
    static const std::array<const char*, 5> kForms = {"Notes on ", "How to Think About ", "Why ",
                                                     "The Case for ", "What I Learned from "};
    std::string form = pick(kForms);
    std::string s = form + adjective() + " " + plural(noun());
    if (form == "Why ") s += " Matter";
    s += ".";
    s[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(s[0])));
    return s;
  }

  TaskRng rng_;
};

}  // namespace

const std::string& builtin_essay_text() {
  static const std::string kText = EssayWriter(/*seed=*/20240229).text(/*min_bytes=*/1600 * 1024);
  return kText;
}

const std::vector<std::string>& builtin_essay_words() {
  static const std::vector<std::string> kWords = split_words(builtin_essay_text());
  return kWords;
}

}  // namespace swarmt::data
