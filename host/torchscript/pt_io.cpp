// .pt tensor files (Python's torch.save / torch.load) and LibTorch's reference forward.
//
// Tensors cross zero-copy both ways: a loaded at::Tensor becomes a switchyard::Tensor
// whose release keeps the at::Tensor alive, and a switchyard::Tensor being saved is
// wrapped with at::from_blob (strides honoured), its deleter holding the handle.
//
// Files are written as torch::pickle_save does (a zip archive with data.pkl and one
// record per storage), but with untagged containers: the C++ pickler's default wraps
// every list and dict in torch.jit._pickle.restore_type_tag, which Python's torch.load
// refuses under weights_only=True (the default since torch 2.6). Untagged, a plain
// `torch.load(path)` reads our files in every torch version.
#include "util/log.hpp"

#include <switchyard/aten_dtype.hpp>
#include <switchyard/torchscript.hpp>

#include <caffe2/serialize/inline_container.h>
#include <torch/csrc/jit/serialization/export.h>
#include <torch/csrc/jit/serialization/import_read.h>
#include <torch/csrc/jit/serialization/pickler.h>
#include <torch/script.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <unordered_map>
#include <unordered_set>

namespace switchyard::torchscript {
namespace {

// The first line of a c10::Error, without LibTorch's C++ backtrace.
std::string first_line(const std::string& what) {
  std::string s = what.substr(0, what.find('\n'));
  return s.empty() ? "unknown LibTorch error" : s;
}
std::string message_of(const c10::Error& e) { return first_line(e.what_without_backtrace()); }

// Zero-copy: the switchyard tensor keeps a contiguous at::Tensor alive.
// `where` prefixes errors, e.g. "x.pt: tensor 2".
Tensor from_at(const at::Tensor& src, const std::string& where) {
  if (!src.defined()) throw Error(ErrorKind::Io, where + " is undefined (None)");
  if (!src.device().is_cpu())
    throw Error(ErrorKind::Io, where + " is on device " + src.device().str() + "; save CPU tensors");
  if (src.is_quantized() || src.is_sparse())
    throw Error(ErrorKind::Unsupported, where + ": quantized and sparse tensors are not supported");
  DLDataType dt;
  if (!sy::to_dl_dtype(src.scalar_type(), &dt))
    throw Error(ErrorKind::Unsupported, where + " has dtype " + std::string(c10::toString(src.scalar_type())) +
                                            "; supported: float32/64/16, bfloat16, int8/16/32/64, uint8, bool, "
                                            "complex64/128");
  at::Tensor c = src.detach().contiguous();
  return Tensor::from_blob(c.data_ptr(), dt, c.sizes().vec(), {}, [keep = c]() mutable { keep.reset(); });
}

// Zero-copy: the at::Tensor's deleter holds a handle to the switchyard tensor.
at::Tensor to_at(const Tensor& t, const std::string& where) {
  if (t.device().device_type != kDLCPU)
    throw Error(ErrorKind::Unsupported,
                where + " is not in CPU memory (device type " + std::to_string(t.device().device_type) + ")");
  at::ScalarType st;
  if (!sy::to_scalar_type(t.dtype(), &st))
    throw Error(ErrorKind::Unsupported, where + " has dtype " + dtype_name(t.dtype()) + ", which LibTorch cannot hold");
  Tensor keep = t;
  return at::from_blob(
      t.raw_data(), t.shape(), t.strides(), [keep](void*) mutable { keep = Tensor(); }, at::TensorOptions().dtype(st));
}

// Converts tensors for one file, storing each switchyard tensor once: a value that is
// one node's output and another's input is the same at::Tensor, so its storage is
// written once.
class AtCache {
 public:
  c10::IValue get(const Tensor& t, const std::string& where) {
    if (!t.defined()) return c10::IValue();
    const void* key = t.owner().get();
    auto it = cache_.find(key);
    if (it != cache_.end()) return it->second;
    at::Tensor a = to_at(t, where);
    cache_.emplace(key, a);
    return a;
  }

 private:
  std::unordered_map<const void*, at::Tensor> cache_;
};

std::vector<char> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorKind::Io, path + ": cannot open");
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw Error(ErrorKind::Io, path + ": read error");
  return bytes;
}

// The file's bytes for LibTorch's zip reader, never read past the end. LibTorch 1.13's
// own reader behind torch::jit::pickle_load copies whatever range the zip headers name,
// so a truncated file made it read past the buffer (valgrind; a SEGV under TSan). A short
// read here makes the zip reader fail with an error instead.
class BoundedReader : public caffe2::serialize::ReadAdapterInterface {
 public:
  explicit BoundedReader(std::vector<char> bytes) : bytes_(std::move(bytes)) {}
  size_t size() const override { return bytes_.size(); }
  size_t read(uint64_t pos, void* buf, size_t n, const char* /*what*/) const override {
    if (pos >= bytes_.size()) return 0;
    const size_t count = std::min(n, static_cast<size_t>(bytes_.size() - pos));
    std::copy_n(bytes_.data() + pos, count, static_cast<char*>(buf));
    return count;
  }

 private:
  std::vector<char> bytes_;
};

// torch::jit::pickle_load over a BoundedReader.
c10::IValue unpickle(std::vector<char> bytes) {
  caffe2::serialize::PyTorchStreamReader reader(std::make_shared<BoundedReader>(std::move(bytes)));
  return torch::jit::readArchiveAndTensors("data", /*pickle_prefix=*/"", /*tensor_prefix=*/"",
                                           /*type_resolver=*/c10::nullopt, /*obj_loader=*/c10::nullopt,
                                           /*device=*/c10::nullopt, reader);
}

// torch::pickle_save without type tags on lists and dicts (see the top of this file).
std::vector<char> pickle_untagged(const c10::IValue& value) {
  std::vector<char> pickle_data;
  torch::jit::Pickler pickler(
      [&](const char* buf, size_t size) { pickle_data.insert(pickle_data.end(), buf, buf + size); },
      /*tensor_table=*/nullptr, /*type_renamer=*/nullptr, /*memoized_class_types=*/nullptr,
      /*get_tensor_id=*/nullptr, /*tag_aggregates=*/false);
  pickler.protocol();
  pickler.pushIValue(value);
  pickler.stop();
  std::vector<char> container;
  container.reserve(pickle_data.size());
  caffe2::serialize::PyTorchStreamWriter writer([&](const void* data, size_t len) {
    const char* bytes = static_cast<const char*>(data);
    container.insert(container.end(), bytes, bytes + len);
    return len;
  });
  torch::jit::writeArchiveAndTensors("data", pickle_data.data(), pickle_data.size(), pickler.tensorData(), writer);
  writer.writeEndOfFile();
  return container;
}

void write_pickled(const std::string& path, const c10::IValue& value) {
  std::vector<char> bytes;
  try {
    bytes = pickle_untagged(value);
  } catch (const c10::Error& e) {
    throw Error(ErrorKind::Io, path + ": cannot serialize: " + message_of(e));
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw Error(ErrorKind::Io, path + ": cannot write");
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) throw Error(ErrorKind::Io, path + ": write failed (disk full?)");
}

// node_io's file format, written by save_node_io and the stream writer alike: a dict keyed
// by node name of {"op", "backend", "module_path", "input_sources", "inputs", "outputs"}.
c10::impl::GenericDict node_io_dict() { return c10::impl::GenericDict(c10::StringType::get(), c10::AnyType::get()); }

// Adds one node's record (tensors, or None for an absent input); false if `node` is there.
bool add_node_io_record(c10::impl::GenericDict& doc, const std::string& node, const std::string& op,
                        const std::string& backend, const std::string& module_path,
                        const std::vector<std::string>& input_sources, const std::vector<c10::IValue>& inputs,
                        const std::vector<c10::IValue>& outputs) {
  auto tensor_list = [](const std::vector<c10::IValue>& values) {
    c10::impl::GenericList list(c10::OptionalType::create(c10::TensorType::get()));
    for (const c10::IValue& v : values) list.push_back(v);
    return list;
  };
  c10::List<std::string> sources;
  for (const std::string& name : input_sources) sources.push_back(name);
  c10::impl::GenericDict record(c10::StringType::get(), c10::AnyType::get());
  record.insert("op", op);
  record.insert("backend", backend);
  record.insert("module_path", module_path);
  record.insert("input_sources", sources);
  record.insert("inputs", tensor_list(inputs));
  record.insert("outputs", tensor_list(outputs));
  return doc.insert(node, record).second;
}

// Flattens a tensor, or a (nested) tuple or list of tensors, in order.
void flatten(const c10::IValue& v, const std::string& where, std::vector<at::Tensor>& out) {
  if (v.isTensor()) {
    out.push_back(v.toTensor());
  } else if (v.isTuple()) {
    for (const auto& e : v.toTupleRef().elements()) flatten(e, where, out);
  } else if (v.isList()) {
    for (const c10::IValue& e : v.toListRef()) flatten(e, where, out);
  } else {
    throw Error(ErrorKind::Unsupported, where + " holds " + v.tagKind() + "; expected tensors");
  }
}

}  // namespace

std::vector<Tensor> load_tensors(const std::string& path) {
  std::vector<char> bytes = read_file(path);
  c10::IValue value;
  try {
    value = unpickle(std::move(bytes));
  } catch (const c10::Error& e) {
    throw Error(ErrorKind::Io, path + ": not a tensor file written by torch.save (" + message_of(e) +
                                   "). Save one tensor or a tuple: torch.save((x, y), path)");
  } catch (const std::exception& e) {
    throw Error(ErrorKind::Io, path + ": not a tensor file written by torch.save (" + first_line(e.what()) + ")");
  }
  std::vector<c10::IValue> items;
  if (value.isTensor()) {
    items.push_back(value);
  } else if (value.isTuple()) {
    items = value.toTupleRef().elements().vec();
  } else if (value.isList()) {
    for (const c10::IValue& e : value.toListRef()) items.push_back(e);
  } else {
    throw Error(ErrorKind::Io, path + ": holds " + value.tagKind() +
                                   ", not a tensor or a tuple of tensors. Save one: torch.save((x, y), path)");
  }
  std::vector<Tensor> out;
  out.reserve(items.size());
  for (size_t i = 0; i < items.size(); ++i) {
    const std::string where = path + ": tensor " + std::to_string(i);
    if (!items[i].isTensor()) throw Error(ErrorKind::Io, where + " is " + items[i].tagKind() + ", not a tensor");
    out.push_back(from_at(items[i].toTensor(), where));
  }
  return out;
}

void save_tensors(const std::string& path, const std::vector<Tensor>& tensors, bool single) {
  if (single && tensors.size() != 1)
    throw Error(ErrorKind::Internal,
                path + ": a single-tensor file needs exactly one tensor, got " + std::to_string(tensors.size()));
  AtCache cache;
  std::vector<c10::IValue> items;
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (!tensors[i].defined())
      throw Error(ErrorKind::Internal, path + ": tensor " + std::to_string(i) + " is undefined");
    items.push_back(cache.get(tensors[i], path + ": tensor " + std::to_string(i)));
  }
  write_pickled(path, single ? items[0] : c10::IValue(c10::ivalue::Tuple::create(std::move(items))));
}

void save_node_io(const std::string& path, const std::vector<NodeIO>& records) {
  AtCache cache;
  c10::impl::GenericDict doc = node_io_dict();
  for (const NodeIO& r : records) {
    auto tensors = [&](const std::vector<Tensor>& ts, const char* kind) {
      std::vector<c10::IValue> values;
      for (size_t i = 0; i < ts.size(); ++i)
        values.push_back(cache.get(ts[i], path + ": node '" + r.node + "' " + kind + " " + std::to_string(i)));
      return values;
    };
    if (!add_node_io_record(doc, r.node, r.op, r.backend, r.module_path, r.input_sources, tensors(r.inputs, "input"),
                            tensors(r.outputs, "output")))
      throw Error(ErrorKind::Internal, path + ": node '" + r.node + "' recorded twice");
  }
  write_pickled(path, doc);
}

// ---- node_io capture "stream" ------------------------------------------------------
//
// The file is the zip archive save_node_io writes (data/<key> per storage, then data.pkl),
// written in another order: each storage as soon as its tensor is seen, the pickle last.
// The pickle only describes tensors, so finish() pickles shells: tensors with the saved
// one's dtype, sizes, strides and storage size whose storage has no memory.

namespace {

at::Tensor shell_of(const at::Tensor& a) {
  c10::Storage storage(c10::Storage::use_byte_size_t(), a.storage().nbytes(), c10::DataPtr(nullptr, a.device()),
                       /*allocator=*/nullptr, /*resizable=*/false);
  return at::empty({0}, a.options()).set_(storage, a.storage_offset(), a.sizes(), a.strides());
}

}  // namespace

struct NodeIoStreamWriter::Impl {
  struct Record {
    size_t index;
    std::string node, op, backend, module_path;
    std::vector<std::string> sources;
    std::vector<c10::IValue> inputs, outputs;  // shells, or None for an absent input
  };
  // A tensor already in the file, by its switchyard owner. The weak handle tells a live
  // owner from a new one at a freed one's address, and keeps no tensor memory alive.
  struct Stored {
    std::weak_ptr<void> owner;
    at::Tensor shell;
  };

  std::string path;
  std::ofstream file;
  std::unique_ptr<caffe2::serialize::PyTorchStreamWriter> zip;
  std::unordered_map<const void*, Stored> stored;
  std::unordered_map<const c10::StorageImpl*, std::string> keys;  // shell storage -> record key
  std::vector<Record> records;
  std::unordered_set<std::string> names;
  bool finished = false;
  // The file failed to take a write. The zip writer is told every write succeeded: told
  // otherwise it throws on every later call, its destructor included (std::terminate).
  bool failed = false;

  void check_written() const {
    if (failed) throw Error(ErrorKind::Io, path + ": write failed (disk full?)");
  }

  c10::IValue store(const Tensor& t, const std::string& where) {
    if (!t.defined()) return c10::IValue();
    const std::shared_ptr<void> owner = t.owner();
    auto it = stored.find(owner.get());
    if (it != stored.end() && !it->second.owner.owner_before(owner) && !owner.owner_before(it->second.owner))
      return it->second.shell;
    const at::Tensor a = to_at(t, where);
    const std::string key = std::to_string(keys.size());
    const torch::jit::WriteableTensorData bytes = torch::jit::getWriteableTensorData(a);
    zip->writeRecord("data/" + key, bytes.data(), bytes.sizeInBytes());
    check_written();
    at::Tensor shell = shell_of(a);
    keys.emplace(shell.storage().unsafeGetStorageImpl(), key);
    stored[owner.get()] = Stored{owner, shell};
    return shell;
  }

  size_t finish() {
    finished = true;
    std::stable_sort(records.begin(), records.end(),
                     [](const Record& a, const Record& b) { return a.index < b.index; });
    c10::impl::GenericDict doc = node_io_dict();
    for (const Record& r : records)
      add_node_io_record(doc, r.node, r.op, r.backend, r.module_path, r.sources, r.inputs, r.outputs);
    std::vector<char> pickle;
    torch::jit::Pickler pickler(
        [&](const char* buf, size_t size) { pickle.insert(pickle.end(), buf, buf + size); },
        /*tensor_table=*/nullptr, /*type_renamer=*/nullptr, /*memoized_class_types=*/nullptr,
        /*get_tensor_id=*/[&](const at::Tensor& t) { return keys.at(t.storage().unsafeGetStorageImpl()); },
        /*tag_aggregates=*/false);
    pickler.protocol();
    pickler.pushIValue(doc);
    pickler.stop();
    zip->writeRecord("data.pkl", pickle.data(), pickle.size());
    zip->writeEndOfFile();
    file.close();
    failed |= !file;
    check_written();
    return records.size();
  }
};

NodeIoStreamWriter::NodeIoStreamWriter(const std::string& path) : impl_(std::make_unique<Impl>()) {
  Impl& s = *impl_;
  s.path = path;
  s.file.open(path, std::ios::binary | std::ios::trunc);
  if (!s.file) throw Error(ErrorKind::Io, path + ": cannot write");
  s.zip = std::make_unique<caffe2::serialize::PyTorchStreamWriter>([&s](const void* data, size_t len) -> size_t {
    if (!s.failed) s.failed = !s.file.write(static_cast<const char*>(data), static_cast<std::streamsize>(len));
    return len;
  });
}

NodeIoStreamWriter::~NodeIoStreamWriter() {
  if (impl_->finished || impl_->failed) return;
  try {
    finish();
  } catch (const std::exception& e) {
    log::get().error("{}", e.what());
  }
}

void NodeIoStreamWriter::write(const NodeEvent& event) {
  Impl& s = *impl_;
  const std::string where = s.path + ": node '" + event.node + "'";
  if (s.finished) throw Error(ErrorKind::Internal, where + " arrived after the node_io stream was finished");
  s.check_written();
  if (event.input_sources == nullptr || event.input_sources->size() != event.inputs.size())
    throw Error(ErrorKind::Internal,
                where + ": the event has no input_sources for its " + std::to_string(event.inputs.size()) + " inputs");
  if (!s.names.insert(event.node).second) throw Error(ErrorKind::Internal, where + " recorded twice");
  Impl::Record r{event.index, event.node, event.op, event.backend, event.module_path, *event.input_sources, {}, {}};
  try {
    for (size_t i = 0; i < event.inputs.size(); ++i)
      r.inputs.push_back(s.store(event.inputs[i], where + " input " + std::to_string(i)));
    for (size_t i = 0; i < event.outputs.size(); ++i)
      r.outputs.push_back(s.store(event.outputs[i], where + " output " + std::to_string(i)));
  } catch (const c10::Error& e) {
    throw Error(ErrorKind::Io, where + ": cannot write: " + message_of(e));
  }
  s.records.push_back(std::move(r));
}

size_t NodeIoStreamWriter::finish() {
  if (impl_->finished) throw Error(ErrorKind::Internal, impl_->path + ": the node_io stream was already finished");
  impl_->check_written();
  try {
    return impl_->finish();
  } catch (const c10::Error& e) {
    throw Error(ErrorKind::Io, impl_->path + ": cannot write: " + message_of(e));
  }
}

size_t NodeIoStreamWriter::records() const { return impl_->records.size(); }

std::vector<Tensor> reference_forward(const std::string& path, const std::vector<Tensor>& inputs) {
  torch::jit::Module module;
  try {
    module = torch::jit::load(path);
  } catch (const c10::Error& e) {
    throw Error(ErrorKind::Io, path + ": cannot load as TorchScript: " + message_of(e));
  }
  std::vector<c10::IValue> args;
  for (size_t i = 0; i < inputs.size(); ++i)  // a copy: the reference must not touch our inputs
    args.emplace_back(to_at(inputs[i], "input " + std::to_string(i)).clone());
  std::vector<at::Tensor> results;
  try {
    module.eval();
    torch::NoGradGuard no_grad;
    c10::IValue out = module.forward(args);
    flatten(out, path + ": LibTorch's forward output", results);
  } catch (const c10::Error& e) {
    throw Error(ErrorKind::Kernel, path + ": LibTorch's forward failed: " + message_of(e));
  }
  std::vector<Tensor> out;
  for (size_t i = 0; i < results.size(); ++i)
    out.push_back(from_at(results[i], path + ": reference output " + std::to_string(i)));
  return out;
}

}  // namespace switchyard::torchscript
