// The IR printing instrumentation writes to stderr, before the final IR on
// stdout: `// -----// IR Dump After PASS //----- //` then the module.

// RUN: irtensor-opt %s -p dce,cse --print-ir-after-all 2>&1 | filecheck %s --check-prefix=ALL
// ALL:       // -----// IR Dump After dce //----- //
// ALL-NEXT:  builtin.module {
// ALL-NEXT:    func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
// ALL-NEXT:      %a = hl.exp %x : tensor<4xf32>
// ALL-NEXT:      %b = hl.exp %x : tensor<4xf32>
// ALL-NEXT:      %s = hl.add %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
// ALL:       // -----// IR Dump After cse //----- //
// ALL-NEXT:  builtin.module {
// ALL-NEXT:    func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
// ALL-NEXT:      %a = hl.exp %x : tensor<4xf32>
// ALL-NEXT:      %s = hl.add %a, %a : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
// ALL-NOT:   IR Dump
// ALL:       builtin.module {

// Only stderr has the dumps.
// RUN: irtensor-opt %s -p dce,cse --print-ir-after-all 2>/dev/null | filecheck %s --check-prefix=STDOUT
// STDOUT-NOT: IR Dump
// STDOUT:     %s = hl.add %a, %a

// RUN: irtensor-opt %s -p cse,dce --print-ir-before=dce 2>&1 | filecheck %s --check-prefix=BEFORE
// BEFORE-NOT:  IR Dump Before cse
// BEFORE:      // -----// IR Dump Before dce //----- //
// BEFORE-NEXT: builtin.module {
// BEFORE-NEXT:   func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
// BEFORE-NEXT:     %a = hl.exp %x : tensor<4xf32>
// BEFORE-NEXT:     %s = hl.add %a, %a : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
// BEFORE-NOT:  IR Dump

// RUN: irtensor-opt %s -p dce,cse --print-ir-after=dce 2>&1 | filecheck %s --check-prefix=AFTER
// AFTER:       // -----// IR Dump After dce //----- //
// AFTER-NOT:   IR Dump

// RUN: irtensor-opt %s -p dce,cse --print-ir-before=dce,cse --print-ir-after=cse 2>&1 | filecheck %s --check-prefix=MANY
// MANY:        // -----// IR Dump Before dce //----- //
// MANY:        %dead = hl.neg
// MANY:        // -----// IR Dump Before cse //----- //
// MANY:        // -----// IR Dump After cse //----- //
// MANY-NOT:    IR Dump

// The second cse finds nothing to do, and neither does dce after cse: with
// --print-ir-after-change only dce and the first cse are printed.
// RUN: irtensor-opt %s -p dce,cse,cse,dce --print-ir-after-change 2>&1 | filecheck %s --check-prefix=CHANGE
// CHANGE:      // -----// IR Dump After dce //----- //
// CHANGE-NEXT: builtin.module {
// CHANGE:      %b = hl.exp %x : tensor<4xf32>
// CHANGE:      // -----// IR Dump After cse //----- //
// CHANGE-NEXT: builtin.module {
// CHANGE-NOT:  IR Dump
// CHANGE:      %s = hl.add %a, %a
// CHANGE-NOT:  IR Dump

// With --print-ir-after-all, --print-ir-after-change narrows it the same way.
// RUN: irtensor-opt %s -p cse,cse --print-ir-after-all --print-ir-after-change 2>&1 | filecheck %s --check-prefix=ALLCHANGE
// ALLCHANGE:      // -----// IR Dump After cse //----- //
// ALLCHANGE-NOT:  IR Dump

// The dumps follow --generic.
// RUN: irtensor-opt %s -p cse --print-ir-after-all --generic 2>&1 | filecheck %s --check-prefix=GENERIC
// GENERIC:      // -----// IR Dump After cse //----- //
// GENERIC-NEXT: "builtin.module"() ({
// GENERIC:      "hl.add"(%a, %a) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>

func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = hl.exp %x : tensor<4xf32>
  %b = hl.exp %x : tensor<4xf32>
  %dead = hl.neg %x : tensor<4xf32>
  %s = hl.add %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  func.return %s : tensor<4xf32>
}
