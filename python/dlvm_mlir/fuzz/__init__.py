"""``dlvm-fuzz``: compiler fuzzing by mutating a corpus of existing programs (Kitten-style).

The pieces, one module each:

* :mod:`.corpus` - the ``.mlir`` tests cut into programs, annotated for the mutators;
* :mod:`.mutators` - token- and tree-level mutations of program text;
* :mod:`.oracle` - one program through every stage, classified; the
  differential comparison of compiled code with the interpreter;
* :mod:`.worker` - the forked process the stages run in (crashes, timeouts);
* :mod:`.reducer` - line-deletion reduction of a failing program;
* :mod:`.driver` - the loop, the statistics, the output directory.

The command line is :mod:`dlvm_mlir.tools.fuzz`; docs/fuzzing.md describes it.
"""

from .driver import FuzzConfig, Fuzzer, replay
from .oracle import BAD_CLASSES, CLASSES, STAGES, is_bad, signature

__all__ = ["BAD_CLASSES", "CLASSES", "STAGES", "FuzzConfig", "Fuzzer", "is_bad", "replay", "signature"]
