// libFuzzer target for the RFC 4121 token parser (rpc/gss/krb5_tokens.h),
// with fixed AES keys (no KDC). Byte 0 picks the context (initiator or
// acceptor side, with or without an acceptor subkey, AES-128 or AES-256)
// and the mode:
//   raw MIC / raw Wrap: the rest is a token from the peer; it is checked or
//     opened and must be refused, never crash;
//   mutated MIC / mutated Wrap: the peer makes a genuine token over the
//     rest (Wrap: sealed or not, rotated by an RRC from the input), then one
//     byte of it is XORed with an input byte: it must open exactly when
//     nothing changed.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <vector>

#include "rpc/gss/krb5_tokens.h"

namespace nfs3d::rpc::gss::krb5 {
namespace {

struct Pair {
  std::unique_ptr<Krb5Tokens> us;    // the side under test
  std::unique_ptr<Krb5Tokens> peer;  // the other side
};

std::unique_ptr<Krb5Tokens> Make(int32_t enctype, bool subkey, bool initiator) {
  ContextKeys k;
  k.context_key_type = enctype;
  k.context_key.assign(KeyLength(enctype), 0x21);
  if (subkey) {
    k.acceptor_subkey_type = enctype;
    k.acceptor_subkey.assign(KeyLength(enctype), 0x43);
  }
  k.initiator = initiator;
  auto t = Krb5Tokens::Create(k);
  if (!t.ok()) std::abort();
  return std::move(*t);
}

Pair* pairs = nullptr;  // 8 of them for the process, reachable for the leak checker

const Pair& PairFor(uint8_t which) {
  if (pairs == nullptr) {
    pairs = new Pair[8];
    for (int i = 0; i < 8; ++i) {
      const int32_t enctype = (i & 4) ? kAes256CtsHmacSha1 : kAes128CtsHmacSha1;
      const bool subkey = (i & 2) != 0;
      const bool initiator = (i & 1) != 0;
      pairs[i] = {Make(enctype, subkey, initiator), Make(enctype, subkey, !initiator)};
    }
  }
  return pairs[which & 7];
}

void Check(bool ok) {
  if (!ok) std::abort();
}

}  // namespace
}  // namespace nfs3d::rpc::gss::krb5

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace nfs3d::rpc::gss::krb5;
  if (size < 6) return 0;
  const Pair& p = PairFor(data[0] >> 2);
  const int mode = data[0] & 3;
  const uint8_t seal = data[1] & 1;
  const uint16_t rrc = data[2];
  const size_t where = static_cast<size_t>(data[3]) << 8 | data[4];
  const uint8_t flip = data[5];
  std::vector<uint8_t> rest(data + 6, data + size);
  const std::vector<uint8_t> message = {'m', 's', 'g'};
  const absl::Span<const uint8_t> msg_pieces[] = {message};
  const absl::Span<const uint8_t> rest_pieces[] = {rest};
  bool sealed = false;
  switch (mode) {
    case 0:
      Check(!p.us->VerifyMic(msg_pieces, rest) || rest.size() == Krb5Tokens::kMicLen);
      break;
    case 1:
      p.us->Unwrap(absl::MakeSpan(rest), &sealed);
      break;
    case 2: {
      std::vector<uint8_t> mic(Krb5Tokens::kMicLen);
      Check(p.peer->GetMic(rest_pieces, mic.data()));
      mic[where % mic.size()] ^= flip;
      Check(p.us->VerifyMic(rest_pieces, mic) == (flip == 0));
      break;
    }
    case 3: {
      std::vector<uint8_t> token(Krb5Tokens::WrapSize(rest.size(), seal));
      std::copy(rest.begin(), rest.end(), token.begin() + Krb5Tokens::WrapDataOffset(seal));
      Check(p.peer->Wrap(absl::MakeSpan(token), rest.size(), seal));
      // Rotate the body right by rrc and say so in the header.
      const auto body = token.begin() + Krb5Tokens::kHeader;
      std::rotate(body, token.end() - rrc % (token.end() - body), token.end());
      token[6] = 0;
      token[7] = static_cast<uint8_t>(rrc);
      token[where % token.size()] ^= flip;
      std::optional<absl::Span<uint8_t>> plain = p.us->Unwrap(absl::MakeSpan(token), &sealed);
      if (flip == 0) {
        Check(plain.has_value() && sealed == (seal != 0) &&
              std::equal(plain->begin(), plain->end(), rest.begin(), rest.end()));
      }
      break;
    }
  }
  return 0;
}
