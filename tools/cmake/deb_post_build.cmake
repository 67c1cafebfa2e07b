# CPACK_POST_BUILD_SCRIPTS: tools/debian/fixup_debs.sh on every package CPack
# built this time (CPACK_PACKAGE_FILES; the -dbgsym .ddebs beside them, in
# CPack's staging directories — not the output directory, which may hold
# an earlier run's, fixed already).
set(ddebs)
foreach(package ${CPACK_PACKAGE_FILES})
  get_filename_component(dir "${package}" DIRECTORY)
  file(GLOB these "${dir}/*.ddeb")
  list(APPEND ddebs ${these})
endforeach()
set(packages ${CPACK_PACKAGE_FILES} ${ddebs})
list(REMOVE_DUPLICATES packages)
execute_process(
  COMMAND "${CMAKE_CURRENT_LIST_DIR}/../debian/fixup_debs.sh" ${packages}
  RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "tools/debian/fixup_debs.sh failed")
endif()
