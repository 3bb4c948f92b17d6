// --list-passes lists each registered pass with its one-line description (and
// its options), then the named pipelines; it reads no input.
// RUN: irtensor-opt --list-passes | filecheck %s
// RUN: irtensor-opt %s --list-passes | filecheck %s

// CHECK:      Passes:
// CHECK:      canonicalize {{ *}}Fold ops and apply each op's canonicalization patterns (xDSL).
// CHECK:      cse {{ *}}Merge identical side-effect-free ops (xDSL).
// CHECK:      dce {{ *}}Erase unused ops that have no effects (xDSL).
// CHECK:      Pipelines:
