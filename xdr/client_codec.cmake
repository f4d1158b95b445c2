# Client direction of the NFSv3 and MOUNT codecs (nfs3bench, tests), over the
# server codecs whose building blocks it shares.
add_library(nfs3d_xdr_nfs_client ${CMAKE_CURRENT_SOURCE_DIR}/nfs3_client_codec.cc)
target_link_libraries(nfs3d_xdr_nfs_client PUBLIC nfs3d_xdr_nfs)
