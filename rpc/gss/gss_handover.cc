// The GssServer's established contexts handed to a successor process and
// taken up there (gss_server.h): clients keep their contexts across an
// `nfs3d --takeover`, with no new context creation.
#include "common/log.h"
#include "rpc/gss/gss_server.h"

namespace nfs3d::rpc::gss {

std::vector<HandedContext> GssServer::ExportContexts() {
  const absl::Time now = options_.now();
  std::vector<HandedContext> out;
  for (const std::shared_ptr<GssContext>& ctx : table_.All()) {
    // Contexts still being created are not worth it: their client retries.
    if (!ctx->established.load() || ctx->expiry <= now || ctx->protection == nullptr) continue;
    std::optional<ExportedProtection> protection = ctx->protection->Export();
    if (!protection) {
      NFS3D_LOG_WARNING("rpcsec_gss: the context of %s cannot be handed over",
                        ctx->identity.principal);
      continue;
    }
    HandedContext h;
    h.handle = ctx->handle;
    h.left = ctx->expiry - now;
    h.identity = ctx->identity;
    {
      absl::MutexLock lock(&ctx->mu);
      h.window = ctx->window.Save();
    }
    h.protection = std::move(*protection);
    out.push_back(std::move(h));
  }
  return out;
}

size_t GssServer::ImportContexts(const std::vector<HandedContext>& contexts) {
  const absl::Time now = options_.now();
  size_t taken = 0;
  for (const HandedContext& h : contexts) {
    std::optional<SeqWindow> window = SeqWindow::Restore(h.window);
    if (!window || h.left <= absl::ZeroDuration()) continue;
    auto ctx = std::make_shared<GssContext>(window->size());
    ctx->protection = ImportProtection(h.protection);
    if (ctx->protection == nullptr) {
      NFS3D_LOG_WARNING("rpcsec_gss: the context of %s could not be taken over",
                        h.identity.principal);
      continue;
    }
    ctx->handle = h.handle;
    ctx->expiry = now + std::min(h.left, options_.max_lifetime);
    ctx->identity = h.identity;
    {
      absl::MutexLock lock(&ctx->mu);
      ctx->window = *window;
    }
    ctx->established.store(true);
    if (table_.Adopt(ctx, now)) ++taken;
  }
  return taken;
}

}  // namespace nfs3d::rpc::gss
