// Every mistake in a pipeline or on the command line is one "error:" line, exit 1, no traceback.

// RUN: not dlvm-opt %s --canonicalize=no-such-option=1 2>&1 | FileCheck %s --check-prefix=UPSTREAM-OPTION
// UPSTREAM-OPTION: error: invalid pass pipeline: no such option no-such-option
// UPSTREAM-OPTION-NOT: Traceback

// RUN: not dlvm-opt %s --pass-pipeline='builtin.module(canonicalize{max-iterations=many})' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=UPSTREAM-VALUE --strict-whitespace
// UPSTREAM-VALUE: error: invalid pass pipeline: for the --max-iterations option: 'many' value invalid
// UPSTREAM-VALUE-NEXT: {{^}}  builtin.module(canonicalize{max-iterations=many})
// UPSTREAM-VALUE-NEXT: {{^ {17}\^$}}

// RUN: not dlvm-opt %s --pass-pipeline='builtin.module(canonicalize,no-such-pass)' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=UNKNOWN-PASS --strict-whitespace
// UNKNOWN-PASS: error: invalid pass pipeline: unknown pass or pipeline 'no-such-pass'
// UNKNOWN-PASS-NEXT: {{^}}  builtin.module(canonicalize,no-such-pass)
// UNKNOWN-PASS-NEXT: {{^ {30}\^$}}

// RUN: not dlvm-opt %s --no-such-pass 2>&1 | FileCheck %s --check-prefix=UNKNOWN-FLAG
// UNKNOWN-FLAG: error: unknown command line argument '--no-such-pass'; see 'dlvm-opt --help'

// RUN: not dlvm-opt %s --load-pass-plugin=%S/Inputs/test_passes.py --test-annotate=colour=red 2>&1 \
// RUN:   | FileCheck %s --check-prefix=PY-UNKNOWN-OPTION
// PY-UNKNOWN-OPTION: error: invalid pass pipeline: 'test-annotate' has no option 'colour' (options: tag, count, scale, flag, sizes, mode)

// RUN: not dlvm-opt %s --load-pass-plugin=%S/Inputs/test_passes.py --test-annotate=count=many 2>&1 \
// RUN:   | FileCheck %s --check-prefix=PY-BAD-INT
// PY-BAD-INT: error: invalid pass pipeline: 'test-annotate': option 'count' expects an integer, got 'many'

// RUN: not dlvm-opt %s --load-pass-plugin=%S/Inputs/test_passes.py --test-annotate=flag=maybe 2>&1 \
// RUN:   | FileCheck %s --check-prefix=PY-BAD-BOOL
// PY-BAD-BOOL: error: invalid pass pipeline: 'test-annotate': option 'flag' expects a boolean, got 'maybe'

// RUN: not dlvm-opt %s --load-pass-plugin=%S/Inputs/test_passes.py --test-annotate=mode=slow 2>&1 \
// RUN:   | FileCheck %s --check-prefix=PY-BAD-CHOICE
// PY-BAD-CHOICE: error: invalid pass pipeline: 'test-annotate': option 'mode' expects one of fast, safe; got 'slow'

// RUN: not dlvm-opt %s --load-pass-plugin=%S/Inputs/test_passes.py --pass-pipeline='builtin.module(func.func(test-annotate))' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=PY-NESTED
// PY-NESTED: error: invalid pass pipeline: Python pass 'test-annotate' cannot run nested under 'func.func': Python passes run on the top-level builtin.module only

// RUN: not dlvm-opt %s --pass-pipeline='builtin.module(cse' 2>&1 | FileCheck %s --check-prefix=SYNTAX
// SYNTAX: error: invalid pass pipeline: expected ')'

// RUN: not dlvm-opt %s --pass-pipeline=cse --canonicalize 2>&1 | FileCheck %s --check-prefix=BOTH
// BOTH: error: '--pass-pipeline' cannot be combined with pass flags such as '--canonicalize'

// RUN: not dlvm-opt %s.missing 2>&1 | FileCheck %s --check-prefix=NO-INPUT
// NO-INPUT: error: cannot read input file '{{.*}}bad-options.mlir.missing': No such file or directory

// RUN: not dlvm-opt %s --verify-each=perhaps 2>&1 | FileCheck %s --check-prefix=BAD-BOOL-FLAG
// BAD-BOOL-FLAG: error: option '--verify-each' takes true or false, not 'perhaps'

func.func @f() {
  return
}
