# CPACK_POST_BUILD_SCRIPTS: tools/debian/fixup_debs.sh on every package CPack
# built (CPACK_PACKAGE_FILES; the -dbgsym .ddebs beside them).
file(GLOB ddebs "${CPACK_PACKAGE_DIRECTORY}/*.ddeb")
set(packages ${CPACK_PACKAGE_FILES} ${ddebs})
list(REMOVE_DUPLICATES packages)
execute_process(
  COMMAND "${CMAKE_CURRENT_LIST_DIR}/../debian/fixup_debs.sh" ${packages}
  RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "tools/debian/fixup_debs.sh failed")
endif()
