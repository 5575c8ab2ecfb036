/* Runs a model with a run-once call through the runtime API: the weight-only kernel runs on the first run and
   again after tgc_model_bind_weight, not on the runs between. */
#include "run-once.h"

#include <stdio.h>

static int run(tgc_model *m, const float *x, float *y, const char *what) {
  const void *in[1] = {x};
  void *out[1] = {y};
  if (tgc_model_run(m, in, out) != 0) {
    printf("error: %s\n", tgc_model_error(m));
    return 1;
  }
  printf("%s y[0][0] = %f\n", what, y[0]);
  return 0;
}

int main(void) {
  char error[256];
  tgc_model *m = tgc_model_create(&run_once_program, NULL, 1, error, sizeof error);
  if (!m) {
    printf("error: %s\n", error);
    return 1;
  }
  float x[4 * 8], w[16 * 8], w2[16 * 8], y[4 * 16];
  for (int i = 0; i < 4 * 8; ++i)
    x[i] = 1;
  for (int j = 0; j < 16; ++j)
    for (int k = 0; k < 8; ++k) {
      w[j * 8 + k] = (float)k; /* y[i][j] = sum_k k = 28 */
      w2[j * 8 + k] = 2.0f * (float)k;
    }
  if (tgc_model_bind_weight(m, "w", w) != 0 || run(m, x, y, "first") || run(m, x, y, "again"))
    return 1;
  if (tgc_model_bind_weight(m, "w", w2) != 0 || run(m, x, y, "rebound"))
    return 1;
  tgc_model_destroy(m);
  return 0;
}
