# cutune_tune_kernel(): a header of tuned launch parameters for a target,
# made at build time by the `cutune` executable.
#
#   cutune_tune_kernel(TARGET target PROBLEM problem HEADER header
#                      [TUNE] [DEVICE n | DEVICE_NAME name [CC x.y]
#                      [SM_COUNT n]] [SIZE n[,n...]] [CACHE_DIR dir])
#
# PROBLEM is a built-in template name or a T1 JSON file (relative paths are
# taken from the current source directory). HEADER (relative: to the
# current binary directory) gets one #define per parameter, as
# `cutune export --format header` writes it:
#
#   #define CUTUNE_TUNED_VECTOR_ADD 1          (0: use the occupancy API)
#   #define CUTUNE_LEVEL_VECTOR_ADD "exact"    (the level that answered)
#   #define CUTUNE_VECTOR_ADD_BLOCK_SIZE_X 128
#
# The device: DEVICE_NAME (with CC and SM_COUNT for the architecture level)
# needs no GPU. Otherwise the GPU with ordinal DEVICE (default 0) of the
# build machine; where there is none, the lookup goes on without a device,
# that is, down the chain to the cross-device default. TUNE tunes first
# when a GPU is present (and records the winner in the cache), taking what
# an earlier build measured in the same context from the measurement log
# (`cutune tune --resume`); without a GPU it is skipped with a message. The cache: CACHE_DIR, else
# $CUTUNE_CACHE_DIR at build time, else ~/.cache/cutune.
#
# The header is added to the target's sources and its directory to the
# target's include path. It is made again when the problem file or the
# cutune executable changes; after tuning anew, touch the problem file or
# delete the header.

set(_cutune_tuning_dir "${CMAKE_CURRENT_LIST_DIR}")

function(cutune_tune_kernel)
  cmake_parse_arguments(CT "TUNE"
    "TARGET;PROBLEM;HEADER;DEVICE;DEVICE_NAME;CC;SM_COUNT;SIZE;CACHE_DIR" ""
    ${ARGN})
  foreach(required TARGET PROBLEM HEADER)
    if(NOT CT_${required})
      message(FATAL_ERROR "cutune_tune_kernel: ${required} is required")
    endif()
  endforeach()
  if(CT_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR
      "cutune_tune_kernel: unknown arguments ${CT_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT TARGET ${CT_TARGET})
    message(FATAL_ERROR "cutune_tune_kernel: no target ${CT_TARGET}")
  endif()
  if(DEFINED CT_DEVICE AND CT_DEVICE_NAME)
    message(FATAL_ERROR
      "cutune_tune_kernel: give DEVICE or DEVICE_NAME, not both")
  endif()

  if(CUTUNE_EXECUTABLE)
    set(exe "${CUTUNE_EXECUTABLE}")
    set(exe_dep "${CUTUNE_EXECUTABLE}")
  elseif(TARGET cutune::cutune-cli)
    set(exe "$<TARGET_FILE:cutune::cutune-cli>")
    set(exe_dep cutune::cutune-cli)
  elseif(TARGET cutune-cli)
    set(exe "$<TARGET_FILE:cutune-cli>")
    set(exe_dep cutune-cli)
  else()
    message(FATAL_ERROR "cutune_tune_kernel: no cutune executable (set "
      "CUTUNE_EXECUTABLE or find_package(cutune))")
  endif()

  set(header "${CT_HEADER}")
  if(NOT IS_ABSOLUTE "${header}")
    set(header "${CMAKE_CURRENT_BINARY_DIR}/${header}")
  endif()
  set(problem "${CT_PROBLEM}")
  set(problem_dep "")
  if(NOT IS_ABSOLUTE "${problem}" AND
     EXISTS "${CMAKE_CURRENT_SOURCE_DIR}/${problem}")
    set(problem "${CMAKE_CURRENT_SOURCE_DIR}/${problem}")
  endif()
  if(EXISTS "${problem}")
    set(problem_dep "${problem}")
  endif()

  add_custom_command(OUTPUT "${header}"
    COMMAND "${CMAKE_COMMAND}"
      "-DCUTUNE=${exe}" "-DPROBLEM=${problem}" "-DHEADER=${header}"
      "-DTUNE=${CT_TUNE}" "-DDEVICE=${CT_DEVICE}"
      "-DDEVICE_NAME=${CT_DEVICE_NAME}" "-DCC=${CT_CC}"
      "-DSM_COUNT=${CT_SM_COUNT}" "-DSIZE=${CT_SIZE}"
      "-DCACHE_DIR=${CT_CACHE_DIR}"
      -P "${_cutune_tuning_dir}/cutuneTuneKernel.cmake"
    DEPENDS ${exe_dep} ${problem_dep}
      "${_cutune_tuning_dir}/cutuneTuneKernel.cmake"
    COMMENT "cutune: launch parameters of ${CT_PROBLEM} -> ${CT_HEADER}"
    VERBATIM)
  target_sources(${CT_TARGET} PRIVATE "${header}")
  get_filename_component(header_dir "${header}" DIRECTORY)
  target_include_directories(${CT_TARGET} PRIVATE "${header_dir}")
endfunction()
