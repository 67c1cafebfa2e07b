/* Property 3 as liveness: under weak fairness every participant ends — holds
   and releases, gives up by itself, or loses its session; none waits
   forever (no lost wake-up, no starvation). check_model.sh runs it with
   spin's acceptance-cycle search (-a -f). */
#define COUNT_FINISHED
#include "queue.pml"

ltl everyone_finishes { <> (finished == NP) }
