"""dlvm's async runtime (dialect/python/AsyncRuntime.cpp): MLIR's ``mlirAsyncRuntime*``
ABI on a spinning thread pool, called by compiled parallel loops."""

from __future__ import annotations

import gc
import os
import re
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from dlvm_mlir import _dlvm
from dlvm_mlir.backend import compile_cpu, runtime_stats, set_worker_spin
from dlvm_mlir.backend.cache import load_llvm_module
from dlvm_mlir.backend.runtime import CpuExecutable, FunctionSignature, ValueSpec
from mlir import ir, passmanager

RNG = np.random.default_rng(7)

MATMUL = """
func.func @mm(%a: tensor<192x256xf32>, %b: tensor<256x160xf32>) -> tensor<192x160xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<192x160xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<192x160xf32>) -> tensor<192x160xf32>
  %r = linalg.matmul ins(%a, %b : tensor<192x256xf32>, tensor<256x160xf32>)
                     outs(%c : tensor<192x160xf32>) -> tensor<192x160xf32>
  return %r : tensor<192x160xf32>
}
"""

# Every kind of async object and await: a value made by a task, a group awaited
# inside a coroutine (await_all in async.execute), a coroutine awaiting a token
# and a value, blocking awaits, and an error token whose dependent task fails.
# (@dlvm_f: CpuExecutable calls entry point f through _mlir_ciface_dlvm_f.)
ASYNC_OPS = """
func.func @dlvm_f(%xm: memref<f32>, %out: memref<f32>, %err: memref<i32>) attributes {llvm.emit_c_interface} {
  %x = memref.load %xm[] : memref<f32>
  %t0, %v0 = async.execute -> !async.value<f32> {
    %y = arith.mulf %x, %x : f32
    async.yield %y : f32
  }
  %c2 = arith.constant 2 : index
  %g = async.create_group %c2 : !async.group
  %ta = async.execute { async.yield }
  %tb = async.execute { async.yield }
  %ra = async.add_to_group %ta, %g : !async.token
  %rb = async.add_to_group %tb, %g : !async.token
  %t1, %v1 = async.execute [%t0] (%v0 as %a : !async.value<f32>) -> !async.value<f32> {
    async.await_all %g
    %z = arith.addf %a, %x : f32
    async.yield %z : f32
  }
  %bad = async.runtime.create : !async.token
  async.runtime.set_error %bad : !async.token
  %t2 = async.execute [%bad] { async.yield }
  async.runtime.await %t2 : !async.token
  %e = async.runtime.is_error %t2 : !async.token
  %r = async.await %v1 : !async.value<f32>
  memref.store %r, %out[] : memref<f32>
  %ei = arith.extui %e : i1 to i32
  memref.store %ei, %err[] : memref<i32>
  return
}
"""

ASYNC_TO_LLVM = (
    "builtin.module(async-to-async-runtime,async-runtime-ref-counting,async-runtime-ref-counting-opt,"
    "convert-async-to-llvm,convert-scf-to-cf,finalize-memref-to-llvm,convert-arith-to-llvm,"
    "convert-cf-to-llvm,convert-func-to-llvm,reconcile-unrealized-casts)"
)


@pytest.fixture(scope="module", autouse=True)
def _private_cache(tmp_path_factory: pytest.TempPathFactory) -> None:
    mp = pytest.MonkeyPatch()
    mp.setenv("DLVM_MLIR_CACHE_DIR", str(tmp_path_factory.mktemp("dlvm-cache")))
    yield
    mp.undo()


@pytest.fixture
def spin() -> None:
    """Restores the spin budget a test changes."""
    before = runtime_stats()["async"]["spin_us"]
    yield
    set_worker_spin(before)


def operands() -> tuple[np.ndarray, np.ndarray]:
    return (
        RNG.standard_normal((192, 256)).astype(np.float32),
        RNG.standard_normal((256, 160)).astype(np.float32),
    )


def check(exe: CpuExecutable, a: np.ndarray, b: np.ndarray) -> None:
    np.testing.assert_allclose(exe.mm(a, b), a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)


def tasks_run() -> int:
    stats = runtime_stats()["async"]
    return stats["tasks_by_workers"] + stats["tasks_by_waiters"]


def test_parallel_loops_run_on_the_pool_and_free_every_object() -> None:
    exe = compile_cpu(MATMUL, threads=2)
    assert exe.lowering.uses_async_runtime
    before = tasks_run()
    a, b = operands()
    for _ in range(20):
        check(exe, a, b)
    stats = runtime_stats()["async"]
    assert tasks_run() - before >= 20  # at least one task per call besides the caller's block
    assert 1 <= stats["workers"] <= max(1, (os.cpu_count() or 2) - 1)
    assert stats["live_objects"] == 0


RESERVE = """
import os, sys
from dlvm_mlir.backend import compile_cpu, runtime_stats
source = sys.stdin.read()
print(runtime_stats()["async"]["workers"])
compile_cpu(source, threads=1, use_cache=False)
print(runtime_stats()["async"]["workers"])
compile_cpu(source, threads=8, use_cache=False)
print(runtime_stats()["async"]["workers"], max(1, len(os.sched_getaffinity(0)) - 1))
"""


def test_programs_reserve_threads_minus_one_workers() -> None:
    run = subprocess.run([sys.executable, "-c", RESERVE], input=MATMUL, capture_output=True, text=True, check=True)
    lines = run.stdout.splitlines()
    assert lines[:2] == ["0", "0"]
    workers, cap = map(int, lines[2].split())
    assert workers == min(7, cap)


def test_the_runtime_implements_every_function_the_lowering_declares() -> None:
    with ir.Context():
        module = ir.Module.parse(ASYNC_OPS)
        passmanager.PassManager.parse(ASYNC_TO_LLVM).run(module.operation)
        declared = set(re.findall(r"@(mlirAsyncRuntim\w+)", str(module)))
    assert len(declared) >= 20
    assert declared <= set(_dlvm.runtime_symbols())


def test_values_groups_coroutine_awaits_and_errors() -> None:
    with ir.Context():
        module = ir.Module.parse(ASYNC_OPS)
        passmanager.PassManager.parse(ASYNC_TO_LLVM).run(module.operation)
        signature = FunctionSignature("f", (ValueSpec("f32", ()),), (ValueSpec("f32", ()), ValueSpec("i32", ())))
        exe = load_llvm_module(module, [signature], threads=2)
    for x in (3.0, -1.5, 0.25):
        value, error = exe.f(np.array(x, np.float32))
        assert float(value) == pytest.approx(x * x + x)
        assert int(error) == 1  # the task that awaited the error token is an error too
    assert runtime_stats()["async"]["live_objects"] == 0


def test_spin_time_is_checked(spin: None) -> None:
    for bad in (-1, 2.5, True, "10"):
        with pytest.raises(ValueError, match="non-negative number of microseconds"):
            set_worker_spin(bad)  # type: ignore[arg-type]
    set_worker_spin(1234)
    assert runtime_stats()["async"]["spin_us"] == 1234


def test_workers_that_sleep_are_woken(spin: None) -> None:
    set_worker_spin(0)
    exe = compile_cpu(MATMUL, threads=2)
    a, b = operands()
    sleeps = runtime_stats()["async"]["sleeps"]
    for _ in range(10):
        check(exe, a, b)
        time.sleep(0.002)
    assert runtime_stats()["async"]["sleeps"] > sleeps
    assert runtime_stats()["async"]["live_objects"] == 0


def test_concurrent_callers_share_the_pool() -> None:
    exe = compile_cpu(MATMUL, threads=2)
    errors: list[BaseException] = []

    def work(seed: int) -> None:
        rng = np.random.default_rng(seed)
        try:
            for _ in range(15):
                a = rng.standard_normal((192, 256)).astype(np.float32)
                b = rng.standard_normal((256, 160)).astype(np.float32)
                check(exe, a, b)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(seed,)) for seed in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(thread.is_alive() for thread in threads)
    assert not errors, errors[0]
    assert runtime_stats()["async"]["live_objects"] == 0


def test_engines_can_be_destroyed_and_recreated() -> None:
    """libmlir_async_runtime.so reset its global state when an engine died, and
    the next engine crashed the process; engines were kept forever for that."""
    a, b = operands()
    for variant in range(3):
        exe = compile_cpu(MATMUL + f"// variant {variant}\n", threads=2, use_cache=False)
        check(exe, a, b)
        del exe
        gc.collect()
    check(compile_cpu(MATMUL, threads=2), a, b)


def test_a_forked_child_gets_a_fresh_pool() -> None:
    exe = compile_cpu(MATMUL, threads=2)
    a, b = operands()
    check(exe, a, b)  # the parent's pool has a worker now
    expected = a.astype(np.float64) @ b
    pid = os.fork()
    if pid == 0:  # child: its pool has no threads until a parallel loop runs
        code = 1
        try:
            ok = np.allclose(exe.mm(a, b), expected, rtol=1e-4, atol=1e-4)
            code = 0 if ok and runtime_stats()["async"]["live_objects"] == 0 else 1
        finally:
            os._exit(code)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            assert os.waitstatus_to_exitcode(status) == 0
            return
        time.sleep(0.05)
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    pytest.fail("the forked child hung in a parallel loop")


def test_spin_budget_from_the_environment() -> None:
    code = "from dlvm_mlir.backend import runtime_stats; print(runtime_stats()['async']['spin_us'])"
    env = {**os.environ, "DLVM_ASYNC_SPIN_US": "1234"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "1234"
    env["DLVM_ASYNC_SPIN_US"] = "not a number"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "5000"


OPENMP = """
import sys, threading
import numpy as np
torch = __import__("torch")  # loads PyTorch's libgomp
torch.ones(256, 256) @ torch.ones(256, 256)  # its team exists and spins
from dlvm_mlir.backend import compile_cpu, runtime_stats
from dlvm_mlir.backend.runtime import loaded_libgomp, share_openmp_threads
source = sys.stdin.read()
assert loaded_libgomp() is not None
exe = compile_cpu(source, threads=2)
rng = np.random.default_rng(0)
def check():
    a = rng.standard_normal((192, 256)).astype(np.float32)
    b = rng.standard_normal((256, 160)).astype(np.float32)
    np.testing.assert_allclose(exe.mm(a, b), a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)
assert share_openmp_threads() is True
for _ in range(10):
    check()
    torch.ones(64, 64) @ torch.ones(64, 64)
errors = []
def work():
    try:
        for _ in range(5):
            check()
    except BaseException as exc:
        errors.append(exc)
threads = [threading.Thread(target=work) for _ in range(3)]
[t.start() for t in threads]; [t.join(60) for t in threads]
assert not errors, errors
shared = runtime_stats()["async"]
assert shared["openmp_regions"] >= 10, shared
assert shared["live_objects"] == 0, shared
assert share_openmp_threads(False) is False
before = shared["tasks_by_workers"]
for _ in range(10):
    check()
after = runtime_stats()["async"]
assert after["openmp_regions"] == shared["openmp_regions"], after
assert after["tasks_by_workers"] > before, after
print("ok")
"""


def test_parallel_loops_can_run_on_a_shared_openmp_team() -> None:
    """share_openmp_threads(): parallel loops on PyTorch's libgomp team (then back on the pool)."""
    pytest.importorskip("torch")
    run = subprocess.run([sys.executable, "-c", OPENMP], input=MATMUL, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0 and run.stdout.strip().endswith("ok"), run.stdout + run.stderr


MOVES = """
import os, sys, threading
import numpy as np
from dlvm_mlir.backend import compile_cpu, runtime_stats
exe = compile_cpu(sys.argv[1].replace("192", "768").replace("256", "768").replace("160", "768"), threads=2)
mm = exe.entry("mm")
a = np.ones((768, 768), np.float32)
mm(a, a)
main = threading.get_native_id()
def name(t):
    return open(f"/proc/self/task/{t}/comm").read().strip()
(worker,) = [t for t in map(int, os.listdir("/proc/self/task")) if t != main and name(t) == "python"]
allowed = os.sched_getaffinity(0)
first = min(allowed)
os.sched_setaffinity(0, {first})  # the caller queues every task from one CPU
for _ in range(20):
    os.sched_setaffinity(worker, {first})  # the worker onto the caller's CPU,
    os.sched_setaffinity(worker, allowed)  # where it may stay
    assert (mm(a, a) == 768).all()
print(runtime_stats()["async"]["moves"])
"""


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two CPUs")
def test_a_worker_leaves_the_callers_cpu() -> None:
    """A worker that would run a task on the CPU it was queued from moves to another one
    (after a pause the kernel had woken it onto the caller's vCPU, where both halves of a
    2-thread matmul shared one vCPU for several calls). The caller is pinned to one CPU and
    the worker put there before each of 20 calls (768^3 matmuls, long enough for the worker
    to get a time slice there): it moves off at least once (9-12 times when measured)."""
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}
    out = subprocess.run([sys.executable, "-c", MOVES, MATMUL], env=env, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    assert int(out.stdout.strip()) >= 1


EVERY_BLOCK = """
import sys
import numpy as np
torch = __import__("torch")  # loads PyTorch's libgomp
torch.ones(256, 256) @ torch.ones(256, 256)
from dlvm_mlir.backend import compile_cpu, runtime_stats
from dlvm_mlir.backend.runtime import share_openmp_threads
exe = compile_cpu(sys.stdin.read(), threads=2)
a = np.ones((192, 256), np.float32)
b = np.ones((256, 160), np.float32)
import time
CALLS = 20
def tasks():
    # per call, over many calls: a worker counts its task just after the group it belongs
    # to completes, so a window of one call could take one task of the call before
    time.sleep(0.05)
    before = runtime_stats()["async"]
    for _ in range(CALLS):
        np.testing.assert_array_equal(exe.mm(a, b), np.full((192, 160), 256.0, np.float32))
    time.sleep(0.05)
    after = runtime_stats()["async"]
    return round(sum(after[k] - before[k] for k in ("tasks_by_waiters", "tasks_by_workers")) / CALLS)
exe.mm(a, b)
own = tasks()
assert share_openmp_threads() is True
shared = tasks()
share_openmp_threads(False)
print(own, shared)
"""


def test_a_shared_openmp_team_runs_every_block_as_a_task() -> None:
    """backend/parallel_dispatch.py: on the runtime's own pool the caller runs a parallel loop's
    first block itself (one task fewer than blocks); on a shared OpenMP team, whose threads
    start queued tasks only once the caller awaits, every block is a task, so the team starts
    them all at once (the caller ran the first alone before)."""
    pytest.importorskip("torch")
    run = subprocess.run([sys.executable, "-c", EVERY_BLOCK], input=MATMUL, capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    own, shared = map(int, run.stdout.split())
    assert own >= 1 and shared == own + 1, run.stdout
