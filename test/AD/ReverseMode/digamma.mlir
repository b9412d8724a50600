// RUN: dlvm-opt %s --dlvm-differentiate | FileCheck %s

// Reverse mode of dlvm.digamma (g: the seed, y: the result).

// d digamma(x) = g * trigamma(x); trigamma from elementary ops: the recurrence up to x+6, the asymptotic series there, reflection below 1/2
// CHECK-LABEL: func.func @digamma_grad(
// CHECK-SAME:    %[[ARG0:.*]]: tensor<4xf32>, %[[ARG1:.*]]: tensor<4xf32>) -> tensor<4xf32>
// CHECK:      %[[V0:.*]] = dlvm.digamma %[[ARG0]] : tensor<4xf32>
// CHECK:      %[[V1:.*]] = dlvm.constant dense<5.000000e-01> : tensor<f32>
// CHECK:      %[[V2:.*]] = dlvm.cmp lt, %[[ARG0]], %[[V1]] : tensor<4xf32>, tensor<f32>
// CHECK:      %[[V3:.*]] = dlvm.constant dense<1.000000e+00> : tensor<f32>
// CHECK:      %[[V4:.*]] = dlvm.sub %[[V3]], %[[ARG0]] : tensor<f32>, tensor<4xf32>
// CHECK:      %[[V5:.*]] = dlvm.select %[[V2]], %[[V4]], %[[ARG0]] : tensor<4xi1>, tensor<4xf32>, tensor<4xf32>
// CHECK:      %[[V6:.*]] = dlvm.constant dense<0.000000e+00> : tensor<f32>
// CHECK:      %[[V7:.*]] = dlvm.add %[[V5]], %[[V6]] : tensor<4xf32>, tensor<f32>
// CHECK:      %[[V8:.*]] = dlvm.square %[[V7]] : tensor<4xf32>
// CHECK:      %[[V9:.*]] = dlvm.constant dense<1.000000e+00> : tensor<f32>
// CHECK:      %[[V10:.*]] = dlvm.div %[[V9]], %[[V8]] : tensor<f32>, tensor<4xf32>
// CHECK:      %[[V11:.*]] = dlvm.constant dense<1.000000e+00> : tensor<f32>
// CHECK:      %[[V12:.*]] = dlvm.add %[[V5]], %[[V11]] : tensor<4xf32>, tensor<f32>
// CHECK:      %[[V13:.*]] = dlvm.square %[[V12]] : tensor<4xf32>
// CHECK:      %[[V14:.*]] = dlvm.constant dense<1.000000e+00> : tensor<f32>
// CHECK:      %[[V15:.*]] = dlvm.div %[[V14]], %[[V13]] : tensor<f32>, tensor<4xf32>
// CHECK:      %[[V16:.*]] = dlvm.constant dense<2.000000e+00> : tensor<f32>
// CHECK:      %[[V17:.*]] = dlvm.add %[[V5]], %[[V16]] : tensor<4xf32>, tensor<f32>
// CHECK:      %[[V18:.*]] = dlvm.square %[[V17]] : tensor<4xf32>
// CHECK:      %[[V19:.*]] = dlvm.constant dense<1.000000e+00> : tensor<f32>
// CHECK:      %[[V20:.*]] = dlvm.div %[[V19]], %[[V18]] : tensor<f32>, tensor<4xf32>
// CHECK:      %[[V21:.*]] = dlvm.constant dense<3.000000e+00> : tensor<f32>
// CHECK:      %[[V22:.*]] = dlvm.add %[[V5]], %[[V21]] : tensor<4xf32>, tensor<f32>
// CHECK:      %[[V23:.*]] = dlvm.square %[[V22]] : tensor<4xf32>
// CHECK:      %[[V24:.*]] = dlvm.constant dense<1.000000e+00> : tensor<f32>
// CHECK:      %[[V25:.*]] = dlvm.div %[[V24]], %[[V23]] : tensor<f32>, tensor<4xf32>
// CHECK:      %[[V26:.*]] = dlvm.constant dense<4.000000e+00> : tensor<f32>
// CHECK:      %[[V27:.*]] = dlvm.add %[[V5]], %[[V26]] : tensor<4xf32>, tensor<f32>
// CHECK:      %[[V28:.*]] = dlvm.square %[[V27]] : tensor<4xf32>
// CHECK:      %[[V29:.*]] = dlvm.constant dense<1.000000e+00> : tensor<f32>
// CHECK:      %[[V30:.*]] = dlvm.div %[[V29]], %[[V28]] : tensor<f32>, tensor<4xf32>
// CHECK:      %[[V31:.*]] = dlvm.constant dense<5.000000e+00> : tensor<f32>
// CHECK:      %[[V32:.*]] = dlvm.add %[[V5]], %[[V31]] : tensor<4xf32>, tensor<f32>
// CHECK:      %[[V33:.*]] = dlvm.square %[[V32]] : tensor<4xf32>
// CHECK:      %[[V34:.*]] = dlvm.constant dense<1.000000e+00> : tensor<f32>
// CHECK:      %[[V35:.*]] = dlvm.div %[[V34]], %[[V33]] : tensor<f32>, tensor<4xf32>
// CHECK:      %[[V36:.*]] = dlvm.add %[[V10]], %[[V15]] : tensor<4xf32>, tensor<4xf32>
// CHECK:      %[[V37:.*]] = dlvm.add %[[V36]], %[[V20]] : tensor<4xf32>, tensor<4xf32>
// CHECK:      %[[V38:.*]] = dlvm.add %[[V37]], %[[V25]] : tensor<4xf32>, tensor<4xf32>
// CHECK:      %[[V39:.*]] = dlvm.add %[[V38]], %[[V30]] : tensor<4xf32>, tensor<4xf32>
// CHECK:      %[[V40:.*]] = dlvm.add %[[V39]], %[[V35]] : tensor<4xf32>, tensor<4xf32>
// CHECK:      %[[V41:.*]] = dlvm.constant dense<6.000000e+00> : tensor<f32>
// CHECK:      %[[V42:.*]] = dlvm.add %[[V5]], %[[V41]] : tensor<4xf32>, tensor<f32>
// CHECK:      %[[V43:.*]] = dlvm.constant dense<1.000000e+00> : tensor<f32>
// CHECK:      %[[V44:.*]] = dlvm.div %[[V43]], %[[V42]] : tensor<f32>, tensor<4xf32>
// CHECK:      %[[V45:.*]] = dlvm.square %[[V44]] : tensor<4xf32>
// CHECK:      %[[V46:.*]] = dlvm.constant dense<-0.0333333351> : tensor<f32>
// CHECK:      %[[V47:.*]] = dlvm.mul %[[V45]], %[[V46]] : tensor<4xf32>, tensor<f32>
// CHECK:      %[[V48:.*]] = dlvm.constant dense<0.0238095243> : tensor<f32>
// CHECK:      %[[V49:.*]] = dlvm.add %[[V48]], %[[V47]] : tensor<f32>, tensor<4xf32>
// CHECK:      %[[V50:.*]] = dlvm.mul %[[V45]], %[[V49]] : tensor<4xf32>, tensor<4xf32>
// CHECK:      %[[V51:.*]] = dlvm.constant dense<-0.0333333351> : tensor<f32>
// CHECK:      %[[V52:.*]] = dlvm.add %[[V51]], %[[V50]] : tensor<f32>, tensor<4xf32>
// CHECK:      %[[V53:.*]] = dlvm.mul %[[V45]], %[[V52]] : tensor<4xf32>, tensor<4xf32>
// CHECK:      %[[V54:.*]] = dlvm.constant dense<0.166666672> : tensor<f32>
// CHECK:      %[[V55:.*]] = dlvm.add %[[V54]], %[[V53]] : tensor<f32>, tensor<4xf32>
// CHECK:      %[[V56:.*]] = dlvm.mul %[[V45]], %[[V55]] : tensor<4xf32>, tensor<4xf32>
// CHECK:      %[[V57:.*]] = dlvm.constant dense<5.000000e-01> : tensor<f32>
// CHECK:      %[[V58:.*]] = dlvm.mul %[[V45]], %[[V57]] : tensor<4xf32>, tensor<f32>
// CHECK:      %[[V59:.*]] = dlvm.add %[[V44]], %[[V58]] : tensor<4xf32>, tensor<4xf32>
// CHECK:      %[[V60:.*]] = dlvm.mul %[[V44]], %[[V56]] : tensor<4xf32>, tensor<4xf32>
// CHECK:      %[[V61:.*]] = dlvm.add %[[V59]], %[[V60]] : tensor<4xf32>, tensor<4xf32>
// CHECK:      %[[V62:.*]] = dlvm.add %[[V40]], %[[V61]] : tensor<4xf32>, tensor<4xf32>
// CHECK:      %[[V63:.*]] = dlvm.constant dense<3.14159274> : tensor<f32>
// CHECK:      %[[V64:.*]] = dlvm.mul %[[ARG0]], %[[V63]] : tensor<4xf32>, tensor<f32>
// CHECK:      %[[V65:.*]] = dlvm.sin %[[V64]] : tensor<4xf32>
// CHECK:      %[[V66:.*]] = dlvm.square %[[V65]] : tensor<4xf32>
// CHECK:      %[[V67:.*]] = dlvm.constant dense<9.86960411> : tensor<f32>
// CHECK:      %[[V68:.*]] = dlvm.div %[[V67]], %[[V66]] : tensor<f32>, tensor<4xf32>
// CHECK:      %[[V69:.*]] = dlvm.sub %[[V68]], %[[V62]] : tensor<4xf32>, tensor<4xf32>
// CHECK:      %[[V70:.*]] = dlvm.select %[[V2]], %[[V69]], %[[V62]] : tensor<4xi1>, tensor<4xf32>, tensor<4xf32>
// CHECK:      %[[V71:.*]] = dlvm.mul %[[ARG1]], %[[V70]] : tensor<4xf32>, tensor<4xf32>
// CHECK:      return %[[V71]] : tensor<4xf32>
func.func @digamma(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = dlvm.digamma %x : tensor<4xf32>
  return %y : tensor<4xf32>
}
func.func private @digamma_grad(tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    attributes {dlvm.gradient = #dlvm.gradient<of @digamma seedable>}
