// oneDNN alone, on a ResNet block tail's 1x1 convolution with its residual: what the conv
// plugin's choice between oneDNN's sum post-op and its own split epilogue rests on
// (plugins/conv/split_epilogue.cpp). Four ways to compute relu(conv(x) + residual):
//   bare          the convolution alone (no residual, no relu): the floor
//   nhwc sum      oneDNN's sum and relu post-ops in nhwc (brgemm convolutions here)
//   nChw16c sum   the same in nChw16c (oneDNN's direct jit kernels)
//   nhwc split    the bare convolution an image at a time into scratch, then a loop
// Every run reads and writes buffers that the previous few runs did not touch (six sets
// in turn), as in a network whose activations outgrow the cache. The median and min of
// --runs runs each, ways interleaved per run. A benchmark, not a test.
//
//   bench_conv_epilogue --batch 8 --ic 64 --oc 256 --hw 56 --threads 2
#include <oneapi/dnnl/dnnl.hpp>

#include <omp.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace {

using dnnl::memory;
using tag = memory::format_tag;

struct Way {
  std::string name;
  std::function<void(int set)> run;
  std::vector<double> ms;
  std::string impl;
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"oneDNN: a 1x1 convolution + residual + relu, fused in nhwc or nChw16c, or split"};
  int64_t batch = 8, ic = 64, oc = 256, hw = 56;
  int runs = 30, threads = 2;
  app.add_option("--batch", batch, "images")->capture_default_str();
  app.add_option("--ic", ic, "input channels")->capture_default_str();
  app.add_option("--oc", oc, "output channels")->capture_default_str();
  app.add_option("--hw", hw, "height and width")->capture_default_str();
  app.add_option("--runs", runs, "timed runs per way")->capture_default_str();
  app.add_option("--threads", threads, "OpenMP threads")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  omp_set_num_threads(threads);

  constexpr int kSets = 6;
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream s(eng);
  const auto f32 = memory::data_type::f32;
  auto conv_for = [&](tag t, int64_t n, bool sum, std::string* impl) {
    memory::desc src({n, ic, hw, hw}, f32, t), dst({n, oc, hw, hw}, f32, t);
    memory::desc w({oc, ic, 1, 1}, f32, tag::any), b({oc}, f32, tag::a);
    dnnl::post_ops ops;
    if (sum) {
      ops.append_sum(1.f);
      ops.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
    }
    dnnl::primitive_attr attr;
    attr.set_post_ops(ops);
    dnnl::convolution_forward::primitive_desc pd({dnnl::prop_kind::forward_inference,
                                                  dnnl::algorithm::convolution_direct,
                                                  src,
                                                  w,
                                                  b,
                                                  dst,
                                                  {1, 1},
                                                  {0, 0},
                                                  {0, 0}},
                                                 attr, eng);
    *impl = pd.impl_info_str();
    return pd;
  };
  auto filled = [&](const memory::desc& md) {
    memory m(md, eng);
    float* p = static_cast<float*>(m.get_data_handle());
    for (size_t i = 0; i < md.get_size() / sizeof(float); ++i) p[i] = static_cast<float>(i % 7) * 0.01f - 0.02f;
    return m;
  };

  std::vector<Way> ways;
  auto fused = [&](const std::string& name, tag t, bool sum) {
    Way way{name, nullptr, {}, ""};
    auto pd = conv_for(t, batch, sum, &way.impl);
    auto conv = std::make_shared<dnnl::convolution_forward>(pd);
    auto w = std::make_shared<memory>(filled(pd.weights_desc()));
    auto b = std::make_shared<memory>(filled(pd.bias_desc()));
    auto src = std::make_shared<std::vector<memory>>(), dst = std::make_shared<std::vector<memory>>();
    for (int i = 0; i < kSets; ++i) {
      src->push_back(filled(pd.src_desc()));
      dst->push_back(filled(pd.dst_desc()));
    }
    way.run = [=, &s](int set) {
      conv->execute(
          s, {{DNNL_ARG_SRC, (*src)[set]}, {DNNL_ARG_WEIGHTS, *w}, {DNNL_ARG_BIAS, *b}, {DNNL_ARG_DST, (*dst)[set]}});
    };
    ways.push_back(std::move(way));
  };
  fused("bare", tag::nhwc, false);
  fused("nhwc sum", tag::nhwc, true);
  fused("nChw16c sum", tag::nChw16c, true);
  {
    Way way{"nhwc split", nullptr, {}, ""};
    auto pd = conv_for(tag::nhwc, 1, false, &way.impl);
    auto conv = std::make_shared<dnnl::convolution_forward>(pd);
    auto w = std::make_shared<memory>(filled(pd.weights_desc()));
    auto b = std::make_shared<memory>(filled(pd.bias_desc()));
    auto scratch = std::make_shared<memory>(filled(pd.dst_desc()));
    memory::desc all_src({batch, ic, hw, hw}, f32, tag::nhwc), all_dst({batch, oc, hw, hw}, f32, tag::nhwc);
    auto src = std::make_shared<std::vector<memory>>(), dst = std::make_shared<std::vector<memory>>();
    for (int i = 0; i < kSets; ++i) {
      src->push_back(filled(all_src));
      dst->push_back(filled(all_dst));
    }
    const int64_t in_image = ic * hw * hw, out_image = oc * hw * hw;
    way.run = [=, &s, &eng](int set) {
      float* y = static_cast<float*>((*dst)[set].get_data_handle());
      const float* c = static_cast<const float*>(scratch->get_data_handle());
      for (int64_t n = 0; n < batch; ++n) {
        memory x(pd.src_desc(), eng, static_cast<float*>((*src)[set].get_data_handle()) + n * in_image);
        conv->execute(s, {{DNNL_ARG_SRC, x}, {DNNL_ARG_WEIGHTS, *w}, {DNNL_ARG_BIAS, *b}, {DNNL_ARG_DST, *scratch}});
        s.wait();
        float* o = y + n * out_image;
#pragma omp parallel for simd schedule(static)
        for (int64_t i = 0; i < out_image; ++i) {
          const float v = c[i] + o[i];
          o[i] = v > 0.f || v != v ? v : 0.f;
        }
      }
    };
    ways.push_back(std::move(way));
  }

  for (int r = -3; r < runs; ++r)  // three warm-up rounds
    for (Way& way : ways) {
      const auto t0 = std::chrono::steady_clock::now();
      way.run((r + 3) % kSets);
      s.wait();
      const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      if (r >= 0) way.ms.push_back(ms);
    }
  std::printf("1x1 convolution [%ld, %ld, %ld, %ld] -> %ld channels, + residual + relu; %d threads, %d runs\n\n",
              static_cast<long>(batch), static_cast<long>(ic), static_cast<long>(hw), static_cast<long>(hw),
              static_cast<long>(oc), threads, runs);
  std::printf("| way | oneDNN implementation | median ms | min ms |\n|---|---|---|---|\n");
  for (Way& way : ways) {
    std::sort(way.ms.begin(), way.ms.end());
    std::printf("| %s | %s | %.3f | %.3f |\n", way.name.c_str(), way.impl.c_str(), way.ms[way.ms.size() / 2],
                way.ms[0]);
  }
  return 0;
}
