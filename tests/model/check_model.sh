#!/usr/bin/env bash
# Model-checks the queue protocol (queue.pml) with spin: the real protocol, in
# every configuration below, must pass an exhaustive search; each known-wrong
# variant must be rejected, by the property it breaks (a model that accepts
# everything proves nothing). A failure prints spin's counterexample trail.
#
#   tests/model/check_model.sh WORK_DIR               the checks (ctest: model_check)
#   tests/model/check_model.sh WORK_DIR table FILE    writes the decision table
#                                                     (ctest: model_decision_table)
#
# The search is exhaustive (no bit-state hashing): -DSAFETY, partial-order
# reduction, scratch variables hidden from the state.
set -euo pipefail

model_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
work="$1"
mkdir -p "$work"
cd "$work"
cp "$model_dir"/*.pml .

if [ "${2:-}" = table ]; then
  spin -T decision_table.pml | grep '^TABLE' > "$3"
  echo "model: decision table: $(wc -l < "$3") rows in $3"
  exit 0
fi

failures=0

# search MODEL NAME GCC_FLAGS PAN_FLAGS SPIN_FLAGS...: builds MODEL's verifier
# with SPIN_FLAGS and runs it; sets $out (its report) and $took. Fails (with
# spin's complaint in $out) if the model does not build.
search() {
  local model="$1" name="$2" gcc_flags="$3" pan_flags="$4"
  shift 4
  rm -f "$model.trail"
  if ! spin -a "$@" "$model" > "spin-$name.log" 2>&1; then
    out="$(cat "spin-$name.log")"
    return 1
  fi
  # shellcheck disable=SC2086  # the flags are words
  gcc -O1 $gcc_flags -w -o "pan-$name" pan.c
  local start ms
  start=$(date +%s%N)
  # shellcheck disable=SC2086
  out="$(./"pan-$name" $pan_flags -m1000000 2>&1)" || true
  ms=$((($(date +%s%N) - start) / 1000000))
  took="$((ms / 1000)).$((ms % 1000 / 100)) s"
}

# verify NAME EXPECT SPIN_FLAGS...: EXPECT is "pass", or a piece of the text of
# the assertion spin must report violated (or "invalid end state"). The
# model is queue.pml unless $model names another.
verify() {
  local name="$1" expect="$2" model="${model:-queue.pml}"
  shift 2
  search "$model" "$name" -DSAFETY "" "$@" || { echo "$out"; failures=$((failures + 1)); return; }
  local states errors verdict
  states=$(grep -o '[0-9]* states, stored' <<<"$out" | grep -o '^[0-9]*' || echo '?')
  errors=$(grep -o 'errors: [0-9]*' <<<"$out" | grep -o '[0-9]*$' || echo '?')
  if [ "$expect" = pass ]; then
    if [ "$errors" = 0 ] && ! grep -q 'Search not completed' <<<"$out"; then
      verdict="holds ($states states, $took)"
    else
      verdict="FAILED: $(grep -m1 -E 'violated|invalid end state|error' <<<"$out")"
      failures=$((failures + 1))
      echo "$out"
      [ -f "$model.trail" ] && spin -t -p "$@" "$model" | tail -80
    fi
  else
    local found
    found="$(grep -m1 -E 'assertion violated|invalid end state' <<<"$out" || true)"
    if [ "$errors" != 0 ] && grep -qF -- "$expect" <<<"$found"; then
      verdict="rejected, as it must be: ${found#pan:1: }"
    else
      verdict="NOT REJECTED as expected (wanted \"$expect\", got \"${found:-no error}\")"
      failures=$((failures + 1))
      echo "$out"
    fi
  fi
  printf 'model: %-44s %s\n' "$name" "$verdict"
}

# verify_liveness NAME SPIN_FLAGS...: liveness.pml's LTL property must hold
# under weak fairness (acceptance cycles, -a -f).
verify_liveness() {
  local name="$1"
  shift
  search liveness.pml "$name" "" "-a -f" "$@" || { echo "$out"; failures=$((failures + 1)); return; }
  if grep -q 'errors: 0' <<<"$out" && ! grep -q 'Search not completed' <<<"$out"; then
    printf 'model: %-44s %s\n' "$name" "holds under weak fairness ($took)"
  else
    printf 'model: %-44s FAILED\n' "$name"
    echo "$out"
    failures=$((failures + 1))
  fi
}

# WRITERS is a bit mask over the participants; all writers is the election
# (candidates follow the writer rule, the leader holds). The protocol as the
# library runs it by default: the shorter handoff (SKIP_HANDOFF: a woken
# waiter whose last listing showed the watched node as its only blocker
# holds without listing again) on the event itself (EVENT_HANDOFF: its
# own-node watch, set with the first blocker watch, stands for the
# confirmation), and a writer that waited marks its release (RELEASE_MARK:
# its waiter then holds as if it had been its only blocker). With the own-node watch off, or after a reconnect, the
# library confirms with one exists instead (SKIP_HANDOFF alone). An operator
# deleting a waiter's node (MAX_OPDEL) is checked without lost replies,
# which only add a lookup step and would double the search. And the
# textbook handoff (always list again) once, for comparison.
lib="-DSKIP_HANDOFF -DEVENT_HANDOFF -DRELEASE_MARK"  # the library's defaults
verify "locks W,R,R"                 pass $lib -DWRITERS=1
verify "locks W,W,R"                 pass $lib -DWRITERS=3
verify "locks R,R,R"                 pass $lib -DWRITERS=0
verify "election (3 candidates)"     pass $lib -DWRITERS=7
# The election itself releases without marks (its candidates change their
# data: leader data, the take-over mark), so a change only makes the
# watcher list again.
verify "election, unmarked releases"  pass -DSKIP_HANDOFF -DEVENT_HANDOFF -DWRITERS=7
verify "locks W,R,W,R (no expiry)"   pass $lib -DNP=4 -DWRITERS=5 -DMAX_EXPIRE=0
verify "locks W,R,R,W (no faults)"   pass $lib -DNP=4 -DWRITERS=9 -DMAX_EXPIRE=0 -DMAX_LOST=0 -DMAX_CANCEL=0
verify "operator deletes a waiter: W,R,R" pass $lib -DWRITERS=1 -DMAX_OPDEL=1 -DMAX_LOST=0
verify "operator deletes a waiter: W,W,R" pass $lib -DWRITERS=3 -DMAX_OPDEL=1 -DMAX_LOST=0
verify "confirmed handoff: W,R,R + operator" pass -DSKIP_HANDOFF -DRELEASE_MARK -DWRITERS=1 -DMAX_OPDEL=1 -DMAX_LOST=0
verify "textbook handoff: locks W,R,R" pass -DWRITERS=1
verify "directory fallback: locks W,R,R" pass $lib -DDIR_FALLBACK -DWRITERS=1
verify "directory fallback: locks W,W,R" pass $lib -DDIR_FALLBACK -DWRITERS=3
# Forced revocation (zkr::Revoke): the holder hears the mark and lets go, or
# (cut off) its lease ends its belief before the requester deletes its node.
verify "forced revocation: W,W,R"    pass $lib -DWRITERS=3 -DMAX_REVOKE=1 -DMAX_LOST=0
verify "forced revocation: W,R,R"    pass $lib -DWRITERS=1 -DMAX_REVOKE=1 -DMAX_LOST=0
# A mixed queue (issue 34, dialects): Apache Curator's readers wait on the
# FIRST writer before them, ours on the last; in a dialect every woken
# waiter lists again before holding (a peer's node may have come meanwhile)
# and releases are unmarked: the textbook handoff. Participant 2 (W,W,R) /
# 3 (W,R,W,R) is Curator's.
verify "mixed: Curator reader, W,W,R"        pass -DWRITERS=3 -DCURATOR_READERS=4
verify "mixed: W,R,W,R, Curator's last (no expiry)" pass -DNP=4 -DWRITERS=5 -DCURATOR_READERS=8 -DMAX_EXPIRE=0
# Liveness without lost replies (a lost reply only adds a lookup step): with
# them the search takes ~50 s, over the label's budget.
verify_liveness "everyone finishes: locks W,R,R" $lib -DWRITERS=1 -DMAX_LOST=0

# Known-wrong variants, each rejected by the property it breaks.
verify "broken: herd (child watch)"            "nonhead"        -DHERD -DWRITERS=1
verify "broken: reader watches predecessor"    "t_r!=0"         -DREADER_WATCHES_PREDECESSOR -DWRITERS=1
verify "broken: writer holds without re-list"  "believes_write" -DWRITER_NO_RELIST -DWRITERS=7
verify "broken: create again without lookup"   "present[n]"     -DCREATE_WITHOUT_LOOKUP -DWRITERS=1
verify "broken: lease measured from now"       "believes_write" -DLEASE_FROM_NOW -DWRITERS=1
verify "broken: skip though others blocked"    "believes_write" -DSKIP_HANDOFF -DSKIP_WITH_OTHER_BLOCKERS -DWRITERS=1
verify "broken: listing before the create"     "believes_write" -DLIST_BEFORE_CREATE -DWRITERS=7
verify "broken: event hold ignores own watch"   "believes_write" -DSKIP_HANDOFF -DEVENT_HANDOFF -DEVENT_HANDOFF_IGNORES_OWN_WATCH -DWRITERS=1 -DMAX_OPDEL=1 -DMAX_LOST=0
verify "broken: revocation deletes at once"    "believes_write" $lib -DREVOKE_AT_ONCE -DWRITERS=3 -DMAX_REVOKE=1 -DMAX_LOST=0
verify "broken: fallback holds on a child event" "fence_read" $lib -DDIR_FALLBACK -DDIR_FALLBACK_HOLDS_ON_EVENT -DWRITERS=1
verify "broken: Curator reader holds on the event" "believes_write" -DSKIP_HANDOFF -DSKIP_WITH_OTHER_BLOCKERS -DWRITERS=3 -DCURATOR_READERS=4
verify "broken: readers' releases marked"      "believes_write" $lib -DMARK_FROM_READERS -DNP=4 -DWRITERS=9 -DMAX_EXPIRE=0 -DMAX_LOST=0 -DMAX_CANCEL=0

# The semaphore (semaphore.pml): the library's rule — the first waiter
# watches every node before it, a later waiter its predecessor, and an
# acquirer that may have been watched as a waiter marks its node — with a
# give-up and an expiry, N leases of one each and of 2,1,2,1 weights.
sem() { model=semaphore.pml verify "$@"; }
sem "semaphore: 4 participants, 2 leases"        pass -DLEASES=2
sem "semaphore: 5 participants, 2 leases"        pass -DNP=5 -DLEASES=2
sem "semaphore: 5 asking 2,1,2,1,2 of 3 leases"  pass -DNP=5 -DLEASES=3 -DWEIGHTED
sem "semaphore: 1 lease (the lock)"              pass -DLEASES=1
sem "broken: watch the node N places ahead"      "t_quiet" -DN_AHEAD -DNO_MARK
sem "broken: semaphore acquirer never marks"     "t_quiet" -DNO_MARK
sem "broken: marks only after waiting"           "t_quiet" -DMARK_ONLY_IF_WAITED
sem "broken: first waiter watches one holder"    "t_quiet" -DFIRST_WATCHES_ONE
sem "broken: a mark seen at arming ignored"      "t_quiet" -DIGNORE_ARMED_MARK
sem "broken: any-one judged by the largest"      "held<=3" -DWEIGHTED -DLEASES=3 -DANY_LARGEST
sem "broken: semaphore herd"                     "t_wakes" -DHERD

# The multi-lock's take (multi_lock.pml): parts requested together; once
# one waits, every later part is given back (one in flight may still land,
# and even be granted, before its abandon deletes it). Exclusion and no
# deadlock, for overlapping sets and a single lock beside them; sets are bit
# masks over three locks in canonical order.
ml() { model=multi_lock.pml verify "$@"; }
ml "multi-lock: {0,1,2} {0,2} {1}"               pass
ml "multi-lock: {0,1,2} {0,2} {1}, two rounds"   pass -DROUNDS=2
ml "multi-lock: {0,1} {1,2} {0,2}"               pass -DWANTS0=3 -DWANTS1=6 -DWANTS2=5
ml "multi-lock: {0,1,2} three times"             pass -DWANTS0=7 -DWANTS1=7 -DWANTS2=7
ml "broken: later parts kept while one waits"    "invalid end state" -DWANTS0=3 -DWANTS1=6 -DWANTS2=5 -DKEEP_LATER

if [ "$failures" -ne 0 ]; then
  echo "model: $failures check(s) failed" >&2
  exit 1
fi
echo "model: all checks passed"
