#pragma once
#include <cstdio>
#include <string>
#include <string_view>
#include <type_traits>
#include "cute/tensor.hpp"

namespace reprokit_probe {

template <class T>
std::string type_name() {
  std::string_view p = __PRETTY_FUNCTION__;  // "... [with T = <type>; std::string = ...]"
  auto start = p.find("T = ") + 4;
  auto end = p.find_first_of(";]", start);
  return std::string(p.substr(start, end - start));
}

template <class T, class = void>
struct is_cute_tuple : std::false_type {};
template <class T>
struct is_cute_tuple<T, std::enable_if_t<cute::is_tuple<T>::value>> : std::true_type {};

// "128x256x128" for a static cute shape, "dynamic" for a runtime one, else the type's name.
template <class T>
std::string describe() {
  if constexpr (is_cute_tuple<T>::value) {
    if constexpr (cute::is_static_v<T>) {
      std::string out;
      cute::for_each(cute::make_seq<cute::rank_v<T>>{}, [&](auto i) {
        if (!out.empty()) out += "x";
        out += std::to_string(int(cute::size<decltype(i)::value>(T{})));
      });
      return out;
    } else {
      return "dynamic";
    }
  } else {
    return type_name<T>();
  }
}

inline std::string escape(std::string const& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default: out += (static_cast<unsigned char>(c) < 0x20) ? ' ' : c;
    }
  }
  return out;
}

struct Json {
  std::string text = "{";
  void key(char const* k) { text += (text.size() > 1 ? ",\"" : "\""); text += k; text += "\":"; }
  void num(char const* k, long long v) { key(k); text += std::to_string(v); }
  void str(char const* k, std::string const& v) { key(k); text += "\"" + escape(v) + "\""; }
  void boolean(char const* k, bool v) { key(k); text += v ? "true" : "false"; }
  void raw(char const* k, std::string const& v) { key(k); text += v.empty() ? "null" : v; }
  std::string done() const { return text + "}"; }
};

}  // namespace reprokit_probe
