// Sample: a character-level transformer language model (samples/charlm: trained with numpy on the
// GNU GPL v3 text Debian ships) generating text with vkc, one token per execution, its key/value
// cache kept in device memory between steps.
//
// The ONNX decode-step graph (export_onnx.py) has a fixed context T: it takes the token, its
// position and the caches past_k<l>/past_v<l> [H,T,dh], and returns the caches with the token's
// keys and values written at that position (present_k<l>/present_v<l>) and the top K of the next
// token's logits (vkc's TopK). The caches are DeviceTensors fed in as the inputs and written back
// in place by each execution (RunOptions::output_into): only the K values and indices come to the
// host, where a seeded RNG samples the next character. Every token runs the same compiled module
// (a vkc::ModelSession, checked to hold exactly one specialization). When the context is full, the
// last T/2 characters are fed again from position 0.
//
//   vkc-sample-charlm [--prompt TEXT] [--tokens N] [--seed S] [--temperature T]
//   vkc-sample-charlm --check DIR      (compare with export_onnx.py --reference DIR; exit 1 on a mismatch)
//   vkc-sample-charlm --model M.onnx --benchmark N   (tokens/s of any model of this form, e.g. GPT-2-sized)
#include <chrono>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "vkc/vkc.h"

#ifndef VKC_CHARLM_DIR
#define VKC_CHARLM_DIR "samples/charlm"
#endif

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

struct TopK {
  std::vector<float> values;
  std::vector<int64_t> indices;
};

// The model with its device-resident caches: step() runs one token at one position.
class Decoder {
 public:
  Decoder(const vkc::Device& device, const std::string& path) : device_(device), model_(device, path) {
    for (const vkc::ModelInputInfo& in : model_.inputs()) {
      if (in.name.rfind("past_", 0) != 0) continue;
      vkc::check(in.has_shape && in.dims.size() == 3, path, ": cache input '", in.name, "' must be [H, T, dh]");
      vkc::Shape shape;
      for (const vkc::ModelDim& d : in.dims) {
        vkc::check(d.value > 0, path, ": cache input '", in.name, "' must have static dims");
        shape.push_back(d.value);
      }
      context_ = shape[1];
      // One tensor per cache, read and written by every step (zeros: positions not yet written
      // are masked anyway).
      caches_.emplace_back(in.name, vkc::DeviceTensor::upload(device, vkc::HostTensor(vkc::DType::f32, shape)));
      run_.output_into["present_" + in.name.substr(5)] = caches_.back().second;
    }
    vkc::check(!caches_.empty(), path, ": the model has no past_* cache inputs");
    // Compile now (timed apart from the tokens): the one module every step runs.
    auto t0 = Clock::now();
    model_.prepare(inputs(0, 0));
    compile_ms_ = seconds_since(t0) * 1e3;
  }

  vkc::Inputs inputs(int64_t token, int64_t pos) const {
    vkc::HostTensor t(vkc::DType::i64, {1}), p(vkc::DType::i64, {1});
    t.as<int64_t>()[0] = token;
    p.as<int64_t>()[0] = pos;
    vkc::Inputs in;
    in.set("token", t).set("pos", p);
    for (const auto& [name, cache] : caches_) in.set(name, cache);
    return in;
  }

  TopK step(int64_t token, int64_t pos) {
    vkc::Outputs out = model_.run(inputs(token, pos), run_);
    ++steps_;
    const vkc::HostTensor& v = out.at("topk_values");
    const vkc::HostTensor& i = out.at("topk_indices");
    return {std::vector<float>(v.as<float>(), v.as<float>() + v.numel()),
            std::vector<int64_t>(i.as<int64_t>(), i.as<int64_t>() + i.numel())};
  }

  int64_t context() const { return context_; }
  size_t compiles() const { return model_.specialization_count(); }
  double compile_ms() const { return compile_ms_; }
  int64_t steps() const { return steps_; }
  size_t dispatches() const { return model_.last_specialization().dispatches; }

 private:
  vkc::Device device_;
  vkc::ModelSession model_;
  std::vector<std::pair<std::string, vkc::DeviceTensor>> caches_;
  vkc::RunOptions run_;
  int64_t context_ = 0, steps_ = 0;
  double compile_ms_ = 0;
};

// Softmax over the K logits at `temperature`, then one draw from a seeded 64-bit Mersenne
// Twister (the draw's bits turned into [0,1) by hand, so every platform samples the same).
int64_t sample(const TopK& top, double temperature, std::mt19937_64& rng) {
  std::vector<double> w(top.values.size());
  double total = 0;
  for (size_t k = 0; k < w.size(); ++k) total += w[k] = std::exp((top.values[k] - top.values[0]) / temperature);
  double u = double(rng() >> 11) * 0x1.0p-53 * total;
  for (size_t k = 0; k < w.size(); ++k)
    if ((u -= w[k]) < 0) return top.indices[k];
  return top.indices.back();
}

struct Options {
  std::string model = VKC_CHARLM_DIR "/charlm_decode.onnx";
  std::string vocab;  // default: charlm_vocab.txt next to the model
  std::string prompt = "This program is free software";
  int64_t tokens = 200;
  uint64_t seed = 1;
  double temperature = 0.8;
  std::string check_dir;
  int64_t benchmark = 0;
};

// The vocabulary: one Unicode code point per line.
std::vector<std::string> read_vocab(const std::string& path) {
  std::ifstream f(path);
  vkc::check(f.good(), path, ": cannot read the vocabulary");
  std::vector<std::string> chars;
  for (uint32_t c; f >> c;) {
    std::string s;  // UTF-8
    if (c < 0x80) s += char(c);
    else if (c < 0x800) s += {char(0xC0 | (c >> 6)), char(0x80 | (c & 0x3F))};
    else s += {char(0xE0 | (c >> 12)), char(0x80 | ((c >> 6) & 0x3F)), char(0x80 | (c & 0x3F))};
    chars.push_back(s);
  }
  vkc::check(!chars.empty(), path, ": empty vocabulary");
  return chars;
}

std::vector<int64_t> encode(const std::string& text, const std::vector<std::string>& vocab) {
  std::vector<int64_t> ids;
  for (size_t i = 0; i < text.size();) {
    size_t len = (uint8_t(text[i]) < 0x80) ? 1 : (uint8_t(text[i]) < 0xE0) ? 2 : 3;
    std::string ch = text.substr(i, len);
    size_t id = 0;
    while (id < vocab.size() && vocab[id] != ch) ++id;
    vkc::check(id < vocab.size(), "--prompt: the character '", ch, "' (byte ", i, ") is not in the vocabulary");
    ids.push_back(int64_t(id));
    i += len;
  }
  return ids;
}

// Generates `count` tokens after `prompt`: returns them; `gen_seconds` is the time of the steps
// after the prompt (including re-feeds when the context fills).
std::vector<int64_t> generate(Decoder& dec, const std::vector<int64_t>& prompt, int64_t count, uint64_t seed,
                              double temperature, double* prompt_seconds, double* gen_seconds) {
  std::mt19937_64 rng(seed);
  std::vector<int64_t> history;
  TopK top;
  auto t0 = Clock::now();
  for (int64_t tok : prompt) {
    top = dec.step(tok, int64_t(history.size()));
    history.push_back(tok);
  }
  *prompt_seconds = seconds_since(t0);
  auto t1 = Clock::now();
  std::vector<int64_t> out;
  for (int64_t n = 0; n < count; ++n) {
    int64_t next = sample(top, temperature, rng);
    out.push_back(next);
    if (int64_t(history.size()) == dec.context()) {
      // Context full: keep the last T/2 tokens and feed them again from position 0.
      history.erase(history.begin(), history.end() - dec.context() / 2);
      for (int64_t p = 0; p < int64_t(history.size()); ++p) dec.step(history[p], p);
    }
    top = dec.step(next, int64_t(history.size()));
    history.push_back(next);
  }
  *gen_seconds = seconds_since(t1);
  return out;
}

std::string decode(const std::vector<int64_t>& ids, const std::vector<std::string>& vocab) {
  std::string s;
  for (int64_t id : ids) s += vocab.at(size_t(id));
  return s;
}

// Teacher-forced decode of export_onnx.py's reference tokens: every step's top K against the
// float64 numpy model (values within 1e-4 relative of the reference's top K and of the
// reference's logit at the index vkc chose).
int check_reference(Decoder& dec, const std::string& dir) {
  vkc::HostTensor tokens = vkc::read_npy(dir + "/ref_tokens.npy");
  vkc::HostTensor logits = vkc::read_npy(dir + "/ref_logits.npy");
  vkc::HostTensor ref_values = vkc::read_npy(dir + "/ref_topk_values.npy");
  const int64_t steps = tokens.numel(), vocab = logits.shape().at(1), k = ref_values.shape().at(1);
  vkc::check(steps <= dec.context(), dir, ": ", steps, " reference steps exceed the context ", dec.context());
  double worst = 0;
  int64_t bad = 0;
  for (int64_t pos = 0; pos < steps; ++pos) {
    TopK top = dec.step(int64_t(tokens.get_f64(pos)), pos);
    vkc::check(int64_t(top.values.size()) == k, "the model's K (", top.values.size(), ") is not the reference's (", k, ")");
    for (int64_t j = 0; j < k; ++j) {
      const double want = ref_values.get_f64(pos * k + j);
      const int64_t idx = top.indices[size_t(j)];
      const double at_idx = (idx >= 0 && idx < vocab) ? logits.get_f64(pos * vocab + idx) : NAN;
      const double err = std::max(std::fabs(top.values[size_t(j)] - want), std::fabs(top.values[size_t(j)] - at_idx)) /
                         std::max(1.0, std::fabs(want));
      if (!(err <= 1e-4)) {
        if (bad++ < 5)
          std::cerr << "step " << pos << " rank " << j << ": vkc " << top.values[size_t(j)] << " (index " << idx
                    << "), reference " << want << ", reference at vkc's index " << at_idx << "\n";
      }
      if (err > worst || std::isnan(err)) worst = std::isnan(err) ? INFINITY : err;
    }
  }
  std::cout << "reference check: " << steps << " decode steps, top-" << k << " values and indices, worst relative "
            << "error " << std::scientific << std::setprecision(2) << worst << std::defaultfloat << ": "
            << (bad ? "MISMATCH" : "ok") << "\n";
  return bad ? 1 : 0;
}

int run(const Options& o) {
  vkc::Device device;  // the best device (discrete > integrated > cpu), or VKC_DEVICE
  std::cout << "device: " << device.info().name << " (" << device.info().type << ")\n";
  Decoder dec(device, o.model);
  int rc = 0;
  if (!o.check_dir.empty()) rc |= check_reference(dec, o.check_dir);

  if (o.benchmark > 0) {  // any model of this form (no vocabulary): steps over the whole context
    std::mt19937_64 rng(o.seed);
    TopK top = dec.step(0, 0);  // the first execution also pays the driver's one-time work
    const int64_t n = std::min(o.benchmark, dec.context() - 1);
    auto t0 = Clock::now();
    for (int64_t pos = 1; pos <= n; ++pos) top = dec.step(sample(top, o.temperature, rng), pos);
    const double s = seconds_since(t0);
    std::cout << std::fixed << std::setprecision(1) << "benchmark: " << n << " decode steps (positions 1.." << n
              << " of a " << dec.context() << "-token cache) in " << s * 1e3 << " ms: " << n / s
              << " tokens/s, " << std::setprecision(3) << s * 1e3 / double(n) << " ms/token; compile "
              << std::setprecision(0) << dec.compile_ms() << " ms; " << dec.dispatches() << " dispatches per token\n";
  } else {
    std::string vocab_path = o.vocab;
    if (vocab_path.empty()) {
      size_t slash = o.model.find_last_of('/');
      vocab_path = (slash == std::string::npos ? std::string(".") : o.model.substr(0, slash)) + "/charlm_vocab.txt";
    }
    std::vector<std::string> vocab = read_vocab(vocab_path);
    std::vector<int64_t> prompt = encode(o.prompt, vocab);
    vkc::check(!prompt.empty() && int64_t(prompt.size()) < dec.context(), "--prompt: ", prompt.size(),
               " characters; it must have 1 to ", dec.context() - 1, " (the model's context is ", dec.context(), ")");
    double prompt_s = 0, gen_s = 0, again_p = 0, again_g = 0;
    const int64_t steps_before = dec.steps() + int64_t(prompt.size());
    std::vector<int64_t> text = generate(dec, prompt, o.tokens, o.seed, o.temperature, &prompt_s, &gen_s);
    const int64_t gen_steps = dec.steps() - steps_before;  // the tokens plus the re-feeds of a full context
    std::cout << "---\n" << o.prompt << decode(text, vocab) << "\n---\n";
    std::cout << std::fixed << std::setprecision(1) << "generated " << o.tokens << " tokens in " << gen_s * 1e3
              << " ms: " << double(o.tokens) / gen_s << " tokens/s (" << gen_steps << " decode steps with the re-feeds of "
              << "a full context: " << double(gen_steps) / gen_s << " steps/s; context " << dec.context() << ", "
              << dec.dispatches() << " dispatches per step); prompt " << prompt.size() << " tokens in "
              << prompt_s * 1e3 << " ms; compile " << std::setprecision(0) << dec.compile_ms() << " ms\n";
    if (!o.check_dir.empty()) {
      // The same seed again, over the caches the first run left (stale positions must be masked).
      std::vector<int64_t> again = generate(dec, prompt, o.tokens, o.seed, o.temperature, &again_p, &again_g);
      const bool same = again == text;
      std::cout << "same seed again: " << (same ? "the same text" : "DIFFERENT text") << "\n";
      rc |= same ? 0 : 1;
    }
  }
  std::cout << "decode steps: " << dec.steps() << ", compiled modules: " << dec.compiles() << "\n";
  if (dec.compiles() != 1) {
    std::cerr << "vkc-sample-charlm: error: " << dec.compiles() << " compiled modules, expected exactly one\n";
    rc = 1;
  }
  return rc;
}

const char* kUsage =
    "usage: vkc-sample-charlm [--prompt TEXT] [--tokens N] [--seed S] [--temperature T]\n"
    "                         [--model FILE.onnx] [--vocab FILE] [--check DIR] [--benchmark N]\n"
    "  Generates N (200) characters after the prompt with the charlm decode-step model\n"
    "  (default: " VKC_CHARLM_DIR "/charlm_decode.onnx), sampling among the graph's top K.\n"
    "  --check DIR     compare every step with export_onnx.py --reference DIR, generate twice with\n"
    "                  the same seed and compare; exit 1 on any difference\n"
    "  --benchmark N   time N decode steps of any model of this form (no vocabulary needed)\n"
    "  Reads only; writes no files.\n";

}  // namespace

int main(int argc, char** argv) {
  try {
    Options o;
    for (int i = 1; i < argc; ++i) {
      std::string a = argv[i];
      if (a == "--help" || a == "-h") {
        std::cout << kUsage;
        return 0;
      }
      auto value = [&]() -> std::string {
        vkc::check(i + 1 < argc, a, ": missing value (see --help)");
        return argv[++i];
      };
      auto number = [&](double lo) {
        std::string v = value();
        size_t used = 0;
        double x = 0;
        try {
          x = std::stod(v, &used);
        } catch (const std::exception&) {
          used = 0;
        }
        vkc::check(used == v.size() && x >= lo, a, ": '", v, "' is not a number >= ", lo);
        return x;
      };
      if (a == "--prompt") o.prompt = value();
      else if (a == "--tokens") o.tokens = int64_t(number(0));
      else if (a == "--seed") o.seed = uint64_t(number(0));
      else if (a == "--temperature") o.temperature = number(1e-3);
      else if (a == "--model") o.model = value();
      else if (a == "--vocab") o.vocab = value();
      else if (a == "--check") o.check_dir = value();
      else if (a == "--benchmark") o.benchmark = int64_t(number(1));
      else throw vkc::Error("unknown option '" + a + "' (see --help)");
    }
    return run(o);
  } catch (const std::exception& e) {
    std::cerr << "vkc-sample-charlm: error: " << e.what() << "\n";
    return 1;
  }
}
