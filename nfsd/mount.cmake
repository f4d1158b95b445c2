# MOUNT v1/v3 program.
add_library(nfs3d_mountd mount_program.cc)
target_link_libraries(nfs3d_mountd PUBLIC nfs3d_nfsd nfs3d_conf nfs3d_xdr_nfs nfs3d_rpc nfs3d_common
                      absl::synchronization absl::strings)
