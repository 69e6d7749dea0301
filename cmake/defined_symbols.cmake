# defined_symbols(LIB OUT): the names of the dynamic symbols LIB defines
# (`${NM} -D --defined-only`, version suffixes dropped). For the export checks.
function(defined_symbols lib out)
  execute_process(COMMAND ${NM} -D --defined-only ${lib}
    OUTPUT_VARIABLE text ERROR_VARIABLE err RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${NM} -D --defined-only ${lib} failed (${rc}): ${err}")
  endif()
  string(REPLACE "\n" ";" lines "${text}")
  set(names)
  foreach(line ${lines})
    # "<address> <type> <name>[@version]"
    if(line MATCHES "^[0-9a-fA-F]* *[A-Za-z] ([^ @]+)")
      list(APPEND names ${CMAKE_MATCH_1})
    endif()
  endforeach()
  set(${out} ${names} PARENT_SCOPE)
endfunction()
