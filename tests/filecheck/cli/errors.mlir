// Command-line mistakes print one `error:` line on stderr and exit with 1,
// never a Python traceback.

// RUN: not irtensor-opt %s -p nosuch 2>&1 | filecheck %s --check-prefix=UNKNOWN
// UNKNOWN:      error: unknown pass 'nosuch' (irtensor-opt --list-passes lists them)
// UNKNOWN-NOT:  Traceback

// A near miss gets a suggestion.
// RUN: not irtensor-opt %s -p cse,dcee 2>&1 | filecheck %s --check-prefix=SUGGEST
// SUGGEST:      error: unknown pass 'dcee' (did you mean 'dce'?)

// The pipeline is checked before the input is read: no output at all.
// RUN: not irtensor-opt %s -p cse,nosuch > %t.out 2> %t.err
// RUN: filecheck %s --check-prefix=EMPTY --allow-empty < %t.out
// RUN: filecheck %s --check-prefix=UNKNOWN < %t.err
// EMPTY-NOT:    {{.}}

// RUN: not irtensor-opt %s -p "cse{nosuch=1}" 2>&1 | filecheck %s --check-prefix=OPTION
// OPTION:       error: pass 'cse': {{.*}}nosuch{{.*}} (its options: none)

// RUN: not irtensor-opt %s -p "cse{" 2>&1 | filecheck %s --check-prefix=MALFORMED
// MALFORMED:    error: bad pipeline 'cse{': Expected argument name here

// RUN: not irtensor-opt %s -p "cse,,dce" 2>&1 | filecheck %s --check-prefix=EMPTYNAME
// EMPTYNAME:    error: bad pipeline 'cse,,dce': Expected pass name here

// RUN: not irtensor-opt %S/does-not-exist.mlir 2>&1 | filecheck %s --check-prefix=MISSING
// MISSING:      error: cannot read {{.*}}does-not-exist.mlir: No such file or directory

// RUN: not irtensor-opt %s --load-pass-plugin %S/Inputs/no-such-plugin.py 2>&1 | filecheck %s --check-prefix=PLUGIN
// PLUGIN:       error: pass plugin {{.*}}no-such-plugin.py does not exist

// A bad IR file without --split-input-file: the first error, exit code 1.
// RUN: not irtensor-opt %S/Inputs/bad-ir.mlir 2>&1 | filecheck %s --check-prefix=IR
// IR:           {{.*}}bad-ir.mlir:3:3: error: 'hl.exp' op operand 'input' has element type i32, expected a floating-point element type (f16, bf16, f32, f64)
// IR-NOT:       error

func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  func.return %x : tensor<4xf32>
}
