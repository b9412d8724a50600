"""A buffer the system refuses to allocate: compiled code returns at once and the
call raises ExecutionError naming the size (never a write through NULL, never a
crash), the process goes on, and the next call that fits runs normally.

Code generation adds the checks (addAllocationChecks in
dialect/lib/CAPI/Codegen.cpp); the run in a child process whose address space is
limited (RLIMIT_AS) makes the allocator fail for real."""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap

import pytest

from dlvm_mlir.backend.runtime import ERROR_GLOBAL
from dlvm_mlir.tools.compile import main as dlvm_compile


def orbit(name: str, steps: int) -> str:
    """x -> sin(sin(...sin(x))) over `steps` steps: its gradient keeps one f32 per step on a tape."""
    return f"""func.func @{name}(%x: f32) -> f32 {{
  %lb = arith.constant 0 : index
  %ub = arith.constant {steps} : index
  %st = arith.constant 1 : index
  %z = scf.for %i = %lb to %ub step %st iter_args(%acc = %x) -> (f32) {{
    %s = math.sin %acc : f32
    scf.yield %s : f32
  }}
  return %z : f32
}}
func.func private @{name}_grad(f32, f32) -> f32
    attributes {{dlvm.gradient = #dlvm.gradient<of @{name} seedable>}}
"""


#: 2^25 steps: a 128 MiB tape; 1000 steps: 4 KB
PROGRAM = orbit("long", 1 << 25) + orbit("short", 1000)

CHILD = textwrap.dedent("""
    import math, resource, sys
    import numpy as np
    import dlvm_mlir
    from dlvm_mlir.backend import OutOfMemoryError

    exe = dlvm_mlir.compile(sys.stdin.read(), threads=int(sys.argv[1]))
    expected = exe["long_grad"](np.float32(0.5), np.float32(1.0))
    short = exe["short_grad"](np.float32(0.5), np.float32(1.0))
    dlvm_mlir.backend.trim_buffer_cache()
    with open("/proc/self/status") as status:
        mapped = next(int(line.split()[1]) << 10 for line in status if line.startswith("VmSize:"))
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    resource.setrlimit(resource.RLIMIT_AS, (mapped + (48 << 20), hard))
    try:
        exe["long_grad"](np.float32(0.5), np.float32(1.0))
    except OutOfMemoryError as exc:
        assert isinstance(exc, MemoryError)
        print("error:", exc)
    else:
        print("no error")
    # the process goes on: a call that fits, then the large one again with room
    assert exe["short_grad"](np.float32(0.5), np.float32(1.0)) == short
    resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
    again = exe["long_grad"](np.float32(0.5), np.float32(1.0))
    assert again == expected and math.isfinite(float(expected)), (again, expected)
    print("ok")
""")


@pytest.mark.parametrize("threads", [1, 2])
def test_a_refused_tape_raises_and_the_process_goes_on(threads: int) -> None:
    done = subprocess.run([sys.executable, "-c", CHILD, str(threads)], input=PROGRAM, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    assert lines[-1] == "ok"
    assert lines[0] == ("error: @long_grad: out of memory: the system refused a buffer of 128.0 MiB; "
                        "the call was abandoned"), done.stdout


def test_the_allocations_are_checked_in_the_code(tmp_path) -> None:
    """The optimized LLVM IR of the program: the tape's allocation stores -1 in the
    error slot when it fails, and the C header returns the slot."""
    (tmp_path / "orbit.mlir").write_text(PROGRAM)
    assert dlvm_compile([str(tmp_path / "orbit.mlir"), "-o", str(tmp_path / "orbit.ll"), "--emit", "llvm",
                         "--header", str(tmp_path / "orbit.h")]) == 0
    llvm = (tmp_path / "orbit.ll").read_text()
    assert f"@{ERROR_GLOBAL} = local_unnamed_addr global i64 0" in llvm
    assert f"store atomic i64 -1, ptr @{ERROR_GLOBAL} monotonic" in llvm
    text = (tmp_path / "orbit.h").read_text()
    assert f"int failed = (int){ERROR_GLOBAL};" in text and "-1 when a buffer could not be allocated" in text


LEAKING = """func.func @f(%x: tensor<262144xf32>, %s: f32) -> f32 {
  %e = dlvm.exp %x : tensor<262144xf32>
  %r = dlvm.reduce add %e dims [0] : tensor<262144xf32>
  %c = tensor.extract %r[] : tensor<f32>
  %a = arith.addf %s, %c : f32
  %lb = arith.constant 0 : index
  %ub = arith.constant 33554432 : index
  %st = arith.constant 1 : index
  %z = scf.for %i = %lb to %ub step %st iter_args(%acc = %a) -> (f32) {
    %q = math.sin %acc : f32
    scf.yield %q : f32
  }
  return %z : f32
}
func.func private @f_grad(tensor<262144xf32>, f32, f32) -> (tensor<262144xf32>, f32)
    attributes {dlvm.gradient = #dlvm.gradient<of @f seedable>}
"""

LEAK_CHILD = textwrap.dedent("""
    import resource, sys
    import numpy as np
    import dlvm_mlir
    from dlvm_mlir.backend import OutOfMemoryError
    from dlvm_mlir.backend.runtime import runtime_stats

    exe = dlvm_mlir.compile(sys.stdin.read(), threads=int(sys.argv[1]))
    x = np.full(262144, -20.0, np.float32)
    dlvm_mlir.backend.trim_buffer_cache()
    before = runtime_stats()["buffers"]
    with open("/proc/self/status") as status:
        mapped = next(int(line.split()[1]) << 10 for line in status if line.startswith("VmSize:"))
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    resource.setrlimit(resource.RLIMIT_AS, (mapped + (48 << 20), hard))
    try:
        exe["f_grad"](x, np.float32(0.5), np.float32(1.0))
    except OutOfMemoryError:
        pass
    else:
        raise SystemExit("no error")
    after = runtime_stats()["buffers"]
    print(before["live_blocks"], after["live_blocks"], after["released_after_failures"] - before["released_after_failures"])
""")


@pytest.mark.parametrize("threads", [1, 2])
def test_a_failed_call_frees_the_buffers_it_allocated(threads: int) -> None:
    """The gradient saves exp(x) (1 MiB) for its reverse sweep before the loop's 128 MiB
    tape is refused: the call returns early with that buffer allocated. The runtime frees
    it after the call (dialect/runtime/BufferCache.cpp: dlvmRuntimeCallEnd); it used to
    stay allocated for the life of the process."""
    done = subprocess.run([sys.executable, "-c", LEAK_CHILD, str(threads)], input=LEAKING, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    live_before, live_after, released = map(int, done.stdout.split())
    assert live_after == live_before and released >= 1, done.stdout


LEAK_MAIN = r"""#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include "leak.h"
#include "dlvm-runtime/Runtime.h"

int main(void) {
  float *x = malloc(sizeof(float) * LEAK_F_GRAD_ARG0_ELEMENTS);
  float *dx = malloc(sizeof(float) * LEAK_F_GRAD_RESULT0_ELEMENTS);
  float ds;
  for (int i = 0; i < LEAK_F_GRAD_ARG0_ELEMENTS; ++i) x[i] = -20.0f;
  dlvmRuntimeTrimBuffers();
  DlvmBufferStats before, after;
  dlvmRuntimeBufferStats(&before);
  char line[256];
  long long mapped = 0;
  FILE *status = fopen("/proc/self/status", "r");
  while (fgets(line, sizeof line, status))
    if (strncmp(line, "VmSize:", 7) == 0) mapped = atoll(line + 7) << 10;
  fclose(status);
  struct rlimit limit;
  getrlimit(RLIMIT_AS, &limit);
  limit.rlim_cur = mapped + (48ll << 20);
  setrlimit(RLIMIT_AS, &limit);
  int failed = leak_f_grad(x, 0.5f, 1.0f, dx, &ds);
  dlvmRuntimeBufferStats(&after);
  printf("%d %llu %llu %llu\n", failed, (unsigned long long)before.liveBlocks,
         (unsigned long long)after.liveBlocks, (unsigned long long)(after.released - before.released));
  return 0;
}
"""


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler")
def test_a_c_callers_failed_call_frees_its_buffers(tmp_path) -> None:
    """The same refused tape, called from C through dlvm-compile's header: the call returns
    -1 and the buffer it saved is freed, since every entry point brackets its calls for the
    runtime (artifact.BRACKETED, addCallBrackets in dialect/lib/CAPI/Codegen.cpp); before,
    only Python's calls were bracketed and a C caller leaked it."""
    from dlvm_mlir.backend.artifact import runtime_library

    (tmp_path / "leak.mlir").write_text(LEAKING)
    (tmp_path / "main.c").write_text(LEAK_MAIN)
    assert dlvm_compile([str(tmp_path / "leak.mlir"), "-o", str(tmp_path / "libleak.so"), "--header",
                         str(tmp_path / "leak.h"), "--entry", "f_grad", "--threads", "1"]) == 0
    runtime = runtime_library().parent
    subprocess.run(["cc", "-O2", "-Wall", "-Werror", "main.c", "-o", "main", f"-I{runtime / 'include'}", "-L.",
                    "-lleak", f"-L{runtime}", "-ldlvm_runtime", "-Wl,-rpath,$ORIGIN", f"-Wl,-rpath,{runtime}"],
                   cwd=tmp_path, check=True, capture_output=True, text=True)
    done = subprocess.run([str(tmp_path / "main")], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    failed, live_before, live_after, released = map(int, done.stdout.split())
    assert failed == -1 and live_after == live_before and released >= 1, done.stdout
