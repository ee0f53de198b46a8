// A small XML well-formedness checker for the SVG outputs of the tests (no XML library needed):
// one root element, properly nested and closed tags, quoted attributes without '<', and only the
// predefined or numeric entities after '&'.
#pragma once

#include <cctype>
#include <map>
#include <string>
#include <vector>

namespace swarmt::testing {

struct XmlCheck {
  std::string error;                        // empty when well-formed
  std::map<std::string, int> element_count;  // elements by tag name
  std::vector<std::string> texts;            // character data of the elements, in order (unescaped not needed)
};

inline XmlCheck check_xml(const std::string& doc) {
  XmlCheck result;
  std::vector<std::string> stack;
  size_t i = 0, n = doc.size();
  int roots = 0;
  auto fail = [&](const std::string& what) {
    result.error = what + " at offset " + std::to_string(i);
    return result;
  };
  auto check_entity = [&](size_t at) {
    size_t semi = doc.find(';', at);
    if (semi == std::string::npos) return false;
    std::string name = doc.substr(at + 1, semi - at - 1);
    if (name == "amp" || name == "lt" || name == "gt" || name == "quot" || name == "apos") return true;
    if (name.size() > 1 && name[0] == '#') {
      for (size_t k = 1; k < name.size(); ++k)
        if (!std::isxdigit(static_cast<unsigned char>(name[k])) && !(k == 1 && name[k] == 'x')) return false;
      return true;
    }
    return false;
  };
  auto is_name_char = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == ':' || c == '.';
  };
  if (doc.compare(0, 5, "<?xml") == 0) {
    size_t end = doc.find("?>");
    if (end == std::string::npos) return fail("unterminated XML declaration");
    i = end + 2;
  }
  std::string text;
  while (i < n) {
    char c = doc[i];
    if (c != '<') {
      if (c == '&' && !check_entity(i)) return fail("bad entity");
      if (stack.empty() && !std::isspace(static_cast<unsigned char>(c))) return fail("text outside the root");
      text += c;
      ++i;
      continue;
    }
    if (!text.empty() && !stack.empty()) result.texts.push_back(text);
    text.clear();
    if (doc.compare(i, 4, "<!--") == 0) {
      size_t end = doc.find("-->", i);
      if (end == std::string::npos) return fail("unterminated comment");
      i = end + 3;
      continue;
    }
    bool closing = i + 1 < n && doc[i + 1] == '/';
    size_t j = i + (closing ? 2 : 1);
    size_t name_start = j;
    while (j < n && is_name_char(doc[j])) ++j;
    std::string name = doc.substr(name_start, j - name_start);
    if (name.empty()) return fail("empty tag name");
    if (closing) {
      while (j < n && std::isspace(static_cast<unsigned char>(doc[j]))) ++j;
      if (j >= n || doc[j] != '>') return fail("bad closing tag </" + name);
      if (stack.empty() || stack.back() != name) return fail("mismatched </" + name + ">");
      stack.pop_back();
      i = j + 1;
      continue;
    }
    // Attributes.
    bool self_closing = false;
    while (true) {
      while (j < n && std::isspace(static_cast<unsigned char>(doc[j]))) ++j;
      if (j >= n) return fail("unterminated tag <" + name);
      if (doc[j] == '>') break;
      if (doc[j] == '/' && j + 1 < n && doc[j + 1] == '>') {
        self_closing = true;
        ++j;
        break;
      }
      size_t attr_start = j;
      while (j < n && is_name_char(doc[j])) ++j;
      if (j == attr_start) return fail("bad attribute in <" + name);
      if (j >= n || doc[j] != '=') return fail("attribute without value in <" + name);
      ++j;
      if (j >= n || (doc[j] != '"' && doc[j] != '\'')) return fail("unquoted attribute in <" + name);
      char quote = doc[j++];
      while (j < n && doc[j] != quote) {
        if (doc[j] == '<') return fail("'<' in an attribute of <" + name);
        if (doc[j] == '&' && !check_entity(j)) return fail("bad entity in an attribute of <" + name);
        ++j;
      }
      if (j >= n) return fail("unterminated attribute in <" + name);
      ++j;
    }
    if (stack.empty()) {
      if (++roots > 1) return fail("second root element <" + name);
    }
    result.element_count[name]++;
    if (!self_closing) stack.push_back(name);
    i = j + 1;
  }
  if (!stack.empty()) {
    i = n;
    return fail("unclosed <" + stack.back() + ">");
  }
  if (roots != 1) return fail("no root element");
  return result;
}

}  // namespace swarmt::testing
