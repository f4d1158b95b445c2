#include "rpc/gss/gss_server.h"

#include <gssapi/gssapi_ext.h>
#include <netinet/in.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <optional>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include <gssapi/gssapi_krb5.h>

#include "common/log.h"
#include "rpc/gss/gss_body.h"
#include "rpc/gss/gss_identity.h"
#include "rpc/gss/gss_util.h"
#include "rpc/gss/rpcsec_gss_types.h"
#include "xdr/decoder.h"
#include "xdr/describe.h"
#include "xdr/encoder.h"

namespace nfs3d::rpc::gss {
namespace {

void AuthError(xdr::BufferChain* reply, uint32_t xid, uint32_t stat) {
  reply->Clear();
  xdr::Encoder out(reply);
  EncodeAuthErrorReply(out, xid, static_cast<AuthStat>(stat));
}

// An accepted reply's header with an RPCSEC_GSS verifier (or AUTH_NONE when
// mic is empty: failed context creation).
void AcceptedHeader(xdr::Encoder& out, uint32_t xid, absl::Span<const uint8_t> mic,
                    uint32_t accept_stat) {
  ReplyHeader h{.xid = xid, .accept_stat = accept_stat};
  if (!mic.empty()) h.verf = OpaqueAuth{kRpcsecGss, mic};
  xdr::Encode(out, h);
}

// The client's host (no port) as raw bytes: the unit half-open contexts are
// bounded by. An IPv4-mapped IPv6 address counts as the IPv4 one.
std::string HostKey(const sockaddr_storage& peer) {
  if (peer.ss_family == AF_INET) {
    const auto* sin = reinterpret_cast<const sockaddr_in*>(&peer);
    return std::string(reinterpret_cast<const char*>(&sin->sin_addr), sizeof(sin->sin_addr));
  }
  if (peer.ss_family == AF_INET6) {
    const auto* sin6 = reinterpret_cast<const sockaddr_in6*>(&peer);
    const char* bytes = reinterpret_cast<const char*>(&sin6->sin6_addr);
    if (IN6_IS_ADDR_V4MAPPED(&sin6->sin6_addr)) return std::string(bytes + 12, 4);
    return std::string(bytes, sizeof(sin6->sin6_addr));
  }
  return std::string();  // other families (tests): one address for all
}

bool IsKrb5(gss_const_OID mech) {
  return mech != GSS_C_NO_OID && mech->length == gss_mech_krb5->length &&
         std::memcmp(mech->elements, gss_mech_krb5->elements, mech->length) == 0;
}

}  // namespace

struct GssServer::DataCall : WrappingFlavor::Call {
  std::shared_ptr<GssContext> ctx;
  uint32_t xid = 0;
  uint32_t seq = 0;
  GssService service = GssService::kNone;
  std::unique_ptr<uint8_t[]> plain;  // krb5p: the unwrapped arguments live here
};

absl::StatusOr<std::unique_ptr<GssServer>> GssServer::Create(GssServerOptions options) {
  OM_uint32 minor = 0;
  gss_name_t name = GSS_C_NO_NAME;
  if (!options.principal.empty()) {
    const bool hostbased = !absl::StrContains(options.principal, "/");
    gss_buffer_desc text{options.principal.size(), options.principal.data()};
    OM_uint32 major = gss_import_name(
        &minor, &text, hostbased ? GSS_C_NT_HOSTBASED_SERVICE : GSS_KRB5_NT_PRINCIPAL_NAME, &name);
    if (GSS_ERROR(major)) {
      return absl::InvalidArgumentError(absl::StrCat("kerberos principal '", options.principal,
                                                     "': ", GssErrorText(major, minor)));
    }
  }
  gss_key_value_element_desc element{"keytab", options.keytab.c_str()};
  gss_key_value_set_desc store{1, &element};
  gss_cred_id_t cred = GSS_C_NO_CREDENTIAL;
  // Kerberos only: with no mechanism named, the credential would also take
  // SPNEGO (and its rounds of negotiation) from anyone.
  gss_OID_set_desc krb5{1, gss_mech_krb5};
  OM_uint32 major = gss_acquire_cred_from(
      &minor, name, GSS_C_INDEFINITE, options.krb5_only ? &krb5 : GSS_C_NO_OID_SET, GSS_C_ACCEPT,
      options.keytab.empty() ? nullptr : &store, &cred, nullptr, nullptr);
  if (name != GSS_C_NO_NAME) gss_release_name(&minor, &name);
  if (GSS_ERROR(major)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "kerberos: no acceptor credential for '",
        options.principal.empty() ? "any principal" : options.principal, "' in keytab '",
        options.keytab.empty() ? "(default)" : options.keytab, "': ", GssErrorText(major, minor)));
  }
  if (!options.map) options.map = MapInitiator;
  return std::unique_ptr<GssServer>(new GssServer(std::move(options), cred));
}

GssServer::GssServer(GssServerOptions options, gss_cred_id_t cred)
    : options_(std::move(options)),
      cred_(cred),
      table_(GssContextLimits{.max_contexts = options_.max_contexts,
                              .max_half_open = options_.max_half_open,
                              .max_half_open_per_address = options_.max_half_open_per_address,
                              .half_open_lifetime = options_.half_open_lifetime}) {}

GssServer::~GssServer() {
  OM_uint32 minor = 0;
  gss_release_cred(&minor, &cred_);
}

uint32_t GssServer::flavor() const { return kRpcsecGss; }

WrappingFlavor::Verdict GssServer::Accept(absl::Span<const uint8_t> message,
                                          const CallHeader& header, size_t args_offset,
                                          const TransportInfo& transport,
                                          std::unique_ptr<Call>* call, xdr::BufferChain* reply) {
  GssCred cred;
  xdr::Decoder in(header.cred.body);
  if (!xdr::Decode(in, &cred) || in.remaining() != 0) {
    AuthError(reply, header.xid, static_cast<uint32_t>(AuthStat::kBadCred));
    return Verdict::kRefused;
  }
  switch (cred.proc) {
    case GssProc::kInit:
    case GssProc::kContinueInit:
      // §5.2.2: context creation is a NULL call with an AUTH_NONE verifier.
      if (header.proc != 0 || header.verf.flavor != kAuthNone ||
          (cred.proc == GssProc::kInit) != cred.handle.empty()) {
        AuthError(reply, header.xid, static_cast<uint32_t>(AuthStat::kBadCred));
        return Verdict::kRefused;
      }
      return Init(header, cred.handle, cred.proc == GssProc::kInit, message.subspan(args_offset),
                  transport, reply);
    case GssProc::kData:
    case GssProc::kDestroy:
      return Data(message, header, args_offset, transport.answered_early, call, reply);
  }
  return Verdict::kDrop;
}

WrappingFlavor::Verdict GssServer::Init(const CallHeader& header, absl::Span<const uint8_t> handle,
                                        bool first, absl::Span<const uint8_t> args,
                                        const TransportInfo& transport, xdr::BufferChain* reply) {
  const absl::Time now = options_.now();
  std::shared_ptr<GssContext> ctx =
      first ? std::make_shared<GssContext>(options_.seq_window) : table_.Find(handle, now);
  if (ctx == nullptr || ctx->established.load()) {
    AuthError(reply, header.xid, kAuthStatCredProblem);
    return Verdict::kRefused;
  }
  GssInitArg arg;
  xdr::Decoder in(args);
  if (!xdr::Decode(in, &arg) || in.remaining() != 0) {
    if (!first) table_.Erase(ctx->handle);
    xdr::Encoder out(reply);
    EncodeAcceptedReply(out, header.xid, AcceptStat::kGarbageArgs);
    return Verdict::kGarbageArgs;
  }
  OutBuffer token;
  OutBuffer mic;
  GssInitRes res;
  if (arg.token.empty()) {
    // Every mechanism's first token says which it is: an empty one is no
    // start of anything (SPNEGO would answer it and keep a context).
    res.major = GSS_S_DEFECTIVE_TOKEN;
  } else {
    absl::MutexLock lock(&ctx->mu);
    gss_buffer_desc input = In(arg.token);
    gss_name_t initiator = GSS_C_NO_NAME;
    gss_OID mech = GSS_C_NO_OID;
    OM_uint32 minor = 0;
    OM_uint32 time_rec = 0;
    OM_uint32 major =
        gss_accept_sec_context(&minor, &ctx->gss, cred_, &input, GSS_C_NO_CHANNEL_BINDINGS,
                               &initiator, &mech, &token.b, nullptr, &time_rec, nullptr);
    if (!GSS_ERROR(major) && options_.krb5_only && !IsKrb5(mech)) major = GSS_S_BAD_MECH;
    res.major = major;
    res.minor = minor;
    res.seq_window = ctx->window.size();
    res.token = token.span();
    if (GSS_ERROR(major)) {
      NFS3D_LOG_DEBUG("rpcsec_gss: context creation refused: %s", GssErrorText(major, minor));
    }
    if (major == GSS_S_COMPLETE) {
      ctx->identity = options_.map(initiator);
      ctx->expiry = now + (time_rec == GSS_C_INDEFINITE
                               ? options_.max_lifetime
                               : std::min(options_.max_lifetime, absl::Seconds(time_rec)));
      // §5.2.3.1: the verifier is a MIC over the window size. Then the
      // context's per-message tokens leave GSS-API's hands (TakeOver).
      const std::array<uint8_t, 4> window = BigEndian(res.seq_window);
      gss_buffer_desc msg = In(window);
      if (GSS_ERROR(gss_get_mic(&minor, ctx->gss, GSS_C_QOP_DEFAULT, &msg, &mic.b)) ||
          (ctx->protection = TakeOver(&ctx->gss, options_.gssapi_only)) == nullptr) {
        res.major = GSS_S_FAILURE;
      } else {
        ctx->established.store(true);
        NFS3D_LOG_DEBUG("rpcsec_gss: context for %s (uid %u), tokens by %s",
                        ctx->identity.principal, ctx->identity.uid, ctx->protection->kind());
      }
    }
    if (initiator != GSS_C_NO_NAME) gss_release_name(&minor, &initiator);
  }
  // The table is never entered while a context's lock is held.
  Keep(ctx, first, res.major, transport, now);
  if (!GSS_ERROR(res.major)) res.handle = ctx->handle;
  xdr::Encoder out(reply);
  AcceptedHeader(out, header.xid,
                 ctx->established.load() ? mic.span() : absl::Span<const uint8_t>(),
                 static_cast<uint32_t>(AcceptStat::kSuccess));
  xdr::Encode(out, res);
  return Verdict::kReplied;
}

void GssServer::Keep(const std::shared_ptr<GssContext>& ctx, bool first, OM_uint32 major,
                     const TransportInfo& transport, absl::Time now) {
  if (GSS_ERROR(major)) {
    if (!first) table_.Erase(ctx->handle);
  } else if (ctx->established.load()) {
    if (first) {
      table_.Insert(ctx, now);
    } else {
      table_.Promote(ctx, now);
    }
  } else if (first) {
    // CONTINUE_NEEDED: the client has proved nothing yet.
    table_.InsertHalfOpen(ctx, HostKey(transport.peer), now);
  }
}

WrappingFlavor::Verdict GssServer::Data(absl::Span<const uint8_t> message, const CallHeader& header,
                                        size_t args_offset, bool rerun, std::unique_ptr<Call>* call,
                                        xdr::BufferChain* reply) {
  GssCred cred;
  xdr::Decoder cred_in(header.cred.body);
  xdr::Decode(cred_in, &cred);  // Accept checked it
  const absl::Time now = options_.now();
  std::shared_ptr<GssContext> ctx = table_.Find(cred.handle, now);
  if (ctx == nullptr || !ctx->established.load()) {
    AuthError(reply, header.xid, kAuthStatCredProblem);
    return Verdict::kRefused;
  }
  if (now >= ctx->expiry || cred.seq_num >= kMaxSeq) {
    table_.Erase(ctx->handle);
    AuthError(reply, header.xid, kAuthStatCtxProblem);
    return Verdict::kRefused;
  }
  if (header.verf.flavor != kRpcsecGss) {
    AuthError(reply, header.xid, static_cast<uint32_t>(AuthStat::kBadVerf));
    return Verdict::kRefused;
  }
  // §5.3.1: the verifier is a MIC over the header from the xid to the end
  // of the credential (whose body the decoder borrowed from the message).
  const size_t cred_end = static_cast<size_t>(header.cred.body.data() - message.data()) +
                          xdr::PadTo4(header.cred.body.size());
  GssProtection& protection = *ctx->protection;
  const absl::Span<const uint8_t> head[] = {message.first(cred_end)};
  const GssProtection::Check check = protection.VerifyMic(head, header.verf.body);
  bool fresh = false;
  if (check == GssProtection::Check::kGood) {
    // Only after the MIC: a forged header must not move the window. A rerun
    // (the same bytes, answered early by the server itself) was in it.
    absl::MutexLock lock(&ctx->mu);
    fresh = rerun || ctx->window.Accept(cred.seq_num);
  }
  if (check != GssProtection::Check::kGood) {
    const bool expired = check == GssProtection::Check::kExpired;
    if (expired) table_.Erase(ctx->handle);
    AuthError(reply, header.xid, expired ? kAuthStatCtxProblem : kAuthStatCredProblem);
    return Verdict::kRefused;
  }
  if (!fresh) return Verdict::kDrop;

  auto data = std::make_unique<DataCall>();
  data->ctx = ctx;
  data->xid = header.xid;
  data->seq = cred.seq_num;
  data->service = cred.service;
  if (cred.proc == GssProc::kDestroy) {
    // §5.4: a plain NULL reply with the usual verifier, then the context goes.
    xdr::Encoder out(reply);
    EncodeAcceptedReply(out, header.xid, AcceptStat::kSuccess);
    data->service = GssService::kNone;
    const bool sealed = Seal(*data, reply);
    table_.Erase(ctx->handle);
    return sealed ? Verdict::kReplied : Verdict::kDrop;
  }

  const GssIdentity& id = ctx->identity;
  data->cred.flavor = PseudoFlavor(cred.service);
  data->cred.machine = id.principal;
  data->cred.anonymous = !id.mapped;
  data->cred.uid = id.uid;
  data->cred.gid = id.gid;
  data->cred.gids = id.gids;
  data->drc_identity = id.principal;  // data->ctx keeps it alive

  const absl::Span<const uint8_t> wire = message.subspan(args_offset);
  std::optional<absl::Span<const uint8_t>> args;
  switch (cred.service) {
    case GssService::kNone:
      args = wire;
      break;
    case GssService::kIntegrity:
      args = OpenIntegData(protection, cred.seq_num, wire);
      break;
    case GssService::kPrivacy: {
      // Unwrapped in place, in a copy the call owns (the message is not ours
      // to change).
      data->plain = std::make_unique_for_overwrite<uint8_t[]>(wire.size());
      std::copy(wire.begin(), wire.end(), data->plain.get());
      args = OpenPrivData(protection, cred.seq_num, absl::MakeSpan(data->plain.get(), wire.size()));
      break;
    }
  }
  if (!args.has_value()) {
    xdr::Encoder out(reply);
    EncodeAcceptedReply(out, header.xid, AcceptStat::kGarbageArgs);
    data->service = GssService::kNone;
    return Seal(*data, reply) ? Verdict::kGarbageArgs : Verdict::kDrop;
  }
  data->args = *args;
  data->seal_reads_results = cred.service != GssService::kNone;
  *call = std::move(data);
  return Verdict::kRun;
}

bool GssServer::Seal(Call& call, xdr::BufferChain* reply) {
  DataCall& data = static_cast<DataCall&>(call);
  // The layout EncodeAcceptedReply writes: xid, REPLY, reply_stat, AUTH_NONE
  // verifier (flavor, length 0), accept_stat, then the results; MSG_DENIED
  // replies (e.g. AUTH_TOOWEAK from an export check) carry no verifier and
  // are sent as they are.
  constexpr size_t kPlainHeader = 24;
  constexpr size_t kPlainVerifierAt = 12;
  constexpr size_t kPlainVerifierLen = 8;
  std::array<uint8_t, kPlainHeader> head{};
  if (reply->size() < 12) return false;
  reply->CopyTo(0, std::min(reply->size(), kPlainHeader), head.data());
  if (ReadBigEndian(&head[8]) != 0) return true;
  if (reply->size() < kPlainHeader || ReadBigEndian(&head[12]) != kAuthNone) return false;
  const uint32_t accept_stat = ReadBigEndian(&head[20]);

  GssProtection& protection = *data.ctx->protection;
  const std::array<uint8_t, 4> seq = BigEndian(data.seq);
  const absl::Span<const uint8_t> seq_piece[] = {seq};
  GssProtection::Mic verifier;
  if (!protection.GetMic(seq_piece, &verifier)) return false;  // §5.3.3.4.1: no reply
  const bool wrap = accept_stat == static_cast<uint32_t>(AcceptStat::kSuccess) &&
                    data.service != GssService::kNone;
  if (!wrap) {
    // Only the verifier changes: in place when the reply is small (most
    // sec=krb5 replies), sparing a new chain per call.
    const OpaqueAuth verf{kRpcsecGss, verifier};
    const size_t verf_len = xdr::SizeOf(verf);
    if (uint8_t* at = reply->ResizeRange(kPlainVerifierAt, kPlainVerifierLen, verf_len)) {
      xdr::EncodeInto(absl::MakeSpan(at, verf_len), verf);
      return true;
    }
  }
  // The results are not copied (integrity, none) or copied once into the
  // sealed token (privacy): a READ's data is most of the reply.
  xdr::BufferChain plain = std::move(*reply);
  reply->Clear();
  xdr::Encoder out(reply);
  AcceptedHeader(out, data.xid, verifier, accept_stat);
  if (!wrap) {
    reply->AppendChain(std::move(plain), kPlainHeader);  // already a multiple of 4 bytes
    return true;
  }
  if (data.service == GssService::kIntegrity) {
    return AppendIntegData(protection, data.seq, std::move(plain), kPlainHeader, reply);
  }
  return AppendPrivData(protection, data.seq, plain, kPlainHeader, reply);
}

}  // namespace nfs3d::rpc::gss
