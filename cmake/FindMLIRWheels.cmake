# Locate MLIR and LLVM from the xtc-* PyPI wheels installed in the build's
# Python environment. Both MLIR_DIR and LLVM_DIR must point into the wheels:
# with MLIR_DIR alone, MLIRConfig finds the system's LLVM 14 and the build fails.
execute_process(
  COMMAND "${Python_EXECUTABLE}" -c
          "import mlir, llvm; print(list(mlir.__path__)[0]); print(list(llvm.__path__)[0])"
  OUTPUT_VARIABLE _dlvm_wheel_dirs
  RESULT_VARIABLE _dlvm_wheel_rc
  OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT _dlvm_wheel_rc EQUAL 0)
  message(FATAL_ERROR "The MLIR/LLVM wheels (xtc-mlir-*, xtc-llvm-*) are not importable from ${Python_EXECUTABLE}")
endif()
string(REPLACE "\n" ";" _dlvm_wheel_dirs "${_dlvm_wheel_dirs}")
list(GET _dlvm_wheel_dirs 0 MLIR_WHEEL_ROOT)
list(GET _dlvm_wheel_dirs 1 LLVM_WHEEL_ROOT)

set(LLVM_DIR "${LLVM_WHEEL_ROOT}/lib/cmake/llvm" CACHE PATH "" FORCE)
set(MLIR_DIR "${MLIR_WHEEL_ROOT}/lib/cmake/mlir" CACHE PATH "" FORCE)
find_package(LLVM 22.1.8 EXACT REQUIRED CONFIG NO_DEFAULT_PATH PATHS "${LLVM_DIR}")
find_package(MLIR REQUIRED CONFIG NO_DEFAULT_PATH PATHS "${MLIR_DIR}")
message(STATUS "MLIR from ${MLIR_WHEEL_ROOT}, LLVM ${LLVM_PACKAGE_VERSION} from ${LLVM_WHEEL_ROOT}")

set(MLIR_TABLEGEN_EXE "${MLIR_WHEEL_ROOT}/bin/mlir-tblgen" CACHE FILEPATH "" FORCE)
list(APPEND CMAKE_MODULE_PATH "${MLIR_CMAKE_DIR}" "${LLVM_CMAKE_DIR}")
include(TableGen)
include(AddLLVM)
include(AddMLIR)

include_directories(SYSTEM ${LLVM_INCLUDE_DIRS} ${MLIR_INCLUDE_DIRS})
add_definitions(${LLVM_DEFINITIONS})

# The Python-loaded library links the wheel's libMLIRPythonCAPI.so (which
# exports MLIR's C++ symbols); the mlir-opt plugin links libMLIR.so. Never both.
set(MLIR_PYTHON_CAPI_LIB "${MLIR_WHEEL_ROOT}/_mlir_libs/libMLIRPythonCAPI.so")
set(MLIR_SHARED_LIB "${MLIR_WHEEL_ROOT}/lib/libMLIR.so")
set(LLVM_SHARED_LIB "${LLVM_WHEEL_ROOT}/lib/libLLVM.so")
