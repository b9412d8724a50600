// User rule sets, registered with @dlvm_mlir.rewrite_rule in a plugin file.
// RUN: dlvm-opt %s --load-pass-plugin=%S/Inputs/user_rules.py --dlvm-apply-rules=sets=test-user | FileCheck %s --check-prefixes=CHECK,SAFE
// RUN: dlvm-opt %s --load-pass-plugin=%S/Inputs/user_rules.py --dlvm-apply-rules="sets=test-user fast-math" | FileCheck %s --check-prefixes=CHECK,FAST
// Built-in sets apply too, together with user sets.
// RUN: dlvm-opt %s --load-pass-plugin=%S/Inputs/user_rules.py --dlvm-apply-rules="sets=test-user,algebra-simplify" | FileCheck %s --check-prefix=BOTH
// RUN: not dlvm-opt %s --dlvm-apply-rules=sets=missing 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not dlvm-opt %s --dlvm-apply-rules 2>&1 | FileCheck %s --check-prefix=NONE
// MISSING: error: no rule set named 'missing' (known: {{.*}}algebra-simplify{{.*}})
// NONE: error: name at least one rule set

// CHECK-LABEL: func.func @user_rules
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
// CHECK: %[[SQ:.*]] = dlvm.square %[[X]] : tensor<4xf32>
// SAFE: %[[R:.*]] = dlvm.sqrt %[[SQ]] : tensor<4xf32>
// FAST: %[[R:.*]] = dlvm.abs %[[X]] : tensor<4xf32>
// CHECK: return %[[SQ]], %[[R]]
// BOTH-LABEL: func.func @user_rules
// BOTH-SAME: (%[[X:.*]]: tensor<4xf32>)
// BOTH: %[[SQ:.*]] = dlvm.square %[[X]] : tensor<4xf32>
// BOTH: %[[R:.*]] = dlvm.sqrt %[[SQ]] : tensor<4xf32>
// BOTH: return %[[SQ]], %[[R]], %[[X]]
func.func @user_rules(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %0 = dlvm.mul %x, %x : tensor<4xf32>, tensor<4xf32>
  %1 = dlvm.sqrt %0 : tensor<4xf32>
  %n = dlvm.neg %x : tensor<4xf32>
  %z = dlvm.constant dense<0.0> : tensor<4xf32>
  %2 = dlvm.sub %z, %n : tensor<4xf32>, tensor<4xf32>
  return %0, %1, %2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
