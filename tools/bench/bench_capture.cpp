// What node_io capture costs on the model zoo, on configs/default.toml: a plain run
// (capture none) against capture "all" (every node's inputs and outputs kept in memory),
// "all" then saved as a .pt file, and "stream" (each record written to a .pt file as its
// node runs). Medians of interleaved runs; markdown on stdout. A benchmark, not a test.
//
//   bench_capture --zoo build/zoo [--models resnet18] [--batch 1] [--runs 10] [--dir /tmp]
#include "bench_util.hpp"

#include <CLI/CLI.hpp>

#include <filesystem>
#include <fstream>
#include <set>

using namespace sybench;

namespace {

struct Mode {
  std::string name;
  std::unique_ptr<switchyard::Runtime> runtime;
  std::unique_ptr<switchyard::Model> model;
  std::function<void()> forward;
  std::vector<double> ms;
};

switchyard::Options options(const std::string& config, const std::string& capture) {
  switchyard::Options o = with_config(config);
  o.capture = capture;
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  std::string zoo, config = SWITCHYARD_BENCH_SOURCE_DIR "/configs/default.toml";
  const char* zoo_env = std::getenv("SWITCHYARD_ZOO_DIR");
  zoo = zoo_env != nullptr ? zoo_env : SWITCHYARD_BENCH_ZOO_DIR;
  std::string dir = std::filesystem::temp_directory_path().string();
  std::vector<std::string> models;
  int batch = 1, runs = 10, warmup = 2;
  CLI::App app{"node_io capture cost on the model zoo (markdown on stdout)"};
  app.add_option("--zoo", zoo, "model zoo directory (zoo.json)")->capture_default_str();
  app.add_option("--config", config, "switchyard's config")->capture_default_str()->check(CLI::ExistingFile);
  app.add_option("--models", models, "zoo stems to run (default: all)")->delimiter(',');
  app.add_option("--batch", batch, "batch size")->capture_default_str();
  app.add_option("--runs", runs, "timed runs per mode (median)")->capture_default_str()->check(CLI::Range(1, 100000));
  app.add_option("--warmup", warmup, "untimed runs first")->capture_default_str()->check(CLI::Range(1, 1000));
  app.add_option("--dir", dir, "where the node_io files go (deleted after)")->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  std::ifstream zoo_file(zoo + "/zoo.json");
  if (!zoo_file) {
    std::fprintf(stderr, "error: %s/zoo.json not found (build the zoo: cmake --build BUILD --target zoo)\n",
                 zoo.c_str());
    return 1;
  }
  const nlohmann::json index = nlohmann::json::parse(zoo_file);
  switchyard::torchscript::register_loader();
  const std::string all_file = dir + "/bench_capture.all.pt", stream_file = dir + "/bench_capture.stream.pt";

  std::printf(
      "Batch %d, %s. Median of %d timed runs after %d warm-ups, modes interleaved. \"all\" and \"stream\" "
      "run unfused and without the activation arena (capture needs every node's tensors); the files go to "
      "%s.\n\n",
      batch, config.c_str(), runs, warmup, dir.c_str());
  std::printf(
      "| model | none ms | all ms | all + save ms | stream ms | all / none | all + save / none | "
      "stream / none | node_io file |\n|---|---|---|---|---|---|---|---|---|\n");
  std::fflush(stdout);
  const std::set<std::string> wanted(models.begin(), models.end());
  for (const auto& entry : index["models"]) {
    const std::string stem = entry["stem"];
    if (!wanted.empty() && !wanted.count(stem)) continue;
    std::fprintf(stderr, "%s batch %d\n", stem.c_str(), batch);
    try {
      const std::vector<switchyard::Tensor> inputs = zoo_inputs(zoo, entry, batch);
      const std::string path = zoo + "/" + stem + ".pt";
      std::vector<Mode> modes;
      for (const char* m : {"none", "all", "all + save", "stream"}) {
        Mode mode;
        mode.name = m;
        const std::string capture = mode.name == "none" ? "none" : mode.name == "stream" ? "stream" : "all";
        mode.runtime = std::make_unique<switchyard::Runtime>(options(config, capture));
        mode.model = mode.runtime->load(path);
        switchyard::Model* model = mode.model.get();
        if (mode.name == "all + save")
          mode.forward = [model, &inputs, &all_file] {
            model->run(inputs);
            switchyard::torchscript::save_node_io(all_file, model->node_io());
          };
        else if (mode.name == "stream")
          mode.forward = [model, &inputs, &stream_file] {
            switchyard::torchscript::NodeIoStreamWriter writer(stream_file);
            model->set_node_callback([&writer](const switchyard::NodeEvent& e) { writer.write(e); });
            model->run(inputs);
            writer.finish();
          };
        else
          mode.forward = [model, &inputs] { model->run(inputs); };
        modes.push_back(std::move(mode));
      }
      for (auto& m : modes)
        for (int i = 0; i < warmup; ++i) m.forward();
      for (int r = 0; r < runs; ++r)
        for (auto& m : modes) m.ms.push_back(time_ms(m.forward));
      const double none = median(modes[0].ms);
      for (const auto& m : modes) std::fprintf(stderr, "  %-12s median %10.3f ms\n", m.name.c_str(), median(m.ms));
      const double file_mib = static_cast<double>(std::filesystem::file_size(stream_file)) / (1024.0 * 1024.0);
      std::printf("| %s | %s | %s | %s | %s | %s | %s | %s | %s MiB |\n", stem.c_str(), fmt(none).c_str(),
                  fmt(median(modes[1].ms)).c_str(), fmt(median(modes[2].ms)).c_str(), fmt(median(modes[3].ms)).c_str(),
                  fmt(median(modes[1].ms) / none).c_str(), fmt(median(modes[2].ms) / none).c_str(),
                  fmt(median(modes[3].ms) / none).c_str(), fmt(file_mib, 1).c_str());
    } catch (const std::exception& e) {
      std::printf("| %s | failed: %.300s | | | | | | | |\n", stem.c_str(), e.what());
    }
    std::fflush(stdout);
    std::filesystem::remove(all_file);
    std::filesystem::remove(stream_file);
  }
  return 0;
}
