// krb5_crypto_floor: the least CPU per GB that Kerberos integrity (krb5i) and
// privacy (krb5p) add to bulk data, with nfs3d's own per-message tokens
// (rpc/gss/krb5_tokens.h, aes256-cts-hmac-sha1-96) and no RPC, no copies, no
// sockets. Per 1 MiB message, one thread times each step alone:
//   mic     the sender's MIC token over the message       (krb5i)
//   verify  the receiver's check of that MIC              (krb5i)
//   seal    the sender's sealed Wrap token, in place       (krb5p)
//   unseal  the receiver's Unwrap of it, in place          (krb5p)
// Every byte of a krb5i call pays mic + verify once, a krb5p call seal +
// unseal, wherever the two ends run. And per call, whatever the service:
//   call_mics  the four MICs of RPCSEC_GSS (RFC 2203 §5.3.1, §5.3.3.2): the
//              call's verifier over its header (60 bytes here) made and
//              checked, the reply's over the sequence number made and checked bench/krb5.sh adds
//              these to the sys
// row's client and server CPU per GB to bound what krb5i/krb5p can reach when
// both ends share this machine's cores.
//
// usage: krb5_crypto_floor [MIB_PER_STEP]   (default 512)
// prints: {"mic_s_per_gb":0.55,"verify_s_per_gb":0.55,"seal_s_per_gb":1.9,"unseal_s_per_gb":1.2,
//          "call_mics_us":0.6}
#include <openssl/rand.h>
#include <time.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/types/span.h"

#include "rpc/gss/krb5_tokens.h"

namespace {

namespace krb5 = nfs3d::rpc::gss::krb5;

constexpr size_t kMessage = 1 << 20;

double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

// CPU seconds per GB of `step` run `count` times over kMessage bytes each.
template <typename Step>
double SecondsPerGb(int count, Step&& step) {
  const double start = ThreadCpuSeconds();
  for (int i = 0; i < count; ++i) {
    if (!step()) {
      std::fprintf(stderr, "krb5_crypto_floor: a token did not check\n");
      std::exit(1);
    }
  }
  return (ThreadCpuSeconds() - start) / (static_cast<double>(count) * kMessage / 1e9);
}

// Both ends of one context, from the same random aes256 session key.
std::pair<std::unique_ptr<krb5::Krb5Tokens>, std::unique_ptr<krb5::Krb5Tokens>> ContextPair() {
  krb5::ContextKeys keys;
  keys.context_key_type = krb5::kAes256CtsHmacSha1;
  keys.context_key.resize(krb5::KeyLength(keys.context_key_type));
  RAND_bytes(keys.context_key.data(), static_cast<int>(keys.context_key.size()));
  keys.initiator = true;
  auto sender = krb5::Krb5Tokens::Create(keys);
  keys.initiator = false;
  auto receiver = krb5::Krb5Tokens::Create(keys);
  if (!sender.ok() || !receiver.ok()) {
    std::fprintf(
        stderr, "krb5_crypto_floor: no tokens: %s\n",
        std::string((sender.ok() ? receiver.status() : sender.status()).message()).c_str());
    std::exit(1);
  }
  return {std::move(*sender), std::move(*receiver)};
}

}  // namespace

int main(int argc, char** argv) {
  int mib = 512;
  if (argc > 1 && (!absl::SimpleAtoi(argv[1], &mib) || mib <= 0)) {
    std::fprintf(stderr, "usage: krb5_crypto_floor [MIB_PER_STEP]\n");
    return 2;
  }
  // Not a structured binding: clang 14 cannot capture those in a lambda.
  const auto pair = ContextPair();
  const std::unique_ptr<krb5::Krb5Tokens>& sender = pair.first;
  const std::unique_ptr<krb5::Krb5Tokens>& receiver = pair.second;

  std::vector<uint8_t> message(kMessage, 0x5a);
  const absl::Span<const uint8_t> pieces[] = {message};
  uint8_t mic[krb5::Krb5Tokens::kMicLen];
  const double mic_s = SecondsPerGb(mib, [&] { return sender->GetMic(pieces, mic); });
  const double verify_s = SecondsPerGb(mib, [&] { return receiver->VerifyMic(pieces, mic); });

  // One sealed token, unsealed after each seal so the next seal starts from
  // plaintext again; the two are timed apart.
  std::vector<uint8_t> token(krb5::Krb5Tokens::WrapSize(kMessage, /*seal=*/true));
  const size_t data_at = krb5::Krb5Tokens::WrapDataOffset(/*seal=*/true);
  double seal_s = 0, unseal_s = 0;
  for (int i = 0; i < mib; ++i) {
    std::fill(token.begin() + data_at, token.begin() + data_at + kMessage, 0x5a);
    seal_s += SecondsPerGb(1, [&] { return sender->Wrap(absl::MakeSpan(token), kMessage, true); });
    bool sealed = false;
    unseal_s += SecondsPerGb(
        1, [&] { return receiver->Unwrap(absl::MakeSpan(token), &sealed).has_value() && sealed; });
  }
  // The four MICs of one call, a million times.
  constexpr int kCalls = 1000000;
  const std::vector<uint8_t> header(60, 0x11);
  const uint8_t seq[4] = {0, 0, 0, 42};
  const absl::Span<const uint8_t> header_piece[] = {header};
  const absl::Span<const uint8_t> seq_piece[] = {seq};
  uint8_t call_mic[krb5::Krb5Tokens::kMicLen];
  uint8_t reply_mic[krb5::Krb5Tokens::kMicLen];
  const double start = ThreadCpuSeconds();
  for (int i = 0; i < kCalls; ++i) {
    if (!sender->GetMic(header_piece, call_mic) || !receiver->VerifyMic(header_piece, call_mic) ||
        !receiver->GetMic(seq_piece, reply_mic) || !sender->VerifyMic(seq_piece, reply_mic)) {
      std::fprintf(stderr, "krb5_crypto_floor: a call's MIC did not check\n");
      return 1;
    }
  }
  const double call_mics_us = (ThreadCpuSeconds() - start) / kCalls * 1e6;
  std::printf(
      "{\"mic_s_per_gb\":%.3f,\"verify_s_per_gb\":%.3f,\"seal_s_per_gb\":%.3f,"
      "\"unseal_s_per_gb\":%.3f,\"call_mics_us\":%.3f}\n",
      mic_s, verify_s, seal_s / mib, unseal_s / mib, call_mics_us);
  return 0;
}
