// Our own lists of common English words (see word_lists.cpp for the rules they follow).
#pragma once

#include <string>
#include <vector>

namespace swarmt::data {

// ~600 common adjectives: lowercase ASCII letters, unique, sorted.
const std::vector<std::string>& common_adjectives();

// ~840 common concrete nouns, singular: lowercase ASCII letters, unique, sorted.
const std::vector<std::string>& common_nouns();

}  // namespace swarmt::data
