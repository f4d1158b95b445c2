#include "client/gss_initiator.h"

#include <gssapi/gssapi_ext.h>
#include <gssapi/gssapi_krb5.h>

#include <array>
#include <utility>

#include "absl/strings/str_cat.h"
#include "client/rpc_wire.h"
#include "rpc/gss/gss_util.h"
#include "xdr/buffer_chain.h"
#include "xdr/decoder.h"
#include "xdr/encoder.h"

namespace nfs3d::client {
namespace {

using rpc::gss::GssCred;
using rpc::gss::GssInitArg;
using rpc::gss::GssInitRes;
using rpc::gss::GssIntegData;
using rpc::gss::GssPrivData;
using rpc::gss::GssProc;
using rpc::gss::GssService;
using rpc::gss::BigEndian;
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
  const bool hostbased = name.find('@') != std::string::npos && name.find('/') == std::string::npos;
  gss_name_t out = GSS_C_NO_NAME;
  OM_uint32 minor = 0;
  OM_uint32 major = gss_import_name(
      &minor, &text, hostbased ? GSS_C_NT_HOSTBASED_SERVICE : GSS_KRB5_NT_PRINCIPAL_NAME, &out);
  if (GSS_ERROR(major)) return GssFailure("gss_import_name", major, minor);
  return out;
}

// The initiator credential: the principal's key from the client keytab, its
// tickets kept in a private in-memory cache.
absl::StatusOr<gss_cred_id_t> AcquireCred(const GssInitiatorOptions& o, const void* owner) {
  if (o.principal.empty()) return GSS_C_NO_CREDENTIAL;
  absl::StatusOr<gss_name_t> name = ImportName(o.principal);
  if (!name.ok()) return name.status();
  const std::string ccache = absl::StrCat("MEMORY:nfs3d-", reinterpret_cast<uintptr_t>(owner));
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
  absl::StatusOr<gss_cred_id_t> cred = AcquireCred(options, g.get());
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
    OM_uint32 major = gss_init_sec_context(
        &minor, *cred, &g->ctx_, *target, gss_mech_krb5, GSS_C_MUTUAL_FLAG, GSS_C_INDEFINITE,
        GSS_C_NO_CHANNEL_BINDINGS, first ? GSS_C_NO_BUFFER : &input, nullptr, &token.b, nullptr,
        nullptr);
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
    xdr::Encode(e, rpc::CallHeader{.xid = xid++, .prog = prog, .vers = vers, .proc = 0,
                                   .cred = {rpc::gss::kRpcsecGss, Bytes(cred_body)}});
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
      status = absl::UnauthenticatedError(absl::StrCat(
          "context creation refused (reply_stat ", header.reply_stat, ", accept_stat ",
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
                                     GSS_C_MUTUAL_FLAG, GSS_C_INDEFINITE,
                                     GSS_C_NO_CHANNEL_BINDINGS, &rep, nullptr, &none.b, nullptr,
                                     nullptr);
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
      if (header.verf.flavor != rpc::gss::kRpcsecGss || GSS_ERROR(major)) {
        status = absl::UnauthenticatedError("INIT reply verifier does not check");
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

std::string GssInitiator::EncodeCall(uint32_t xid, uint32_t prog, uint32_t vers, uint32_t proc,
                                     absl::Span<const uint8_t> args, uint32_t seq,
                                     GssProc gss_proc) {
  OM_uint32 minor = 0;
  xdr::BufferChain cred_chain;
  xdr::Encoder ce(&cred_chain);
  xdr::Encode(ce, GssCred{.proc = gss_proc, .seq_num = seq, .service = service_,
                          .handle = Bytes(handle_)});
  const std::string cred_body = cred_chain.Flatten();
  xdr::BufferChain head_chain;
  xdr::Encoder he(&head_chain);
  // The header up to the credential, then its MIC as the verifier.
  he.U32(xid);
  he.U32(0);  // CALL
  he.U32(rpc::kRpcVersion);
  he.U32(prog);
  he.U32(vers);
  he.U32(proc);
  he.U32(rpc::gss::kRpcsecGss);
  he.Opaque(Bytes(cred_body));
  std::string message = head_chain.Flatten();
  gss_buffer_desc head = In(Bytes(message));
  OutBuffer mic;
  gss_get_mic(&minor, ctx_, GSS_C_QOP_DEFAULT, &head, &mic.b);
  xdr::BufferChain rest;
  xdr::Encoder re(&rest);
  xdr::Encode(re, rpc::OpaqueAuth{rpc::gss::kRpcsecGss, mic.span()});
  if (service_ == GssService::kNone || gss_proc != GssProc::kData) {
    re.FixedOpaque(args);
  } else {
    std::string body;
    const std::array<uint8_t, 4> seq_be = BigEndian(seq);
    body.append(reinterpret_cast<const char*>(seq_be.data()), 4);
    body.append(reinterpret_cast<const char*>(args.data()), args.size());
    gss_buffer_desc msg = In(Bytes(body));
    OutBuffer protection;
    if (service_ == GssService::kIntegrity) {
      gss_get_mic(&minor, ctx_, GSS_C_QOP_DEFAULT, &msg, &protection.b);
      xdr::Encode(re, GssIntegData{.body = Bytes(body), .checksum = protection.span()});
    } else {
      gss_wrap(&minor, ctx_, 1, GSS_C_QOP_DEFAULT, &msg, nullptr, &protection.b);
      xdr::Encode(re, GssPrivData{.body = protection.span()});
    }
  }
  message += rest.Flatten();
  return message;
}

std::string GssInitiator::Encode(uint32_t xid, uint32_t prog, uint32_t vers, uint32_t proc,
                                 absl::Span<const uint8_t> args, uint32_t* token) {
  *token = NextSeq();
  return EncodeCall(xid, prog, vers, proc, args, *token);
}

absl::StatusOr<std::string> GssInitiator::Open(absl::Span<const uint8_t> reply, uint32_t token) {
  rpc::ReplyHeader header;
  return OpenReply(reply, token, &header);
}

absl::StatusOr<std::string> GssInitiator::OpenReply(absl::Span<const uint8_t> reply, uint32_t seq,
                                                    rpc::ReplyHeader* header) {
  absl::Span<const uint8_t> results;
  if (!DecodeReplyHeader(reply, header, &results)) {
    return absl::DataLossError("undecodable reply header");
  }
  if (header->reply_stat != 0) return std::string();
  OM_uint32 minor = 0;
  const std::array<uint8_t, 4> seq_be = BigEndian(seq);
  gss_buffer_desc msg = In(seq_be);
  gss_buffer_desc mic = In(header->verf.body);
  if (header->verf.flavor != rpc::gss::kRpcsecGss ||
      GSS_ERROR(gss_verify_mic(&minor, ctx_, &msg, &mic, nullptr))) {
    return absl::UnauthenticatedError("reply verifier does not check");
  }
  if (header->accept_stat != 0) return std::string();
  if (service_ == GssService::kNone) {
    return std::string(reinterpret_cast<const char*>(results.data()), results.size());
  }
  xdr::Decoder d(results);
  std::string body;
  if (service_ == GssService::kIntegrity) {
    GssIntegData integ;
    if (!xdr::Decode(d, &integ)) return absl::DataLossError("undecodable rpc_gss_integ_data");
    gss_buffer_desc b = In(integ.body);
    gss_buffer_desc c = In(integ.checksum);
    if (GSS_ERROR(gss_verify_mic(&minor, ctx_, &b, &c, nullptr))) {
      return absl::UnauthenticatedError("reply checksum does not check");
    }
    body.assign(reinterpret_cast<const char*>(integ.body.data()), integ.body.size());
  } else {
    GssPrivData priv;
    if (!xdr::Decode(d, &priv)) return absl::DataLossError("undecodable rpc_gss_priv_data");
    gss_buffer_desc b = In(priv.body);
    OutBuffer plain;
    int confidential = 0;
    if (GSS_ERROR(gss_unwrap(&minor, ctx_, &b, &plain.b, &confidential, nullptr)) ||
        confidential == 0) {
      return absl::UnauthenticatedError("reply does not unwrap");
    }
    body.assign(static_cast<const char*>(plain.b.value), plain.b.length);
  }
  if (body.size() < 4 || body.compare(0, 4, reinterpret_cast<const char*>(seq_be.data()), 4) != 0) {
    return absl::UnauthenticatedError("reply body carries another sequence number");
  }
  return body.substr(4);
}

}  // namespace nfs3d::client
