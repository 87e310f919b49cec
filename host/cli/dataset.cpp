// `run --inputs-dir DIR` / `--inputs-list FILE`: a dataset through one model, one output file
// (and node_io file) per sample, each written under a temporary name and renamed when
// complete, so an interrupted run leaves only whole files and `--resume` can go on.
#include "commands.hpp"
#include "tensor_files.hpp"

#include <switchyard/runtime.hpp>

#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>

namespace fs = std::filesystem;

namespace switchyard::cli {
namespace {

volatile std::sig_atomic_t g_interrupted = 0;

void on_interrupt(int signal) {
  g_interrupted = 1;
  std::signal(signal, SIG_DFL);  // a second Ctrl-C ends the process at once
}

bool is_tensor_file(const fs::path& p) {
  const std::string ext = p.extension().string();
  return ext == ".pt" || ext == ".pth" || ext == ".json";
}

std::vector<fs::path> list_samples(const DatasetFlags& flags) {
  std::vector<fs::path> samples;
  if (!flags.dir.empty()) {
    if (!fs::is_directory(flags.dir)) throw Error(ErrorKind::Io, "--inputs-dir " + flags.dir + ": not a folder");
    for (const auto& entry : fs::directory_iterator(flags.dir))
      if (entry.is_regular_file() && is_tensor_file(entry.path()) && entry.path().filename().string()[0] != '.')
        samples.push_back(entry.path());
    std::sort(samples.begin(), samples.end());
    if (samples.empty())
      throw Error(ErrorKind::Io, "--inputs-dir " + flags.dir + ": no .pt, .pth or .json files in it");
    return samples;
  }
  std::ifstream in(flags.list);
  if (!in) throw Error(ErrorKind::Io, "--inputs-list " + flags.list + ": cannot be read");
  const fs::path base = fs::path(flags.list).parent_path();
  std::string line;
  while (std::getline(in, line)) {
    const size_t b = line.find_first_not_of(" \t\r"), e = line.find_last_not_of(" \t\r");
    if (b == std::string::npos || line[b] == '#') continue;  // blank lines and comments
    fs::path p = line.substr(b, e - b + 1);
    samples.push_back(p.is_absolute() ? p : base / p);
  }
  if (samples.empty()) throw Error(ErrorKind::Io, "--inputs-list " + flags.list + ": lists no files");
  return samples;
}

std::string clock_time(double seconds) {
  const long s = static_cast<long>(seconds + 0.5);
  char buf[32];
  if (s >= 3600)
    std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
  else
    std::snprintf(buf, sizeof buf, "%ld:%02ld", s / 60, s % 60);
  return buf;
}

// Writes through `write` to a hidden temporary beside `path`, then renames it into place.
template <typename Write>
void write_atomically(const fs::path& path, Write write) {
  const fs::path tmp = path.parent_path() / ("." + path.stem().string() + ".partial" + path.extension().string());
  try {
    write(tmp.string());
    fs::rename(tmp, path);
  } catch (...) {
    std::error_code ignored;
    fs::remove(tmp, ignored);
    throw;
  }
}

}  // namespace

int cmd_run_dataset(const CommonFlags& common, const RunFlags& flags, const DatasetFlags& dataset) {
  if (flags.save_outputs.empty())
    throw Error(ErrorKind::Config, "a dataset run writes one output file per sample: pass --save-outputs OUTDIR");
  if (!flags.save_node_io.empty())
    throw Error(ErrorKind::Config,
                "a dataset run writes node_io beside the outputs (--node-io all|outputs|stream), "
                "not to --save-node-io");
  if (flags.repeat > 0 || flags.profile || !flags.trace.empty() || flags.memory)
    throw Error(ErrorKind::Config,
                "--repeat, --profile, --trace and --memory time one input; "
                "they do not combine with --inputs-dir/--inputs-list");
  const std::string ext =
      "." + (dataset.format.empty() ? std::string(have_torchscript() ? "pt" : "json") : dataset.format);
  if (ext == ".pt" && !have_torchscript())
    throw Error(ErrorKind::Config, "--output-format pt needs a build with LibTorch; use json");
  std::string capture = flags.capture;
  if (capture.empty()) capture = config_capture(common.config);  // the config's [runtime] node_io
  const bool stream = capture == "stream";
  const bool node_io = stream || capture == "all" || capture == "outputs";
  if (stream && ext != ".pt")
    throw Error(ErrorKind::Config, "--node-io stream writes .pt files: use --output-format pt");

  const std::vector<fs::path> samples = list_samples(dataset);
  std::map<std::string, fs::path> by_stem;  // output names must not collide
  for (const auto& s : samples) {
    auto [it, fresh] = by_stem.emplace(s.stem().string(), s);
    if (!fresh)
      throw Error(ErrorKind::Input, "samples " + it->second.string() + " and " + s.string() + " would both write " +
                                        s.stem().string() + ext + ": rename one");
  }
  const fs::path out_dir = flags.save_outputs;
  fs::create_directories(out_dir);
  size_t stale = 0;  // temporaries of a run that was killed
  for (const auto& entry : fs::directory_iterator(out_dir)) {
    const std::string name = entry.path().filename().string();
    if (name[0] == '.' && name.find(".partial.") != std::string::npos) stale += fs::remove(entry.path());
  }
  if (stale > 0) std::printf("removed %zu incomplete file(s) left by an interrupted run\n", stale);

  Runtime runtime(to_options(common, capture));
  auto model = runtime.load(flags.model);
  std::unique_ptr<NodeIoStream> io_stream;
  if (stream) model->set_node_callback([&](const NodeEvent& e) { io_stream->write(e); });

  const bool progress = !dataset.no_progress && isatty(STDERR_FILENO);
  g_interrupted = 0;
  auto old_int = std::signal(SIGINT, on_interrupt);
  auto old_term = std::signal(SIGTERM, on_interrupt);
  size_t done = 0, already = 0;
  std::vector<std::string> failed;
  const auto t0 = std::chrono::steady_clock::now();
  auto show_progress = [&](size_t i) {
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double rate = secs > 0 ? done / secs : 0;
    const size_t left = samples.size() - i;
    std::fprintf(stderr, "\r\033[K%zu/%zu  %.1f samples/s  ETA %s", i, samples.size(), rate,
                 rate > 0 ? clock_time(left / rate).c_str() : "?");
  };
  for (size_t i = 0; i < samples.size() && !g_interrupted; ++i) {
    const fs::path& sample = samples[i];
    const fs::path out = out_dir / (sample.stem().string() + ext);
    if (dataset.resume && fs::exists(out)) {
      ++already;
      continue;
    }
    try {
      const std::vector<Tensor> inputs = read_inputs(sample.string(), *model);
      std::vector<Tensor> outputs;
      const fs::path io_path = out_dir / (sample.stem().string() + ".node_io" + ext);
      if (stream) {
        write_atomically(io_path, [&](const std::string& tmp) {
          io_stream = open_node_io_stream(tmp);
          try {
            outputs = model->run(inputs);
          } catch (...) {
            io_stream.reset();  // closes the file, which write_atomically removes
            throw;
          }
          io_stream->finish();
          io_stream.reset();
        });
      } else {
        outputs = model->run(inputs);
        if (node_io) write_atomically(io_path, [&](const std::string& tmp) { write_node_io(tmp, model->node_io()); });
      }
      // The output file last: its presence means the sample is complete (--resume).
      write_atomically(out, [&](const std::string& tmp) { write_outputs(tmp, model->output_names(), outputs); });
      ++done;
    } catch (const Error& e) {
      if (progress) std::fprintf(stderr, "\r\033[K");
      if (dataset.on_error == "stop") {
        std::signal(SIGINT, old_int);
        std::signal(SIGTERM, old_term);
        throw Error(e.kind(), "sample " + sample.string() + " (" + std::to_string(i + 1) + " of " +
                                  std::to_string(samples.size()) + "): " + e.what() +
                                  "\n(--on-error skip goes on past bad samples; --resume skips those done)");
      }
      std::fprintf(stderr, "error: sample %s: %s (skipped)\n", sample.string().c_str(), e.what());
      failed.push_back(sample.string());
    }
    if (progress) show_progress(i + 1);
  }
  std::signal(SIGINT, old_int);
  std::signal(SIGTERM, old_term);
  if (progress) std::fprintf(stderr, "\r\033[K");
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("dataset: %zu sample(s): %zu run, %zu already done (--resume), %zu failed; %.2f s, %.1f samples/s\n",
              samples.size(), done, already, failed.size(), secs, secs > 0 ? done / secs : 0.0);
  std::printf("outputs%s in %s/ (<sample>%s%s)\n", node_io ? " and node_io" : "", out_dir.string().c_str(), ext.c_str(),
              node_io ? (", <sample>.node_io" + ext).c_str() : "");
  if (g_interrupted) {
    const size_t left = samples.size() - done - already - failed.size();
    std::fprintf(stderr, "interrupted: %zu sample(s) not run; rerun with --resume to go on\n", left);
    return 130;
  }
  if (!failed.empty()) {
    std::fprintf(stderr, "%zu sample(s) failed:\n", failed.size());
    for (const auto& f : failed) std::fprintf(stderr, "  %s\n", f.c_str());
    return 1;
  }
  return 0;
}

}  // namespace switchyard::cli
