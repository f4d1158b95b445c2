# RPC transports: record marking, TCP/UDP listeners, the server that owns the
# io and worker threads, the embedded portmapper and rpcbind registration.
# Included by rpc/CMakeLists.txt.
set(_nfs3d_rpc_transport_sources)
foreach(_src record_marker.cc inline_calls.cc running_call.cc extra_workers.cc write_splice.cc spare_cores.cc splice_pipe.cc tcp_reply_writer.cc tcp_server.cc mtu_cache.cc udp_server.cc rpc_server.cc
        portmap_registry.cc portmap_program.cc rpcbind_client.cc)
  if(EXISTS ${CMAKE_CURRENT_LIST_DIR}/${_src})
    list(APPEND _nfs3d_rpc_transport_sources ${CMAKE_CURRENT_LIST_DIR}/${_src})
  endif()
endforeach()
add_library(nfs3d_rpc_transport ${_nfs3d_rpc_transport_sources})
set(_nfs3d_rpc_transport_libs nfs3d_rpc nfs3d_xdr nfs3d_common Boost::headers PkgConfig::TIRPC
    Threads::Threads absl::status absl::statusor absl::strings absl::str_format absl::span
    absl::core_headers absl::time)
target_link_libraries(nfs3d_rpc_transport PUBLIC ${_nfs3d_rpc_transport_libs})
