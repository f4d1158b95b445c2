// Each XDR type is described once: NFS3D_XDR(T) { v(x.a, x.b); ... } hands
// T's fields in wire order to a visitor that decodes into x, or encodes or
// measures x; unions are `if`s on a discriminant visited first. docs/xdr.md
// lists the field kinds and wrappers and says why this is not a generator.
#ifndef NFS3D_XDR_DESCRIBE_H_
#define NFS3D_XDR_DESCRIBE_H_

#include <algorithm>
#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "absl/types/span.h"

#include "xdr/decoder.h"
#include "xdr/encoder.h"

// Opens the description of one type, or of several that share it: a template
// over the visitor V and the possibly-const type S, with parameters v and x.
#define NFS3D_XDR(...)                                              \
  template <typename V, typename S>                                 \
  requires ::nfs3d::xdr::OneOf<std::remove_const_t<S>, __VA_ARGS__> \
  void Xdr(V& v, S& x)

namespace nfs3d::xdr {

template <typename T, typename... Ts>
concept OneOf = (std::same_as<T, Ts> || ...);

struct EnumRange {
  uint32_t lo;
  uint32_t hi;
};

// string<max> or opaque<max> held in std::string, std::string_view (borrows
// from the message) or absl::Span<const uint8_t> (borrows).
template <typename S>
struct Var {
  S& s;
  uint32_t max;
};
template <typename S>
Var<S> Bounded(S& s, uint32_t max) {
  return {s, max};
}

// A sequence: Counted is T array<max> (a count, then the elements; a
// hostile count is refused against min_size bytes per element left); Chain
// is a linked list as XDR writes it (`entry *next`: TRUE before each element,
// FALSE at the end), at most max elements, elem_max bounding string elements.
enum class SeqForm { kCounted, kChained };
template <typename Vec, SeqForm kForm>
struct Seq {
  Vec& vec;
  size_t max;
  size_t aux;  // kCounted: min_size; kChained: elem_max
};
template <typename Vec>
Seq<Vec, SeqForm::kCounted> Counted(Vec& vec, uint32_t max, size_t min_size = 4) {
  return {vec, max, min_size};
}
template <typename Vec>
Seq<Vec, SeqForm::kChained> Chain(Vec& vec, size_t max, uint32_t elem_max = 0) {
  return {vec, max, elem_max};
}
// A chain's element as a field: strings get the chain's elem_max.
template <typename T>
decltype(auto) Element(T& el, size_t elem_max) {
  if constexpr (std::is_same_v<std::remove_const_t<T>, std::string>) {
    return Bounded(el, static_cast<uint32_t>(elem_max));
  } else {
    return (el);
  }
}

// opaque<N> kept inline as data[N] plus a length byte (file handles).
template <typename D, typename L>
struct InlineOpaque {
  D& data;
  L& len;
};
template <typename D, typename L>
InlineOpaque<D, L> Inline(D& data, L& len) {
  return {data, len};
}

class DecodeVisitor;
template <typename Out>
class WriteVisitor;

// A type is described when its namespace has an Xdr() for it.
template <typename T>
concept Described = requires(DecodeVisitor& v, T& x) {
  Xdr(v, x);
};

template <typename E>
concept RangedEnum = std::is_enum_v<E> && requires(E e) {
  { XdrRange(e) } -> std::same_as<EnumRange>;
};

class DecodeVisitor {
 public:
  static constexpr bool kDecoding = true;
  explicit DecodeVisitor(Decoder& d) : d_(d) {}

  template <typename... F>
  void operator()(F&&... fields) {
    (Field(fields), ...);
  }
  void Check(bool cond) {
    if (!cond) d_.Fail();
  }

  void Field(uint32_t& f) { f = d_.U32(); }
  void Field(int32_t& f) { f = d_.I32(); }
  void Field(uint64_t& f) { f = d_.U64(); }
  void Field(int64_t& f) { f = d_.I64(); }
  void Field(bool& f) { f = d_.Bool(); }
  template <typename E>
  requires std::is_enum_v<E>
  void Field(E& f) {
    const uint32_t raw = d_.U32();
    if constexpr (RangedEnum<E>) Check(raw >= XdrRange(E{}).lo && raw <= XdrRange(E{}).hi);
    f = static_cast<E>(raw);
  }
  template <size_t N>
  void Field(uint8_t (&f)[N]) {
    Fixed(f, N);
  }
  template <size_t N>
  void Field(std::array<uint8_t, N>& f) {
    Fixed(f.data(), N);
  }
  template <typename T>
  void Field(std::optional<T>& f) {
    if (d_.Bool()) {
      Field(f.emplace());
    } else {
      f.reset();
    }
  }
  template <Described T>
  void Field(T& f) {
    Xdr(*this, f);
  }

  template <typename S>
  void Field(Var<S> f) {
    if constexpr (std::is_same_v<S, absl::Span<const uint8_t>>) {
      f.s = d_.Opaque(f.max);
    } else {
      f.s = S(d_.String(f.max));
    }
  }
  template <typename Vec>
  void Field(Seq<Vec, SeqForm::kCounted> f) {
    f.vec.resize(d_.ArrayLength(static_cast<uint32_t>(f.max), f.aux));
    for (auto& el : f.vec) Field(el);
  }
  template <typename Vec>
  void Field(Seq<Vec, SeqForm::kChained> f) {
    f.vec.clear();
    while (d_.Bool()) {
      Check(f.vec.size() < f.max);
      if (!d_.ok()) return;
      Field(Element(f.vec.emplace_back(), f.aux));
    }
  }
  template <typename D, typename L>
  void Field(InlineOpaque<D, L> f) {
    constexpr size_t kCap = std::extent_v<D>;
    absl::Span<const uint8_t> bytes = d_.Opaque(kCap);
    f.len = static_cast<L>(bytes.size());
    if (!bytes.empty()) std::memcpy(f.data, bytes.data(), bytes.size());
    std::memset(f.data + bytes.size(), 0, kCap - bytes.size());
  }

 private:
  void Fixed(uint8_t* out, size_t n) {
    absl::Span<const uint8_t> bytes = d_.FixedOpaque(n);
    if (d_.ok()) std::memcpy(out, bytes.data(), n);
  }

  Decoder& d_;
};

// Counts the bytes an Encoder would write: WriteVisitor<Counter> is the sizer.
class Counter {
 public:
  void U32(uint32_t) { n_ += 4; }
  void U64(uint64_t) { n_ += 8; }
  void Bool(bool) { n_ += 4; }
  void FixedOpaque(absl::Span<const uint8_t> b) { n_ += PadTo4(b.size()); }
  void Opaque(absl::Span<const uint8_t> b) { n_ += 4 + PadTo4(b.size()); }
  void String(std::string_view s) { n_ += 4 + PadTo4(s.size()); }
  size_t bytes() const { return n_; }

 private:
  size_t n_ = 0;
};

// Writes into a span sized beforehand with SizeOf: a few bytes patched into
// place (WriteVisitor<SpanWriter>, through EncodeInto).
class SpanWriter {
 public:
  explicit SpanWriter(absl::Span<uint8_t> out) : out_(out) {}
  void U32(uint32_t v) {
    for (int shift = 24; shift >= 0; shift -= 8) out_[n_++] = static_cast<uint8_t>(v >> shift);
  }
  void U64(uint64_t v) {
    U32(static_cast<uint32_t>(v >> 32));
    U32(static_cast<uint32_t>(v));
  }
  void Bool(bool v) { U32(v ? 1 : 0); }
  void FixedOpaque(absl::Span<const uint8_t> b) {
    uint8_t* p = out_.subspan(n_, PadTo4(b.size())).data();
    if (!b.empty()) std::memcpy(p, b.data(), b.size());
    std::memset(p + b.size(), 0, PadTo4(b.size()) - b.size());
    n_ += PadTo4(b.size());
  }
  void Opaque(absl::Span<const uint8_t> b) {
    U32(static_cast<uint32_t>(b.size()));
    FixedOpaque(b);
  }
  void String(std::string_view s) {
    Opaque(absl::Span<const uint8_t>(reinterpret_cast<const uint8_t*>(s.data()), s.size()));
  }

 private:
  absl::Span<uint8_t> out_;
  size_t n_ = 0;
};

// Encodes (Out = Encoder), measures (Out = Counter) or patches in (Out =
// SpanWriter) a value.
template <typename Out>
class WriteVisitor {
 public:
  static constexpr bool kDecoding = false;
  explicit WriteVisitor(Out& out) : out_(out) {}

  template <typename... F>
  void operator()(const F&... fields) {
    (Field(fields), ...);
  }
  void Check(bool) {}

  void Field(uint32_t f) { out_.U32(f); }
  void Field(int32_t f) { out_.U32(static_cast<uint32_t>(f)); }
  void Field(uint64_t f) { out_.U64(f); }
  void Field(int64_t f) { out_.U64(static_cast<uint64_t>(f)); }
  void Field(bool f) { out_.Bool(f); }
  template <typename E>
  requires std::is_enum_v<E>
  void Field(E f) { out_.U32(static_cast<uint32_t>(f)); }
  template <size_t N>
  void Field(const uint8_t (&f)[N]) {
    out_.FixedOpaque(absl::Span<const uint8_t>(f, N));
  }
  template <size_t N>
  void Field(const std::array<uint8_t, N>& f) {
    out_.FixedOpaque(f);
  }
  template <typename T>
  void Field(const std::optional<T>& f) {
    out_.Bool(f.has_value());
    if (f) Field(*f);
  }
  template <Described T>
  void Field(const T& f) {
    Xdr(*this, f);
  }

  template <typename S>
  void Field(Var<S> f) {
    if constexpr (std::is_same_v<std::remove_const_t<S>, absl::Span<const uint8_t>>) {
      out_.Opaque(f.s);
    } else {
      out_.String(std::string_view(f.s));
    }
  }
  template <typename Vec>
  void Field(Seq<Vec, SeqForm::kCounted> f) {
    out_.U32(static_cast<uint32_t>(f.vec.size()));
    for (const auto& el : f.vec) Field(el);
  }
  template <typename Vec>
  void Field(Seq<Vec, SeqForm::kChained> f) {
    for (const auto& el : f.vec) {
      out_.Bool(true);
      Field(Element(el, f.aux));
    }
    out_.Bool(false);
  }
  template <typename D, typename L>
  void Field(InlineOpaque<D, L> f) {
    out_.Opaque(absl::Span<const uint8_t>(f.data, f.len));
  }

 private:
  Out& out_;
};

// A field stored wider than it travels (NLM v1/v3 ranges: uint64 in memory,
// uint32 on the wire).
template <typename V, typename S>
void AsU32(V& v, S& x) {
  if constexpr (V::kDecoding) {
    uint32_t narrow = 0;
    v(narrow);
    x = narrow;
  } else {
    v(static_cast<uint32_t>(x));
  }
}

// The entry points, found by argument-dependent lookup through Decoder and
// Encoder (and re-exported into each program's namespace for qualified calls).
template <typename T>
concept Visitable = requires(DecodeVisitor& v, T& x) {
  v.Field(x);
};

// Decode starts from T{}, so arms and optionals the input leaves out are
// empty even when *x is reused.
template <Visitable T>
bool Decode(Decoder& d, T* x) {
  *x = T{};
  DecodeVisitor v(d);
  v.Field(*x);
  return d.ok();
}

template <Visitable T>
void Encode(Encoder& e, const T& x) {
  WriteVisitor<Encoder> v(e);
  v.Field(x);
}

// Encodes x into out, which holds exactly SizeOf(x) bytes.
template <Visitable T>
void EncodeInto(absl::Span<uint8_t> out, const T& x) {
  SpanWriter w(out);
  WriteVisitor<SpanWriter> v(w);
  v.Field(x);
}

// What a description visits, measured or encoded on its own (e.g. the part
// of a structure before bulk data): Measure(x, [](auto& v, auto& x) {...}).
template <typename T, typename Fn>
size_t Measure(const T& x, Fn describe) {
  Counter c;
  WriteVisitor<Counter> v(c);
  describe(v, x);
  return c.bytes();
}

// Bytes Encode(x) writes.
template <Visitable T>
size_t SizeOf(const T& x) {
  return Measure(x, [](auto& v, const T& y) { v.Field(y); });
}

}  // namespace nfs3d::xdr

#endif  // NFS3D_XDR_DESCRIBE_H_
