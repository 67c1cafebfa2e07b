/* A counting semaphore (issue 21 item 1) on the same kind of queue, as the
   issue sketches it: a participant holds one of N leases when fewer than N
   nodes precede it, else it watches the node N places ahead of it (so that
   every node has at most one watcher) and lists again when that node goes.
   Checked by spin (tests/model/check_model.sh), which must REJECT it: when
   holders release out of order, a waiter can become eligible while the node
   it watches is still there, and nobody wakes it (property 3 of queue.pml,
   no lost wake-up). Example with N = 2: A and B hold, C watches A, D
   watches B; B releases; D lists again and watches A; C may hold now, but
   waits until A goes. A herd-free semaphore needs another rule; this model
   is where to check one.

   Participants: NP, queued in order at the start, one attempt each, no
   faults (the flaw needs none). */

#ifndef NP
#define NP 4
#endif
#ifndef LEASES
#define LEASES 2
#endif
#define NONE 255

bool present[NP];      /* node i is participant i's (created in order) */
byte watched[NP];      /* the node p watches, or NONE */
bool woken[NP];
bool holds[NP];
hidden byte t_q, t_c, t_n;

/* Nodes before `me` that are present. */
inline preceding(me, count) {
  count = 0;
  t_q = 0;
  do
  :: t_q < me -> if :: present[t_q] -> count++ :: else -> skip fi; t_q++
  :: else -> break
  od
}

/* No lost wake-up: whoever has a watch set and is not woken must not be
   eligible. */
inline check_no_lost_wakeup() {
  t_c = 0;
  do
  :: t_c < NP ->
    if
    :: watched[t_c] != NONE && !woken[t_c] && present[t_c] ->
      preceding(t_c, t_n);
      assert(t_n >= LEASES)  /* eligible, but nobody woke it */
    :: else -> skip
    fi;
    t_c++
  :: else -> break
  od
}

inline server_delete(n) {
  present[n] = 0;
  t_q = 0;
  do
  :: t_q < NP -> if :: watched[t_q] == n -> watched[t_q] = NONE; woken[t_q] = 1 :: else -> skip fi; t_q++
  :: else -> break
  od;
  check_no_lost_wakeup()
}

proctype Participant(byte me) {
  byte count, ahead, i;
list:
  atomic {
    preceding(me, count);
    if
    :: count < LEASES -> holds[me] = 1; goto hold
    :: else ->
      /* the node LEASES places ahead: the (count - LEASES)-th present one */
      ahead = count - LEASES;
      i = 0;
      do
      :: i < me && !(present[i] && ahead == 0) -> if :: present[i] -> ahead-- :: else -> skip fi; i++
      :: else -> break
      od;
      watched[me] = i
    fi
  }
  atomic { woken[me] -> woken[me] = 0 };
  goto list;
hold:
  atomic { holds[me] = 0; server_delete(me) }
}

init {
  byte p;
  atomic {
    p = 0;
    do
    :: p < NP -> watched[p] = NONE; present[p] = 1; p++  /* all queued, in order */
    :: else -> break
    od;
    p = 0;
    do
    :: p < NP -> run Participant(p); p++
    :: else -> break
    od
  }
}
