"""The fuzzing loop: pick a corpus program, mutate it, run it in the worker, record, reduce.

Deterministic by seed: program ``i`` is mutated and run with its own seed
drawn from ``random.Random(seed)``, so the sequence of programs (and each
one's inputs) does not depend on timing; ``--time`` only decides where the
sequence stops.

Output directory::

    summary.json          counts per class and stage, every distinct failure
    failures/NNN-CLASS-STAGE.mlir       the program as run (declarations included)
    failures/NNN-CLASS-STAGE.min.mlir   after line-deletion reduction
    failures/NNN-CLASS-STAGE.json       class, stage, message, seeds, mutations
    located/NNN-STAGE.mlir              first example of each located error after parsing
    worker.log, tmp/                    the worker's stderr, its temporary files
"""

from __future__ import annotations

import json
import random
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .corpus import Corpus, load_pieces
from .mutators import mutate
from .oracle import CLASSES, STAGES, is_bad, signature
from .reducer import reduce_lines
from .worker import Worker

__all__ = ["FuzzConfig", "Fuzzer", "replay"]


@dataclass
class FuzzConfig:
    seed: int = 1
    time_limit: float | None = None
    count: int | None = None
    out: Path = Path("fuzz-out")
    corpus: Path = Path("test")
    timeout: float = 60.0
    reduce: bool = True
    reduce_seconds: float = 90.0
    recycle: int = 25
    cpu_pipeline: float = 0.3
    gpu_emulate: float = 0.25
    progress_every: float = 5.0
    quiet: bool = False
    log: Callable[[str], None] = field(default=lambda line: print(line, file=sys.stderr, flush=True))


@dataclass
class Failure:
    signature: str
    cls: str
    stage: str
    message: str
    count: int = 0
    first: int = 0
    reproducer: str = ""
    minimized: str = ""
    reduction_tests: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "signature": self.signature,
            "class": self.cls,
            "stage": self.stage,
            "count": self.count,
            "first_program": self.first,
            "reproducer": self.reproducer,
            "minimized": self.minimized,
            "reduction_tests": self.reduction_tests,
            "message": self.message[:4000],
        }


class Fuzzer:
    def __init__(self, config: FuzzConfig):
        self.config = config
        self.out = Path(config.out)
        self.out.mkdir(parents=True, exist_ok=True)
        self.worker = Worker(self.out, recycle=config.recycle)
        self.counts: Counter[str] = Counter()
        self.by_stage: dict[str, Counter[str]] = defaultdict(Counter)
        self.failures: dict[str, Failure] = {}
        self.located: dict[str, dict[str, Any]] = {}
        self.mutator_stats: dict[str, Counter[str]] = defaultdict(Counter)
        self.programs = 0
        self.calls = 0
        self.gpu_calls = 0
        self.start = time.monotonic()
        self.reduce_time = 0.0
        self.corpus: Corpus | None = None
        self.corpus_crashes: list[dict[str, str]] = []

    # -- corpus ---------------------------------------------------------------
    def load_corpus(self) -> Corpus:
        """Annotate every piece in the worker; a piece that crashes it (a test of the crash
        guard, say) is left out and listed in the summary under ``corpus_crashes``."""
        pieces = load_pieces(self.config.corpus)
        annotated = []
        for piece in pieces:
            status, result, _ = self.worker.request("annotate", piece, self.config.timeout)
            if status == "done":
                annotated.append(result)
            else:
                message = result if status == "crash" else "timeout"
                self.corpus_crashes.append({"piece": piece["id"], "status": status,
                                            "message": _gist(message or "")})
        self.corpus = Corpus(annotated)
        if not self.corpus.valid:
            raise RuntimeError(f"no program under {self.config.corpus} parses")
        return self.corpus

    # -- the loop -------------------------------------------------------------
    def elapsed(self) -> float:
        return time.monotonic() - self.start

    def _done(self) -> bool:
        c = self.config
        if c.count is not None and self.programs >= c.count:
            return True
        return c.time_limit is not None and self.elapsed() >= c.time_limit

    def run(self) -> dict[str, Any]:
        corpus = self.corpus or self.load_corpus()
        master = random.Random(self.config.seed)
        last_progress = time.monotonic()
        self._log(f"dlvm-fuzz: seed {self.config.seed}, corpus {len(corpus.valid)} programs "
                  f"(+{len(corpus.invalid)} that do not verify, {len(self.corpus_crashes)} left out "
                  f"that crash the parser) from {self.config.corpus}/")
        try:
            while not self._done():
                index = self.programs
                pseed = master.getrandbits(32)
                prng = random.Random(pseed)
                pool = corpus.valid if prng.random() < 0.9 or not corpus.invalid else corpus.invalid
                piece = prng.choice(pool)
                text, applied = mutate(piece, corpus, prng)
                outcome = self.worker.run(text, self.config.timeout, seed=pseed, cpu_pipeline=self.config.cpu_pipeline,
                                          gpu_emulate=self.config.gpu_emulate)
                self.programs += 1
                self._record(index, pseed, piece, applied, outcome)
                if time.monotonic() - last_progress >= self.config.progress_every:
                    last_progress = time.monotonic()
                    self._log(self.progress_line())
        except KeyboardInterrupt:
            self._log("dlvm-fuzz: interrupted")
        finally:
            self.worker.stop()
        summary = self.summary()
        (self.out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
        self._log(self.progress_line())
        return summary

    def _log(self, line: str) -> None:
        if not self.config.quiet:
            self.config.log(line)

    def progress_line(self) -> str:
        elapsed = self.elapsed()
        rate = self.programs / elapsed if elapsed > 0 else 0.0
        parts = [f"{cls} {self.counts[cls]}" for cls in CLASSES if self.counts[cls]]
        bad = self.bad_count()
        return (f"dlvm-fuzz: {elapsed:6.0f} s  {self.programs} programs ({rate:.2f}/s), "
                f"{self.calls} calls ({self.gpu_calls} on the emulated GPU): {', '.join(parts)}; "
                f"failures {bad} ({len(self.failures)} distinct)")

    def bad_count(self) -> int:
        return sum(f.count for f in self.failures.values())

    # -- recording ------------------------------------------------------------
    def _record(self, index: int, pseed: int, piece: dict[str, Any], applied: list[str], outcome: dict[str, Any]) -> None:
        cls, stage = outcome["cls"], outcome["stage"] or "parse"
        self.counts[cls] += 1
        self.by_stage[stage][cls] += 1
        self.calls += outcome.get("calls", 0)
        self.gpu_calls += outcome.get("gpu_calls", 0)
        for name in applied[:1]:
            stats = self.mutator_stats[name]
            stats["programs"] += 1
            if not (cls == "located" and stage == "parse"):
                stats["parsed"] += 1
            if cls == "ok":
                stats["ok"] += 1
        sig = signature(cls, stage, outcome.get("message", ""))
        meta = {
            "class": cls,
            "stage": stage,
            "program": index,
            "program_seed": pseed,
            "fuzz_seed": self.config.seed,
            "piece": piece["id"],
            "mutations": applied,
            "notes": outcome.get("notes", []),
            "signature": sig,
            "message": outcome.get("message", "")[:8000],
        }
        if "inputs" in outcome:
            meta["inputs"] = outcome["inputs"]
        if is_bad(cls, stage):
            # miscompiles are told apart by the corpus program they came from
            key = f"{sig}|{piece['id']}" if cls == "miscompile" else sig
            failure = self.failures.get(key)
            if failure is None:
                failure = self.failures[key] = Failure(sig, cls, stage, outcome.get("message", ""), first=index)
                self._save_failure(failure, outcome["text"], pseed, meta)
                self._log(f"dlvm-fuzz: new failure #{len(self.failures)}: {cls} in {stage}: "
                          f"{_gist(outcome.get('message', ''))}  -> {failure.reproducer}")
            failure.count += 1
        elif cls == "located" and stage not in ("parse", "declare"):
            entry = self.located.get(sig)
            if entry is None:
                path = self.out / "located" / f"{len(self.located):03d}-{stage}.mlir"
                path.parent.mkdir(exist_ok=True)
                path.write_text(outcome["text"])
                path.with_suffix(".json").write_text(json.dumps(meta, indent=2) + "\n")
                entry = self.located[sig] = {"signature": sig, "stage": stage, "count": 0, "example": str(path),
                                             "message": _gist(outcome.get("message", ""))}
            entry["count"] += 1

    def _save_failure(self, failure: Failure, text: str, pseed: int, meta: dict[str, Any]) -> None:
        folder = self.out / "failures"
        folder.mkdir(exist_ok=True)
        stem = f"{len(self.failures):03d}-{failure.cls}-{failure.stage}"
        path = folder / f"{stem}.mlir"
        path.write_text(text)
        failure.reproducer = str(path)
        if self.config.reduce and failure.cls != "timeout":
            started = time.monotonic()
            minimized, tests = self.minimize(text, pseed, failure.signature)
            self.reduce_time += time.monotonic() - started
            failure.reduction_tests = tests
            min_path = folder / f"{stem}.min.mlir"
            min_path.write_text(minimized)
            failure.minimized = str(min_path)
            meta["minimized"] = str(min_path)
        meta["replay"] = f"dlvm-fuzz --replay {path}"
        path.with_suffix(".json").write_text(json.dumps(meta, indent=2) + "\n")

    def minimize(self, text: str, pseed: int, target: str) -> tuple[str, int]:
        """``text`` reduced by line deletion, keeping the failure's signature."""
        timeout = min(self.config.timeout, 30.0)

        def still_fails(candidate: str) -> bool:
            outcome = self.worker.run(candidate, timeout, seed=pseed, declare=False,
                                      cpu_pipeline=self.config.cpu_pipeline, gpu_emulate=self.config.gpu_emulate)
            return signature(outcome["cls"], outcome["stage"] or "parse", outcome.get("message", "")) == target

        return reduce_lines(text, still_fails, max_seconds=self.config.reduce_seconds)

    def summary(self) -> dict[str, Any]:
        elapsed = self.elapsed()
        return {
            "seed": self.config.seed,
            "elapsed_s": round(elapsed, 1),
            "reduction_s": round(self.reduce_time, 1),
            "programs": self.programs,
            "programs_per_s": round(self.programs / elapsed, 3) if elapsed else 0.0,
            "calls": self.calls,
            "gpu_calls": self.gpu_calls,
            "counts": {cls: self.counts[cls] for cls in CLASSES},
            "by_stage": {stage: dict(self.by_stage[stage]) for stage in STAGES if stage in self.by_stage},
            "bad": self.bad_count(),
            "failures": [f.to_json() for f in self.failures.values()],
            "located_after_parse": sorted(self.located.values(), key=lambda e: -e["count"]),
            "mutators": {name: dict(stats) for name, stats in sorted(self.mutator_stats.items())},
            "corpus": {"valid": len(self.corpus.valid) if self.corpus else 0,
                       "invalid": len(self.corpus.invalid) if self.corpus else 0,
                       "crashes": self.corpus_crashes},
            "worker_starts": self.worker.starts,
        }


def _gist(message: str) -> str:
    lines = [line.strip() for line in message.split("\n") if line.strip()]
    if "Traceback (most recent call last)" in message and lines:
        return lines[-1][:240]
    for line in lines:
        if ": error: " in line or line.startswith(("miscompile", "Assertion")) or "Error" in line.split(":")[0]:
            return line[:240]
    return (lines[-1] if lines else "")[:240]


def replay(path: Path, *, seed: int | None = None, timeout: float = 60.0, out: Path | None = None,
           declare: bool = False, cpu_pipeline: float | None = None,
           gpu_emulate: float | None = None) -> dict[str, Any]:
    """Run one program file through the stages (in a worker); its outcome.

    The program seed (inputs, pipeline options) comes from ``seed`` or the
    ``.json`` file beside ``path`` that the fuzzer wrote.
    """
    text = path.read_text()
    meta_path = path.with_suffix(".json")
    if path.name.endswith(".min.mlir"):
        meta_path = path.with_name(path.name[: -len(".min.mlir")] + ".json")
    if seed is None and meta_path.exists():
        try:
            seed = int(json.loads(meta_path.read_text())["program_seed"])
        except (ValueError, KeyError, OSError):
            seed = None
    worker = Worker(out or Path(path).parent / ".replay", recycle=1)
    try:
        return worker.run(text, timeout, seed=seed or 0, declare=declare,
                          cpu_pipeline=0.3 if cpu_pipeline is None else cpu_pipeline,
                          gpu_emulate=0.25 if gpu_emulate is None else gpu_emulate)
    finally:
        worker.stop()
