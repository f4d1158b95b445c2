# `cmake --install`: the GNU directories under CMAKE_INSTALL_PREFIX
# (/usr/local by default; the Debian package uses /usr). nfs3d reads
# /etc/nfs3d/ whatever the prefix, so the configuration files go to the docs
# as examples to copy there (the Debian package installs them as conffiles).
install(TARGETS nfs3d nfs3stat RUNTIME DESTINATION ${CMAKE_INSTALL_SBINDIR})
install(TARGETS nfs3bench RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES conf/nfs3d.conf conf/exports DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples)
install(FILES README.md docs/operations.md docs/ab-testing.md docs/exports.md docs/multi-head.md DESTINATION ${CMAKE_INSTALL_DOCDIR})

# The unit names the installed binary and docs, so it is configured here.
# systemd also reads /usr/local/lib/systemd/system; Debian 12 wants
# /lib/systemd/system (debian/rules sets it).
set(NFS3D_SYSTEMD_UNIT_DIR "${CMAKE_INSTALL_PREFIX}/lib/systemd/system"
    CACHE PATH "Where cmake --install puts nfs3d.service")
configure_file(conf/nfs3d.service ${CMAKE_BINARY_DIR}/conf/nfs3d.service @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/conf/nfs3d.service DESTINATION ${NFS3D_SYSTEMD_UNIT_DIR})
