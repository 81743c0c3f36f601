# The loader's sources, shared by the library target and the standalone fuzzer project.
set(KILN_ONNX_LOADER_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/Diagnostic.cpp
  ${CMAKE_CURRENT_LIST_DIR}/ExternalData.cpp
  ${CMAKE_CURRENT_LIST_DIR}/ModelLoader.cpp
  ${CMAKE_CURRENT_LIST_DIR}/ModelValidation.cpp
  ${CMAKE_CURRENT_LIST_DIR}/TensorData.cpp
  ${CMAKE_CURRENT_LIST_DIR}/TensorFile.cpp
  ${CMAKE_CURRENT_LIST_DIR}/TestDataSet.cpp
  ${CMAKE_CURRENT_LIST_DIR}/WireFormatScan.cpp
)
