/* Classify two samples with the model compiled at build time; each row of probabilities sums to 1. */
#include "classifier.h"

#include <stdio.h>

int main(void) {
  const float x[2][4] = {{0.5f, -1.0f, 0.25f, 2.0f}, {1.0f, 0.0f, -0.5f, 0.75f}};
  float probabilities[2][3];
  if (classifier_run(&x[0][0], &probabilities[0][0]) != 0) {
    fprintf(stderr, "classifier: %s\n", classifier_error());
    return 1;
  }
  for (int i = 0; i < 2; ++i) {
    float sum = 0;
    printf("sample %d:", i);
    for (int c = 0; c < 3; ++c) {
      printf(" %.4f", probabilities[i][c]);
      sum += probabilities[i][c];
    }
    printf("  (sum %.4f)\n", sum);
  }
  classifier_free();
  return 0;
}
