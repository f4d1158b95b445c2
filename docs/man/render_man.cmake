cmake_minimum_required(VERSION 3.25)
# cmake -DIN=page.md -DOUT=page.N -DMD2MAN=go-md2man -DSOURCE_DIR=repo
#       -DVERSION=x.y.z -Dhelp_PROGRAM=/path/to/PROGRAM... -P render_man.cmake
# Renders one man page. In the Markdown source, a line
#   <!-- help PROGRAM -->  becomes PROGRAM --help (from the build tree),
#   <!-- file PATH -->     becomes the file PATH of the repository,
# each as a literal block; @VERSION@ becomes the project version.

# literal_block(TEXT OUT_VAR): TEXT as an indented Markdown code block. A
# line may not start with '.' or ' in roff, so those get one more space.
function(literal_block text out_var)
  string(REGEX REPLACE "\n$" "" text "${text}")
  string(REPLACE "\n" "\n    " text "${text}")
  string(REGEX REPLACE "\n    ([.'])" "\n     \\1" text "\n    ${text}")
  set(${out_var} "${text}\n" PARENT_SCOPE)
endfunction()

file(READ ${IN} page)
string(REPLACE "@VERSION@" "${VERSION}" page "${page}")

string(REGEX MATCHALL "<!-- help [a-z0-9]+ -->" helps "${page}")
foreach(marker ${helps})
  string(REGEX REPLACE "<!-- help ([a-z0-9]+) -->" "\\1" name "${marker}")
  set(binary "${help_${name}}")
  execute_process(COMMAND ${binary} --help OUTPUT_VARIABLE help RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${binary} --help failed (${rc})")
  endif()
  literal_block("${help}" block)
  string(REPLACE "${marker}" "${block}" page "${page}")
endforeach()

string(REGEX MATCHALL "<!-- file [^ ]+ -->" files "${page}")
foreach(marker ${files})
  string(REGEX REPLACE "<!-- file ([^ ]+) -->" "\\1" path "${marker}")
  file(READ ${SOURCE_DIR}/${path} text)
  literal_block("${text}" block)
  string(REPLACE "${marker}" "${block}" page "${page}")
endforeach()

file(WRITE ${OUT}.md "${page}")
execute_process(COMMAND ${MD2MAN} -in ${OUT}.md -out ${OUT} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "go-md2man failed on ${IN}")
endif()
