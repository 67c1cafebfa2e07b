/* The herd-free queue of zkrecipes (design.md "The queue"; the engine is
   recipes/queue_entry.cc), as the library implements it, against a model of
   one ZooKeeper directory. Checked by spin (tests/model/check_model.sh).

   The server: one directory with a sequence counter; create
   EPHEMERAL_SEQUENTIAL; an atomic listing; data watches that fire once when
   their node is deleted; a guarded write (a multi whose check op needs the
   writer's node); session expiry deleting all of a session's nodes and
   dropping its watches; a connection loss that loses a create's reply,
   before or after the server applied it; an operator deleting a waiter's
   node (MAX_OPDEL); forced revocation of a holder (MAX_REVOKE, below). A session's events are handled in the order the server
   applied their deletions (zxid order on one connection).

   Participants (NP of them; WRITERS is a bit mask of who writes — an
   election candidate is a writer, the leader is the holder): protected
   create (after a lost reply, look the node up by the attempt's unique id;
   create again only if it is not there), list, decide (decide.pml), a data
   watch on the one blocking node (or, if it is gone already, list again),
   wait, and on the wake-up list and decide again; hold: maybe downgrade
   (write -> read on the same node), one guarded write, release (delete).
   A waiter may give up (timeout or cancel: remove its watch, delete its node,
   found by id if its create's reply was lost). The lease: a holder's belief
   ends when its lease runs out, and only after that can the server expire
   its session. Any session that does not believe it holds may be expired
   by the server at any time.

   Properties (assertions; spin prints a trail when one fails):
     1  exclusion: at every acquisition, no other participant believes it
        holds a conflicting hold (two writers, or a writer and a reader);
     2  fencing: write holders' tokens (creation order) strictly increase;
        the resource accepts guarded accesses in token order (a write's
        token no lower than any accepted, a read's no lower than any
        accepted write's), and a stale holder's guarded access is refused;
     3  no lost wake-up: after any deletion, no participant with a watch set
        could acquire without being woken; no deadlock (spin's end states);
        at the end no node and no watch is left;
     4  herd-freedom: a wake-up that ends in waiting again was caused by the
        deletion of a node that was not first in the queue (a give-up, an
        expiry, a reader leaving before an earlier reader) — a release by
        the head of the queue wakes only those who can now proceed;
     5  election (WRITERS all set): property 1 is "one leader at a time",
        and deadlock freedom is "a leader is elected while candidates
        remain".

   Bounds: NP participants, one attempt each, MAX_LOST lost create replies,
   MAX_CANCEL give-ups, MAX_EXPIRE expiries, MAX_OPDEL operator deletions,
   MAX_REVOKE forced revocations, MAXN sequence numbers.

   Forced revocation (zkrecipes/revocation.h; Revoker below): a requester
   picks a node its listing shows holding and marks it (a change of its
   request node's data). The holder's request watch hands it the mark
   (heard[]); a holder that handles it stops believing at once, and deletes
   its node later, when it lets go (a plain delete, a step of its own). The requester deletes the node itself only once
   the holder's lease must have ended: one session timeout of the holder's
   (published in its node) after the mark's answer. In the model's
   untimed terms, once its owner does not believe it holds: a holder that
   hears the mark has dropped its belief; one cut off (the hold's expiry
   branch: the lease ends its belief, the server expires it later) has had
   no answer to a request processed after the mark, so its lease, counted
   from an earlier send, is over; one granted after the mark without
   hearing it counts on its hold only within the lease of a request
   processed before the mark (RevokeWatch::MayHold), so the same holds.
   REVOKE_AT_ONCE (broken): the requester deletes the node as it marks it,
   as the library did before — the next holder is let in while the old one
   still believes.

   RELEASE_MARK (the library's default): a writer that waited releases with
   a marked delete (data changed and deleted in one transaction; one that
   never waited has no waiter that needs it), and a waiter woken by one
   holds as if its listing had shown that node as its only blocker.

   Broken variants, each of which spin must reject (check_model.sh):
     HERD                  waiters watch the whole directory (child watch)
     READER_WATCHES_PREDECESSOR (decide.pml)
     WRITER_NO_RELIST      a woken writer holds without listing again
     CREATE_WITHOUT_LOOKUP after a lost create reply, create again
     LEASE_FROM_NOW        the server may expire a session whose holder
                           still believes its lease valid
     SKIP_WITH_OTHER_BLOCKERS  (with SKIP_HANDOFF) a woken waiter holds at
                           once although its listing showed other blockers
     LIST_BEFORE_CREATE    the first decision uses a listing the server
                           processed before the create (wrong pipelining)
     MARK_FROM_READERS     (with RELEASE_MARK) readers mark their releases
                           too, and a waiter behind one trusts it
     EVENT_HANDOFF_IGNORES_OWN_WATCH  (with EVENT_HANDOFF) the woken waiter
                           holds on the event without heeding its own-node
                           watch
     REVOKE_AT_ONCE        a forced revocation deletes the holder's node
                           when it marks it
     DIR_FALLBACK_HOLDS_ON_EVENT  (with DIR_FALLBACK) a waiter woken by its
                           child watch holds on the event like one woken by
                           its blocker's deletion

   DIR_FALLBACK (the library's, when a waiter's blockers' paths do not fit
   the session's watch budget): at the watch step a waiter may set a child
   watch on the directory instead of the data watch, with a listing that
   still shows its blocker (else it decides again, as for a blocker gone);
   woken by it, it lists again (no handoff on a child event). Its wake-ups
   are a herd by design, so property 4 is not asked of them.

   SKIP_HANDOFF is the library's handoff (a woken waiter whose last listing
   showed the watched node as its only blocker holds without listing
   again): with EVENT_HANDOFF (the default: an own-node watch set with the
   first blocker watch) on the event itself; without it (own-node watch
   off, or after a reconnect) once its own node is confirmed by one exists.
   check_model.sh checks the protocol both ways, and the broken variants. The pipelined
   acquire (the listing sent right behind the create, without waiting for its
   reply) is the model as it is: the server answers one session's requests
   in order, so the listing is processed after the create either way —
   LIST_BEFORE_CREATE shows why that order matters. */

#ifndef NP
#define NP 3
#endif
#ifndef WRITERS
#define WRITERS 1
#endif
#ifndef MAX_LOST
#define MAX_LOST 1
#endif
#ifndef MAX_CANCEL
#define MAX_CANCEL 1
#endif
#ifndef MAX_EXPIRE
#define MAX_EXPIRE 1
#endif
#ifndef MAX_OPDEL
#define MAX_OPDEL 0
#endif
#ifndef MAX_REVOKE
#define MAX_REVOKE 0
#endif
#define MAXN (NP + MAX_LOST + 1)

#include "decide.pml"

/* ---- the server */
byte counter;             /* the next sequence number */
bool present[MAXN];
bool is_write[MAXN];
byte owner[MAXN];         /* the participant (session) that created it */
bool expired[NP];
byte watched[NP];         /* the node p's data watch is on, or NONE */
bool dir_watch[NP];       /* HERD: p's child watch on the directory */
bool woken[NP];           /* a watch of p fired; p has not handled it yet */
bool woken_by_nonhead[NP];/* ... by the deletion of a node not first in the queue */
bool woken_by_mark[NP];   /* ... by a marked release (RELEASE_MARK): data changed, then deleted */
bool releasing_marked;    /* scratch for server_delete: the delete is a marked release */
bool own_watch[NP];       /* EVENT_HANDOFF: p's data watch on its own node */
bool own_gone[NP];        /* ... it fired; p has not handled it yet */
bool heard[NP];           /* a force mark on p's node, handed to p; not handled yet */

/* ---- what the participants believe, and the fenced resource */
bool believes[NP];        /* holds, as far as it knows */
bool believes_write[NP];  /* ... a write hold */
byte last_write_token = NONE;
byte fence_write = NONE;  /* the highest write token the resource accepted */
byte fence_read = NONE;   /* the highest read token it accepted */

/* ---- scratch, used only inside atomic steps (so not part of the state) */
hidden byte t_i, t_q, t_c, t_m, t_r, t_b, t_n, t_p;
hidden byte t_head;
hidden byte t_saved[MAXN];

/* ---- participants that have ended (held and released, gave up, or lost
   their session); counted only for liveness.pml, as it enlarges the state */
byte finished;

/* ---- fault budgets */
byte lost, cancels, expiries, opdels, revokes;

#define WRITER(p) (((WRITERS) >> (p)) & 1)

/* Wakes p (its watch fired). */
inline wake(p, nonhead) {
  watched[p] = NONE;
  dir_watch[p] = 0;
  woken[p] = 1;
  woken_by_nonhead[p] = nonhead;
  woken_by_mark[p] = releasing_marked
}

/* Property 3: after a deletion, anyone with a watch set who could acquire now
   has been woken. */
inline check_no_lost_wakeup() {
  t_c = 0;
  do
  :: t_c < NP ->
    if
    :: (watched[t_c] != NONE || dir_watch[t_c]) && !woken[t_c] ->
      t_m = 0;
      do
      :: t_m < MAXN && !(present[t_m] && owner[t_m] == t_c) -> t_m++
      :: else -> break
      od;
      if
      :: t_m < MAXN ->
        decide(t_m, WRITER(t_c), t_r, t_b, t_i);
        assert(t_r != ACQUIRED)  /* a lost wake-up */
      :: else -> skip
      fi
    :: else -> skip
    fi;
    t_c++
  :: else -> break
  od
}

/* Deletes node n: its data watches fire (HERD: every child watch). */
inline server_delete(n) {
  t_head = 1;
  t_q = 0;
  do
  :: t_q < n -> if :: present[t_q] -> t_head = 0 :: else -> skip fi; t_q++
  :: else -> break
  od;
  present[n] = 0;
  if  /* the owner's own-node watch fires first: its event has this zxid */
  :: own_watch[owner[n]] -> own_watch[owner[n]] = 0; own_gone[owner[n]] = 1
  :: else -> skip
  fi;
  t_q = 0;
  do
  :: t_q < NP ->
    if
    :: watched[t_q] == n || dir_watch[t_q] -> wake(t_q, !t_head)
    :: else -> skip
    fi;
    t_q++
  :: else -> break
  od;
  check_no_lost_wakeup()
}

/* The server expires p's session: its nodes go, its watches are dropped. */
inline server_expire(p) {
  expired[p] = 1;
  watched[p] = NONE;
  dir_watch[p] = 0;
  woken[p] = 0;
  own_watch[p] = 0;
  own_gone[p] = 0;
  t_n = 0;
  do
  :: t_n < MAXN ->
    if
    :: present[t_n] && owner[t_n] == p -> server_delete(t_n)
    :: else -> skip
    fi;
    t_n++
  :: else -> break
  od
}

/* Property 1, at an acquisition by p. */
inline check_exclusion(p, write) {
  t_q = 0;
  do
  :: t_q < NP ->
    assert(t_q == p || !believes[t_q] || (!write && !believes_write[t_q]));
    t_q++
  :: else -> break
  od
}

/* Counts the nodes before `me` that block it (writer: any; reader: writers). */
inline count_blockers(me, write, count) {
  count = 0;
  t_q = 0;
  do
  :: t_q < me -> if :: present[t_q] && (write || is_write[t_q]) -> count++ :: else -> skip fi; t_q++
  :: else -> break
  od
}

/* p holds: properties 1 and 2 at the moment it begins to believe so. */
inline acquire(p, write, mine) {
  check_exclusion(p, write);
  believes[p] = 1;
  believes_write[p] = write;
  if
  :: write -> assert(last_write_token == NONE || mine > last_write_token);
    last_write_token = mine
  :: else -> skip
  fi
}

proctype Participant(byte me) {
  bool write = WRITER(me);
  byte mine = NONE;       /* my node, as I know it */
  byte blocker;
  bool from_wakeup, nonhead;
#ifdef SKIP_HANDOFF
  bool only_blocker;  /* the last listing showed one blocker */
#endif
#ifdef EVENT_HANDOFF
  bool own_armed;     /* my own-node watch was set (once per attempt) */
#endif
#ifdef RELEASE_MARK
  bool waited;        /* a listing told me to wait (my release is marked) */
#endif
#ifdef LIST_BEFORE_CREATE
  byte snapshot;      /* the nodes present when the early listing was taken */
#endif
#ifdef DIR_FALLBACK
  bool by_dir;        /* I wait on the directory's child watch */
#endif

create:
#ifdef LIST_BEFORE_CREATE
  /* Wrong pipelining: a listing processed before the create (sent on
     another connection, or ahead of it), decided on with my node added. */
  atomic {
    snapshot = 0;
    t_q = 0;
    do
    :: t_q < MAXN -> if :: present[t_q] -> snapshot = snapshot | (1 << t_q) :: else -> skip fi; t_q++
    :: else -> break
    od
  }
#endif
  if
  :: lost < MAX_LOST -> lost++;  /* the request is lost with the connection */
    goto recover
  :: true
  fi;
  atomic {
    if
    :: expired[me] -> goto gone
    :: else -> skip
    fi;
    assert(counter < MAXN);
    t_n = counter;
    counter++;
    present[t_n] = 1;
    is_write[t_n] = write;
    owner[t_n] = me;
    t_q = 0;
    do  /* HERD: a create changes the children too */
    :: t_q < NP -> if :: dir_watch[t_q] -> releasing_marked = 0; wake(t_q, 0) :: else -> skip fi; t_q++
    :: else -> break
    od;
    if
    :: mine = t_n
    :: lost < MAX_LOST -> lost++  /* applied, but the reply is lost */
    fi
  }
  if
  :: mine == NONE -> goto recover
  :: else -> goto list
  fi;

recover:  /* protected create: find my node by the attempt's unique id */
  if
  :: cancels < MAX_CANCEL -> cancels++; goto give_up
  :: true
  fi;
  atomic {
    if
    :: expired[me] -> goto gone
    :: else -> skip
    fi;
#ifdef CREATE_WITHOUT_LOOKUP
    goto create;
#endif
    mine = NONE;
    t_n = 0;
    do
    :: t_n < MAXN -> if :: present[t_n] && owner[t_n] == me -> mine = t_n :: else -> skip fi; t_n++
    :: else -> break
    od;
    if
    :: mine == NONE -> goto create  /* never applied */
    :: else -> goto list
    fi
  }

list:
  atomic {
    if
    :: expired[me] -> goto gone
    :: else -> skip
    fi;
#ifdef LIST_BEFORE_CREATE
    if
    :: snapshot != 255 ->  /* the first decision uses the early listing */
      t_b = 0;
      do
      :: t_b < MAXN -> t_saved[t_b] = present[t_b];
        present[t_b] = (t_b == mine || (snapshot & (1 << t_b)) != 0) && present[t_b];
        t_b++
      :: else -> break
      od;
      decide(mine, write, t_r, blocker, t_i);
      t_b = 0;
      do
      :: t_b < MAXN -> present[t_b] = t_saved[t_b]; t_b++
      :: else -> break
      od;
      snapshot = 255
    :: else -> decide(mine, write, t_r, blocker, t_i)
    fi;
#else
    decide(mine, write, t_r, blocker, t_i);
#endif
    /* Property 4: waiting again after a wake-up only if a node other than the
       head went. Not for a Curator reader (CURATOR_READERS): it waits on the
       first writer before it, so the head's release wakes it to wait on the
       next writer (Curator's own cost; exclusion and wake-ups still hold). */
#ifdef CURATOR_READERS
    assert(!(from_wakeup && t_r == WAIT) || nonhead || ((CURATOR_READERS >> me) & 1));
#else
    assert(!(from_wakeup && t_r == WAIT) || nonhead);
#endif
    from_wakeup = 0;
    if
    :: t_r == LOST -> goto gone
    :: t_r == ACQUIRED ->
      acquire(me, write, mine);
      goto hold
    :: t_r == WAIT ->
#ifdef RELEASE_MARK
      waited = 1;
#endif
#ifdef SKIP_HANDOFF
      count_blockers(mine, write, t_m);
      only_blocker = (t_m == 1);
#endif
#ifdef HERD
      dir_watch[me] = 1;  /* the listing leaves a child watch */
      goto wait
#else
      skip
#endif
    fi
  }

watch:
  atomic {
    if
    :: expired[me] -> goto gone
    :: else -> skip
    fi;
#ifdef EVENT_HANDOFF
    /* Once I wait on my only blocker, a data watch on my own node with the
       blocker watch (sent behind it; the server answers in order), kept
       from then on. Its reply NONODE: my node went while I waited — the
       attempt fails. A waiter further back lists again when woken and sets
       none. */
    if
    :: !own_armed && only_blocker ->
      own_armed = 1;
      if
      :: present[mine] -> own_watch[me] = 1
      :: else -> goto node_lost
      fi
    :: else -> skip
    fi;
#endif
    if
    :: present[blocker] -> watched[me] = blocker
#ifdef DIR_FALLBACK
    :: present[blocker] -> dir_watch[me] = 1; by_dir = 1
#endif
    :: else -> goto list  /* gone already: decide again */
    fi
  }

wait:
  if
  :: atomic { woken[me] ->
      woken[me] = 0;
      from_wakeup = 1;
      nonhead = woken_by_nonhead[me] };
#ifdef DIR_FALLBACK
    if
    :: by_dir ->  /* a child event: list again */
      by_dir = 0;
      from_wakeup = 0;
#ifndef DIR_FALLBACK_HOLDS_ON_EVENT
#ifdef SKIP_HANDOFF
      only_blocker = 0;
#endif
      goto list
#else
      skip  /* broken: on to the handoff, as if the blocker had gone */
#endif
    :: else -> skip
    fi;
#endif
#ifdef WRITER_NO_RELIST
    if
    :: write -> atomic {
        if
        :: expired[me] -> goto gone
        :: else -> skip
        fi;
        acquire(me, write, mine);
        goto hold }
    :: else -> skip
    fi;
#endif
#ifdef SKIP_HANDOFF
    /* The watched node went and the last listing showed it as the only
       blocker: sequence numbers only grow, so nothing can have got ahead —
       hold at once once our own node is confirmed (the library's CONFIRM
       step: one exists on it). SKIP_WITH_OTHER_BLOCKERS: skip regardless. */
#ifdef SKIP_WITH_OTHER_BLOCKERS
    only_blocker = 1;
#endif
#ifdef RELEASE_MARK
    /* Woken by a marked release: the blocker held, so it was first (a
       writer holds only when first; a reader watches the last writer
       before it, so only readers were between): nothing blocks me now. A
       marked release of a reader says nothing (MARK_FROM_READERS). */
    if
    :: woken_by_mark[me] -> only_blocker = 1
    :: else -> skip
    fi;
#endif
#ifdef EVENT_HANDOFF
    /* The library's default (own-node watch on): hold on the event itself,
       with no request. Events reach a session in zxid order, so an
       own-node deletion before the blocker's has been handled already
       (own_gone). A session expired meanwhile cannot be handed events; the
       lease stands for that (expired[me]: the library checks its lease).
       EVENT_HANDOFF_IGNORES_OWN_WATCH: hold without looking at it. */
    if
    :: only_blocker -> atomic {
        only_blocker = 0;
#ifndef EVENT_HANDOFF_IGNORES_OWN_WATCH
        if
        :: own_gone[me] -> goto node_lost
        :: else -> skip
        fi;
#endif
        if
        :: expired[me] -> goto gone
        :: else -> skip
        fi;
        from_wakeup = 0;
        acquire(me, write, mine);
        goto hold }
    :: else -> skip
    fi;
#else
    if
    :: only_blocker -> atomic {  /* CONFIRM: our node still there */
        only_blocker = 0;
        if
        :: expired[me] || !present[mine] -> goto gone
        :: else -> skip
        fi;
        from_wakeup = 0;
        acquire(me, write, mine);
        goto hold }
    :: else -> skip
    fi;
#endif
#endif
    goto list
  :: atomic { expired[me] -> goto gone }
  :: atomic { own_gone[me] -> goto node_lost }  /* my node went while I waited */
  :: cancels < MAX_CANCEL -> cancels++; goto give_up
  fi;

node_lost:  /* my node is gone (an operator): the attempt fails; drop my watches */
  atomic {
    watched[me] = NONE;
    dir_watch[me] = 0;
    woken[me] = 0;
    own_watch[me] = 0;
    own_gone[me] = 0;
    goto gone
  }

give_up:  /* remove the watches, delete my node (found by id if need be) */
  atomic {
    watched[me] = NONE;
    dir_watch[me] = 0;
    woken[me] = 0;
    own_watch[me] = 0;
    own_gone[me] = 0;
    if
    :: expired[me] -> goto gone
    :: else -> skip
    fi;
    t_n = 0;
    do
    :: t_n < MAXN ->
      if
      :: present[t_n] && owner[t_n] == me -> server_delete(t_n)
      :: else -> skip
      fi;
      t_n++
    :: else -> break
    od;
    goto done
  }

hold:
  if
  :: write -> believes_write[me] = 0  /* downgrade: a read hold on the same node */
  :: true
  fi;
  atomic {  /* one guarded access through the fenced resource */
    if
    :: present[mine] && !expired[me] ->
      assert(fence_write == NONE || mine >= fence_write);
      if
      :: believes_write[me] ->
        assert(fence_read == NONE || mine >= fence_read);
        fence_write = mine
      :: else ->
        if
        :: fence_read == NONE || mine > fence_read -> fence_read = mine
        :: else -> skip
        fi
      fi
    :: else -> skip  /* refused: the check op fails */
    fi
  }
  if
  :: atomic { heard[me] ->  /* a forced revocation: lost at once */
      heard[me] = 0;
      believes[me] = 0;
      believes_write[me] = 0 };
    /* ... and my node goes when I let go (Release, after zkr's CMD has
       died): later, a step of its own, unless the server or the requester
       deleted it meanwhile. */
    atomic {
      if
      :: present[mine] && !expired[me] -> server_delete(mine)
      :: else -> skip
      fi };
    goto done
  :: atomic {  /* release */
      if
      :: expired[me] -> believes[me] = 0; goto gone
      :: else -> skip
      fi;
      believes[me] = 0;
      believes_write[me] = 0;
#ifdef RELEASE_MARK
      /* A writer's release marks its node's data in the same transaction
         as the delete: its watchers see "data changed" (the watch fires
         once), which only a holder's release produces. */
      releasing_marked = write && waited;
#ifdef MARK_FROM_READERS
      releasing_marked = waited;
#endif
#endif
      server_delete(mine);
      releasing_marked = 0;
      goto done }
  :: expiries < MAX_EXPIRE -> expiries++;
    /* Cut off: the lease clock ends the belief first; the server expires
       the session only after its timeout, which is later. */
    believes[me] = 0;
    believes_write[me] = 0;
    atomic { server_expire(me) };
    goto gone
  fi;

gone:  /* the session is lost: the attempt or the hold ends */
  believes[me] = 0;
  believes_write[me] = 0;
done:
#ifdef COUNT_FINISHED
  finished++;
#endif
  skip
}

/* The server expiring sessions (at most MAX_EXPIRE in all) of participants
   that do not believe they hold (LEASE_FROM_NOW: of any). */
proctype Expirer() {
  do
  :: atomic { expiries < MAX_EXPIRE ->
      select(t_p : 0 .. NP - 1);
      if
#ifdef LEASE_FROM_NOW
      :: !expired[t_p] ->
#else
      :: !expired[t_p] && !believes[t_p] ->
#endif
        expiries++;
        server_expire(t_p)
      :: else -> skip
      fi }
  :: break
  od
}

/* An operator deleting a waiter's node (at most MAX_OPDEL times): a node
   whose owner does not believe it holds and that something still blocks.
   (Deleting a holder's node is reported as LOST by its own-node watch and
   fenced; no exclusion is claimed for that window.) */
proctype Operator() {
  do
  :: atomic { opdels < MAX_OPDEL ->
      select(t_n : 0 .. MAXN - 1);
      if
      :: present[t_n] && !believes[owner[t_n]] ->
        decide(t_n, is_write[t_n], t_r, t_b, t_i);
        if
        :: t_r == WAIT -> opdels++; server_delete(t_n)
        :: else -> skip
        fi
      :: else -> skip
      fi }
  :: break
  od
}

/* A requester forcing out a holder (at most MAX_REVOKE times): it marks a
   node its listing shows holding, then deletes it once the node's owner
   does not believe it holds (its lease, as argued above) — or right away
   (REVOKE_AT_ONCE). A node already gone is left alone. */
proctype Revoker() {
  byte n = NONE;
  do
  :: atomic { revokes < MAX_REVOKE ->
      select(t_n : 0 .. MAXN - 1);
      if
      :: present[t_n] ->
        decide(t_n, is_write[t_n], t_r, t_b, t_i);
        if
        :: t_r == ACQUIRED ->
          revokes++;
          n = t_n;
          heard[owner[n]] = !expired[owner[n]];  /* the mark, on its request watch */
#ifdef REVOKE_AT_ONCE
          server_delete(n);
#endif
          skip
        :: else -> skip
        fi
      :: else -> skip
      fi }
    if
    :: n != NONE -> atomic {
        !present[n] || !believes[owner[n]] ->  /* the holder's lease has ended */
        if
        :: present[n] -> server_delete(n)
        :: else -> skip
        fi;
        n = NONE }
    :: else -> skip
    fi
  :: break
  od
}

init {
  byte p, n;
  atomic {
    p = 0;
    do
    :: p < NP -> watched[p] = NONE; p++
    :: else -> break
    od;
    p = 0;
    do
    :: p < NP -> run Participant(p); p++
    :: else -> break
    od;
    run Expirer();
    if
    :: MAX_OPDEL > 0 -> run Operator()
    :: else -> skip
    fi;
    if
    :: MAX_REVOKE > 0 -> run Revoker()
    :: else -> skip
    fi
  }
  (_nr_pr == 1);  /* everyone is done */
  n = 0;
  do
  :: n < MAXN -> assert(!present[n]); n++  /* no node left */
  :: else -> break
  od;
  p = 0;
  do
  :: p < NP -> assert(watched[p] == NONE && !dir_watch[p] && !own_watch[p]); p++  /* no watch left */
  :: else -> break
  od
}
