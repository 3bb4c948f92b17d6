// Unsigned integers in kernels. arith computes in signless types (as MLIR has it): a
// ui8 input is read as i8 and the unsigned meaning moves into the ops (divui, cmpi ult,
// extui). arith's max is signed, so an unsigned max reduction combines x ^ sign bit
// (which orders like the signed values) and its epilogue flips the bit back. A float
// becomes an unsigned int as x86 converts it: x below 2**(w-1) directly, else
// x - 2**(w-1) with the top bit flipped.
// RUN: irtensor-opt %s -p decompose-hlops,conv-to-mul-sum,fold-constants,cse,dce,fuse | filecheck %s

// CHECK-LABEL: func.func @unsigned_ops
// CHECK:         kernel.kernel @E_8(%a, %b) {{.*}} : (tensor<8xui8>, tensor<8xui8>) -> tensor<8xi1>
// CHECK-NEXT:    ^bb0(%[[A:.*]]: i8, %[[B:.*]]: i8):
// CHECK:           %[[Q:.*]] = arith.divui %[[A]], %{{.*}} : i8
// CHECK:           %[[SAFE:.*]] = arith.select %{{.*}}, %{{.*}}, %[[Q]] : i8
// CHECK:           arith.cmpi ult, %[[SAFE]], %[[B]] : i8
func.func @unsigned_ops(%a: tensor<8xui8>, %b: tensor<8xui8>) -> tensor<8xi1> {
  %0 = hl.idiv %a, %b : tensor<8xui8>, tensor<8xui8> -> tensor<8xui8>
  %1 = hl.lt %0, %b : tensor<8xui8>, tensor<8xui8> -> tensor<8xi1>
  func.return %1 : tensor<8xi1>
}

// CHECK-LABEL: func.func @unsigned_max
// CHECK:         kernel.kernel @r_4_8(%a) space [4, 8] reduce [1] max {{.*}} -> tensor<4xui32>
// CHECK-NEXT:    ^bb0(%[[X:.*]]: i32):
// CHECK-NEXT:      %[[BIT:.*]] = arith.constant -2147483648 : i32
// CHECK-NEXT:      %[[FLIPPED:.*]] = arith.xori %[[X]], %[[BIT]] : i32
// CHECK-NEXT:      kernel.yield %[[FLIPPED]] : i32
// CHECK-NEXT:    } epilogue {
// CHECK-NEXT:    ^bb0(%[[ACC:.*]]: i32):
// CHECK-NEXT:      %[[BIT2:.*]] = arith.constant -2147483648 : i32
// CHECK-NEXT:      %[[BACK:.*]] = arith.xori %[[ACC]], %[[BIT2]] : i32
// CHECK-NEXT:      kernel.yield %[[BACK]] : i32
func.func @unsigned_max(%a: tensor<4x8xui32>) -> tensor<4xui32> {
  %0 = hl.max %a axes [1] : tensor<4x8xui32> -> tensor<4xui32>
  func.return %0 : tensor<4xui32>
}

// CHECK-LABEL: func.func @widen
// CHECK:         ^bb0(%[[H:.*]]: i16):
// CHECK-NEXT:      %[[W:.*]] = arith.extui %[[H]] : i16 to i64
// CHECK-NEXT:      arith.sitofp %[[W]] : i64 to f32
func.func @widen(%a: tensor<8xui16>) -> tensor<8xf32> {
  %0 = hl.cast %a : tensor<8xui16> -> tensor<8xi64>
  %1 = hl.cast %0 : tensor<8xi64> -> tensor<8xf32>
  func.return %1 : tensor<8xf32>
}

// CHECK-LABEL: func.func @to_unsigned
// CHECK:         ^bb0(%[[F:.*]]: f32):
// CHECK-NEXT:      %[[TOP:.*]] = arith.constant 9.22337204e+18 : f32
// CHECK-NEXT:      %[[HIGH:.*]] = arith.cmpf oge, %[[F]], %[[TOP]] : f32
// CHECK-NEXT:      %[[LOW:.*]] = arith.fptosi %[[F]] : f32 to i64
// CHECK-NEXT:      %[[REST:.*]] = arith.subf %[[F]], %[[TOP]] : f32
// CHECK-NEXT:      %[[SHIFTED:.*]] = arith.fptosi %[[REST]] : f32 to i64
// CHECK-NEXT:      %[[SIGN:.*]] = arith.constant -9223372036854775808 : i64
// CHECK-NEXT:      %[[UP:.*]] = arith.xori %[[SHIFTED]], %[[SIGN]] : i64
// CHECK-NEXT:      arith.select %[[HIGH]], %[[UP]], %[[LOW]] : i64
func.func @to_unsigned(%a: tensor<8xf32>) -> tensor<8xui64> {
  %0 = hl.cast %a : tensor<8xf32> -> tensor<8xui64>
  func.return %0 : tensor<8xui64>
}
