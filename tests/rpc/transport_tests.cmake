# Tests of the RPC transports; included by tests/rpc/CMakeLists.txt.
if(TARGET nfs3d_rpc_transport)
  foreach(_t record_marker_test inline_calls_test early_answer_test write_splice_test spare_cores_test transport_test mtu_cache_test portmap_test tcp_reply_writer_test)
    if(EXISTS ${CMAKE_CURRENT_LIST_DIR}/${_t}.cc)
      nfs3d_add_test(${_t} SOURCES ${CMAKE_CURRENT_LIST_DIR}/${_t}.cc LIBS nfs3d_rpc_transport)
    endif()
  endforeach()
endif()
