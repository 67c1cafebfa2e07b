// Counts the zkr program's C++ heap allocations, so that the benchmark can
// report allocations per lock cycle (the C client's own mallocs, which the
// raw floor makes too, are not counted: they are not ours to remove).
#ifndef ZKRECIPES_TOOLS_BENCH_ALLOC_COUNT_H_
#define ZKRECIPES_TOOLS_BENCH_ALLOC_COUNT_H_

#include <cstdint>

namespace zkr {
namespace bench {

// Calls of the (non-aligned) global operator new and new[] so far, from
// every thread.
uint64_t CxxAllocations();

}  // namespace bench
}  // namespace zkr

#endif  // ZKRECIPES_TOOLS_BENCH_ALLOC_COUNT_H_
