// The NLM program (100021) as procedure tables: version 4 (NFSv3 clients)
// and versions 1 and 3 (32-bit ranges) over the same NlmService. The *_MSG
// procedures answer with an empty reply and send their result to the
// caller's lock manager as the matching *_RES call.
#ifndef NFS3D_NLM_NLM_PROGRAM_H_
#define NFS3D_NLM_NLM_PROGRAM_H_

#include "nlm/nlm_service.h"
#include "rpc/program.h"

namespace nfs3d::nlm {

// The returned Program refers to static tables and to `service`.
rpc::Program MakeNlmProgram(NlmService* service);

}  // namespace nfs3d::nlm

#endif  // NFS3D_NLM_NLM_PROGRAM_H_
