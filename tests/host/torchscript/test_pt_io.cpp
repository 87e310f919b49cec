// .pt tensor files: round trips through switchyard, files Python's torch.save wrote, files
// Python's torch.load must read (checked by running Debian's /usr/bin/python3), node_io
// dicts, clear errors for bad files, and LibTorch's reference forward.
#include <switchyard/sdk.h>
#include <switchyard/torchscript.hpp>

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

using namespace switchyard;
namespace fs = std::filesystem;
namespace ts = switchyard::torchscript;

namespace {

const DLDataType kF32{kDLFloat, 32, 1}, kF64{kDLFloat, 64, 1}, kF16{kDLFloat, 16, 1};
const DLDataType kBF16{kDLBfloat, 16, 1}, kI8{kDLInt, 8, 1}, kI16{kDLInt, 16, 1};
const DLDataType kI32{kDLInt, 32, 1}, kI64{kDLInt, 64, 1}, kU8{kDLUInt, 8, 1};
const DLDataType kBool{SY_DL_BOOL, 8, 1};
const char* kPython = "/usr/bin/python3";

bool python_has_torch() {
  static const bool ok = std::system("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1") == 0;
  return ok;
}

class PtIo : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "sy_pt_io_XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (fs::path(dir_) / name).string(); }

  // Runs a Python script (torch imported, `sys` too) with the temp dir as argv[1]; returns
  // its exit code and captures its output in `out`.
  int python(const std::string& body, std::string* out = nullptr) {
    const std::string script = path("script.py"), log = path("script.log");
    std::ofstream(script) << "import sys, torch\nd = sys.argv[1]\n" << body << "\n";
    const std::string cmd = std::string(kPython) + " " + script + " " + dir_ + " > " + log + " 2>&1";
    int rc = std::system(cmd.c_str());
    std::ifstream in(log);
    std::stringstream s;
    s << in.rdbuf();
    if (out) *out = s.str();
    if (rc != 0) std::fprintf(stderr, "python said:\n%s\n", s.str().c_str());
    return rc;
  }

  std::string dir_;
};

#define REQUIRE_PYTHON() \
  if (!python_has_torch()) GTEST_SKIP() << "missing resource: /usr/bin/python3 with torch is not available"

// A tensor of `dtype` whose bytes are a simple pattern (bool: 0/1; floats: exact values).
Tensor pattern(DLDataType dtype, std::vector<int64_t> shape) {
  Tensor t = Tensor::empty(dtype, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (same_dtype(dtype, kF32))
      t.data<float>()[i] = 0.5f * static_cast<float>(i) - 1.0f;
    else if (same_dtype(dtype, kF64))
      t.data<double>()[i] = 0.25 * static_cast<double>(i) - 2.0;
    else if (same_dtype(dtype, kF16))
      t.data<uint16_t>()[i] = static_cast<uint16_t>(0x3C00 + i);  // 1.0 + i ulp
    else if (same_dtype(dtype, kBF16))
      t.data<uint16_t>()[i] = static_cast<uint16_t>(0x3F80 + i);
    else if (same_dtype(dtype, kI8))
      t.data<int8_t>()[i] = static_cast<int8_t>(i - 3);
    else if (same_dtype(dtype, kI16))
      t.data<int16_t>()[i] = static_cast<int16_t>(i * 100 - 300);
    else if (same_dtype(dtype, kI32))
      t.data<int32_t>()[i] = static_cast<int32_t>(i * 1000 - 5);
    else if (same_dtype(dtype, kI64))
      t.data<int64_t>()[i] = (int64_t{1} << 40) + i;
    else if (same_dtype(dtype, kU8))
      t.data<uint8_t>()[i] = static_cast<uint8_t>(250 - i);
    else if (same_dtype(dtype, kBool))
      t.data<uint8_t>()[i] = static_cast<uint8_t>(i % 3 == 0);
  }
  return t;
}

void expect_same(const Tensor& a, const Tensor& b, const std::string& what) {
  ASSERT_TRUE(same_dtype(a.dtype(), b.dtype()))
      << what << ": " << dtype_name(a.dtype()) << " vs " << dtype_name(b.dtype());
  ASSERT_EQ(a.shape(), b.shape()) << what;
  Tensor ca = a.contiguous(), cb = b.contiguous();
  if (ca.nbytes() > 0)  // memcmp must not see the NULL data of an empty tensor
    EXPECT_EQ(std::memcmp(ca.raw_data(), cb.raw_data(), ca.nbytes()), 0) << what << ": values differ";
}

const std::vector<DLDataType> kAllDtypes{kF32, kF64, kF16, kBF16, kI8, kI16, kI32, kI64, kU8, kBool};

}  // namespace

TEST_F(PtIo, RoundTripsOneTensor) {
  Tensor t = pattern(kF32, {2, 3});
  ts::save_tensors(path("one.pt"), {t}, /*single=*/true);
  auto back = ts::load_tensors(path("one.pt"));
  ASSERT_EQ(back.size(), 1u);
  expect_same(back[0], t, "single");
  EXPECT_TRUE(back[0].is_contiguous());
}

TEST_F(PtIo, RoundTripsEveryDtypeInATuple) {
  std::vector<Tensor> tensors;
  for (DLDataType d : kAllDtypes) tensors.push_back(pattern(d, {2, 5}));
  tensors.push_back(pattern(kF32, {}));      // a 0-d tensor
  tensors.push_back(pattern(kI64, {0, 3}));  // an empty one
  ts::save_tensors(path("all.pt"), tensors);
  auto back = ts::load_tensors(path("all.pt"));
  ASSERT_EQ(back.size(), tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) expect_same(back[i], tensors[i], dtype_name(tensors[i].dtype()));
  EXPECT_EQ(back[kAllDtypes.size() - 1].dtype().code, SY_DL_BOOL);
}

TEST_F(PtIo, SavesStridedTensorsInLogicalOrder) {
  Tensor base = pattern(kF32, {3, 4});
  // The transpose [4, 3] of `base`, a view with strides (1, 4), plus a view at an offset.
  Tensor view = Tensor::from_blob(base.raw_data(), kF32, {4, 3}, {1, 4}, [keep = base] {});
  Tensor row = Tensor::from_blob(base.data<float>() + 4, kF32, {4}, {}, [keep = base] {});
  ts::save_tensors(path("view.pt"), {view, row});
  auto back = ts::load_tensors(path("view.pt"));
  ASSERT_EQ(back.size(), 2u);
  expect_same(back[0], view, "transposed view");
  expect_same(back[1], row, "offset view");
}

TEST_F(PtIo, PythonReadsWhatWeSave) {
  REQUIRE_PYTHON();
  std::vector<Tensor> tensors;
  for (DLDataType d : kAllDtypes) tensors.push_back(pattern(d, {2, 5}));
  Tensor base = pattern(kF32, {3, 4});
  tensors.push_back(Tensor::from_blob(base.raw_data(), kF32, {4, 3}, {1, 4}, [keep = base] {}));
  ts::save_tensors(path("tuple.pt"), tensors);
  ts::save_tensors(path("single.pt"), {pattern(kF64, {3})}, true);
  EXPECT_EQ(python(R"(
for weights_only in (False, True):
    t = torch.load(d + "/tuple.pt", weights_only=weights_only)
    assert isinstance(t, tuple) and len(t) == 11, type(t)
    want = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int8, torch.int16,
            torch.int32, torch.int64, torch.uint8, torch.bool]
    assert [x.dtype for x in t[:10]] == want, [x.dtype for x in t]
    assert all(x.shape == (2, 5) for x in t[:10])
    assert t[0].flatten().tolist() == [0.5 * i - 1 for i in range(10)], t[0]
    assert t[7].flatten().tolist() == [(1 << 40) + i for i in range(10)]
    assert t[8].flatten().tolist() == [250 - i for i in range(10)]
    assert t[9].flatten().tolist() == [i % 3 == 0 for i in range(10)], t[9]
    assert t[2][0, 0].item() == 1.0 and t[3][0, 0].item() == 1.0
    base = torch.arange(12, dtype=torch.float32).reshape(3, 4) * 0.5 - 1
    assert torch.equal(t[10], base.t()), t[10]
    s = torch.load(d + "/single.pt", weights_only=weights_only)
    assert torch.is_tensor(s) and s.dtype == torch.float64 and s.tolist() == [-2.0, -1.75, -1.5]
print("ok")
)"),
            0);
}

TEST_F(PtIo, LoadsWhatPythonSaves) {
  REQUIRE_PYTHON();
  ASSERT_EQ(python(R"(
x = torch.arange(6, dtype=torch.float32).reshape(2, 3)
torch.save(x, d + "/one.pt")
torch.save((x.t(), torch.tensor([True, False, True]), torch.arange(4, dtype=torch.int64),
            torch.tensor([1.5, -2], dtype=torch.float16), torch.tensor([3.0], dtype=torch.bfloat16),
            torch.ones(2, requires_grad=True), torch.arange(10)[2:5]), d + "/tuple.pt")
torch.save([x, x + 1], d + "/list.pt")
torch.save({"x": x}, d + "/dict.pt")
torch.save((x, 3), d + "/mixed.pt")
)"),
            0);
  auto one = ts::load_tensors(path("one.pt"));
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(one[0].data<float>()[5], 5.0f);

  auto t = ts::load_tensors(path("tuple.pt"));
  ASSERT_EQ(t.size(), 7u);
  EXPECT_EQ(t[0].shape(), (std::vector<int64_t>{3, 2}));
  EXPECT_TRUE(t[0].is_contiguous());
  EXPECT_EQ(t[0].data<float>()[1], 3.0f);  // x.t()[0, 1] = x[1, 0]
  EXPECT_TRUE(same_dtype(t[1].dtype(), kBool));
  EXPECT_EQ(t[1].data<uint8_t>()[0], 1);
  EXPECT_EQ(t[1].data<uint8_t>()[1], 0);
  EXPECT_TRUE(same_dtype(t[2].dtype(), kI64));
  EXPECT_EQ(t[2].data<int64_t>()[3], 3);
  EXPECT_TRUE(same_dtype(t[3].dtype(), kF16));
  EXPECT_EQ(t[3].data<uint16_t>()[0], 0x3E00);  // 1.5 in half
  EXPECT_TRUE(same_dtype(t[4].dtype(), kBF16));
  EXPECT_EQ(t[4].data<uint16_t>()[0], 0x4040);  // 3.0 in bfloat16
  EXPECT_EQ(t[5].data<float>()[1], 1.0f);
  EXPECT_EQ(t[6].shape(), (std::vector<int64_t>{3}));
  EXPECT_EQ(t[6].data<int64_t>()[0], 2);  // storage offset honoured

  // Lists load where LibTorch can read them; otherwise the error says to save a tuple.
  try {
    auto list = ts::load_tensors(path("list.pt"));
    ASSERT_EQ(list.size(), 2u);
    EXPECT_EQ(list[1].data<float>()[0], 1.0f);
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("list.pt"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("tuple"), std::string::npos) << e.what();
  }
  try {
    ts::load_tensors(path("dict.pt"));
    FAIL() << "a dict loaded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("dict.pt"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("tuple"), std::string::npos) << e.what();
  }
  try {
    ts::load_tensors(path("mixed.pt"));
    FAIL() << "a tuple holding an int loaded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("mixed.pt: tensor 1"), std::string::npos) << e.what();
  }
}

// Complex tensors (complex64/128) cross both ways: the dtype table is the SDK's
// aten_dtype.hpp, the same one the importer and the aten plugin use.
TEST_F(PtIo, ComplexTensorsRoundTripWithPython) {
  REQUIRE_PYTHON();
  ASSERT_EQ(python("torch.save((torch.tensor([1 + 2j, -3.5j]), torch.tensor([0.25 - 1j], dtype=torch.complex128)),"
                   " d + '/c.pt')"),
            0);
  const std::vector<Tensor> t = ts::load_tensors(path("c.pt"));
  ASSERT_EQ(t.size(), 2u);
  EXPECT_TRUE(same_dtype(t[0].dtype(), DLDataType{kDLComplex, 64, 1}));
  EXPECT_TRUE(same_dtype(t[1].dtype(), DLDataType{kDLComplex, 128, 1}));
  ASSERT_EQ(t[0].shape(), (std::vector<int64_t>{2}));
  const float* c64 = t[0].data<float>();  // interleaved real, imaginary
  EXPECT_EQ((std::vector<float>(c64, c64 + 4)), (std::vector<float>{1, 2, 0, -3.5f}));
  EXPECT_EQ(t[1].data<double>()[0], 0.25);
  EXPECT_EQ(t[1].data<double>()[1], -1.0);
  ts::save_tensors(path("back.pt"), t);
  EXPECT_EQ(python("a, b = torch.load(d + '/back.pt')\n"
                   "assert a.dtype == torch.complex64 and a.tolist() == [1 + 2j, -3.5j], a\n"
                   "assert b.dtype == torch.complex128 and b.tolist() == [0.25 - 1j], b"),
            0);
}

TEST_F(PtIo, NodeIoIsADictPythonReads) {
  REQUIRE_PYTHON();
  Tensor x = pattern(kF32, {2, 3}), w = pattern(kF32, {4, 3}), h = pattern(kF32, {2, 4});
  Tensor mask = pattern(kBool, {2, 4}), y = pattern(kF32, {2, 4});
  std::vector<NodeIO> records(2);
  records[0] = {"fc1", "aten::linear", "aten", "fc1", {"x", "fc1.weight", ""}, {x, w, Tensor()}, {h}};
  records[1] = {"act", "aten::relu", "example", "", {"fc1"}, {h}, {y}};
  NodeIO outputs_only{"mask", "aten::gt", "aten", "m.sub", {"act"}, {}, {mask}};
  records.push_back(outputs_only);
  ts::save_node_io(path("io.pt"), records);
  std::string out;
  EXPECT_EQ(python(R"(
for weights_only in (False, True):
    io = torch.load(d + "/io.pt", weights_only=weights_only)
    assert list(io.keys()) == ["fc1", "act", "mask"], list(io.keys())
    fc1 = io["fc1"]
    assert sorted(fc1.keys()) == sorted(["op", "backend", "module_path", "input_sources", "inputs", "outputs"])
    assert fc1["op"] == "aten::linear" and fc1["backend"] == "aten" and fc1["module_path"] == "fc1"
    assert fc1["input_sources"] == ["x", "fc1.weight", ""], fc1["input_sources"]
    assert len(fc1["inputs"]) == 3 and fc1["inputs"][2] is None
    assert fc1["inputs"][1].shape == (4, 3)
    assert io["fc1"]["outputs"][0].shape == (2, 4)
    assert io["fc1"]["outputs"][0].flatten().tolist() == [0.5 * i - 1 for i in range(8)]
    assert torch.equal(io["act"]["inputs"][0], io["fc1"]["outputs"][0])
    assert io["act"]["backend"] == "example" and io["act"]["module_path"] == ""
    assert io["mask"]["inputs"] == [] and io["mask"]["outputs"][0].dtype == torch.bool
print(io["fc1"]["outputs"][0].shape)
)",
                   &out),
            0);
  EXPECT_NE(out.find("torch.Size([2, 4])"), std::string::npos) << out;
}

TEST_F(PtIo, NodeIoStoresASharedTensorOnce) {
  Tensor big = pattern(kF32, {256, 256});  // 256 KiB
  std::vector<NodeIO> records;
  records.push_back({"a", "aten::relu", "aten", "", {"x"}, {big}, {big}});
  records.push_back({"b", "aten::relu", "aten", "", {"a"}, {big}, {big}});
  ts::save_node_io(path("io.pt"), records);
  EXPECT_LT(fs::file_size(path("io.pt")), 2 * big.nbytes());
}

TEST_F(PtIo, BadFilesGiveErrorsNamingTheFile) {
  auto expect_error = [](const std::string& file, const std::string& needle) {
    try {
      ts::load_tensors(file);
      ADD_FAILURE() << file << " loaded";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Io);
      EXPECT_NE(std::string(e.what()).find(file), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).find("\n"), std::string::npos) << "no backtrace: " << e.what();
    }
  };
  expect_error(path("missing.pt"), "cannot open");
  std::ofstream(path("garbage.pt")) << "this is not a pickle at all";
  expect_error(path("garbage.pt"), "torch.save");
  std::ofstream(path("empty.pt")).close();
  expect_error(path("empty.pt"), "torch.save");

  std::vector<Tensor> tensors{pattern(kF32, {64, 64}), pattern(kI64, {10})};
  ts::save_tensors(path("good.pt"), tensors);
  const auto size = fs::file_size(path("good.pt"));
  for (auto keep : {size / 2, size - 30, size_t{100}}) {
    fs::copy_file(path("good.pt"), path("cut.pt"), fs::copy_options::overwrite_existing);
    fs::resize_file(path("cut.pt"), keep);
    expect_error(path("cut.pt"), "cut.pt");
  }
  try {
    ts::save_tensors(path("no/such/dir/out.pt"), tensors);
    ADD_FAILURE() << "wrote into a missing directory";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no/such/dir/out.pt"), std::string::npos) << e.what();
  }
}

TEST_F(PtIo, ReferenceForwardMatchesPython) {
  REQUIRE_PYTHON();
  ASSERT_EQ(python(R"(
torch.manual_seed(0)
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(3, 2)
    def forward(self, x, y):
        h = self.fc(x)
        return h, (h * y, h.sum())
m = torch.jit.trace(M().eval(), (torch.randn(4, 3), torch.randn(4, 2)))
m.save(d + "/m.pt")
x, y = torch.randn(4, 3), torch.randn(4, 2)
torch.save((x, y), d + "/in.pt")
with torch.no_grad():
    a, (b, c) = m(x, y)
torch.save((a, b, c), d + "/want.pt")
)"),
            0);
  auto inputs = ts::load_tensors(path("in.pt"));
  auto got = ts::reference_forward(path("m.pt"), inputs);
  auto want = ts::load_tensors(path("want.pt"));
  ASSERT_EQ(got.size(), 3u);  // nested tuples are flattened
  for (size_t i = 0; i < 3; ++i) expect_same(got[i], want[i], "output " + std::to_string(i));

  try {
    ts::reference_forward(path("in.pt"), inputs);
    ADD_FAILURE() << "a tensor file loaded as a module";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("in.pt"), std::string::npos) << e.what();
  }
  try {
    ts::reference_forward(path("m.pt"), {inputs[0]});
    ADD_FAILURE() << "forward ran with a missing argument";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("m.pt"), std::string::npos) << e.what();
  }
}

// ---- node_io capture "stream" (NodeIoStreamWriter) -----------------------------------

namespace {

std::string file_bytes(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string source_dir() {
  const char* dir = std::getenv("SWITCHYARD_SOURCE_DIR");
  return dir != nullptr ? dir : ".";
}

// Streams `records` the way Model::run's callback would, numbering them in order.
void stream_records(const std::string& file, const std::vector<NodeIO>& records) {
  ts::NodeIoStreamWriter writer(file);
  for (size_t i = 0; i < records.size(); ++i) {
    const NodeIO& r = records[i];
    writer.write(NodeEvent{r.node, r.op, r.backend, r.module_path, r.inputs, r.outputs, &r.input_sources, i});
  }
  EXPECT_EQ(writer.finish(), records.size());
}

// Python: same(a, b) asserts two node_io dicts hold the same records, in the same order,
// with bit-identical tensors; `reader` is tools/node_io_stream.py.
const std::string kSameNodeIo = R"(
import os
sys.path.insert(0, os.environ.get("SWITCHYARD_SOURCE_DIR", ".") + "/tools")
import node_io_stream as reader
def raw(t):
    return t.contiguous().reshape(-1).view(torch.uint8)
def same(a, b):
    assert list(a) == list(b), (list(a), list(b))
    for k in a:
        ra, rb = a[k], b[k]
        assert sorted(ra) == sorted(rb), (k, sorted(ra), sorted(rb))
        for f in ("op", "backend", "module_path", "input_sources"):
            assert ra[f] == rb[f], (k, f, ra[f], rb[f])
        for f in ("inputs", "outputs"):
            assert len(ra[f]) == len(rb[f]), (k, f)
            for x, y in zip(ra[f], rb[f]):
                assert (x is None) == (y is None), (k, f)
                if x is not None:
                    assert (x.dtype, x.shape, x.stride()) == (y.dtype, y.shape, y.stride()), (k, f, x, y)
                    assert torch.equal(raw(x), raw(y)), (k, f, "values differ")
)";

}  // namespace

TEST_F(PtIo, NodeIoStreamWritesSaveNodeIosFile) {
  Tensor x = pattern(kF32, {2, 3}), w = pattern(kF32, {4, 3}), h = pattern(kF32, {2, 4});
  Tensor base = pattern(kF32, {3, 4});
  Tensor view = Tensor::from_blob(base.raw_data(), kF32, {4, 3}, {1, 4}, [keep = base] {});
  std::vector<NodeIO> records;
  records.push_back({"fc1", "aten::linear", "aten", "fc1", {"x", "fc1.weight", ""}, {x, w, Tensor()}, {h}});
  records.push_back({"t", "aten::t", "shape", "", {"base"}, {base}, {view}});
  records.push_back({"act", "aten::relu", "example", "", {"fc1", "t"}, {h, view}, {pattern(kF32, {2, 4})}});
  for (DLDataType d : kAllDtypes)
    records.push_back({"to_" + dtype_name(d), "aten::to", "aten", "cast", {"x"}, {x}, {pattern(d, {2, 3})}});
  records.push_back({"empty", "aten::zeros", "aten", "", {}, {}, {pattern(kI64, {0, 3}), pattern(kF32, {})}});
  ts::save_node_io(path("all.pt"), records);
  stream_records(path("stream.pt"), records);
  EXPECT_EQ(file_bytes(path("stream.pt")), file_bytes(path("all.pt"))) << "not save_node_io's file, byte for byte";

  REQUIRE_PYTHON();
  EXPECT_EQ(python(kSameNodeIo + R"(
a = torch.load(d + "/all.pt")
assert list(a)[:3] == ["fc1", "t", "act"] and len(a) == 14, list(a)
for weights_only in (False, True):
    same(a, torch.load(d + "/stream.pt", weights_only=weights_only))
same(a, dict(reader.iter_records(d + "/stream.pt")))
same(a, reader.load_all(d + "/stream.pt"))
meta = dict(reader.iter_records(d + "/stream.pt", tensors=False))
assert meta["t"]["outputs"][0].shape == (4, 3) and meta["fc1"]["inputs"][2] is None, meta["t"]
print("ok")
)"),
            0);
}

TEST_F(PtIo, NodeIoStreamKeepsNoTensorAndWritesGraphOrder) {
  bool freed = false;
  auto* buffer = new std::vector<float>(256 * 256, 1.5f);
  Tensor big = Tensor::from_blob(buffer->data(), kF32, {256, 256}, {}, [buffer, &freed] {
    delete buffer;
    freed = true;
  });
  Tensor x = pattern(kF32, {256, 256});
  const std::vector<std::string> one{"x"};
  const std::vector<Tensor> none;
  ts::NodeIoStreamWriter writer(path("io.pt"));
  writer.write(NodeEvent{"a", "aten::relu", "aten", "", {x}, {big}, &one, 0});
  big = Tensor();
  EXPECT_TRUE(freed) << "the writer kept a tensor it had written";
  EXPECT_EQ(x.use_count(), 1) << "the writer kept a tensor it had written";
  // A new tensor (its handle may reuse the freed one's address) is stored anew, and events
  // that arrive out of graph order (a parallel run) are written in graph order.
  Tensor fresh = pattern(kF32, {256, 256});
  const std::vector<Tensor> fresh_only{fresh};
  writer.write(NodeEvent{"c", "aten::neg", "aten", "", fresh_only, fresh_only, &one, 3});
  writer.write(NodeEvent{"b", "aten::abs", "aten", "", {x}, fresh_only, &one, 2});
  EXPECT_EQ(writer.records(), 3u);
  EXPECT_EQ(writer.finish(), 3u);

  REQUIRE_PYTHON();
  EXPECT_EQ(python(R"(
io = torch.load(d + "/io.pt")
assert list(io) == ["a", "b", "c"], list(io)
assert torch.equal(io["a"]["outputs"][0], torch.full((256, 256), 1.5))
want = (torch.arange(256 * 256, dtype=torch.float32) * 0.5 - 1).reshape(256, 256)
assert torch.equal(io["c"]["inputs"][0], want), "a new tensor was taken for the freed one"
assert torch.equal(io["b"]["outputs"][0], want) and torch.equal(io["a"]["inputs"][0], want)
print("ok")
)"),
            0);
}

TEST_F(PtIo, NodeIoStreamErrorsNameTheFileAndNode) {
  auto error_of = [](auto&& f) -> std::string {
    try {
      f();
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(
      error_of([&] { ts::NodeIoStreamWriter w(path("no/such/dir/io.pt")); }).find("no/such/dir/io.pt: cannot write"),
      std::string::npos);
  const std::vector<std::string> one{"x"};
  const std::vector<Tensor> in{pattern(kF32, {2})}, out{pattern(kF32, {2})};
  ts::NodeIoStreamWriter writer(path("io.pt"));
  std::string msg = error_of([&] { writer.write(NodeEvent{"n", "aten::relu", "aten", "", in, out}); });
  EXPECT_NE(msg.find("node 'n': the event has no input_sources"), std::string::npos) << msg;
  writer.write(NodeEvent{"n", "aten::relu", "aten", "", in, out, &one, 0});
  msg = error_of([&] { writer.write(NodeEvent{"n", "aten::relu", "aten", "", in, out, &one, 1}); });
  EXPECT_NE(msg.find("node 'n' recorded twice"), std::string::npos) << msg;
  EXPECT_EQ(writer.finish(), 1u);
  EXPECT_NE(error_of([&] { writer.finish(); }).find("already finished"), std::string::npos);
  msg = error_of([&] { writer.write(NodeEvent{"m", "aten::relu", "aten", "", in, out, &one, 1}); });
  EXPECT_NE(msg.find("arrived after the node_io stream was finished"), std::string::npos) << msg;

  // A full disk: the error names the file, and the writer (finishing in its destructor)
  // does not bring the process down.
  if (fs::exists("/dev/full")) {
    Tensor big = pattern(kF32, {1024, 1024});
    const std::vector<Tensor> bigs{big};
    msg = error_of([&] {
      ts::NodeIoStreamWriter full("/dev/full");
      full.write(NodeEvent{"n", "aten::relu", "aten", "", bigs, bigs, &one, 0});
      full.finish();
    });
    EXPECT_NE(msg.find("/dev/full"), std::string::npos) << msg;
  }
}

// A model run through the embedding API: capture "stream" writes the file capture "all"
// gives, sequential and parallel; without a callback the run refuses.
TEST_F(PtIo, NodeIoStreamOfADemoRunIsTheAllFile) {
  torchscript::register_loader();
  const std::string demo = source_dir() + "/tools/demo/mlp.json";
  const std::string config = source_dir() + "/configs/example.toml";
  const std::vector<Tensor> inputs{pattern(kF32, {2, 8})};
  {
    Options o{config};
    o.capture = "all";
    Runtime rt(o);
    auto model = rt.load(demo);
    model->run(inputs);
    ts::save_node_io(path("all.pt"), model->node_io());
  }
  Options o{config};
  o.capture = "stream";
  Runtime rt(o);
  auto model = rt.load(demo);
  try {
    model->run(inputs);
    ADD_FAILURE() << "a stream run without a sink ran";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Config);
    EXPECT_NE(std::string(e.what()).find("node_io capture 'stream'"), std::string::npos) << e.what();
  }
  {
    ts::NodeIoStreamWriter writer(path("stream.pt"));
    model->set_node_callback([&](const NodeEvent& e) { writer.write(e); });
    model->run(inputs);
    EXPECT_EQ(writer.finish(), 6u);
    EXPECT_TRUE(model->node_io().empty());
  }
  EXPECT_EQ(file_bytes(path("stream.pt")), file_bytes(path("all.pt")));
#if defined(__SANITIZE_THREAD__)
  GTEST_SKIP()
      << "missing resource: the parallel half needs a missing resource: a TSan-instrumented oneTBB (Debian's libtbb is not)";
#endif

  // Parallel: the config asks for stream; the second run (the first plans) runs nodes at once.
  const std::string parallel = path("parallel.toml");
  std::ofstream(parallel) << "[selection]\ndefault = [\"example\", \"aten\"]\n"
                             "[runtime]\ninter_op_threads = 2\nnode_io = \"stream\"\n";
  Runtime prt(Options{parallel});
  auto pmodel = prt.load(demo);
  pmodel->set_node_callback([](const NodeEvent&) {});
  pmodel->run(inputs);
  {
    ts::NodeIoStreamWriter writer(path("parallel.pt"));
    pmodel->set_node_callback([&](const NodeEvent& e) { writer.write(e); });
    pmodel->run(inputs);
    EXPECT_EQ(writer.finish(), 6u);
  }
  REQUIRE_PYTHON();
  EXPECT_EQ(python(kSameNodeIo + R"(
a = torch.load(d + "/all.pt")
same(a, torch.load(d + "/parallel.pt"))
same(a, dict(reader.iter_records(d + "/parallel.pt")))
print("ok")
)"),
            0);
}

// A zoo model (a small BERT: int64 ids, masks, views from the shape plugin) on the
// default config: the stream file is the "all" file, byte for byte.
TEST_F(PtIo, NodeIoStreamOfAZooModelIsTheAllFile) {
  const char* zoo = std::getenv("SWITCHYARD_ZOO_DIR");
  const std::string dir = zoo != nullptr ? zoo : "";
  if (!fs::exists(dir + "/bert_decomposed.pt")) GTEST_SKIP() << "missing resource: no model zoo (SWITCHYARD_ZOO_DIR)";
  torchscript::register_loader();
  const std::vector<Tensor> inputs = ts::load_tensors(dir + "/bert_decomposed.b1.inputs.pt");
  const std::string config = source_dir() + "/configs/default.toml";
  Options all{config};
  all.capture = "all";
  Runtime art(all);
  auto amodel = art.load(dir + "/bert_decomposed.pt");
  amodel->run(inputs);
  ts::save_node_io(path("all.pt"), amodel->node_io());

  Options stream{config};
  stream.capture = "stream";
  Runtime srt(stream);
  auto smodel = srt.load(dir + "/bert_decomposed.pt");
  ts::NodeIoStreamWriter writer(path("stream.pt"));
  smodel->set_node_callback([&](const NodeEvent& e) { writer.write(e); });
  smodel->run(inputs);
  EXPECT_EQ(writer.finish(), amodel->node_io().size());
  EXPECT_GT(amodel->node_io().size(), 50u);
  EXPECT_EQ(file_bytes(path("stream.pt")), file_bytes(path("all.pt")));
}
