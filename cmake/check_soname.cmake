# cmake -DOBJDUMP=... -DLIBRARY=... -DSONAME=... -P check_soname.cmake
# Fails unless LIBRARY's dynamic section names SONAME.
execute_process(COMMAND "${OBJDUMP}" -p "${LIBRARY}"
  OUTPUT_VARIABLE dump RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${OBJDUMP} -p ${LIBRARY} failed (${rc})")
endif()
string(REGEX MATCH "SONAME +([^\n]+)" found "${dump}")
if(NOT CMAKE_MATCH_1 STREQUAL SONAME)
  message(FATAL_ERROR "${LIBRARY} has SONAME '${CMAKE_MATCH_1}', expected '${SONAME}'")
endif()
message(STATUS "${LIBRARY}: SONAME ${SONAME}")
