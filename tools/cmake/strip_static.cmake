# CPACK_PRE_BUILD_SCRIPTS: strips the debug sections out of the static
# libraries in the packages' staging tree, as Debian's dh_strip does
# (libzkrecipes.a is about 70 MB with them, a few MB without). The installed
# tree of `cmake --install` keeps them.
file(GLOB_RECURSE archives "${CPACK_TEMPORARY_INSTALL_DIRECTORY}/*.a")
foreach(archive IN LISTS archives)
  if(IS_SYMLINK "${archive}")
    continue()
  endif()
  execute_process(COMMAND strip --strip-debug --remove-section=.comment
      --remove-section=.note --enable-deterministic-archives "${archive}"
    RESULT_VARIABLE result)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "strip ${archive} failed")
  endif()
endforeach()
