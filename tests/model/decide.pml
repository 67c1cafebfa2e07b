/* The queue decision (recipes/queue_decision.h), written once for the model
   (queue.pml) and for the table its C++ twin is compared with
   (decision_table.pml, tests/unit/model_decision_test.cc).

   The directory is present[] / is_write[], indexed by sequence number (the
   server's creation order; the library orders by serial-number arithmetic,
   which the unit tests cover apart). For my node `me`:
     my node absent               -> LOST
     reader, no W before me       -> ACQUIRED
     reader, a W before me        -> WAIT on the last W before me
     writer, nothing before me    -> ACQUIRED
     writer, something before me  -> WAIT on my direct predecessor
   `i` is the caller's scratch byte.

   CURATOR_READERS (queue.pml only: a bit mask over the participants, by
   owner[]): those readers wait on the FIRST W before them, as Apache
   Curator's InterProcessReadWriteLock readers do (issue 34: a mixed queue);
   they hold on the same condition, no W before them.

   Broken variant (tests/model/check_model.sh runs it, spin must reject it):
     READER_WATCHES_PREDECESSOR  a reader with a W before it waits on its
                                 direct predecessor instead */
#define ACQUIRED 0
#define WAIT 1
#define LOST 2
#define NONE 255

inline decide(me, write, result, blocker, i) {
  blocker = NONE;
  if
  :: !present[me] -> result = LOST
  :: else ->
    i = 0;
    do
    :: i < me ->
      if
      :: present[i] && (write || is_write[i]) ->
#ifdef CURATOR_READERS
        if
        :: !write && blocker != NONE && ((CURATOR_READERS >> owner[me]) & 1) ->
          skip  /* keeps the first W */
        :: else -> blocker = i
        fi
#else
        blocker = i
#endif
      :: else -> skip
      fi;
      i++
    :: else -> break
    od;
#ifdef READER_WATCHES_PREDECESSOR
    if
    :: !write && blocker != NONE ->
      i = 0;
      do
      :: i < me -> if :: present[i] -> blocker = i :: else -> skip fi; i++
      :: else -> break
      od
    :: else -> skip
    fi;
#endif
    if
    :: blocker != NONE -> result = WAIT
    :: else -> result = ACQUIRED
    fi
  fi
}
