# Installation layout and the Debian package: `cmake --build build --target package` writes
# build/curlretry_<version>_<arch>.deb. Included from the top-level CMakeLists.txt after every
# target exists.
#
#   /usr/bin/curlretry
#   /usr/lib/<multiarch>/curlretry/libcurlretry.so      the preload library
#   /usr/lib/<multiarch>/curlretry/curlretry-yaml.so    its YAML reader: must sit beside it
#   /usr/lib/<multiarch>/curlretry/curlretry-fleet-redis.so  the Redis fleet store (hiredis), beside it too
#   /usr/share/man/man1/curlretry.1.gz, man5/curlretry.yaml.5.gz
#   /usr/share/bash-completion/completions/curlretry
#   /usr/share/doc/curlretry/examples/*.yaml            provider presets
#   /etc/curlretry/config.yaml                          conffile; equivalent to the built-in defaults
#
# preload/library_path.cpp finds the library relative to the binary (../lib/<multiarch>/curlretry/), so
# the same layout works under /usr, /usr/local, or an unpacked scratch root.
include(GNUInstallDirs)

if(CMAKE_LIBRARY_ARCHITECTURE)
  set(CURLRETRY_INSTALL_LIBDIR "lib/${CMAKE_LIBRARY_ARCHITECTURE}/curlretry")
else()
  set(CURLRETRY_INSTALL_LIBDIR "${CMAKE_INSTALL_LIBDIR}/curlretry")
endif()
# Absolute on purpose: the shim reads /etc/curlretry/config.yaml whatever the prefix.
set(CURLRETRY_INSTALL_SYSCONFDIR "/etc/curlretry" CACHE PATH "Where the example config.yaml is installed")

set(_pkg_src ${CMAKE_CURRENT_LIST_DIR})
set(_pkg_bin ${CMAKE_BINARY_DIR}/packaging)

# Shared objects are not programs: 0644, as Debian wants them.
set(_lib_permissions OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)
install(TARGETS curlretry_shim LIBRARY DESTINATION ${CURLRETRY_INSTALL_LIBDIR} PERMISSIONS ${_lib_permissions})
install(TARGETS curlretry_yaml_module LIBRARY DESTINATION ${CURLRETRY_INSTALL_LIBDIR} PERMISSIONS ${_lib_permissions})
if(TARGET curlretry_fleet_redis_module)
  install(TARGETS curlretry_fleet_redis_module LIBRARY DESTINATION ${CURLRETRY_INSTALL_LIBDIR}
          PERMISSIONS ${_lib_permissions})
endif()

# Man pages, compressed as Debian policy asks (gzip -n: no name or time stamp, reproducible).
find_program(CURLRETRY_GZIP gzip REQUIRED)
set(_man_outputs)
foreach(_page curlretry.1 curlretry.yaml.5)
  string(REGEX REPLACE ".*\\.([0-9])$" "\\1" _section ${_page})
  set(_out ${_pkg_bin}/man/${_page}.gz)
  add_custom_command(
    OUTPUT ${_out}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${_pkg_bin}/man
    COMMAND sh -c "'${CURLRETRY_GZIP}' -9nc '${_pkg_src}/man/${_page}' > '${_out}'"
    DEPENDS ${_pkg_src}/man/${_page}
    COMMENT "Compressing man page ${_page}"
    VERBATIM)
  list(APPEND _man_outputs ${_out})
  install(FILES ${_out} DESTINATION ${CMAKE_INSTALL_MANDIR}/man${_section})
endforeach()
add_custom_target(curlretry_man ALL DEPENDS ${_man_outputs})

install(FILES ${_pkg_src}/completion/curlretry DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions)
install(FILES ${_pkg_src}/config.yaml DESTINATION ${CURLRETRY_INSTALL_SYSCONFDIR})
if(TARGET curlretry-proxy)
  install(FILES ${_pkg_src}/systemd/curlretry-proxy.service DESTINATION lib/systemd/user)
endif()
file(GLOB _presets ${_pkg_src}/examples/*.yaml)
install(FILES ${_presets} ${_pkg_src}/examples/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples)

# --- the .deb ------------------------------------------------------------------------------------
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME curlretry)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "curlretry maintainers <curlretry@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "retry transient HTTP failures of unmodified libcurl programs")
# One quoted argument (a list would lose its semicolons); continuation lines of the control field.
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION "\
curlretry preloads libcurlretry.so into a program that uses libcurl (curl, git,
Python pycurl, PHP curl, C programs) and retries transient failures: 503, 429,
529, captcha and risk-control 400s, connection resets. The program still sees
exactly one response per transfer. Per-host rules and provider presets are
read from YAML; `curlretry doctor` says whether a program can be helped.")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES TRUE)
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${_pkg_src}/debian/conffiles)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION TRUE)

# What the installed ELF files need (tests/integration/test_packaging.py checks every DT_NEEDED
# against this list): the CLI and the YAML module use libstdc++ and yaml-cpp; libcurlretry.so
# itself needs only libc (its C++ runtime is linked in); the demo built into the CLI uses OpenSSL;
# the proxy, libcurl and toml++ (the launcher reads Codex's config.toml).
# CURLRETRY_DEB_SHLIBDEPS=ON asks dpkg-shlibdeps instead (for builds on other releases).
option(CURLRETRY_DEB_SHLIBDEPS "Compute the .deb dependencies with dpkg-shlibdeps" OFF)
if(CURLRETRY_DEB_SHLIBDEPS)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
else()
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "libc6 (>= 2.36), libgcc-s1 (>= 3.0), libstdc++6 (>= 12), libyaml-cpp0.7 (>= 0.7.0)")
  if(TARGET curlretry_upstream)
    string(APPEND CPACK_DEBIAN_PACKAGE_DEPENDS ", libssl3 (>= 3.0.0)")
  endif()
  if(TARGET curlretry-proxy)  # the proxy's upstream side is libcurl (OpenSSL flavour)
    string(APPEND CPACK_DEBIAN_PACKAGE_DEPENDS ", libcurl4 (>= 7.88.0), libtomlplusplus3 (>= 3.3.0)")
  endif()
endif()
# libhiredis is a Recommends, not a Depends: only curlretry-fleet-redis.so needs it, and that is
# loaded only when a redis:// fleet store is configured. Without it such a store says once that
# the module cannot be loaded and the machine store is used: nothing else is affected, so a
# minimal install (--no-install-recommends) may leave it out; apt installs it by default.
if(TARGET curlretry_fleet_redis_module AND NOT CURLRETRY_DEB_SHLIBDEPS)
  set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "libhiredis0.14 (>= 0.14.1)")
endif()
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "curl, redis-server")

include(CPack)
