#include "client/gss_initiator.h"

#include <gssapi/gssapi_ext.h>

#include <array>
#include <atomic>
#include <optional>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include <gssapi/gssapi_krb5.h>

#include "client/rpc_wire.h"
#include "rpc/gss/gss_body.h"
#include "rpc/gss/gss_util.h"
#include "xdr/buffer_chain.h"
#include "xdr/decoder.h"
#include "xdr/encoder.h"

namespace nfs3d::client {
namespace {

using rpc::gss::BigEndian;
using rpc::gss::GssCred;
using rpc::gss::GssInitArg;
using rpc::gss::GssInitRes;
using rpc::gss::GssProc;
using rpc::gss::GssService;
using rpc::gss::In;
using rpc::gss::OutBuffer;

absl::Span<const uint8_t> Bytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}
absl::Status GssFailure(const char* what, OM_uint32 major, OM_uint32 minor) {
  return absl::UnauthenticatedError(absl::StrCat(what, ": ", rpc::gss::GssErrorText(major, minor)));
}

absl::StatusOr<gss_name_t> ImportName(const std::string& name) {
  gss_buffer_desc text{name.size(), const_cast<char*>(name.data())};
  const bool hostbased = absl::StrContains(name, "@") && !absl::StrContains(name, "/");
  gss_name_t out = GSS_C_NO_NAME;
  OM_uint32 minor = 0;
  OM_uint32 major = gss_import_name(
      &minor, &text, hostbased ? GSS_C_NT_HOSTBASED_SERVICE : GSS_KRB5_NT_PRINCIPAL_NAME, &out);
  if (GSS_ERROR(major)) return GssFailure("gss_import_name", major, minor);
  return out;
}

// The initiator credential: the principal's key from the client keytab, its
// tickets kept in a private in-memory cache. Each cache gets a name of its
// own: MEMORY caches outlive the credential, and one left by another
// principal under the same name makes the acquisition fail.
absl::StatusOr<gss_cred_id_t> AcquireCred(const GssInitiatorOptions& o) {
  if (o.principal.empty()) return GSS_C_NO_CREDENTIAL;
  absl::StatusOr<gss_name_t> name = ImportName(o.principal);
  if (!name.ok()) return name.status();
  static std::atomic<uint64_t> caches{0};
  const std::string ccache = absl::StrCat("MEMORY:nfs3d-", caches.fetch_add(1));
  gss_key_value_element_desc elements[] = {{"client_keytab", o.client_keytab.c_str()},
                                           {"ccache", ccache.c_str()}};
  gss_key_value_set_desc store{2, elements};
  gss_cred_id_t cred = GSS_C_NO_CREDENTIAL;
  OM_uint32 minor = 0;
  OM_uint32 major = gss_acquire_cred_from(&minor, *name, GSS_C_INDEFINITE, GSS_C_NO_OID_SET,
                                          GSS_C_INITIATE, &store, &cred, nullptr, nullptr);
  gss_release_name(&minor, &*name);
  if (GSS_ERROR(major)) return GssFailure("gss_acquire_cred_from", major, minor);
  return cred;
}

}  // namespace

absl::StatusOr<std::unique_ptr<GssInitiator>> GssInitiator::Establish(
    const GssInitiatorOptions& options, uint32_t prog, uint32_t vers, uint32_t first_xid,
    const Exchange& exchange) {
  std::unique_ptr<GssInitiator> g(new GssInitiator());
  g->service_ = options.service;
  absl::StatusOr<gss_cred_id_t> cred = AcquireCred(options);
  if (!cred.ok()) return cred.status();
  absl::StatusOr<gss_name_t> target = ImportName(options.target);
  if (!target.ok()) return target.status();
  OM_uint32 minor = 0;
  absl::Status status;
  std::string server_token;
  uint32_t xid = first_xid;
  for (bool first = true;; first = false) {
    OutBuffer token;
    gss_buffer_desc input = In(Bytes(server_token));
    OM_uint32 major =
        gss_init_sec_context(&minor, *cred, &g->ctx_, *target, gss_mech_krb5, GSS_C_MUTUAL_FLAG,
                             GSS_C_INDEFINITE, GSS_C_NO_CHANNEL_BINDINGS,
                             first ? GSS_C_NO_BUFFER : &input, nullptr, &token.b, nullptr, nullptr);
    if (GSS_ERROR(major)) {
      status = GssFailure("gss_init_sec_context", major, minor);
      break;
    }
    if (token.b.length == 0 && major == GSS_S_COMPLETE) break;
    // INIT / CONTINUE_INIT: a NULL call carrying the token.
    xdr::BufferChain chain;
    xdr::Encoder e(&chain);
    xdr::BufferChain cred_chain;
    xdr::Encoder ce(&cred_chain);
    xdr::Encode(ce, GssCred{.proc = first ? GssProc::kInit : GssProc::kContinueInit,
                            .handle = Bytes(g->handle_)});
    const std::string cred_body = cred_chain.Flatten();
    xdr::Encode(e, rpc::CallHeader{.xid = xid++,
                                   .prog = prog,
                                   .vers = vers,
                                   .proc = 0,
                                   .cred = {kRpcsecGss, Bytes(cred_body)}});
    xdr::Encode(e, GssInitArg{.token = token.span()});
    absl::StatusOr<std::string> reply = exchange(chain.Flatten());
    if (!reply.ok()) {
      status = reply.status();
      break;
    }
    rpc::ReplyHeader header;
    absl::Span<const uint8_t> results;
    if (!DecodeReplyHeader(Bytes(*reply), &header, &results) || header.reply_stat != 0 ||
        header.accept_stat != 0) {
      status = absl::UnauthenticatedError(
          absl::StrCat("context creation refused (reply_stat ", header.reply_stat, ", accept_stat ",
                       header.accept_stat, ", auth_stat ", header.auth_stat, ")"));
      break;
    }
    GssInitRes res;
    xdr::Decoder d(results);
    if (!xdr::Decode(d, &res)) {
      status = absl::DataLossError("undecodable rpc_gss_init_res");
      break;
    }
    if (GSS_ERROR(res.major)) {
      status = GssFailure("server's gss_accept_sec_context", res.major, res.minor);
      break;
    }
    g->handle_.assign(reinterpret_cast<const char*>(res.handle.data()), res.handle.size());
    g->seq_window_ = res.seq_window;
    server_token.assign(reinterpret_cast<const char*>(res.token.data()), res.token.size());
    if (res.major == GSS_S_COMPLETE) {
      if (!server_token.empty()) {  // mutual authentication: the AP-REP
        gss_buffer_desc rep = In(Bytes(server_token));
        OutBuffer none;
        major = gss_init_sec_context(&minor, *cred, &g->ctx_, *target, gss_mech_krb5,
                                     GSS_C_MUTUAL_FLAG, GSS_C_INDEFINITE, GSS_C_NO_CHANNEL_BINDINGS,
                                     &rep, nullptr, &none.b, nullptr, nullptr);
        if (GSS_ERROR(major)) {
          status = GssFailure("gss_init_sec_context (AP-REP)", major, minor);
          break;
        }
      }
      // §5.2.3.1: the reply verifier is a MIC over the window.
      const std::array<uint8_t, 4> window = BigEndian(res.seq_window);
      gss_buffer_desc msg = In(window);
      gss_buffer_desc mic = In(header.verf.body);
      major = gss_verify_mic(&minor, g->ctx_, &msg, &mic, nullptr);
      if (header.verf.flavor != kRpcsecGss || GSS_ERROR(major)) {
        status = absl::UnauthenticatedError("INIT reply verifier does not check");
      } else if ((g->protection_ = rpc::gss::TakeOver(&g->ctx_, options.gssapi_only)) == nullptr) {
        status = absl::InternalError("GSS-API lost the context");
      }
      break;
    }
  }
  gss_release_name(&minor, &*target);
  if (*cred != GSS_C_NO_CREDENTIAL) gss_release_cred(&minor, &*cred);
  if (!status.ok()) return status;
  return g;
}

GssInitiator::~GssInitiator() {
  OM_uint32 minor = 0;
  if (ctx_ != GSS_C_NO_CONTEXT) gss_delete_sec_context(&minor, &ctx_, GSS_C_NO_BUFFER);
}

void GssInitiator::EncodeCallTo(uint32_t xid, uint32_t prog, uint32_t vers, uint32_t proc,
                                xdr::BufferChain args, uint32_t seq, GssProc gss_proc,
                                xdr::BufferChain* out) {
  // The header up to the credential, then its MIC as the verifier. Written
  // straight into out (no chains of its own: this runs for every call).
  const size_t start = out->size();
  xdr::Encoder e(out);
  e.U32(xid);
  e.U32(0);  // CALL
  e.U32(rpc::kRpcVersion);
  e.U32(prog);
  e.U32(vers);
  e.U32(proc);
  e.U32(kRpcsecGss);
  // rpc_gss_cred_vers_1_t: four words, then the handle.
  e.U32(static_cast<uint32_t>(4 * 4 + 4 + xdr::PadTo4(handle_.size())));
  xdr::Encode(
      e, GssCred{.proc = gss_proc, .seq_num = seq, .service = service_, .handle = Bytes(handle_)});
  std::array<uint8_t, 8 * 4 + 4 * 4 + 4 + rpc::gss::kMaxHandle> head;
  const size_t head_len = out->size() - start;
  out->CopyTo(start, head_len, head.data());
  const absl::Span<const uint8_t> head_piece[] = {absl::MakeConstSpan(head.data(), head_len)};
  rpc::gss::GssProtection::Mic mic;
  protection_->GetMic(head_piece, &mic);
  xdr::Encode(e, rpc::OpaqueAuth{kRpcsecGss, mic});
  if (service_ == GssService::kNone || gss_proc != GssProc::kData) {
    out->AppendChain(std::move(args));
  } else if (service_ == GssService::kIntegrity) {
    rpc::gss::AppendIntegData(*protection_, seq, std::move(args), 0, out);
  } else {
    rpc::gss::AppendPrivData(*protection_, seq, args, 0, out);
  }
}

std::string GssInitiator::EncodeCall(uint32_t xid, uint32_t prog, uint32_t vers, uint32_t proc,
                                     absl::Span<const uint8_t> args, uint32_t seq,
                                     GssProc gss_proc) {
  xdr::BufferChain plain;
  plain.Append(args.data(), args.size());
  xdr::BufferChain message;
  EncodeCallTo(xid, prog, vers, proc, std::move(plain), seq, gss_proc, &message);
  return message.Flatten();
}

void GssInitiator::Encode(uint32_t xid, uint32_t prog, uint32_t vers, uint32_t proc,
                          xdr::BufferChain args, xdr::BufferChain* out, uint32_t* token) {
  *token = NextSeq();
  EncodeCallTo(xid, prog, vers, proc, std::move(args), *token, GssProc::kData, out);
}

absl::StatusOr<absl::Span<const uint8_t>> GssInitiator::Open(absl::Span<uint8_t> reply,
                                                             uint32_t token) {
  rpc::ReplyHeader header;
  return OpenReplyInPlace(reply, token, &header);
}

absl::StatusOr<absl::Span<const uint8_t>> GssInitiator::OpenReplyInPlace(absl::Span<uint8_t> reply,
                                                                         uint32_t seq,
                                                                         rpc::ReplyHeader* header) {
  absl::Span<const uint8_t> results;
  if (!DecodeReplyHeader(reply, header, &results)) {
    return absl::DataLossError("undecodable reply header");
  }
  if (header->reply_stat != 0) return absl::Span<const uint8_t>();
  const std::array<uint8_t, 4> seq_be = BigEndian(seq);
  const absl::Span<const uint8_t> seq_piece[] = {seq_be};
  if (header->verf.flavor != kRpcsecGss || protection_->VerifyMic(seq_piece, header->verf.body) !=
                                               rpc::gss::GssProtection::Check::kGood) {
    return absl::UnauthenticatedError("reply verifier does not check");
  }
  if (header->accept_stat != 0) return absl::Span<const uint8_t>();
  if (service_ == GssService::kNone) return results;
  std::optional<absl::Span<const uint8_t>> plain;
  if (service_ == GssService::kIntegrity) {
    plain = rpc::gss::OpenIntegData(*protection_, seq, results);
  } else {
    const size_t at = static_cast<size_t>(results.data() - reply.data());
    plain = rpc::gss::OpenPrivData(*protection_, seq, reply.subspan(at));
  }
  if (!plain.has_value()) {
    return absl::UnauthenticatedError(
        "reply body does not check or carries another sequence number");
  }
  return *plain;
}

absl::StatusOr<std::string> GssInitiator::OpenReply(absl::Span<const uint8_t> reply, uint32_t seq,
                                                    rpc::ReplyHeader* header) {
  std::string copy(reinterpret_cast<const char*>(reply.data()), reply.size());
  absl::StatusOr<absl::Span<const uint8_t>> results = OpenReplyInPlace(
      absl::MakeSpan(reinterpret_cast<uint8_t*>(copy.data()), copy.size()), seq, header);
  if (!results.ok()) return results.status();
  return std::string(reinterpret_cast<const char*>(results->data()), results->size());
}

}  // namespace nfs3d::client
