// Profiles as Chrome traces (the JSON "traceEvents" format that Perfetto reads).
#include <switchyard/runtime.hpp>

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstring>
#include <fstream>

namespace switchyard {

void write_chrome_trace(const std::string& path, const std::vector<NodeProfile>& profile) {
  nlohmann::json events = nlohmann::json::array();
  for (const NodeProfile& p : profile)
    events.push_back({{"name", p.node},
                      {"cat", p.backend.empty() ? "unknown" : p.backend},
                      {"ph", "X"},  // a complete event: start and duration
                      {"ts", p.start_ms * 1e3},
                      {"dur", p.duration_ms * 1e3},
                      {"pid", 1},
                      {"tid", p.lane + 1},  // one track per worker
                      {"args", {{"op", p.op}, {"module_path", p.module_path}}}});
  nlohmann::json trace = {{"traceEvents", std::move(events)}, {"displayTimeUnit", "ms"}};
  std::ofstream out(path);
  if (out) out << trace.dump(1) << '\n';
  if (!out) throw Error(ErrorKind::Io, path + ": cannot write the trace file (" + std::strerror(errno) + ")");
}

}  // namespace switchyard
