#include "tools/cli_common.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <new>
#include <set>

#include "support/allocator_tuning.h"
#include "support/error.h"

namespace vkc::cli {

int run_tool(const char* tool, const std::function<int()>& body) {
  tune_allocator_for_compiling();
  try {
    return body();
  } catch (const Error& e) {
    std::cerr << tool << ": error: " << e.what() << "\n";
  } catch (const std::bad_alloc&) {
    std::cerr << tool << ": error: out of host memory\n";
  } catch (const std::exception& e) {
    std::cerr << tool << ": error: internal: " << e.what() << "\n";
  }
  return 1;
}

Args::Args(int argc, char** argv) : args_(argv + 1, argv + argc), used_(args_.size(), false) {}

bool Args::flag(const std::string& name) {
  bool found = false;
  for (size_t i = 0; i < args_.size(); ++i)
    if (!used_[i] && args_[i] == name) used_[i] = found = true;
  return found;
}

std::vector<std::string> Args::values(const std::string& name) {
  std::vector<std::string> out;
  for (size_t i = 0; i < args_.size(); ++i) {
    if (used_[i]) continue;
    if (args_[i] == name) {
      check(i + 1 < args_.size(), "usage: ", name, " needs a value");
      used_[i] = used_[i + 1] = true;
      out.push_back(args_[i + 1]);
      ++i;
    } else if (args_[i].rfind(name + "=", 0) == 0) {
      used_[i] = true;
      out.push_back(args_[i].substr(name.size() + 1));
    }
  }
  return out;
}

std::string Args::value(const std::string& name, const std::string& fallback) {
  std::vector<std::string> v = values(name);
  check(v.size() <= 1, "usage: ", name, " given more than once");
  return v.empty() ? fallback : v[0];
}

std::vector<std::string> Args::positionals() {
  std::vector<std::string> out;
  for (size_t i = 0; i < args_.size(); ++i)
    if (!used_[i] && (args_[i].empty() || args_[i][0] != '-' || args_[i] == "-")) {
      used_[i] = true;
      out.push_back(args_[i]);
    }
  return out;
}

void Args::finish() const {
  for (size_t i = 0; i < args_.size(); ++i)
    check(used_[i], "usage: unknown option '", args_[i], "' (see --help)");
}

void Args::require_alone(const std::string& name) const {
  for (const std::string& a : args_) check(a == name, "usage: ", name, " takes no other argument, got '", a, "'");
}

void Args::require_alone_but_consumed(const std::string& name) const {
  for (size_t i = 0; i < args_.size(); ++i)
    check(used_[i] || args_[i] == name, "usage: ", name, " takes no other argument, got '", args_[i], "'");
}

std::pair<std::string, std::string> split_assignment(const std::string& arg, const std::string& flag) {
  size_t eq = arg.find('=');
  check(eq != std::string::npos && eq > 0 && eq + 1 < arg.size(), "usage: ", flag,
        " expects NAME=FILE, got '", arg, "'");
  return {arg.substr(0, eq), arg.substr(eq + 1)};
}

int64_t parse_int(const std::string& text, const std::string& flag, int64_t lo, int64_t hi) {
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  bool whole = ptr == text.data() + text.size();
  check(ec != std::errc::invalid_argument && whole, "usage: ", flag, " expects an integer, got '", text, "'");
  // from_chars reports an int64 overflow instead of wrapping; the caller's range covers narrowing.
  check(ec == std::errc() && v >= lo && v <= hi, "usage: ", flag, " expects an integer in [", lo, ", ", hi,
        "], got '", text, "'");
  return v;
}

double parse_double(const std::string& text, const std::string& flag, double lo, double hi) {
  // strtod would also take leading spaces, "nan" and "inf": refuse them before it sees the text.
  bool plain = !text.empty() && text.find_first_not_of("0123456789+-.eE") == std::string::npos;
  char* end = nullptr;
  double v = plain ? std::strtod(text.c_str(), &end) : 0.0;
  check(plain && end == text.c_str() + text.size(), "usage: ", flag, " expects a number, got '", text, "'");
  check(std::isfinite(v), "usage: ", flag, " expects a finite number, got '", text, "'");
  check(v >= lo && v <= hi, "usage: ", flag, " expects a number in [", lo, ", ", hi, "], got '", text, "'");
  return v;
}

std::map<std::string, Shape> parse_input_shapes(const std::vector<std::string>& values) {
  std::map<std::string, Shape> shapes;
  for (const std::string& v : values) {
    auto [name, dims] = split_assignment(v, "--input-shape");
    Shape shape;
    size_t start = 0;
    while (start <= dims.size()) {
      size_t comma = dims.find(',', start);
      std::string d = dims.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      int64_t n = parse_int(d, "--input-shape " + name);
      check(n >= 0, "usage: --input-shape ", name, ": negative dim ", n);
      shape.push_back(n);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    check(shapes.emplace(name, shape).second, "usage: --input-shape ", name, " given twice");
  }
  return shapes;
}

std::string safe_file_name(const std::string& name) {
  std::string s;
  for (char c : name) {
    bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '.' || c == '-';
    s += ok ? c : '_';
  }
  if (s.empty() || s == "." || s == "..") s = "_" + s;
  return s;
}

std::vector<std::string> unique_file_names(const std::vector<std::string>& tensor_names) {
  std::set<std::string> taken;
  std::vector<std::string> out;
  for (const std::string& name : tensor_names) {
    std::string base = safe_file_name(name), stem = base;
    for (int i = 2; taken.count(stem); ++i) stem = base + "_" + std::to_string(i);
    taken.insert(stem);
    out.push_back(stem);
  }
  return out;
}

void prepare_output_dir(const std::string& dir, const std::string& flag) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  check(!ec && std::filesystem::is_directory(dir), flag, " ", dir, ": cannot create the directory",
        ec ? ": " + ec.message() : std::string());
  std::string probe = dir + "/.vkc-write-test";
  bool writable = static_cast<bool>(std::ofstream(probe));
  std::filesystem::remove(probe, ec);
  check(writable, flag, " ", dir, ": cannot write files there");
}

}  // namespace vkc::cli
