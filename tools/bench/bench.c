/* bench.c - `make bench` entry point: runs every benchmark and prints its figures. */
#include <stdio.h>

#include "tools/bench/bench.h"

int main(void)
{
    bench_dispatch();
    return 0;
}
