/* The multi-lock's take (recipes/multi_lock.cc, TakeTogether): deadlock
   freedom and exclusion when multi-locks with overlapping parts, and single
   locks, run at once.

   Each participant wants a set of write locks, taken in the canonical
   order (part 0 first). The library's rule, as modelled:
   - every wanted part is requested at once; a request (create, with its
     listing right behind it) ends HELD if its node is the first in that
     lock's queue, else WAITS (its node keeps its place; it is HELD once its
     node is first: the watch on its predecessor);
   - once a part j is heard to wait, every part after j is given back: a
     held one released, a waiting one abandoned (its node deleted), one in
     flight cancelled; only parts up to j are wanted then (limit = j + 1);
   - once parts 0..limit-1 are all held (and nothing after them is in
     flight), the rest are requested again, together;
   - all parts held: the participant holds the multi-lock, then releases
     every part.
   Hearing of a wait is a step of its own, so a participant can hold later
   parts for a while after an earlier one waits (the transient holds of the
   deadlock argument beside TakeTogether); it takes that step whenever it
   can.

   Properties:
   1. exclusion: a lock has at most one holder (assert at every grant);
   2. no deadlock: spin's end states — every participant finishes its rounds.
   The known-wrong variant -DKEEP_LATER (later parts are kept while an
   earlier one waits: the parts requested together, in no order) must be
   rejected by an invalid end state: two participants each holding the part
   the other waits for. */

/* Three locks and three participants (a participant that wants nothing
   stands for a smaller run); the guards below are written out for them. */
#define NL 3
#define NP 3
#ifndef ROUNDS
#define ROUNDS 1
#endif

/* Participant p's parts, a bit mask over the locks in canonical order.
   Default: 0 wants {0,1,2}, 1 wants {0,2}, 2 wants {1} (a single lock). */
#ifndef WANTS0
#define WANTS0 7
#endif
#ifndef WANTS1
#define WANTS1 5
#endif
#ifndef WANTS2
#define WANTS2 2
#endif
#define WANTS(p) ((p) == 0 -> WANTS0 : ((p) == 1 -> WANTS1 : WANTS2))
#define WANTED(p, l) (((WANTS(p)) >> (l)) & 1)

#define NONE 0
#define FLIGHT 1   /* requested: its create and listing not yet answered */
#define WAITS 2    /* queued behind another node */
#define HELD 3
#define CANCELLING 4   /* given back while in flight: its create may still land */
#define CANCEL_HELD 5  /* ... and won just as it was given up (held, transiently) */

byte seq[NP * NL];     /* seq[p * NL + l]: p's node in lock l; 0: none */
byte counter[NL];      /* the lock directory's sequence counter */
byte holders[NL];      /* participants holding lock l */
byte state[NP * NL];
bool heard[NP * NL];   /* a wait the participant has reacted to */

#define S(p, l) state[(p) * NL + (l)]
/* q's node is ahead of p's in lock l's queue. */
#define AHEAD(q, p, l) ((q) != (p) && seq[(q) * NL + (l)] != 0 && seq[(q) * NL + (l)] < seq[(p) * NL + (l)])
#define FIRST(p, l) (!AHEAD(0, p, l) && !AHEAD(1, p, l) && !AHEAD(2, p, l))

inline grant(p, l) {
  S(p, l) = HELD;
  holders[l]++;
  assert(holders[l] <= 1)  /* property 1 */
}

/* Gives part l of p back: release, abandon or cancel. */
inline give_back(p, l) {
  if
  :: S(p, l) == HELD || S(p, l) == CANCEL_HELD -> holders[l]--
  :: else -> skip
  fi;
  seq[p * NL + l] = 0;
  S(p, l) = NONE;
  heard[p * NL + l] = 0
}

/* A request for part l is answered: its node is created and listed. */
#define ANSWERED(l) \
  :: atomic { S(me, l) == FLIGHT -> \
      counter[l]++; seq[me * NL + l] = counter[l]; \
      if :: FIRST(me, l) -> grant(me, l) :: else -> S(me, l) = WAITS fi }
/* A waiting part's node is first now: its watch fires, it holds. */
#define WOKEN(l) \
  :: atomic { S(me, l) == WAITS && FIRST(me, l) -> grant(me, l) }
/* Heard that part l waits: every part after it goes back. */
#define HEARD(l) \
  :: atomic { l < limit && S(me, l) == WAITS && !heard[me * NL + l] -> \
      heard[me * NL + l] = 1; \
      m = l + 1; \
      do :: m < NL -> \
              if :: S(me, m) == FLIGHT -> S(me, m) = CANCELLING \
                 :: S(me, m) == HELD || S(me, m) == WAITS -> give_back(me, m) \
                 :: else -> skip fi; m++ \
         :: else -> break od; \
      limit = l + 1 }
/* A part given back in flight: its create lands, maybe first (a transient
   hold), or its node's turn comes; then the abandon deletes it, whatever
   others do. */
#define CANCELLED(l) \
  :: atomic { S(me, l) == CANCELLING && seq[me * NL + l] == 0 -> \
      counter[l]++; seq[me * NL + l] = counter[l]; \
      if :: FIRST(me, l) -> S(me, l) = CANCEL_HELD; holders[l]++; assert(holders[l] <= 1) \
         :: else -> skip fi } \
  :: atomic { S(me, l) == CANCELLING && seq[me * NL + l] != 0 && FIRST(me, l) -> \
      S(me, l) = CANCEL_HELD; holders[l]++; assert(holders[l] <= 1) } \
  :: atomic { S(me, l) == CANCELLING || S(me, l) == CANCEL_HELD -> give_back(me, l) }
#define BELOW_HELD(l) ((l) >= limit || !WANTED(me, l) || S(me, l) == HELD)
#define NONE_AFTER(l) ((l) < limit || S(me, l) == NONE)
#define ALL_HELD (limit == NL && BELOW_HELD(0) && BELOW_HELD(1) && BELOW_HELD(2))

proctype Participant(byte me) {
  byte l, m, limit, rounds;
round:
  /* Request every wanted part at once. */
  atomic {
    l = 0;
    do
    :: l < NL -> if :: WANTED(me, l) -> S(me, l) = FLIGHT :: else -> skip fi; l++
    :: else -> break
    od;
    limit = NL
  }
  do
  ANSWERED(0)
  ANSWERED(1)
  ANSWERED(2)
  WOKEN(0)
  WOKEN(1)
  WOKEN(2)
#ifndef KEEP_LATER
  HEARD(0)
  HEARD(1)
  CANCELLED(1)
  CANCELLED(2)
#endif
  /* The parts up to limit held, none after in flight: the rest, together. */
  :: atomic {
      limit < NL && BELOW_HELD(0) && BELOW_HELD(1) && BELOW_HELD(2) &&
      NONE_AFTER(0) && NONE_AFTER(1) && NONE_AFTER(2) ->
      l = limit;
      do
      :: l < NL -> if :: WANTED(me, l) -> S(me, l) = FLIGHT :: else -> skip fi; l++
      :: else -> break
      od;
      limit = NL
    }
  /* Every part held: the multi-lock is held; release it. */
  :: atomic {
      ALL_HELD ->
      l = 0;
      do
      :: l < NL -> if :: S(me, l) != NONE -> give_back(me, l) :: else -> skip fi; l++
      :: else -> break
      od;
      rounds++;
      if
      :: rounds < ROUNDS -> goto round
      :: else -> goto done
      fi
    }
  od;
done:
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
