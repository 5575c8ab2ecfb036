/* Calls the compiled model through its header: introspection, then one run on known inputs. */
#include "affine.h"

#include <stdio.h>

int main(void) {
  printf("inputs %d outputs %d\n", affine_num_inputs(), affine_num_outputs());
  for (int i = 0; i < affine_num_outputs(); ++i) {
    const int64_t *shape = affine_output_shape(i);
    printf("output %s rank %d dtype %d shape %lld x %lld\n", affine_output_name(i), affine_output_rank(i),
           (int)affine_output_dtype(i), (long long)shape[0], (long long)shape[1]);
  }
  float x[6] = {1, 2, 3, 4, 5, 6};
  float y[8], doubled[6];
  if (affine_run(x, y, doubled) != 0) {
    printf("error: %s\n", affine_error());
    return 1;
  }
  for (int i = 0; i < 6; ++i)
    printf("%g ", doubled[i]);
  printf("\n");
  for (int i = 0; i < 8; ++i)
    printf("%.6g ", y[i]);
  printf("\n");
  affine_free();
  return 0;
}
