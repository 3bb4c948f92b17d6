// Bad input of every kind gets one `irtensor-opt: error:` line on stderr and a
// non-zero exit: no Python traceback, no hang, nothing else printed.

// A binary file, from a path and from stdin.
// RUN: %python -c "import sys; sys.stdout.buffer.write(bytes(range(128, 256)) * 32)" > %t.bin
// RUN: not irtensor-opt %t.bin 2>&1 | filecheck %s --check-prefix=BINARY
// BINARY-NOT:  Traceback
// BINARY:      irtensor-opt: error: {{.*}}.bin is not UTF-8 text (byte 0x80 at offset 0); irtensor IR is text
// BINARY-NOT:  {{.}}
// RUN: not irtensor-opt - < %t.bin 2>&1 | filecheck %s --check-prefix=STDIN
// STDIN:       irtensor-opt: error: <stdin> is not UTF-8 text (byte 0x80 at offset 0)

// --input keys are argument names or positions in ASCII digits; '²' is neither.
// RUN: %python -c "import numpy as np; np.save('%t.x.npy', np.ones(4, np.float32))"
// RUN: not irtensor-opt %s --run --input ²=%t.x.npy 2>&1 | filecheck %s --check-prefix=KEY
// KEY-NOT:     Traceback
// KEY:         irtensor-opt: error: --input ²={{.*}}: @main has no argument '²'
// KEY-NOT:     {{.}}

// --run takes a function with a body and tensor arguments.
// RUN: not irtensor-opt %s --run --entry scalar 2>&1 | filecheck %s --check-prefix=SCALAR
// SCALAR-NOT:  Traceback
// SCALAR:      irtensor-opt: error: @scalar argument #0 has type f32; --run passes tensors of f16, bf16, f32, f64, i8, i16, i32, i64, ui8, ui16, ui32, ui64, i1 only
// SCALAR-NOT:  {{.}}
// RUN: not irtensor-opt %s --run --entry declared 2>&1 | filecheck %s --check-prefix=DECLARED
// DECLARED:    irtensor-opt: error: @declared is a declaration without a body; nothing to run

// Tensors larger than the device's memory are refused before any input is
// drawn (here 4 TiB; without the check numpy draws until memory runs out) and
// before a compiled device starts. A constant is one scalar unless it is
// returned: a 4 TiB constant summed folds to n*c, exactly, on every device.
// RUN: not irtensor-opt %s --run --entry big_argument 2>&1 | filecheck %s --check-prefix=BIGARG
// BIGARG-NOT:  Traceback
// BIGARG:      irtensor-opt: error: --run: argument %x of @big_argument (tensor<1099511627776xf32>) needs 4.0 TiB, more than the {{[0-9.]+ [KMGT]iB}} of memory of device interp
// BIGARG-NOT:  {{.}}
// RUN: not irtensor-opt %s --run --entry big_constant --device llvm 2>&1 | filecheck %s --check-prefix=BIGCONST
// BIGCONST:    irtensor-opt: error: --run: the result of 'll.const' at {{.*}}bad-input.mlir:{{[0-9]+}}:3 (tensor<1099511627776xf32>) needs 4.0 TiB, more than the {{[0-9.]+ [KMGT]iB}} of memory of device llvm
// RUN: irtensor-opt %s --run --entry summed_constant --device llvm 2>&1 | filecheck %s --check-prefix=SUMCONST
// RUN: irtensor-opt %s --run --entry summed_constant --device interp 2>&1 | filecheck %s --check-prefix=SUMCONST
// SUMCONST:     // result #0: tensor<f32>
// SUMCONST-NEXT: 1.099512e+12

// Command-line values: argparse's errors are one line too.
// RUN: not irtensor-opt %s --run --seed -1 2>&1 | filecheck %s --check-prefix=SEED
// SEED-NOT:    Traceback
// SEED:        irtensor-opt: error: argument --seed: expected a non-negative integer, got '-1'
// SEED-NOT:    {{.}}

// Paths that cannot be written.
// RUN: not irtensor-opt %s -o %t.no-such-dir/out.mlir 2>&1 | filecheck %s --check-prefix=OUTPUT
// OUTPUT-NOT:  Traceback
// OUTPUT:      irtensor-opt: error: cannot write {{.*}}no-such-dir/out.mlir: No such file or directory
// OUTPUT-NOT:  {{.}}
// RUN: %python -c "open('%t.file', 'w').close()"
// RUN: not irtensor-opt %s -p cse --dump-dir %t.file 2>&1 | filecheck %s --check-prefix=DUMPFILE
// DUMPFILE-NOT: Traceback
// DUMPFILE:    irtensor-opt: error: cannot dump stages into {{.*}}.file: it is a file, not a folder
// DUMPFILE-NOT: {{.}}

// A pass plugin that does not compile, or raises while it is imported.
// RUN: %python -c "open('%t.syntax.py', 'w').write('def broken(:\n')"
// RUN: not irtensor-opt %s --load-pass-plugin %t.syntax.py 2>&1 | filecheck %s --check-prefix=PLUGINSYNTAX
// PLUGINSYNTAX-NOT: Traceback
// PLUGINSYNTAX: irtensor-opt: error: pass plugin {{.*}}.syntax.py failed to load: SyntaxError (line 1): invalid syntax
// PLUGINSYNTAX-NOT: {{.}}
// RUN: %python -c "open('%t.raises.py', 'w').write('raise RuntimeError(\"no GPU here\")\n')"
// RUN: not irtensor-opt %s --load-pass-plugin %t.raises.py 2>&1 | filecheck %s --check-prefix=PLUGINRAISES
// PLUGINRAISES-NOT: Traceback
// PLUGINRAISES: irtensor-opt: error: pass plugin {{.*}}.raises.py failed to load: RuntimeError: no GPU here
// PLUGINRAISES-NOT: {{.}}

// IR printing names passes; a name that is no pass is a mistake, not a no-op.
// RUN: not irtensor-opt %s -p cse --print-ir-after=nosuch 2>&1 | filecheck %s --check-prefix=AFTER
// AFTER-NOT:   Traceback
// AFTER:       irtensor-opt: error: print-ir-after: unknown pass 'nosuch' (irtensor-opt --list-passes lists them)
// AFTER-NOT:   {{.}}
// RUN: not irtensor-opt %s -p cse --print-ir-before=cse,dcee 2>&1 | filecheck %s --check-prefix=BEFORE
// BEFORE:      irtensor-opt: error: print-ir-before: unknown pass 'dcee' (did you mean 'dce'?)

func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  func.return %x : tensor<4xf32>
}

func.func @scalar(%a: f32) -> f32 {
  func.return %a : f32
}

func.func private @declared(tensor<4xf32>) -> tensor<4xf32>

func.func @big_argument(%x: tensor<1099511627776xf32>) -> tensor<1099511627776xf32> {
  func.return %x : tensor<1099511627776xf32>
}

func.func @big_constant() -> tensor<1099511627776xf32> {
  %c = ll.const 1.0 : tensor<1099511627776xf32>
  func.return %c : tensor<1099511627776xf32>
}

func.func @summed_constant() -> tensor<f32> {
  %c = ll.const 1.0 : tensor<1099511627776xf32>
  %s = hl.sum %c axes [0] : tensor<1099511627776xf32> -> tensor<f32>
  func.return %s : tensor<f32>
}
