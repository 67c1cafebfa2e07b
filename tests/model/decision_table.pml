/* Prints the model's decision (decide.pml) for every queue of up to SLOTS
   sequence numbers — each absent (a gap: a cancelled or released node), a
   reader or a writer — and every position of my node (present or not):
     TABLE <slots> <me> <result> <blocker>
   slots: one digit per sequence number, 0 absent, 1 R, 2 W (lowest first);
   result: 0 ACQUIRED, 1 WAIT, 2 LOST; blocker: the slot waited on, or 255.
   Run as a simulation (`spin decision_table.pml`); the unit test
   tests/unit/model_decision_test.cc compares recipes/queue_decision with it. */
#define SLOTS 6

bool present[SLOTS];
bool is_write[SLOTS];

#include "decide.pml"

init {
  int code, rest;
  int total = 1;
  byte k, me, result, blocker, i;
  k = 0;
  do
  :: k < SLOTS -> total = total * 3; k++
  :: else -> break
  od;
  code = 0;
  do
  :: code < total ->
    rest = code;
    k = 0;
    do
    :: k < SLOTS ->
      present[k] = (rest % 3) != 0;
      is_write[k] = (rest % 3) == 2;
      rest = rest / 3;
      k++
    :: else -> break
    od;
    me = 0;
    do
    :: me < SLOTS ->
      /* an absent `me` is LOST whatever its mode; a present one has its
         slot's mode */
      decide(me, is_write[me], result, blocker, i);
      printf("TABLE ");
      k = 0;
      do
      :: k < SLOTS -> printf("%d", (present[k] -> (is_write[k] -> 2 : 1) : 0)); k++
      :: else -> break
      od;
      printf(" %d %d %d\n", me, result, blocker);
      me++
    :: else -> break
    od;
    code++
  :: else -> break
  od
}
