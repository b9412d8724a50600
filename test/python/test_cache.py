"""The compile cache (dlvm_mlir.cache): where it lives, its keys, LRU
eviction, several processes at once, warm starts that skip the compiler."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from dlvm_mlir.cache import DiskCache, MemoryCache, cache_key, default_cache_dir, parse_size

PROGRAM = """func.func @f(%x: tensor<300x40xf32>) -> tensor<300x40xf32> {
  %0 = dlvm.tanh %x : tensor<300x40xf32>
  %1 = dlvm.mul %0, %x : tensor<300x40xf32>, tensor<300x40xf32>
  return %1 : tensor<300x40xf32>
}
"""

# A fresh process compiles PROGRAM and reports what it took.
CHILD = textwrap.dedent("""
    import json, sys, time
    import numpy as np
    import dlvm_mlir
    from dlvm_mlir.cache import cache_stats
    from dlvm_mlir.compiler_process import compiler_process
    program = sys.stdin.read()
    start = time.perf_counter()
    exe = dlvm_mlir.compile(program)
    y = exe["f"](np.ones((300, 40), np.float32))
    print(json.dumps({"seconds": time.perf_counter() - start, "hits": cache_stats().disk_hits,
                      "compiles": cache_stats().compiles, "servers": compiler_process().starts,
                      "value": float(y[0, 0]), "path": str(exe.path)}))
""")


def compile_in_fresh_process(env: dict[str, str]) -> dict:
    done = subprocess.run([sys.executable, "-c", CHILD], input=PROGRAM, capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_location_follows_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("DLVM_MLIR_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "xdg" / "dlvm-mlir"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_cache_dir() == tmp_path / "home" / ".cache" / "dlvm-mlir"
    monkeypatch.setenv("DLVM_MLIR_CACHE_DIR", str(tmp_path / "mine"))
    assert default_cache_dir() == tmp_path / "mine"
    monkeypatch.setenv("DLVM_MLIR_DISK_CACHE", "0")
    assert default_cache_dir() is None


def test_the_tests_do_not_use_the_users_cache() -> None:
    assert "dlvm-test-cache-" in str(default_cache_dir())


def test_sizes() -> None:
    assert parse_size("2GiB") == 2 << 30
    assert parse_size("500M") == 500 << 20
    assert parse_size("1.5k") == 1536
    assert parse_size("4096") == 4096
    with pytest.raises(ValueError, match="not a size"):
        parse_size("lots")


def test_keys_depend_on_every_part() -> None:
    assert cache_key("a", "b") == cache_key("a", "b")
    assert cache_key("a", "b") != cache_key("ab", "")
    assert len(cache_key("x")) == 64


def test_least_recently_used_objects_are_evicted(tmp_path: Path) -> None:
    cache = DiskCache(tmp_path, max_bytes=3500)
    keys = [cache_key(str(i)) for i in range(4)]
    for index, key in enumerate(keys[:3]):
        scratch = cache.scratch(key)
        scratch.write_bytes(b"x" * 1000)
        cache.commit(scratch, key)
        os.utime(cache.path(key), (1000 + index, 1000 + index))
    assert cache.lookup(keys[0]) is not None  # used now: the newest
    scratch = cache.scratch(keys[3])
    scratch.write_bytes(b"x" * 1000)
    cache.commit(scratch, keys[3])
    assert [cache.lookup(k) is not None for k in keys] == [True, False, True, True]
    assert cache.info()["objects"] == 3 and cache.info()["bytes"] == 3000
    assert cache.clear() == 3 and cache.info()["objects"] == 0


def test_memory_cache_is_bounded() -> None:
    cache: MemoryCache[int] = MemoryCache(capacity=2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1
    cache.put("c", 3)
    assert (cache.get("a"), cache.get("b"), cache.get("c")) == (1, None, 3)


def test_cache_command(tmp_path: Path) -> None:
    env = dict(os.environ, DLVM_MLIR_CACHE_DIR=str(tmp_path))
    compile_in_fresh_process(env)
    info = subprocess.run([sys.executable, "-m", "dlvm_mlir.cache", "info"], env=env, capture_output=True, text=True)
    assert info.returncode == 0 and f"directory: {tmp_path}" in info.stdout and "objects:   1" in info.stdout
    clear = subprocess.run([sys.executable, "-m", "dlvm_mlir.cache", "clear"], env=env, capture_output=True, text=True)
    assert clear.returncode == 0 and "removed 1 object(s)" in clear.stdout
    assert not list(tmp_path.glob("*/*.so"))
    bad = subprocess.run([sys.executable, "-m", "dlvm_mlir.cache", "info"], capture_output=True, text=True,
                         env=dict(env, DLVM_MLIR_CACHE_SIZE="huge"))
    assert bad.returncode == 1 and "not a size" in bad.stderr


def test_a_warm_start_loads_the_object_without_the_compiler(tmp_path: Path) -> None:
    env = dict(os.environ, DLVM_MLIR_CACHE_DIR=str(tmp_path))
    cold = compile_in_fresh_process(env)
    assert (cold["compiles"], cold["hits"], cold["servers"]) == (1, 0, 1)
    warm = compile_in_fresh_process(env)
    assert (warm["compiles"], warm["hits"], warm["servers"]) == (0, 1, 0)
    assert warm["path"] == cold["path"] and warm["value"] == cold["value"]
    assert warm["seconds"] < cold["seconds"]


def test_processes_compiling_at_once_share_the_cache(tmp_path: Path) -> None:
    env = dict(os.environ, DLVM_MLIR_CACHE_DIR=str(tmp_path))
    children = [
        subprocess.Popen([sys.executable, "-c", CHILD], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=env)
        for _ in range(3)
    ]
    outputs = [child.communicate(PROGRAM) for child in children]
    assert all(child.returncode == 0 for child in children), [err for _, err in outputs]
    results = [json.loads(out.strip().splitlines()[-1]) for out, _ in outputs]
    assert len({r["value"] for r in results}) == 1
    assert len(list(tmp_path.glob("*/*.so"))) == 1
    assert not list(tmp_path.glob("*/.*.tmp"))


def test_no_disk_cache_leaves_no_files(tmp_path: Path) -> None:
    env = dict(os.environ, DLVM_MLIR_DISK_CACHE="0", TMPDIR=str(tmp_path))
    result = compile_in_fresh_process(env)
    assert result["compiles"] == 1
    time.sleep(0.1)
    assert [p for p in tmp_path.iterdir() if p.name.startswith("dlvm-")] == []
