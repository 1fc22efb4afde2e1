#pragma once
// Exact reads of untrusted JSON (manifests, target profiles) into C++ values.
//
// nlohmann's get<T>() converts any JSON number to an integer type, so a float or an integer out of
// the field's range converts with undefined behaviour or wraps: fuzz/fuzz_manifest found 3e45 for a
// uint32_t target limit and 2.3e109 for a uint32_t binding. Here an integer field takes only a JSON
// integer that fits; anything else is "wrong type", which the caller reports with the JSON path.

#include <array>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

namespace vkc {

template <typename T>
bool get_exact(const nlohmann::json& v, T& out);

template <typename T>
bool get_exact(const nlohmann::json& v, std::vector<T>& out) {
  if (!v.is_array()) return false;
  out.assign(v.size(), T{});
  for (size_t i = 0; i < v.size(); ++i)
    if (!get_exact(v[i], out[i])) return false;
  return true;
}

template <typename T, size_t N>
bool get_exact(const nlohmann::json& v, std::array<T, N>& out) {
  if (!v.is_array() || v.size() != N) return false;
  for (size_t i = 0; i < N; ++i)
    if (!get_exact(v[i], out[i])) return false;
  return true;
}

template <typename T>
bool get_exact(const nlohmann::json& v, std::map<std::string, T>& out) {
  if (!v.is_object()) return false;
  out.clear();
  for (auto it = v.begin(); it != v.end(); ++it)
    if (!get_exact(it.value(), out[it.key()])) return false;
  return true;
}

template <typename T>
bool get_exact(const nlohmann::json& v, T& out) {
  if constexpr (std::is_same_v<T, nlohmann::json>) {
    out = v;
    return true;
  } else if constexpr (std::is_same_v<T, bool>) {
    if (!v.is_boolean()) return false;
    out = v.get<bool>();
    return true;
  } else if constexpr (std::is_integral_v<T>) {
    if (v.is_number_unsigned()) {
      const uint64_t x = v.get<uint64_t>();
      if (x > uint64_t(std::numeric_limits<T>::max())) return false;
      out = T(x);
      return true;
    }
    if (!v.is_number_integer()) return false;  // floats, strings, ...
    const int64_t x = v.get<int64_t>();        // a negative integer: is_number_unsigned was false
    if constexpr (std::is_signed_v<T>) {
      if (x < int64_t(std::numeric_limits<T>::min()) || x > int64_t(std::numeric_limits<T>::max()))
        return false;
    } else {
      if (x < 0) return false;
    }
    out = T(x);
    return true;
  } else if constexpr (std::is_floating_point_v<T>) {
    if (!v.is_number()) return false;
    out = v.get<T>();  // integers and doubles both convert exactly enough; no UB for doubles
    return true;
  } else if constexpr (std::is_same_v<T, std::string>) {
    if (!v.is_string()) return false;
    out = v.get<std::string>();
    return true;
  } else {
    static_assert(sizeof(T) == 0, "get_exact: add an overload for this type");
    return false;
  }
}

}  // namespace vkc
