// --load-pass-plugin imports a Python file whose passes join the registry:
// they run with -p and are listed by --list-passes.

// RUN: irtensor-opt --load-pass-plugin %S/Inputs/plugin.py --list-passes | filecheck %s --check-prefix=LIST
// LIST:      Passes:
// LIST:      cse
// LIST:      relu-to-maximum {{ *}}Rewrite hl.relu into hl.maximum with a constant (a test plugin).
// LIST-NEXT:     floor: float = 0.0
// LIST:      test-break-ir {{ *}}Replace each hl.relu by an hl.not of a float, which does not verify.
// LIST:      test-raise {{ *}}Raise a RuntimeError, as a buggy pass would.
// LIST:      Pipelines:

// Without the plugin the pass is unknown.
// RUN: not irtensor-opt %s -p relu-to-maximum 2>&1 | filecheck %s --check-prefix=NOPLUGIN
// NOPLUGIN:  error: unknown pass 'relu-to-maximum'

// RUN: irtensor-opt %s --load-pass-plugin %S/Inputs/plugin.py -p relu-to-maximum | filecheck %s
// CHECK-LABEL: func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
// CHECK-NEXT:    %r = ll.const 0.0 : tensor<2x3xf32>
// CHECK-NEXT:    %r_1 = hl.maximum %x, %r : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
// CHECK-NEXT:    func.return %r_1 : tensor<2x3xf32>
// CHECK-NOT:     hl.relu

// Its option, and its output read back.
// RUN: irtensor-opt %s --load-pass-plugin %S/Inputs/plugin.py -p "relu-to-maximum{floor=-1.5},cse" | irtensor-opt | filecheck %s --check-prefix=FLOOR
// FLOOR:     ll.const -1.5 : tensor<2x3xf32>
// FLOOR:     hl.maximum

// RUN: not irtensor-opt %s --load-pass-plugin %S/Inputs/plugin.py -p "relu-to-maximum{floor=low}" 2>&1 | filecheck %s --check-prefix=BADOPT
// BADOPT:    error: pass 'relu-to-maximum': {{.*}} (its options: floor)

// The plugin's pass shows up in the instrumentation like any other.
// RUN: irtensor-opt %s --load-pass-plugin %S/Inputs/plugin.py -p relu-to-maximum,cse --print-ir-after-change 2>&1 >/dev/null | filecheck %s --check-prefix=DUMP
// DUMP:      // -----// IR Dump After relu-to-maximum //----- //
// DUMP-NOT:  IR Dump

// A pass that breaks the IR is caught by the verifier after it, by name, and
// --dump-dir keeps a reproducer: the IR it was given and the rest of the
// pipeline.
// RUN: rm -rf %t && not irtensor-opt %s --load-pass-plugin %S/Inputs/plugin.py -p cse,test-break-ir,dce --dump-dir %t 2>&1 | filecheck %s --check-prefix=BROKEN
// BROKEN:    error: IR after pass 'test-break-ir' does not verify: {{.*}}'hl.not' op operand 'input' has element type f32, expected the boolean element type i1
// RUN: ls %t | filecheck %s --check-prefix=REPRO-FILES
// REPRO-FILES: 00-input.mlir
// REPRO-FILES-NEXT: 01-cse.mlir
// REPRO-FILES-NEXT: reproducer.mlir
// RUN: cat %t/reproducer.mlir | filecheck %s --check-prefix=REPRO
// REPRO:     // irtensor-opt reproducer.mlir -p 'test-break-ir,dce'
// REPRO:     %r = hl.relu %x : tensor<2x3xf32>
// Rerunning the reproducer reproduces the failure.
// RUN: not irtensor-opt %t/reproducer.mlir --load-pass-plugin %S/Inputs/plugin.py -p test-break-ir,dce 2>&1 | filecheck %s --check-prefix=BROKEN

// --no-verify lets the broken IR through.
// RUN: irtensor-opt %s --load-pass-plugin %S/Inputs/plugin.py -p test-break-ir --no-verify | filecheck %s --check-prefix=NOVERIFY
// NOVERIFY:  hl.not %x : tensor<2x3xf32>

// A pass that raises is reported by name, without a traceback.
// RUN: not irtensor-opt %s --load-pass-plugin %S/Inputs/plugin.py -p test-raise 2>&1 | filecheck %s --check-prefix=RAISE
// RAISE:     error: pass 'test-raise' failed: RuntimeError: this pass always fails
// RAISE-NOT: Traceback

func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %r = hl.relu %x : tensor<2x3xf32>
  func.return %r : tensor<2x3xf32>
}
