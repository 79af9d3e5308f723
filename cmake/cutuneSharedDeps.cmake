# For a shared libcutune with CUTUNE_STATIC_DEPS: an archive goes inside
# the shared library only if its code is position-independent. Debian's
# libgsl.a and libz.a are; its libjansson.a and libgslcblas.a are not
# (their references to stdin and stderr), and a shared library must then
# link those as shared libraries. Each archive is tried by linking, into a
# shared object, the member that holds a function cutune calls; one that
# does not fit is replaced, in its imported target, by the shared library
# of the same name. Included after the dependencies are found.
include(CheckCSourceCompiles)
include(CMakePushCheckState)

function(cutune_shared_fit target archive name symbol)
  if(NOT archive MATCHES "\\.a$")
    return()
  endif()
  cmake_push_check_state(RESET)
  set(CMAKE_REQUIRED_FLAGS -fPIC)
  set(CMAKE_REQUIRED_LINK_OPTIONS -shared)
  set(CMAKE_REQUIRED_LIBRARIES "${archive}")
  set(CMAKE_REQUIRED_QUIET ON)
  check_c_source_compiles("extern char ${symbol}(void);
void *cutune_probe(void) { return (void *)&${symbol}; }"
    CUTUNE_SHARED_FITS_${name})
  cmake_pop_check_state()
  if(CUTUNE_SHARED_FITS_${name})
    return()
  endif()
  find_library(_cutune_shared_lib NAMES lib${name}.so NO_CACHE)
  if(NOT _cutune_shared_lib)
    message(FATAL_ERROR "${archive} cannot go into a shared library (it is "
      "not position-independent) and there is no lib${name}.so: configure "
      "with -DBUILD_SHARED_LIBS=OFF, or install the shared ${name}")
  endif()
  message(STATUS "${archive} is not position-independent: the shared "
    "libcutune links ${_cutune_shared_lib}")
  set_target_properties(${target} PROPERTIES
    IMPORTED_LOCATION "${_cutune_shared_lib}"
    IMPORTED_LOCATION_RELEASE "${_cutune_shared_lib}"
    IMPORTED_LOCATION_DEBUG "${_cutune_shared_lib}")
endfunction()

cutune_shared_fit(GSL::gsl "${GSL_LIBRARY}" gsl gsl_set_error_handler_off)
cutune_shared_fit(GSL::gslcblas "${GSL_CBLAS_LIBRARY}" gslcblas cblas_dgemm)
cutune_shared_fit(Jansson::Jansson "${JANSSON_LIBRARY}" jansson json_loadb)
if(ZLIB_LIBRARY_RELEASE)
  set(_cutune_zlib "${ZLIB_LIBRARY_RELEASE}")
else()
  set(_cutune_zlib "${ZLIB_LIBRARY}")
endif()
cutune_shared_fit(ZLIB::ZLIB "${_cutune_zlib}" z gzopen)
unset(_cutune_zlib)
