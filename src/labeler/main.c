/* main.c - gpulabel (placeholder until the agent lands). */
#include <stdio.h>

int main(void)
{
    fprintf(stderr, "gpulabel: not built yet\n");
    return 2;
}
