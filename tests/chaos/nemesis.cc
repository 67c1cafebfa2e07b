// The chaos nemesis; see nemesis.h.
#include "tests/chaos/nemesis.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iterator>

#include "absl/status/statusor.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "src/macros.h"

namespace zkr {
namespace chaos {

void LiveView::Apply(const Entry& e) {
  if (e.kind == "ENTER") {
    holding[e.worker] = {e.t, e.write};
    last_enter[e.worker] = e.t;
  } else if (e.kind == "EXIT") {
    holding.erase(e.worker);
  } else if (e.kind == "LEADER") {
    leading[e.worker] = e.t;
  } else if (e.kind == "UNLEAD") {
    leading.erase(e.worker);
  } else if (e.kind == "START") {
    holding.erase(e.worker);
    leading.erase(e.worker);
  }
}

// Every fault kind, or (to chase one failure) only those named in
// $ZKR_CHAOS_FAULTS, comma-separated ("pause_worker,expire_session").
std::vector<Fault> Nemesis::FaultsToRun() {
  std::vector<Fault> kinds;
  const char* only = std::getenv("ZKR_CHAOS_FAULTS");
  for (Fault fault : kAllFaults) {
    if (only == nullptr || *only == '\0' ||
        absl::StrContains(absl::StrCat(",", only, ","), absl::StrCat(",", FaultName(fault), ","))) {
      kinds.push_back(fault);
    }
  }
  if (kinds.empty()) kinds.assign(std::begin(kAllFaults), std::end(kAllFaults));
  return kinds;
}

bool Nemesis::Run(absl::Duration duration, std::string* error) {
  const absl::Time end = absl::Now() + duration;
  std::vector<Fault> round;
  for (;;) {
    if (round.empty()) {  // every kind once per round, in a random order
      round = FaultsToRun();
      std::shuffle(round.begin(), round.end(), rng_);
    }
    const Fault fault = round.back();
    round.pop_back();
    absl::Status status = Inject(fault);
    if (!status.ok()) {
      *error = absl::StrCat(FaultName(fault), ": ", status.ToString());
      return false;
    }
    ++counts_[FaultName(fault)];
    healed_ = absl::Now();
    // After the last fault the test itself measures the recovery (d).
    if (healed_ >= end) return true;
    AwaitRecovery(absl::ToUnixNanos(healed_));
    Calm(Uniform(300, 1000));
  }
}

void Nemesis::AwaitRecovery(int64_t healed) {
  const absl::Time deadline =
      absl::FromUnixNanos(healed) + 2 * kSessionTimeout + kAllowance;
  for (;;) {
    Refresh();
    int recovered = 0;
    for (const auto& [worker, t] : view_.last_enter)
      recovered += t > healed ? 1 : 0;
    if (recovered == kWorkers || absl::Now() >= deadline) return;
    absl::SleepFor(absl::Milliseconds(20));
  }
}

void Nemesis::Calm(int ms) {
  const absl::Time until = absl::Now() + absl::Milliseconds(ms);
  do {
    Refresh();
    absl::SleepFor(absl::Milliseconds(20));
  } while (absl::Now() < until);
}

void Nemesis::Refresh() {
  for (const Entry& e : reader_.Poll()) view_.Apply(e);
  for (const auto& [worker, how] : workers_.ReapUnexpected()) {
    unexpected_.push_back(
        absl::StrCat("worker ", worker, " ", how, " by itself"));
    view_.holding.erase(worker);
    workers_.Start(worker);
  }
}

int Nemesis::Uniform(int lo, int hi) {
  return std::uniform_int_distribution<int>(lo, hi)(rng_);
}

void Nemesis::Note(const char* kind, const char* phase, int target,
                   const std::string& detail) {
  AppendLine(ledger_,
             absl::StrCat("NEMESIS ", NowNs(), " ", kind, " ", phase, " ",
                          target, detail.empty() ? "" : " ", detail));
}

int Nemesis::AwaitWorker(
    int fallback, const std::function<std::optional<int>(int64_t)>& find) {
  const absl::Time until = absl::Now() + absl::Seconds(2);
  while (absl::Now() < until) {
    Refresh();
    if (std::optional<int> worker = find(NowNs())) return *worker;
    absl::SleepFor(absl::Microseconds(500));
  }
  return fallback;
}

int Nemesis::CurrentHolder(int fallback) {
  return AwaitWorker(fallback, [this](int64_t now) -> std::optional<int> {
    for (const auto& [worker, enter] : view_.holding) {
      if (now - enter.first < 4'000'000 && workers_.running(worker))
        return worker;
    }
    return std::nullopt;
  });
}

int Nemesis::CurrentLeader(int fallback) {
  return AwaitWorker(fallback, [this](int64_t now) -> std::optional<int> {
    for (const auto& [worker, since] : view_.leading) {
      if (now - since < 30'000'000 && workers_.running(worker)) return worker;
    }
    return std::nullopt;
  });
}

std::optional<Nemesis::SessionInfo> Nemesis::ReadSession(int worker) {
  std::ifstream in(absl::StrCat(ledger_, ".session.", worker));
  std::string id_hex, password_hex, server;
  if (!(in >> id_hex >> password_hex)) return std::nullopt;
  in >> server;
  SessionInfo info;
  uint64_t id = 0;
  if (!absl::SimpleHexAtoi(id_hex, &id)) return std::nullopt;
  info.id = static_cast<int64_t>(id);
  info.password = absl::HexStringToBytes(password_hex);
  std::vector<std::string> host_port = absl::StrSplit(server, ':');
  int port = 0;
  if (host_port.size() == 2 && absl::SimpleAtoi(host_port[1], &port)) {
    // Workers reach the ensemble through their proxies.
    std::optional<int> member = network_.MemberOfProxyPort(port);
    info.member = member.has_value() ? *member : ensemble_.MemberByClientPort(port);
  }
  return info;
}

void Nemesis::BeyondSessionTimeout(const char* kind, int w, const std::function<void()>& isolate,
                                   const std::function<void()>& heal) {
  isolate();
  const bool holding = view_.holding.count(w) > 0;
  const bool leading = view_.leading.count(w) > 0;
  Note(kind, "begin", w,
       absl::StrCat(holding ? "holder" : "", holding && leading ? "," : "",
                    leading ? "leader" : ""));
  absl::SleepFor(kSessionTimeout + absl::Milliseconds(Uniform(500, 2000)));
  heal();
  Note(kind, "end", w);
}

absl::Status Nemesis::Inject(Fault fault) {
  const char* kind = FaultName(fault);
  switch (fault) {
    case Fault::kKillWorker: {
      // Half the time a holder: its node then blocks the queue until its
      // session expires.
      int w = AnyWorker();
      if (Uniform(0, 1) == 0) w = CurrentHolder(w);
      const bool holding = view_.holding.count(w) > 0;
      workers_.Kill(w);
      Note(kind, "begin", w, holding ? "holder" : "");
      view_.holding.erase(w);
      Calm(Uniform(0, 1000));
      if (!workers_.Start(w))
        return absl::InternalError(absl::StrCat("cannot restart worker ", w));
      Note(kind, "end", w);
      return absl::OkStatus();
    }
    case Fault::kPauseWorker: {
      // The paused-holder case: prefer a worker inside its critical
      // section (always the first time), else the leader (always the
      // second time), else anyone.
      int w = AnyWorker();
      const int pauses = counts_["pause_worker"];
      const int choice = pauses == 0 ? 0 : pauses == 1 ? 2 : Uniform(0, 3);
      if (choice <= 1) {
        w = CurrentHolder(w);
      } else if (choice == 2) {
        w = CurrentLeader(w);
      }
      BeyondSessionTimeout(
          kind, w, [&] { workers_.Pause(w); }, [&] { workers_.Resume(w); });
      return absl::OkStatus();
    }
    case Fault::kExpireSession: {
      int w = AnyWorker();
      if (Uniform(0, 1) == 0) w = CurrentHolder(w);
      std::optional<SessionInfo> session = ReadSession(w);
      if (!session.has_value()) return absl::OkStatus();  // not connected yet
      Note(kind, "begin", w, absl::StrCat(absl::Hex(session->id)));
      absl::Status expired =
          testing::ExpireSession(ensemble_.connect_string(), session->id,
                                 session->password, absl::Seconds(30));
      Note(kind, "end", w, expired.ok() ? "expired" : "failed");
      if (!expired.ok()) ++expire_failures_;
      return absl::OkStatus();
    }
    case Fault::kKillMember: {
      // The member some worker is connected to.
      int member = Uniform(0, ensemble_.size() - 1);
      if (std::optional<SessionInfo> s = ReadSession(AnyWorker());
          s && s->member >= 0) {
        member = s->member;
      }
      Note(kind, "begin", member);
      ZKR_RETURN_IF_ERROR(ensemble_.Kill(member));
      Calm(Uniform(500, 3000));
      ZKR_RETURN_IF_ERROR(ensemble_.Restart(member));
      ZKR_RETURN_IF_ERROR(Heal());
      Note(kind, "end", member);
      return absl::OkStatus();
    }
    case Fault::kPauseLeader: {
      absl::StatusOr<int> leader = ensemble_.Leader();
      if (!leader.ok()) {
        ZKR_RETURN_IF_ERROR(Heal());
        leader = ensemble_.Leader();
        if (!leader.ok()) return leader.status();
      }
      Note(kind, "begin", *leader);
      ZKR_RETURN_IF_ERROR(ensemble_.Pause(*leader));
      Calm(Uniform(2000, 7000));
      ZKR_RETURN_IF_ERROR(ensemble_.Resume(*leader));
      ZKR_RETURN_IF_ERROR(Heal());
      Note(kind, "end", *leader);
      return absl::OkStatus();
    }
    case Fault::kPartitionWorker: {
      // The cut-off holder (or leader) whose process runs on: its lease must
      // end its belief before the server expires its session.
      int w = AnyWorker();
      const int choice = Uniform(0, 2);
      if (choice == 0) w = CurrentHolder(w);
      if (choice == 1) w = CurrentLeader(w);
      BeyondSessionTimeout(
          kind, w, [&] { network_.SetMode(w, testing::TcpProxy::Mode::kBlackhole); },
          [&] { network_.SetMode(w, testing::TcpProxy::Mode::kPass); });
      return absl::OkStatus();
    }
    case Fault::kSlowWorker: {
      // A slow network: every chunk late, out of step with the others.
      const int w = CurrentHolder(AnyWorker());
      network_.SetDelay(w, absl::Milliseconds(Uniform(50, 300)),
                        absl::Milliseconds(Uniform(0, 200)));
      Note(kind, "begin", w);
      Calm(Uniform(1000, 3000));
      network_.SetDelay(w, absl::ZeroDuration(), absl::ZeroDuration());
      Note(kind, "end", w);
      return absl::OkStatus();
    }
    case Fault::kOneWayWorker: {
      // Requests get through but no answer comes back, or the reverse: a
      // half-dead link. Beyond the timeout, like a partition.
      int w = AnyWorker();
      if (Uniform(0, 1) == 0) w = CurrentHolder(w);
      const auto mode = Uniform(0, 1) == 0 ? testing::TcpProxy::Mode::kDropClientToServer
                                           : testing::TcpProxy::Mode::kDropServerToClient;
      BeyondSessionTimeout(
          kind, w, [&] { network_.SetMode(w, mode); },
          [&] { network_.SetMode(w, testing::TcpProxy::Mode::kPass); });
      return absl::OkStatus();
    }
    case Fault::kResetWorker: {
      const int w = CurrentHolder(AnyWorker());
      Note(kind, "begin", w);
      network_.ResetConnections(w);
      Calm(Uniform(200, 1000));
      Note(kind, "end", w);
      return absl::OkStatus();
    }
    case Fault::kClockStepWorker: {
      // The clock nemesis, around a holder or the leader: its wall clock
      // stepped an hour forward, then two back (each step is a STEP line:
      // the lease left must not change), then it is cut off beyond its
      // session timeout with its clock an hour behind: it must still be told
      // before anyone else begins. Its clock is set right when it is healed.
      int w = AnyWorker();
      w = Uniform(0, 1) == 0 ? CurrentHolder(w) : CurrentLeader(w);
      BeyondSessionTimeout(
          kind, w,
          [&] {
            workers_.StepClock(w, /*forward=*/true);
            Calm(100);
            workers_.StepClock(w, /*forward=*/false);
            workers_.StepClock(w, /*forward=*/false);
            Calm(100);
            network_.SetMode(w, testing::TcpProxy::Mode::kBlackhole);
          },
          [&] {
            network_.SetMode(w, testing::TcpProxy::Mode::kPass);
            workers_.StepClock(w, /*forward=*/true);
          });
      return absl::OkStatus();
    }
    case Fault::kLoseQuorum: {
      const int spared = Uniform(0, ensemble_.size() - 1);
      std::vector<int> down;
      for (int i = 0; i < ensemble_.size(); ++i) {
        if (i != spared) down.push_back(i);
      }
      Note(kind, "begin", spared);
      for (int m : down) ZKR_RETURN_IF_ERROR(ensemble_.Stop(m));
      Calm(Uniform(2000, 5000));
      for (int m : down) ZKR_RETURN_IF_ERROR(ensemble_.Restart(m));
      ZKR_RETURN_IF_ERROR(Heal());
      Note(kind, "end", spared);
      return absl::OkStatus();
    }
  }
  return absl::OkStatus();
}

}  // namespace chaos
}  // namespace zkr
