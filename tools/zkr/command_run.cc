#include "tools/zkr/command_run.h"

#include <signal.h>
#include <unistd.h>

#include <csignal>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <thread>

#include "tools/zkr/common.h"
#include "tools/zkr/stderr_writer.h"

namespace zkr {
namespace cli {

std::vector<std::string> HoldCommand() { return {"/proc/self/exe", kHoldUntilSignal}; }

void HoldUntilSignal() {
  // A shell starts background jobs with SIGINT ignored: Child::Start set
  // the signals that end a hold to their defaults before the exec (SIGHUP
  // ignored stays so: nohup).
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  for (;;) pause();
}

bool PrintHeld(absl::string_view what,
               const std::vector<std::pair<std::string, std::string>>& env) {
  for (const auto& [key, value] : env) std::printf("%s=%s\n", key.c_str(), value.c_str());
  return FinishOutput(what, kExitOk) == kExitOk;
}

absl::Duration CommandRun::LeaseLength(const Session& session) {
  const absl::Duration timeout = session.negotiated_timeout();
  return timeout - session.options().lease_margin.value_or(timeout / 15);
}

void CommandRun::SetLease(Lease lease) {
  const absl::Duration length = lease.length;
  {
    absl::MutexLock lock(&lease_mu_);
    lease_ = std::move(lease);
  }
  absl::MutexLock lock(&mu_);
  grace_ = std::min(grace_, length / 3);
  refresh_ = std::max(grace_, std::min(kGuardianMargin, length / 3));
}

absl::Time CommandRun::LeaseEnd() const {
  absl::MutexLock lock(&lease_mu_);
  return lease_.valid_until ? lease_.valid_until() : absl::InfiniteFuture();
}

absl::Duration CommandRun::grace() const {
  absl::MutexLock lock(&mu_);
  return grace_;
}

void CommandRun::Forward(int signal) {
  absl::MutexLock lock(&mu_);
  if (running_ != nullptr) {
    running_->Signal(signal);
  } else {
    pending_signal_ = signal;
  }
}

void CommandRun::Suspended() {
  absl::MutexLock lock(&mu_);
  suspended_ = true;
  Changed();
}

void CommandRun::Held() {
  absl::MutexLock lock(&mu_);
  suspended_ = false;
}

void CommandRun::Lost() {
  absl::MutexLock lock(&mu_);
  lost_ = true;
  // Lost means another participant may hold now (a node deleted by hand is
  // handed on at once; an expired session's lease is over): CMD's group is
  // killed at once, whatever --grace says. SIGTERM goes first, by a moment.
  const absl::Time now = absl::Now();
  if (now < hold_dead_by_) {
    hold_dead_by_ = now;
    why_ = "the hold is lost";
  }
  Changed();
}

void CommandRun::RevokeRequested(absl::Duration requester_grace) {
  if (requester_grace == absl::InfiniteDuration()) return;  // no deadline
  // The requester counts from its request's creation, which we hear a
  // little later: a quarter of its grace (at most 1 s) covers that way.
  const absl::Time deadline =
      absl::Now() + requester_grace - std::min(requester_grace / 4, absl::Seconds(1));
  absl::MutexLock lock(&mu_);
  if (deadline < hold_dead_by_) {
    hold_dead_by_ = deadline;
    why_ = "the hold is revoked";
  }
  Changed();
}

void CommandRun::StepDown() {
  absl::MutexLock lock(&mu_);
  stepping_down_ = true;
  step_down_dead_by_ = std::min(step_down_dead_by_, absl::Now() + grace_);
  Changed();
}

void CommandRun::JobControl(int signal) {
  const absl::Time lease_end = LeaseEnd();  // not under mu_: it takes the hold's lock
  absl::MutexLock lock(&mu_);
  if (signal == SIGTSTP) {
    if (running_ == nullptr || done_) return;
    running_->Signal(SIGSTOP);  // CMD is in its own group: the terminal's stop misses it
    paused_ = true;
    return;
  }
  if (signal != SIGCONT || !paused_) return;
  paused_ = false;
  if (terminate_on_loss_ && (lost_ || suspended_ || absl::Now() >= lease_end)) {
    // Another holder may have run meanwhile: never continue CMD.
    terminated_ = true;
    hold_dead_by_ = absl::InfinitePast();
    why_ = "continued after the hold's lease ran out";
    if (running_ != nullptr) running_->Signal(SIGKILL);  // also kills a stopped group
    Changed();
    return;
  }
  if (running_ != nullptr) running_->Signal(SIGCONT);
}

bool CommandRun::lost() const {
  absl::MutexLock lock(&mu_);
  return lost_ || terminated_;
}

bool CommandRun::stepped_down() const {
  absl::MutexLock lock(&mu_);
  return stepping_down_;
}

void CommandRun::Watch(Child& child) {
  for (;;) {
    absl::Time lease_end = terminate_on_loss_ ? LeaseEnd() : absl::InfiniteFuture();
    absl::MutexLock lock(&mu_);
    if (done_) return;
    // A lost hold reads InfinitePast: its lease ended where it was last seen.
    if (lease_end == absl::InfinitePast()) {
      lease_end = last_lease_end_;
    } else {
      last_lease_end_ = lease_end;
    }
    changed_ = false;
    const absl::Time now = absl::Now();
    const absl::Time hold_end = terminate_on_loss_ ? std::min(lease_end, hold_dead_by_)
                                                   : absl::InfiniteFuture();
    const bool for_hold = (terminate_on_loss_ && suspended_) || now >= hold_end - grace_;
    const bool for_step_down = stepping_down_;
    const absl::Time dead_by = std::min(hold_end, step_down_dead_by_);
    // The guardian kills CMD at dead_by even if zkr cannot (stopped): told
    // each time it moves (the lease re-read below, a margin before its end).
    if (dead_by != told_dead_by_) {
      child.KillBy(dead_by);
      told_dead_by_ = dead_by;
    }
    if (!term_sent_ && (for_hold || for_step_down)) {
      term_sent_ = true;
      terminated_ = terminated_ || for_hold;
      const std::string why = for_hold ? (suspended_ ? "connection lost"
                                          : hold_end == lease_end ? "the hold's lease runs out"
                                                                  : why_)
                                       : "stepping down";
      // The signal first; the notice is queued (stderr_writer.h): a stderr
      // nobody reads must not keep CMD running past the lease.
      child.Signal(SIGTERM);
      if (dead_by > now) {
        PrintStderr("zkr %s: %s: SIGTERM to CMD (SIGKILL in %s)\n", what_.c_str(), why.c_str(),
                    absl::FormatDuration(absl::Ceil(dead_by - now, absl::Milliseconds(1))));
      }
    }
    if (!kill_sent_ && now >= dead_by) {
      kill_sent_ = true;
      terminated_ = terminated_ || now >= hold_end;
      child.Signal(SIGKILL);
      PrintStderr("zkr %s: %s: SIGKILL to CMD\n", what_.c_str(),
                  now >= hold_end ? (hold_end == lease_end ? "the hold's lease ran out"
                                                           : why_.c_str())
                                  : "stepping down");
    }
    // Re-read at the next moment something is due (the lease may have moved
    // on meanwhile), or when told of a change.
    const absl::Time refresh = hold_end - refresh_;
    const absl::Time wake = !term_sent_  ? (now < refresh ? refresh : hold_end - grace_)
                            : !kill_sent_ ? dead_by
                                          : absl::InfiniteFuture();
    mu_.AwaitWithDeadline(absl::Condition(&changed_), wake);
  }
}

int CommandRun::Run(absl::string_view what, const std::vector<std::string>& argv,
                    const std::vector<std::pair<std::string, std::string>>& env) {
  // The hold is released after Run(): from then on its lease is not read
  // (JobControl, on the signal thread).
  struct ForgetLease {
    CommandRun* run;
    ~ForgetLease() {
      absl::MutexLock lock(&run->lease_mu_);
      run->lease_ = {};
    }
  } forget_lease{this};
  const absl::Time lease_end = LeaseEnd();  // not under mu_: it takes the hold's lock
  absl::StatusOr<std::unique_ptr<Child>> child;
  {
    // The check and the start under one hold of mu_: a Ctrl-Z (JobControl)
    // that comes meanwhile waits, then stops the group before zkr stops
    // itself, and a stop before the check is seen by it (the lease was read
    // before): CMD never runs unwatched while zkr is stopped, nor starts on
    // a hold gone meanwhile.
    absl::MutexLock lock(&mu_);
    what_ = std::string(what);
    last_lease_end_ = lease_end;
    if (stepping_down_) return kExitLost;
    // A hold that is no longer good does not get a CMD; nor one whose lease
    // has no more than the grace left (the watchdog would stop it at once).
    if (terminate_on_loss_ && (lost_ || suspended_ || hold_dead_by_ <= absl::Now() ||
                               absl::Now() >= lease_end - grace_)) {
      terminated_ = true;
      PrintStderr("zkr %s: the hold was lost before CMD could start\n", what_.c_str());
      return kExitLost;
    }
    // zkr's own hold process must hear the stop signals from its first
    // instruction on, whatever zkr was given.
    child = Child::Start(argv, env, argv.size() == 2 && argv[1] == kHoldUntilSignal);
    if (child.ok()) {
      running_ = child->get();
      if (pending_signal_ != 0) running_->Signal(pending_signal_);
    }
  }
  if (!child.ok()) return Child::ReportNotStarted(what, child.status());
  std::thread watchdog([this, &child] { Watch(**child); });
  const int code = (*child)->Wait();
  {
    absl::MutexLock lock(&mu_);
    // CMD ended at or past the deadline its guardian was given (the lease's
    // end): the hold ran out while it ran — also when zkr was stopped then
    // and the guardian's SIGKILL, not the watchdog, ended it. Exit 4, not
    // CMD's 137 (review51's paused-zkr test saw both, by which of zkr's
    // threads woke first after SIGCONT).
    if (absl::Now() >= told_dead_by_) terminated_ = true;
    done_ = true;
    running_ = nullptr;
    Changed();
  }
  watchdog.join();
  return code;
}

}  // namespace cli
}  // namespace zkr
