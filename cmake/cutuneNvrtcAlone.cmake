# CUDA::nvrtc without CUDA::cuda_driver among its link dependencies
# (FindCUDAToolkit adds it; NVRTC never calls the driver). Included after
# find_package(CUDAToolkit) by cutune's build and by its package config.
if(TARGET CUDA::nvrtc)
  get_target_property(_cutune_nvrtc_deps CUDA::nvrtc INTERFACE_LINK_LIBRARIES)
  if(_cutune_nvrtc_deps)
    list(REMOVE_ITEM _cutune_nvrtc_deps CUDA::cuda_driver)
    set_target_properties(CUDA::nvrtc PROPERTIES
      INTERFACE_LINK_LIBRARIES "${_cutune_nvrtc_deps}")
  endif()
  unset(_cutune_nvrtc_deps)
endif()
