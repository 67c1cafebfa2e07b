/* The counting semaphore's queue (issue 21 item 1, recipes/semaphore.cc):
   N leases on one directory; participant p asks for W(p) leases and holds
   when the leases asked by the nodes before it, plus its own, fit in N
   (strict FIFO: nobody passes a waiter, so a big request is not starved).

   The rule (the library's):
   - eligible                      -> hold; but first MARK our node (one
                                      setData, which also confirms the node is
                                      still ours) if we waited, or if our
                                      listing showed a node after ours: that
                                      node may be watching us as a waiter;
   - first waiter (everything      -> a data watch on EVERY node before us:
     before us is eligible)           any release may be the one that lets
                                      us in; on a delete, hold at once if any
                                      one release was enough (ANY_ONE), else
                                      list again; on a change, list again;
   - later waiter                  -> a data watch on the direct predecessor
                                      (a waiter); its MARK (it holds now, so
                                      we may be first) or its delete wakes
                                      us, and we list again. The watch's reply
                                      carries the node's version: already
                                      marked counts as fired.
   So every node has one watcher: a holder's, the first waiter; a waiter's,
   the waiter behind it. A release wakes the first waiter only; an
   acquisition after waiting wakes the next one, to take its place.

   Issue 21 sketched another rule: watch the node N places ahead (-DN_AHEAD).
   It loses wake-ups when holders release out of order (N = 2: A and B hold,
   C watches A, D watches B; B releases; D lists again and watches A; C may
   hold now, but nobody wakes it until A goes). Spin rejects it, as it
   rejects each broken variant below by the property it breaks.

   Properties:
   1. exclusion: the leases held never exceed N (assert in hold);
   2. no lost wake-up: whenever nobody is between steps (every live
      participant holds, or waits with its watches set and no event pending)
      no waiter is eligible (check_quiet, after every step that can make the
      system quiet);
   3. herd-freedom: of the waiters a delete or a mark wakes, at most one
      cannot hold at once (two first waiters can exist for a moment, when
      one listed before a release and the other after it: both may then
      hold, and both are woken);
   4. everyone finishes (spin's end states).
   Faults: a waiter gives up (MAX_GIVEUP), a participant's session ends,
   its node deleted with it, while it waits or holds (MAX_EXPIRE; the lease
   ends the holder's belief first, design.md). Participants create their
   nodes in order, at any time relative to the others' steps. Stale watches
   are removed at once here; the library removes them asynchronously and
   ignores their events (epochs), which the herd count does not see. */

#ifndef NP
#define NP 4
#endif
#ifndef LEASES
#define LEASES 2
#endif
#ifndef MAX_GIVEUP
#define MAX_GIVEUP 1
#endif
#ifndef MAX_EXPIRE
#define MAX_EXPIRE 1
#endif
/* Leases asked: one each, or 2,1,2,1,... with -DWEIGHTED. */
#ifdef WEIGHTED
#define W(p) (2 - (p) % 2)
#else
#define W(p) 1
#endif

/* -DANY_LARGEST: "any one release is enough" judged by the largest. */
#ifdef ANY_LARGEST
#define ANY_ONE_MISJUDGED 1
#else
#define ANY_ONE_MISJUDGED 0
#endif
/* An acquirer that waited marks its node (unless -DNO_MARK). */
#ifdef NO_MARK
#define MARK_AFTER_WAIT 0
#else
#define MARK_AFTER_WAIT 1
#endif

#define ACTIVE 0   /* between steps: will act without being woken */
#define WAITING 1  /* watches set, waiting for an event */
#define HOLDING 2
#define DONE 3

bool created[NP];
bool present[NP];
byte version[NP];      /* bumped by a mark */
bool watch[NP * NP];   /* watch[p * NP + q]: p watches q */
bool woken[NP];
bool by_delete[NP];    /* the event that woke p was a delete */
byte phase[NP];
byte held;             /* leases held */
byte giveups, expiries;
hidden byte t_q, t_p, t_sum, t_wakes;
hidden byte t_quiet, t_bad;

/* Leases asked by the present nodes before `me`. */
inline asked_before(me, sum) {
  sum = 0;
  t_q = 0;
  do
  :: t_q < me -> if :: present[t_q] -> sum = sum + W(t_q) :: else -> skip fi; t_q++
  :: else -> break
  od
}

/* Property 2: quiet (nobody between steps) -> no waiter is eligible. */
inline check_quiet() {
  t_quiet = 1;
  t_bad = 0;
  t_p = 0;
  do
  :: t_p < NP ->
    if
    :: phase[t_p] == ACTIVE || (phase[t_p] == WAITING && woken[t_p]) -> t_quiet = 0
    :: phase[t_p] == WAITING && !woken[t_p] ->
      asked_before(t_p, t_sum);
      if :: t_sum + W(t_p) <= LEASES -> t_bad = 1 :: else -> skip fi
    :: else -> skip
    fi;
    t_p++
  :: else -> break
  od;
  assert(!(t_quiet && t_bad))  /* an eligible waiter nobody will wake */
}

inline cancel_watches(me) {
  t_q = 0;
  do
  :: t_q < NP -> watch[me * NP + t_q] = 0; t_q++
  :: else -> break
  od
}

/* The server fires node n's watches (a delete, or a mark). */
inline fire(n, deleted) {
  t_wakes = 0;
  t_p = 0;
  do
  :: t_p < NP ->
    if
    :: watch[t_p * NP + n] && woken[t_p] ->
      watch[t_p * NP + n] = 0  /* moved on already: its removal is on the way */
    :: watch[t_p * NP + n] && !woken[t_p] ->
      watch[t_p * NP + n] = 0; woken[t_p] = 1; by_delete[t_p] = deleted;
      asked_before(t_p, t_sum);
      if :: t_sum + W(t_p) > LEASES -> t_wakes++ :: else -> skip fi
    :: else -> skip
    fi;
    t_p++
  :: else -> break
  od;
  assert(t_wakes <= 1)  /* property 3: one woken waiter per event cannot hold */
}

inline server_delete(n) {
  present[n] = 0;
  fire(n, 1)
}

/* Leaves the queue (give-up, or the session ends): the node goes. */
inline leave(me) {
  cancel_watches(me);
  woken[me] = 0;
  server_delete(me);
  phase[me] = DONE;
  check_quiet()
}

proctype Participant(byte me) {
  byte sum, q, pred;
  byte listed;  /* bit q: node q was in our listing */
  bool waited, mark, first, any_one, gone;
  /* Nodes are created in sequence order, whenever. */
  atomic { (me == 0 || created[me - 1]) -> created[me] = 1; present[me] = 1 }
list:
  atomic {
    cancel_watches(me);
    asked_before(me, sum);
    if
    :: sum + W(me) <= LEASES ->
      /* Whoever listed while we waited is behind us in this listing. */
      mark = waited;
      q = me + 1;
      do
      :: q < NP -> if :: present[q] -> mark = 1 :: else -> skip fi; q++
      :: else -> break
      od;
#ifdef NO_MARK
      mark = 0;
#endif
#ifdef MARK_ONLY_IF_WAITED
      mark = waited;
#endif
      goto acquire
    :: else ->
      waited = 1;
#ifdef N_AHEAD
      /* watch the node LEASES places ahead: the (count - LEASES)-th present one */
      t_sum = 0;
      q = 0;
      do :: q < me -> if :: present[q] -> t_sum++ :: else -> skip fi; q++ :: else -> break od;
      t_sum = t_sum - LEASES;
      q = 0;
      do
      :: q < me && !(present[q] && t_sum == 0) -> if :: present[q] -> t_sum-- :: else -> skip fi; q++
      :: else -> break
      od;
      watch[me * NP + q] = 1;
      first = 0;
      phase[me] = WAITING;
      check_quiet();
      goto wait
#endif
      /* The first waiter: all before us are eligible (prefix sums). */
      first = sum <= LEASES;
#ifdef FIRST_WATCHES_ONE
      first = 0;
#endif
#ifdef HERD
      first = 1;  /* every waiter watches every node before it */
#endif
      /* Any single release lets us in: even the smallest does. */
      any_one = 1;
      q = 0;
      do
      :: q < me -> if :: present[q] && sum - W(q) + W(me) > LEASES -> any_one = ANY_ONE_MISJUDGED :: else -> skip fi; q++
      :: else -> break
      od;
      pred = me;
      listed = 0;
      q = 0;
      do
      :: q < me -> if :: present[q] -> pred = q; listed = listed | (1 << q) :: else -> skip fi; q++
      :: else -> break
      od
    fi
  }
  /* Arming: one getData per watched node, each answered on its own. A
     node listed but gone by then answers NotFound: as if it had fired. */
  if
  :: first ->
    gone = 0;
    q = 0;
    do
    :: q < me && !gone ->
      atomic {
        if
        :: present[q] -> watch[me * NP + q] = 1
        :: !present[q] && (listed & (1 << q)) -> gone = 1; cancel_watches(me)  /* moving on */
        :: else -> skip
        fi;
        q++
      }
    :: else -> break
    od;
    if
    :: gone && any_one -> mark = MARK_AFTER_WAIT; goto acquire
    :: gone && !any_one -> goto list
    :: else -> skip
    fi
  :: else ->
    atomic {
      if
#ifndef IGNORE_ARMED_MARK
      :: !present[pred] || version[pred] > 0 -> goto list  /* already went, or marked */
#else
      :: !present[pred] -> goto list
#endif
      :: else -> watch[me * NP + pred] = 1
      fi
    }
  fi;
  atomic { phase[me] = WAITING; check_quiet() };
wait:
  if
  :: atomic {
      woken[me] ->
      woken[me] = 0;
      phase[me] = ACTIVE;
      cancel_watches(me);  /* sent as we move on */
      if
      :: first && any_one && by_delete[me] -> mark = MARK_AFTER_WAIT; goto acquire
      :: else -> goto list
      fi
    }
  :: atomic { giveups < MAX_GIVEUP -> giveups++; leave(me); goto end }
  :: atomic { expiries < MAX_EXPIRE -> expiries++; leave(me); goto end }
  fi;
acquire:
  atomic {
    cancel_watches(me);
    if
    :: mark -> version[me]++; fire(me, 0)
    :: else -> skip
    fi;
    held = held + W(me);
    assert(held <= LEASES);  /* property 1 */
    phase[me] = HOLDING;
    check_quiet()
  }
  if
  :: atomic { held = held - W(me); server_delete(me); phase[me] = DONE; check_quiet() }
  :: atomic { expiries < MAX_EXPIRE -> expiries++; held = held - W(me); leave(me) }
  fi;
end:
  skip
}

init {
  byte p;
  atomic {
    p = 0;
    do
    :: p < NP -> run Participant(p); p++
    :: else -> break
    od
  }
}
