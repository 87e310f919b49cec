// The restricted unpickler for torch.save files (see torch_pickle.hpp).
#include "pt2/torch_pickle.hpp"
#include "pt2/zip_reader.hpp"

#include <switchyard/sdk.h>
#include <switchyard/error.hpp>

#include <cstdlib>
#include <cstring>
#include <map>

namespace switchyard::pt2 {

namespace {

struct Object;
using Ref = std::shared_ptr<Object>;

// A pickled value: only the kinds torch.save's state dicts are made of.
struct Object {
  enum Kind { None, Bool, Int, Float, String, Tuple, List, Dict, Global, Storage, TensorValue, Mark };
  Kind kind = None;
  int64_t i = 0;
  double f = 0;
  std::string s;                             // String; Global: "module.name"; Storage: key
  std::vector<Ref> items;                    // Tuple, List
  std::vector<std::pair<Ref, Ref>> entries;  // Dict, in insertion order
  DLDataType dtype{};                        // Storage
  Tensor tensor;                             // TensorValue
};

const char* kind_name(Object::Kind k) {
  static const char* names[] = {"None", "bool", "int",    "float",   "str",    "tuple",
                                "list", "dict", "global", "storage", "tensor", "mark"};
  return names[k];
}

// torch's typed storage classes and their element types.
bool storage_dtype(const std::string& global, DLDataType* out) {
  static const std::map<std::string, DLDataType> kTypes = {
      {"torch.FloatStorage", {kDLFloat, 32, 1}}, {"torch.DoubleStorage", {kDLFloat, 64, 1}},
      {"torch.HalfStorage", {kDLFloat, 16, 1}},  {"torch.BFloat16Storage", {kDLBfloat, 16, 1}},
      {"torch.LongStorage", {kDLInt, 64, 1}},    {"torch.IntStorage", {kDLInt, 32, 1}},
      {"torch.ShortStorage", {kDLInt, 16, 1}},   {"torch.CharStorage", {kDLInt, 8, 1}},
      {"torch.ByteStorage", {kDLUInt, 8, 1}},    {"torch.BoolStorage", {SY_DL_BOOL, 8, 1}}};
  auto it = kTypes.find(global);
  if (it == kTypes.end()) return false;
  *out = it->second;
  return true;
}

class Unpickler {
 public:
  Unpickler(const std::string& pickle, const ZipReader& zip, std::string prefix, std::string what)
      : p_(pickle), zip_(zip), prefix_(std::move(prefix)), what_(std::move(what)) {}
  Unpickler(const Unpickler&) = delete;
  Unpickler& operator=(const Unpickler&) = delete;
  // A pickle can link its objects in cycles (a list appended to itself) and nest them
  // as deep as it is long (TUPLE1 on TUPLE1 ...): shared_ptr would leak the first and
  // recurse through the second when freeing it, past the end of the stack. So every
  // object lives in made_ until here, and all links are cut before any object is freed.
  ~Unpickler() {
    for (const Ref& o : made_) {
      o->items.clear();
      o->entries.clear();
    }
  }

  Ref run() {
    while (true) {
      const uint8_t op = byte();
      if (op == '.') break;  // STOP
      step(op);
    }
    if (stack_.size() != 1) fail("the pickle ends with " + std::to_string(stack_.size()) + " values on its stack");
    return stack_.back();
  }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    throw Error(ErrorKind::Io, what_ + ": " + why + " (at byte " + std::to_string(pos_) + " of the pickle)");
  }
  Ref make(Object::Kind kind) {
    auto o = std::make_shared<Object>();
    o->kind = kind;
    made_.push_back(o);
    return o;
  }
  uint8_t byte() {
    if (pos_ >= p_.size()) fail("the pickle is truncated");
    return static_cast<uint8_t>(p_[pos_++]);
  }
  uint64_t uint(size_t n) {
    if (p_.size() - pos_ < n) fail("the pickle is truncated");
    uint64_t v = 0;
    for (size_t k = 0; k < n; ++k) v |= uint64_t{static_cast<uint8_t>(p_[pos_ + k])} << (8 * k);
    pos_ += n;
    return v;
  }
  std::string bytes(uint64_t n) {
    if (p_.size() - pos_ < n) fail("the pickle is truncated");
    std::string s = p_.substr(pos_, static_cast<size_t>(n));
    pos_ += static_cast<size_t>(n);
    return s;
  }
  std::string line() {
    const size_t end = p_.find('\n', pos_);
    if (end == std::string::npos) fail("the pickle is truncated");
    std::string s = p_.substr(pos_, end - pos_);
    pos_ = end + 1;
    return s;
  }
  Ref pop() {
    if (stack_.empty() || stack_.back()->kind == Object::Mark) fail("the pickle's stack underflows");
    Ref r = stack_.back();
    stack_.pop_back();
    return r;
  }
  std::vector<Ref> pop_to_mark() {
    size_t m = stack_.size();
    while (m > 0 && stack_[m - 1]->kind != Object::Mark) --m;
    if (m == 0) fail("the pickle pops to a mark it never set");
    std::vector<Ref> items(stack_.begin() + static_cast<std::ptrdiff_t>(m), stack_.end());
    stack_.resize(m - 1);
    return items;
  }
  Ref top(Object::Kind want, const char* op) {
    if (stack_.empty() || stack_.back()->kind != want)
      fail(std::string(op) + " needs a " + kind_name(want) + " on the stack");
    return stack_.back();
  }
  void memo_put(uint64_t key) {
    if (stack_.empty()) fail("memoizes an empty stack");
    memo_[key] = stack_.back();
  }
  void memo_get(uint64_t key) {
    auto it = memo_.find(key);
    if (it == memo_.end()) fail("reads memo entry " + std::to_string(key) + ", which was never written");
    stack_.push_back(it->second);
  }
  void push_int(int64_t v) {
    auto o = make(Object::Int);
    o->i = v;
    stack_.push_back(o);
  }
  void push_string(std::string s) {
    auto o = make(Object::String);
    o->s = std::move(s);
    stack_.push_back(o);
  }
  void push_global(std::string module, std::string name) {
    auto o = make(Object::Global);
    o->s = module + "." + name;
    stack_.push_back(o);
  }
  void push_tuple(std::vector<Ref> items) {
    auto o = make(Object::Tuple);
    o->items = std::move(items);
    stack_.push_back(o);
  }

  void step(uint8_t op);
  Ref call(const Ref& callable, const Ref& args, int depth = 0);
  Ref persistent_load(const Ref& pid);
  Ref rebuild_tensor(const std::vector<Ref>& a);

  const std::string& p_;
  const ZipReader& zip_;
  std::string prefix_, what_;
  size_t pos_ = 0;
  std::vector<Ref> stack_;
  std::map<uint64_t, Ref> memo_;
  std::map<std::string, std::shared_ptr<std::string>> records_;  // storage key -> bytes
  std::vector<Ref> made_;                                        // every object of the pickle (see ~Unpickler)
};

void Unpickler::step(uint8_t op) {
  switch (op) {
    case 0x80: byte(); break;   // PROTO
    case 0x95: uint(8); break;  // FRAME
    case '(': stack_.push_back(make(Object::Mark)); break;
    case 'N': stack_.push_back(make(Object::None)); break;
    case 0x88:
    case 0x89: {  // NEWTRUE, NEWFALSE
      auto o = make(Object::Bool);
      o->i = op == 0x88;
      stack_.push_back(o);
      break;
    }
    case 'K': push_int(static_cast<int64_t>(uint(1))); break;  // BININT1
    case 'M': push_int(static_cast<int64_t>(uint(2))); break;  // BININT2
    case 'J': push_int(static_cast<int32_t>(uint(4))); break;  // BININT
    case 0x8a: {                                               // LONG1
      const uint64_t n = byte();
      if (n > 8) fail("an integer of " + std::to_string(n) + " bytes is too large");
      uint64_t v = n == 0 ? 0 : uint(n);
      if (n > 0 && n < 8 && (v >> (8 * n - 1)) & 1) v |= ~uint64_t{0} << (8 * n);  // sign-extend
      push_int(static_cast<int64_t>(v));
      break;
    }
    case 'G': {  // BINFLOAT, big-endian
      uint64_t bits = 0;
      for (int k = 0; k < 8; ++k) bits = (bits << 8) | byte();
      auto o = make(Object::Float);
      std::memcpy(&o->f, &bits, sizeof bits);
      stack_.push_back(o);
      break;
    }
    case 'X': push_string(bytes(uint(4))); break;   // BINUNICODE
    case 0x8c: push_string(bytes(byte())); break;   // SHORT_BINUNICODE
    case 0x8d: push_string(bytes(uint(8))); break;  // BINUNICODE8
    case 'U': push_string(bytes(byte())); break;    // SHORT_BINSTRING
    case 'T': push_string(bytes(uint(4))); break;   // BINSTRING
    case 'c': {
      std::string module = line();
      push_global(module, line());
      break;
    }             // GLOBAL
    case 0x93: {  // STACK_GLOBAL
      Ref name = pop(), module = pop();
      if (module->kind != Object::String || name->kind != Object::String) fail("STACK_GLOBAL needs two strings");
      push_global(module->s, name->s);
      break;
    }
    case ')': push_tuple({}); break;  // EMPTY_TUPLE
    case 0x85: {
      Ref a = pop();
      push_tuple({a});
      break;
    }  // TUPLE1
    case 0x86: {
      Ref b = pop(), a = pop();
      push_tuple({a, b});
      break;
    }
    case 0x87: {
      Ref c = pop(), b = pop(), a = pop();
      push_tuple({a, b, c});
      break;
    }
    case 't': push_tuple(pop_to_mark()); break;             // TUPLE
    case ']': stack_.push_back(make(Object::List)); break;  // EMPTY_LIST
    case '}': stack_.push_back(make(Object::Dict)); break;  // EMPTY_DICT
    case 'a': {
      Ref v = pop();
      top(Object::List, "APPEND")->items.push_back(v);
      break;
    }
    case 'e': {  // APPENDS
      std::vector<Ref> items = pop_to_mark();
      Ref list = top(Object::List, "APPENDS");
      list->items.insert(list->items.end(), items.begin(), items.end());
      break;
    }
    case 's': {
      Ref v = pop(), k = pop();
      top(Object::Dict, "SETITEM")->entries.emplace_back(k, v);
      break;
    }
    case 'u': {  // SETITEMS
      std::vector<Ref> items = pop_to_mark();
      if (items.size() % 2 != 0) fail("SETITEMS has an odd number of values");
      Ref dict = top(Object::Dict, "SETITEMS");
      for (size_t k = 0; k < items.size(); k += 2) dict->entries.emplace_back(items[k], items[k + 1]);
      break;
    }
    case 'q': memo_put(byte()); break;         // BINPUT
    case 'r': memo_put(uint(4)); break;        // LONG_BINPUT
    case 0x94: memo_put(memo_.size()); break;  // MEMOIZE
    case 'h': memo_get(byte()); break;         // BINGET
    case 'j': memo_get(uint(4)); break;        // LONG_BINGET
    case 'Q': {
      Ref pid = pop();
      stack_.push_back(persistent_load(pid));
      break;
    }  // BINPERSID
    case 'R': {
      Ref args = pop(), f = pop();
      stack_.push_back(call(f, args));
      break;
    }  // REDUCE
    case 0x81: {
      Ref args = pop(), cls = pop();
      stack_.push_back(call(cls, args));
      break;
    }  // NEWOBJ
    case 'b':
      pop();
      if (stack_.empty()) fail("BUILD has no object");
      break;  // state is not needed
    default: {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02x", op);
      fail(std::string("unsupported pickle opcode ") + hex + " (not one torch.save writes for tensors)");
    }
  }
}

Ref Unpickler::persistent_load(const Ref& pid) {
  // torch.save: ('storage', storage_type, key, location, numel)
  if (pid->kind != Object::Tuple || pid->items.size() < 4 || pid->items[0]->kind != Object::String ||
      pid->items[0]->s != "storage" || pid->items[1]->kind != Object::Global || pid->items[2]->kind != Object::String)
    fail("a persistent id that is not a torch storage");
  auto o = make(Object::Storage);
  if (!storage_dtype(pid->items[1]->s, &o->dtype)) fail("storage type " + pid->items[1]->s + " is not supported");
  o->s = pid->items[2]->s;
  return o;
}

Ref Unpickler::rebuild_tensor(const std::vector<Ref>& a) {
  // _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, hooks[, metadata])
  if (a.size() < 4 || a[0]->kind != Object::Storage || a[1]->kind != Object::Int || a[2]->kind != Object::Tuple ||
      a[3]->kind != Object::Tuple)
    fail("torch._utils._rebuild_tensor_v2 with unexpected arguments");
  const Object& storage = *a[0];
  std::vector<int64_t> shape, strides;
  for (const Ref& d : a[2]->items) {
    if (d->kind != Object::Int || d->i < 0) fail("a tensor size that is not a non-negative int");
    shape.push_back(d->i);
  }
  for (const Ref& d : a[3]->items) {
    if (d->kind != Object::Int || d->i < 0) fail("a tensor stride that is not a non-negative int");
    strides.push_back(d->i);
  }
  if (shape.size() != strides.size())
    fail("a tensor with " + std::to_string(shape.size()) + " sizes and " + std::to_string(strides.size()) + " strides");
  auto& record = records_[storage.s];
  if (!record) {
    const std::string name = prefix_ + "data/" + storage.s;
    record = std::make_shared<std::string>(zip_.read(name));
  }
  // The last element's index, checked against the record's size.
  const uint64_t element = dtype_size(storage.dtype);
  uint64_t last = static_cast<uint64_t>(a[1]->i < 0 ? -1 : a[1]->i), count = 1;
  if (a[1]->i < 0) fail("a negative storage offset");
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 0) count = 0;
    uint64_t span;
    if (__builtin_mul_overflow(static_cast<uint64_t>(shape[d] > 0 ? shape[d] - 1 : 0),
                               static_cast<uint64_t>(strides[d]), &span) ||
        __builtin_add_overflow(last, span, &last))
      fail("a tensor whose size overflows");
  }
  uint64_t end_byte;
  if (__builtin_add_overflow(last, 1, &end_byte) || __builtin_mul_overflow(end_byte, element, &end_byte) ||
      (count != 0 && end_byte > record->size()))
    fail("a tensor of " + dtype_name(storage.dtype) + " " + shape_string(shape) + " reaches past the end of storage '" +
         storage.s + "' (" + std::to_string(record->size()) + " bytes; truncated?)");
  std::shared_ptr<std::string> owner = record;
  // (An empty tensor's offset is not checked against the record, and no element is read:
  // one past the record's end would already make an invalid pointer.)
  const uint64_t offset_bytes = static_cast<uint64_t>(a[1]->i) * element;  // <= end_byte: no overflow
  char* data = owner->data() + (offset_bytes <= record->size() ? offset_bytes : 0);
  auto t = make(Object::TensorValue);
  t->tensor = Tensor::from_blob(data, storage.dtype, std::move(shape), std::move(strides), [owner] {});
  return t;
}

Ref Unpickler::call(const Ref& callable, const Ref& args, int depth) {
  if (callable->kind != Object::Global) fail("calls a " + std::string(kind_name(callable->kind)) + ", not a global");
  if (args->kind != Object::Tuple) fail("calls " + callable->s + " without an argument tuple");
  const std::string& f = callable->s;
  const std::vector<Ref>& a = args->items;
  if (f == "torch._utils._rebuild_tensor_v2" || f == "torch._utils._rebuild_tensor") return rebuild_tensor(a);
  if (f == "torch._utils._rebuild_parameter" || f == "torch._utils._rebuild_parameter_with_state") {
    if (a.empty() || a[0]->kind != Object::TensorValue) fail(f + " without a tensor");
    return a[0];
  }
  if (f == "torch._tensor._rebuild_from_type_v2") {  // (func, type, args, state)
    if (a.size() < 3 || a[2]->kind != Object::Tuple) fail(f + " with unexpected arguments");
    // torch wraps one rebuild call in it; a chain of them would recurse without bound.
    if (depth >= 4) fail(f + " nested " + std::to_string(depth + 1) + " deep");
    return call(a[0], a[2], depth + 1);
  }
  if (f == "collections.OrderedDict" && a.empty()) return make(Object::Dict);
  fail("calls " + f + ", which a torch.save state dict does not need; refusing to run it");
}

std::pair<ZipReader, std::string> open_saved(const std::shared_ptr<const std::string>& bytes, const std::string& what) {
  ZipReader zip = ZipReader::open_memory(bytes, what);
  for (const std::string& name : zip.names()) {
    const size_t slash = name.find('/');
    if (slash != std::string::npos && name.substr(slash + 1) == "data.pkl")
      return {std::move(zip), name.substr(0, slash + 1)};
  }
  throw Error(ErrorKind::Io, what + ": not a torch.save archive (it has no <dir>/data.pkl)");
}

// Runs the pickle and hands its root to `take`, which copies out what it returns: the
// objects are freed with the Unpickler (see ~Unpickler), before unpickle() returns.
template <typename Take>
auto unpickle(const std::shared_ptr<const std::string>& bytes, const std::string& what, Take take) {
  auto [zip, prefix] = open_saved(bytes, what);
  const std::string pickle = zip.read(prefix + "data.pkl");
  Unpickler unpickler(pickle, zip, prefix, what);
  return take(*unpickler.run());
}

}  // namespace

std::vector<std::pair<std::string, Tensor>> load_tensor_dict(std::shared_ptr<const std::string> bytes,
                                                             const std::string& what) {
  return unpickle(bytes, what, [&](const Object& root) {
    if (root.kind != Object::Dict)
      throw Error(ErrorKind::Io, what + ": holds a " + kind_name(root.kind) + ", not a dict of tensors");
    std::vector<std::pair<std::string, Tensor>> out;
    for (const auto& [k, v] : root.entries) {
      if (k->kind != Object::String) throw Error(ErrorKind::Io, what + ": a key that is not a string");
      if (v->kind != Object::TensorValue)
        throw Error(ErrorKind::Io, what + ": '" + k->s + "' is a " + kind_name(v->kind) + ", not a tensor");
      out.emplace_back(k->s, v->tensor);
    }
    return out;
  });
}

Tensor load_tensor(std::shared_ptr<const std::string> bytes, const std::string& what) {
  return unpickle(bytes, what, [&](const Object& root) {
    if (root.kind != Object::TensorValue)
      throw Error(ErrorKind::Io, what + ": holds a " + std::string(kind_name(root.kind)) + ", not a tensor");
    return root.tensor;
  });
}

}  // namespace switchyard::pt2
