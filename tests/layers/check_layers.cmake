# The layers test: every folder of src/ is a layer, and a file may include headers of its own
# layer and the layers below it only. Run by ctest (tests/CMakeLists.txt) or by hand:
#
#   cmake -DSOURCE_DIR=. -DLAYERS=core,read,catalog,fit,cost,io -P tests/layers/check_layers.cmake
#
# LAYERS lists the folders of src/ bottom-up, as GPUPLAN_LAYER_DIRS in the top-level
# CMakeLists.txt does. The link checks there catch a call into a higher layer; this catches an
# include of one, which they miss when the header is used only for inline code, types or macros.
cmake_minimum_required(VERSION 3.25)

if(NOT DEFINED SOURCE_DIR OR NOT DEFINED LAYERS)
  message(FATAL_ERROR "usage: cmake -DSOURCE_DIR=<repo> -DLAYERS=core,read,... -P check_layers.cmake")
endif()
get_filename_component(SOURCE_DIR "${SOURCE_DIR}" ABSOLUTE)
string(REPLACE "," ";" layers "${LAYERS}")

set(problems "")
file(GLOB entries LIST_DIRECTORIES true RELATIVE ${SOURCE_DIR}/src ${SOURCE_DIR}/src/*)
foreach(entry IN LISTS entries)
  if(IS_DIRECTORY ${SOURCE_DIR}/src/${entry} AND NOT entry IN_LIST layers)
    string(APPEND problems "src/${entry}/ is in no layer: add it to GPUPLAN_LAYER_DIRS in CMakeLists.txt\n")
  endif()
endforeach()

set(checked 0)
set(below "")
foreach(layer IN LISTS layers)
  list(APPEND below ${layer})  # this layer and the ones below it
  list(FIND layers ${layer} level)
  file(GLOB_RECURSE files RELATIVE ${SOURCE_DIR} ${SOURCE_DIR}/src/${layer}/*.h ${SOURCE_DIR}/src/${layer}/*.cc)
  list(SORT files)
  foreach(file IN LISTS files)
    math(EXPR checked "${checked} + 1")
    file(STRINGS ${SOURCE_DIR}/${file} includes REGEX "^[ \t]*#[ \t]*include[ \t]*\"")
    foreach(line IN LISTS includes)
      if(NOT line MATCHES "\"([^\"]*)\"")
        continue()
      endif()
      set(header ${CMAKE_MATCH_1})
      if(NOT header MATCHES "^([^/]+)/")
        string(APPEND problems "${file}: #include \"${header}\": name headers by their folder (\"${layer}/...\")\n")
        continue()
      endif()
      set(folder ${CMAKE_MATCH_1})
      list(FIND layers ${folder} to)
      if(to EQUAL -1)
        string(APPEND problems "${file}: #include \"${header}\": src/${folder}/ is not a layer\n")
      elseif(to GREATER level)
        list(JOIN below ", " allowed)
        string(APPEND problems
               "${file}: #include \"${header}\": ${layer} is below ${folder}; it may include ${allowed} only\n")
      endif()
    endforeach()
  endforeach()
endforeach()

if(checked EQUAL 0)
  message(FATAL_ERROR "no sources found under ${SOURCE_DIR}/src for the layers ${LAYERS}")
endif()
if(problems)
  message(FATAL_ERROR "layer violations (docs/architecture.md):\n${problems}")
endif()
list(JOIN layers " <- " chain)
message(STATUS "layers ok: ${chain} (${checked} files)")
