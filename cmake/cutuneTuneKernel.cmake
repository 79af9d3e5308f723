# The build step of cutune_tune_kernel() (cutuneTuning.cmake), run with
# cmake -P: tune when asked and a GPU is present, then export the header,
# falling back down the lookup chain when there is no GPU.
# Inputs (-D): CUTUNE PROBLEM HEADER TUNE DEVICE DEVICE_NAME CC SM_COUNT
# SIZE CACHE_DIR.

set(common "")
if(SIZE)
  list(APPEND common --size "${SIZE}")
endif()
if(CACHE_DIR)
  list(APPEND common --cache-dir "${CACHE_DIR}")
endif()
set(device "")
if(DEVICE_NAME)
  list(APPEND device --device-name "${DEVICE_NAME}")
  if(CC)
    list(APPEND device --cc "${CC}")
  endif()
  if(SM_COUNT)
    list(APPEND device --sm-count "${SM_COUNT}")
  endif()
elseif(NOT "${DEVICE}" STREQUAL "")
  list(APPEND device --device "${DEVICE}")
else()
  list(APPEND device --device 0)
endif()

# `cutune` exits 3 when there is no CUDA device.
set(no_gpu 3)

if(TUNE)
  if(DEVICE_NAME)
    message(STATUS "cutune: TUNE ignored for the named device "
      "${DEVICE_NAME} (tuning runs on a GPU of this machine)")
  else()
    # --resume: a build that tunes again what an earlier build (or an
    # interrupted one) measured, with the same kernel, sizes, device,
    # driver and cutune, takes those measurements instead of repeating
    # them; any change there is a new measuring context and a full tune.
    execute_process(COMMAND "${CUTUNE}" tune "${PROBLEM}" ${device}
                            ${common} --quiet --resume
                    RESULT_VARIABLE rc)
    if(rc EQUAL no_gpu)
      message(STATUS "cutune: no GPU here; looking ${PROBLEM} up instead")
    elseif(NOT rc EQUAL 0)
      message(FATAL_ERROR "cutune: tuning ${PROBLEM} failed (exit ${rc})")
    endif()
  endif()
endif()

# cutune writes into an existing folder only (it creates no directories
# for its outputs); the generated header's folder is the build's.
get_filename_component(header_dir "${HEADER}" DIRECTORY)
file(MAKE_DIRECTORY "${header_dir}")
execute_process(COMMAND "${CUTUNE}" export "${PROBLEM}" --format header
                        -o "${HEADER}" ${device} ${common}
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(rc EQUAL no_gpu AND NOT DEVICE_NAME)
  # No GPU: no device to name, so the chain starts past the device's own
  # levels and answers with the cross-device default (or the occupancy
  # suggestion when nothing is cached).
  execute_process(COMMAND "${CUTUNE}" export "${PROBLEM}" --format header
                          -o "${HEADER}" --device-name "(no GPU)" ${common}
                  RESULT_VARIABLE rc ERROR_VARIABLE err)
endif()
if(err)
  string(STRIP "${err}" err)
  message(STATUS "${err}")
endif()
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cutune: exporting ${PROBLEM} failed (exit ${rc})")
endif()
