/* main.c - gpusched (placeholder until the scheduler lands). */
#include <stdio.h>

int main(void)
{
    fprintf(stderr, "gpusched: not built yet\n");
    return 2;
}
