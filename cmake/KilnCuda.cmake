# Finds the CUDA toolkit (cudart, cuBLASLt, cuDNN, NCCL) and decides whether the CUDA code paths
# are built. KILN_ENABLE_CUDA=AUTO builds them when the toolkit is found; ON requires it.
set(KILN_CUDA_FOUND OFF)
string(TOUPPER "${KILN_ENABLE_CUDA}" _kiln_cuda_mode)
if(NOT _kiln_cuda_mode STREQUAL "OFF")
  if(NOT CUDAToolkit_ROOT AND EXISTS "/usr/local/cuda")
    set(CUDAToolkit_ROOT "/usr/local/cuda")
  endif()
  if(_kiln_cuda_mode STREQUAL "ON")
    find_package(CUDAToolkit REQUIRED)
  else()
    find_package(CUDAToolkit QUIET)
  endif()
  if(CUDAToolkit_FOUND)
    find_library(KILN_CUDNN_LIBRARY cudnn
      HINTS ${CUDAToolkit_LIBRARY_DIR} /usr/lib/x86_64-linux-gnu /usr/local/cuda/lib64)
    find_path(KILN_CUDNN_INCLUDE_DIR cudnn.h
      HINTS ${CUDAToolkit_INCLUDE_DIRS} /usr/include /usr/include/x86_64-linux-gnu)
    find_library(KILN_NCCL_LIBRARY nccl
      HINTS ${CUDAToolkit_LIBRARY_DIR} /usr/lib/x86_64-linux-gnu /usr/local/cuda/lib64)
    find_path(KILN_NCCL_INCLUDE_DIR nccl.h
      HINTS ${CUDAToolkit_INCLUDE_DIRS} /usr/include /usr/local/cuda/include)
    find_program(KILN_PTXAS_EXECUTABLE ptxas HINTS ${CUDAToolkit_BIN_DIR})
    # The cuDNN frontend's headers (scripts/install-deps.sh unpacks the pinned release into .deps/).
    find_path(KILN_CUDNN_FRONTEND_INCLUDE_DIR cudnn_frontend.h
      HINTS ${CMAKE_SOURCE_DIR}/.deps/cudnn-frontend-1.32.0/include)
    set(_kiln_cuda_missing "")
    foreach(_what KILN_CUDNN_LIBRARY KILN_CUDNN_INCLUDE_DIR KILN_NCCL_LIBRARY KILN_NCCL_INCLUDE_DIR
                  KILN_PTXAS_EXECUTABLE KILN_CUDNN_FRONTEND_INCLUDE_DIR)
      if(NOT ${_what})
        list(APPEND _kiln_cuda_missing ${_what})
      endif()
    endforeach()
    if(NOT TARGET CUDA::cublasLt)
      list(APPEND _kiln_cuda_missing CUDA::cublasLt)
    endif()
    if(_kiln_cuda_missing)
      if(_kiln_cuda_mode STREQUAL "ON")
        message(FATAL_ERROR "KILN_ENABLE_CUDA=ON but the CUDA toolkit lacks: ${_kiln_cuda_missing}")
      endif()
      message(STATUS "CUDA toolkit found but incomplete (${_kiln_cuda_missing}); CUDA paths off"
                     " (scripts/install-deps.sh provides the cuDNN frontend)")
    else()
      set(KILN_CUDA_FOUND ON)
      # The libraries that load without an NVIDIA driver; code built on them runs (and reports
      # "no device") on machines without a GPU. The driver API (libcuda) is loaded at run time.
      add_library(kiln_cuda_libs INTERFACE)
      target_include_directories(kiln_cuda_libs INTERFACE ${KILN_CUDNN_INCLUDE_DIR} ${KILN_NCCL_INCLUDE_DIR})
      target_include_directories(kiln_cuda_libs SYSTEM INTERFACE ${KILN_CUDNN_FRONTEND_INCLUDE_DIR})
      # cuBLASLt is not linked: the runtime loads it on first use (runtime/src/cuda/
      # cublaslt_loader.cpp), since loading it costs every process about 200 MiB at start-up.
      get_target_property(_kiln_cublaslt_location CUDA::cublasLt IMPORTED_LOCATION)
      get_filename_component(KILN_CUBLASLT_DIRECTORY "${_kiln_cublaslt_location}" DIRECTORY)
      get_target_property(_kiln_cublaslt_includes CUDA::cublasLt INTERFACE_INCLUDE_DIRECTORIES)
      if(_kiln_cublaslt_includes)
        target_include_directories(kiln_cuda_libs INTERFACE ${_kiln_cublaslt_includes})
      endif()
      target_compile_definitions(kiln_cuda_libs INTERFACE
        KILN_CUBLASLT_DIRECTORY="${KILN_CUBLASLT_DIRECTORY}")
      target_link_libraries(kiln_cuda_libs INTERFACE CUDA::cudart
                            ${KILN_CUDNN_LIBRARY} ${KILN_NCCL_LIBRARY} ${CMAKE_DL_LIBS})
      message(STATUS "CUDA ${CUDAToolkit_VERSION}: cuDNN ${KILN_CUDNN_LIBRARY}, NCCL ${KILN_NCCL_LIBRARY}, ptxas ${KILN_PTXAS_EXECUTABLE}")
    endif()
  endif()
endif()
