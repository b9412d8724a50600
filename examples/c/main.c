/* Trains the linear regression of regression.mlir with the SGD step that
 * dlvm-compile built, through the header it generated:
 *
 *   dlvm-compile regression.mlir -o libregression.so --header regression.h
 *   cc main.c -o train -L. -lregression -Wl,-rpath,'$ORIGIN'
 *   ./train
 *
 * The data are exact in float32: x[i][j] = ((8 i + j) mod 17 - 8) / 8 and
 * y = x . w_true + b_true. Prints the loss every 50 steps, then the learned
 * parameters. */
#include <stdio.h>
#include <string.h>

#include "regression.h"

enum { N = 64, D = 8, STEPS = 300 };

int main(void) {
  static float x[N * D], y[N], w[D], b[1];
  const float w_true[D] = {1.0f, -2.0f, 0.5f, 0.25f, -1.0f, 3.0f, 0.0f, -0.75f};
  const float b_true = 0.5f;
  for (int i = 0; i < N; ++i) {
    float sum = b_true;
    for (int j = 0; j < D; ++j) {
      x[i * D + j] = (float)((8 * i + j) % 17 - 8) / 8.0f;
      sum += x[i * D + j] * w_true[j];
    }
    y[i] = sum;
  }
  float loss = 0.0f, next_w[D], next_b[1];
  for (int step = 0; step < STEPS; ++step) {
    int failed = regression_sgd_step(x, y, w, b, 0.1f, next_w, next_b, &loss);
    if (failed) {
      if (failed < 0)
        fprintf(stderr, "out of memory\n");
      else
        fprintf(stderr, "bounds check %d failed\n", failed);
      return 1;
    }
    memcpy(w, next_w, sizeof w);
    memcpy(b, next_b, sizeof b);
    if (step % 50 == 0)
      printf("step %d loss %.6g\n", step, loss);
  }
  printf("final loss %.9g\n", loss);
  for (int j = 0; j < D; ++j)
    printf("w%d %.9g\n", j, w[j]);
  printf("b %.9g\n", b[0]);
  return 0;
}
