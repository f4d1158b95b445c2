# The nfs3d daemon: Daemon wires the layers; main.cc is flags and signals.
add_library(nfs3d_daemon daemon.cc)
target_link_libraries(nfs3d_daemon PUBLIC nfs3d_nfsd nfs3d_mountd nfs3d_rpc_transport nfs3d_rpc_gss nfs3d_vfs
                      nfs3d_conf nfs3d_common nfs3d_nlm nfs3d_stats nfs3d_stats_text nfs3d_metrics_server)
target_compile_definitions(nfs3d_daemon PRIVATE NFS3D_VERSION_STRING="${PROJECT_VERSION}")
add_executable(nfs3d main.cc)
target_link_libraries(nfs3d PRIVATE nfs3d_daemon nfs3d_common nfs3d_version absl::strings)
if(NFS3D_CEPHFS)
  target_link_libraries(nfs3d_daemon PUBLIC nfs3d_vfs_cephfs)
endif()
