// Review 54, an independent adversarial review of the multi-lock's
// one-transaction acquisition and its refused-transaction fallback
// (recipes/joint_create.h, participant.cc joint_refused, queue_steps.cc
// kCreate): the refusal combined with MultiLock destruction, a held
// fallback create, lost fallback replies, session expiry, a silent server,
// tiny deadlines and Cancel() at random points over many rounds; an
// ephemeral "directory", nested parts, and a ledger of overlapping sets.
// Each test names the promise it attacks. Waits are on observable
// conditions; durations only bound hangs.
#include <atomic>
#include <chrono>
#include <future>
#include <iostream>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "src/testing/faulty_client.h"
#include "tests/support/proxied_test.h"
#include "tests/support/zk_test.h"
#include "zkrecipes/exclusive_lock.h"
#include "zkrecipes/lock_guard.h"
#include "zkrecipes/multi_lock.h"
#include "zkrecipes/session.h"
#include "zkrecipes/shared_lock.h"
#include "zkrecipes/status.h"

namespace zkr {
namespace {

using testing::Eventually;
using Call = testing::FaultRule::Call;
using Effect = testing::FaultRule::Effect;
using Pending = std::future<absl::StatusOr<MultiLockGuard>>;
constexpr int kRuntimeInconsistency = -2;  // ZRUNTIMEINCONSISTENCY

class Review54Test : public testing::ProxiedZkTest {
 protected:
  void MakeDirectories(const std::vector<std::string>& paths, const std::string& no_write = "") {
    for (const std::string& path : paths) {
      CreateOptions options;
      options.make_parents = true;
      if (path == no_write) options.acl = {{"world", "anyone", kPermAll & ~kPermWrite}};
      ASSERT_TRUE(admin().Create(path, "", CreateMode::kPersistent, options).ok()) << path;
    }
  }
  std::vector<std::string> Children(const std::string& path) {
    absl::StatusOr<std::vector<std::string>> children = admin().GetChildren(path);
    return children.ok() ? *children : std::vector<std::string>();
  }
  // Every child under each of `paths` that is a lock node (not a directory
  // of a nested part), as full paths.
  std::vector<std::string> Left(const std::vector<std::string>& paths) {
    std::vector<std::string> left;
    for (const std::string& path : paths) {
      for (const std::string& child : Children(path)) {
        const std::string full = path + "/" + child;
        bool nested = false;
        for (const std::string& other : paths) nested = nested || other == full;
        if (!nested) left.push_back(full);
      }
    }
    return left;
  }
  void RemoveAll(const std::string& root) {
    ASSERT_TRUE(testing::DeleteRecursively(admin(), root).ok()) << root;
  }
  // Each part's token is its node's czxid (admin Exists), one node per part.
  void ExpectTokensAreCzxids(const MultiLockGuard& guard) {
    for (const LockPart& part : guard.parts()) {
      const LockGuard* g = guard.part(part.path);
      ASSERT_NE(g, nullptr) << part.path;
      absl::StatusOr<std::optional<Stat>> stat = admin().Exists(g->node_path());
      ASSERT_TRUE(stat.ok() && stat->has_value()) << g->node_path();
      EXPECT_EQ(guard.fencing_token(part.path), (*stat)->czxid) << part.path;
    }
  }
};

// ---- The refusal racing a give-up ------------------------------------------

// Promise (multi_lock.h): "destroying the MultiLock ends one too (Cancelled:
// its state lives on until that Acquire has returned)"; "nothing is left
// held"; README: no node, no watch after any outcome. The refused
// transaction's reply (b without WRITE) is held while the MultiLock is
// destroyed from another thread.
TEST_F(Review54Test, DestructionDuringARefusedTransactionLeavesNothing) {
  const std::string root = Path("destroy-refused");
  const std::vector<std::string> paths = {root + "/a", root + "/b", root + "/c"};
  MakeDirectories(paths, /*no_write=*/paths[1]);
  auto faults = std::make_shared<testing::ClientFaults>();
  faults->Add({Call::kMulti, Effect::kHoldReply, root + "/", 1});
  auto session = NewFaultySession(faults);
  auto multi = MultiLock::Create(*session, {{paths[0], LockMode::kWrite},
                                            {paths[1], LockMode::kRead},
                                            {paths[2], LockMode::kWrite}});
  ASSERT_TRUE(multi.ok()) << multi.status();
  MultiLock* raw = multi->get();
  Pending pending = std::async(std::launch::async, [raw] { return raw->Acquire(absl::Seconds(30)); });
  ASSERT_TRUE(Eventually([&] { return faults->Calls(Call::kMulti, root + "/") == 1; }));
  std::thread destroyer([&] { multi->reset(); });
  // The destructor does not wait for the held reply (or it would hang 30 s).
  const int listings = faults->Calls(Call::kGetChildren, root + "/");
  Eventually([&] { return faults->Calls(Call::kGetChildren, root + "/") >= listings + 3; },
             absl::Seconds(3));
  faults->ReleaseHeld();
  destroyer.join();
  ASSERT_EQ(pending.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  absl::StatusOr<MultiLockGuard> held = pending.get();
  EXPECT_TRUE(absl::IsCancelled(held.status())) << held.status();
  ASSERT_TRUE(session->Exists(root).ok());
  EXPECT_TRUE(Eventually([&] { return Left(paths).empty(); }, absl::Seconds(5)))
      << "left after destruction: " << absl::StrJoin(Left(paths), ", ")
      << " (creates sent: " << faults->Calls(Call::kCreate, root + "/") << ")";
  EXPECT_TRUE(testing::WatchedPaths(*session, root).empty())
      << absl::StrJoin(testing::WatchedPaths(*session, root), ", ");
  session->Close();
  RemoveAll(root);
}

// Promise: "Where the transaction is refused ... each part is then asked for
// on its own"; Cancel() "Ends a pending Acquire (Cancelled); what it had
// taken is released"; nothing left behind. Refused (b without WRITE), then
// the fallback's first create's reply is held (applied) while Cancel() is
// called: the fallback nodes exist on the server and must go.
TEST_F(Review54Test, CancelWhileTheFallbackCreateIsHeldLeavesNothing) {
  const std::string root = Path("cancel-fallback");
  const std::vector<std::string> paths = {root + "/a", root + "/b", root + "/c"};
  MakeDirectories(paths, /*no_write=*/paths[1]);
  auto faults = std::make_shared<testing::ClientFaults>();
  faults->Add({Call::kCreate, Effect::kHoldReply, root + "/", 1});
  auto session = NewFaultySession(faults);
  auto multi = MultiLock::Create(*session, {{paths[0], LockMode::kWrite},
                                            {paths[1], LockMode::kWrite},
                                            {paths[2], LockMode::kRead}});
  ASSERT_TRUE(multi.ok()) << multi.status();
  Pending pending = std::async(std::launch::async, [&] { return (*multi)->Acquire(absl::Seconds(30)); });
  ASSERT_TRUE(Eventually([&] { return faults->Calls(Call::kCreate, root + "/") >= 3; }))
      << faults->Calls(Call::kCreate, root + "/");
  const int listings = faults->Calls(Call::kGetChildren, root + "/");
  (*multi)->Cancel();
  Eventually([&] { return faults->Calls(Call::kGetChildren, root + "/") >= listings + 3; },
             absl::Seconds(3));
  faults->ReleaseHeld();
  ASSERT_EQ(pending.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  absl::StatusOr<MultiLockGuard> held = pending.get();
  EXPECT_TRUE(absl::IsCancelled(held.status())) << held.status();
  ASSERT_TRUE(session->Exists(root).ok());
  EXPECT_TRUE(Eventually([&] { return Left(paths).empty(); }, absl::Seconds(5)))
      << "left after Cancelled: " << absl::StrJoin(Left(paths), ", ");
  EXPECT_TRUE(testing::WatchedPaths(*session, root).empty());
  multi->reset();
  session->Close();
  RemoveAll(root);
}

// Promise: a lost reply leaves each part to find its node by its unique id;
// one node per part; tokens are czxids. The refused transaction's answer
// arrives as ZRUNTIMEINCONSISTENCY (outcome unknown), then every fallback
// create's reply is dropped (applied). The set is taken, one node per part,
// tokens = czxid; Release leaves nothing, no watch.
TEST_F(Review54Test, RefusalSeenAsInconsistencyThenFallbackRepliesLost) {
  const std::string root = Path("inconsistent-refusal");
  const std::vector<std::string> paths = {root + "/a", root + "/b", root + "/c"};
  MakeDirectories(paths, /*no_write=*/paths[1]);
  auto faults = std::make_shared<testing::ClientFaults>();
  faults->Add({Call::kMulti, Effect::kDropReply, root + "/", 1, 0, kRuntimeInconsistency});
  faults->Add({Call::kCreate, Effect::kDropReply, root + "/", 3});
  auto session = NewFaultySession(faults);
  auto multi = MultiLock::Create(*session, {{paths[0], LockMode::kWrite},
                                            {paths[1], LockMode::kRead},
                                            {paths[2], LockMode::kWrite}});
  ASSERT_TRUE(multi.ok()) << multi.status();
  absl::StatusOr<MultiLockGuard> held = (*multi)->Acquire(absl::Seconds(20));
  ASSERT_TRUE(held.ok()) << held.status();
  EXPECT_TRUE(faults->UsedUp());
  for (const std::string& path : paths) EXPECT_EQ(Children(path).size(), 1u) << path;
  ExpectTokensAreCzxids(*held);
  ASSERT_TRUE(held->Release().ok());
  ASSERT_TRUE(session->Exists(root).ok());
  EXPECT_TRUE(Left(paths).empty()) << absl::StrJoin(Left(paths), ", ");
  EXPECT_TRUE(testing::WatchedPaths(*session, root).empty());
  multi->reset();
  session->Close();
  RemoveAll(root);
}

// Promise (multi_lock.h): a part lost ... "(IsSessionLost() when the session
// was lost)"; README: nothing left behind. The session expires while the
// refused transaction's reply is held; Acquire fails as session-lost, the
// session's next generation has nothing of it (node or watch), and the same
// MultiLock takes the set again afterwards.
TEST_F(Review54Test, ExpiryDuringARefusedTransaction) {
  const std::string root = Path("expiry-refused");
  const std::vector<std::string> paths = {root + "/a", root + "/b", root + "/c"};
  MakeDirectories(paths, /*no_write=*/paths[1]);
  auto faults = std::make_shared<testing::ClientFaults>();
  faults->Add({Call::kMulti, Effect::kHoldReply, root + "/", 1});
  auto session = NewFaultySession(faults);
  auto multi = MultiLock::Create(*session, {{paths[0], LockMode::kWrite},
                                            {paths[1], LockMode::kWrite},
                                            {paths[2], LockMode::kWrite}});
  ASSERT_TRUE(multi.ok()) << multi.status();
  Pending pending = std::async(std::launch::async, [&] { return (*multi)->Acquire(absl::Seconds(30)); });
  ASSERT_TRUE(Eventually([&] { return faults->Calls(Call::kMulti, root + "/") == 1; }));
  const int64_t old_id = session->session_id();
  ASSERT_TRUE(testing::ExpireSession(*session).ok());
  faults->ReleaseHeld();
  ASSERT_EQ(pending.wait_for(std::chrono::seconds(40)), std::future_status::ready);
  absl::StatusOr<MultiLockGuard> held = pending.get();
  if (held.ok()) {
    ADD_FAILURE() << "granted across an expiry; state " << static_cast<int>(held->state());
    (void)held->Release();
  } else {
    EXPECT_TRUE(IsSessionLost(held.status()) || absl::IsAborted(held.status())) << held.status();
  }
  ASSERT_TRUE(Eventually([&] { return session->session_id() != old_id && session->Exists(root).ok(); }));
  EXPECT_TRUE(Left(paths).empty()) << absl::StrJoin(Left(paths), ", ");
  EXPECT_TRUE(testing::WatchedPaths(*session, root).empty());
  absl::StatusOr<MultiLockGuard> again = (*multi)->Acquire(absl::Seconds(20));
  ASSERT_TRUE(again.ok()) << again.status();
  for (const std::string& path : paths) EXPECT_EQ(Children(path).size(), 1u) << path;
  ExpectTokensAreCzxids(*again);
  ASSERT_TRUE(again->Release().ok());
  ASSERT_TRUE(session->Exists(root).ok());
  EXPECT_TRUE(Left(paths).empty());
  multi->reset();
  session->Close();
  RemoveAll(root);
}

// Promise: nothing left behind after any outcome; the deadline covers the
// whole set. The server applies the (accepted) transaction but its reply
// never comes (proxy drops server->client); the deadline passes; the
// network comes back (connections reset): the nodes the transaction made
// must be found and deleted.
TEST_F(Review54Test, ASilentServerDuringTheTransaction) {
  const std::string root = Path("silent");
  const std::vector<std::string> paths = {root + "/a", root + "/b"};
  MakeDirectories(paths);
  SessionOptions options = ProxiedOptions();
  options.session_timeout = absl::Seconds(12);
  auto session = NewSession(options);
  ASSERT_NE(session, nullptr);
  auto multi = MultiLock::Create(*session, {{paths[0], LockMode::kWrite},
                                            {paths[1], LockMode::kWrite}});
  ASSERT_TRUE(multi.ok()) << multi.status();
  proxy_->SetMode(testing::TcpProxy::Mode::kDropServerToClient);
  const absl::Time start = absl::Now();
  absl::StatusOr<MultiLockGuard> held = (*multi)->Acquire(absl::Seconds(2));
  const absl::Duration took = absl::Now() - start;
  EXPECT_FALSE(held.ok());
  // shared_lock.h: with the connection down the node is "deleted in the
  // background once it is back, waiting at most one session timeout".
  EXPECT_LT(took, absl::Seconds(2) + options.session_timeout + absl::Seconds(3)) << took;
  std::cout << "silent server: " << held.status() << " after " << took << "\n";
  // The transaction was applied by the server.
  EXPECT_TRUE(Eventually([&] { return Left(paths).size() == 2; }, absl::Seconds(5)))
      << absl::StrJoin(Left(paths), ", ");
  proxy_->SetMode(testing::TcpProxy::Mode::kPass);
  proxy_->ResetConnections();
  EXPECT_TRUE(Eventually([&] { return Left(paths).empty(); }, absl::Seconds(15)))
      << "left after " << held.status() << ": " << absl::StrJoin(Left(paths), ", ");
  ASSERT_TRUE(Eventually([&] { return session->Exists(root).ok(); }));
  EXPECT_TRUE(testing::WatchedPaths(*session, root).empty());
  absl::StatusOr<MultiLockGuard> again = (*multi)->Acquire(absl::Seconds(20));
  ASSERT_TRUE(again.ok()) << again.status();
  ASSERT_TRUE(again->Release().ok());
  multi->reset();
  session->Close();
  RemoveAll(root);
}

// Promise: Cancel() "Ends a pending Acquire (Cancelled); what it had taken
// is released"; nothing left behind. Many rounds over a refused set (b
// without WRITE, plus a reader of another session queued on c), each
// Cancel()ed after a random short spin: at the refusal, the re-sent creates,
// the listings, the wait. After each: Cancelled or OK, and once the session
// made one round trip, no node of the session and no watch.
TEST_F(Review54Test, CancelAtRandomPointsOfARefusedSet) {
  const std::string root = Path("cancel-rounds");
  const std::vector<std::string> paths = {root + "/a", root + "/b", root + "/c"};
  MakeDirectories(paths, /*no_write=*/paths[1]);
  auto other = NewSession();
  auto reader = SharedLock::Create(*other, paths[2]);
  ASSERT_TRUE(reader.ok());
  absl::StatusOr<LockGuard> read = (*reader)->AcquireRead(absl::Seconds(10));
  ASSERT_TRUE(read.ok()) << read.status();
  const std::string reader_node = read->node_path();
  auto session = NewSession();
  auto multi = MultiLock::Create(*session, {{paths[0], LockMode::kWrite},
                                            {paths[1], LockMode::kWrite},
                                            {paths[2], LockMode::kRead}});
  ASSERT_TRUE(multi.ok()) << multi.status();
  std::mt19937 random(54);
  constexpr int kRounds = 60;
  int cancelled = 0, granted = 0, leaked = 0, watched = 0, other_status = 0;
  std::string example;
  for (int round = 0; round < kRounds; ++round) {
    const int spin_us = std::uniform_int_distribution<int>(0, 4000)(random);
    Pending pending = std::async(std::launch::async, [&] { return (*multi)->Acquire(absl::Seconds(30)); });
    const absl::Time until = absl::Now() + absl::Microseconds(spin_us);
    while (absl::Now() < until) {
    }
    (*multi)->Cancel();
    ASSERT_EQ(pending.wait_for(std::chrono::seconds(30)), std::future_status::ready);
    absl::StatusOr<MultiLockGuard> held = pending.get();
    if (held.ok()) {
      ++granted;
      ASSERT_TRUE(held->Release().ok());
    } else if (absl::IsCancelled(held.status())) {
      ++cancelled;
    } else {
      ++other_status;
      if (example.empty()) example = held.status().ToString();
    }
    ASSERT_TRUE(session->Exists(root).ok());
    std::vector<std::string> left;
    for (const std::string& node : Left(paths)) {
      if (node != reader_node) left.push_back(node);
    }
    if (!left.empty()) {
      ++leaked;
      if (example.empty()) example = absl::StrCat("round ", round, " spin ", spin_us, "us: ", absl::StrJoin(left, ", "));
      for (const std::string& node : left) (void)admin().Delete(node);
    }
    if (!testing::WatchedPaths(*session, root).empty()) ++watched;
  }
  EXPECT_EQ(leaked, 0) << leaked << " of " << kRounds << " rounds left a node; " << example;
  EXPECT_EQ(watched, 0) << watched << " rounds left a watch";
  EXPECT_EQ(other_status, 0) << example;
  std::cout << "cancelled " << cancelled << ", granted " << granted << "\n";
  ASSERT_TRUE(read->Release().ok());
  reader->reset();
  multi->reset();
  session->Close();
  other->Close();
  RemoveAll(root);
}

// Promise: the deadline; nothing left. Tiny random deadlines (0-3 ms) over
// a refused set whose directory b forbids WRITE (review 53 tried a missing
// directory only).
TEST_F(Review54Test, TinyDeadlinesOverANoWriteDirectory) {
  const std::string root = Path("deadline-nowrite");
  const std::vector<std::string> paths = {root + "/a", root + "/b", root + "/c"};
  MakeDirectories(paths, /*no_write=*/paths[1]);
  auto session = NewSession();
  auto multi = MultiLock::Create(*session, {{paths[0], LockMode::kWrite},
                                            {paths[1], LockMode::kWrite},
                                            {paths[2], LockMode::kWrite}});
  ASSERT_TRUE(multi.ok()) << multi.status();
  std::mt19937 random(5454);
  constexpr int kRounds = 60;
  int leaked = 0, bad_status = 0, timed_out = 0;
  std::string example;
  for (int round = 0; round < kRounds; ++round) {
    const int us = std::uniform_int_distribution<int>(1, 3000)(random);
    absl::StatusOr<MultiLockGuard> held = (*multi)->Acquire(absl::Microseconds(us));
    if (held.ok()) {
      ASSERT_TRUE(held->Release().ok());
    } else if (absl::IsDeadlineExceeded(held.status())) {
      ++timed_out;
    } else {
      ++bad_status;
      if (example.empty()) example = held.status().ToString();
    }
    ASSERT_TRUE(session->Exists(root).ok());
    if (!Left(paths).empty()) {
      ++leaked;
      if (example.empty()) example = absl::StrCat(us, "us: ", absl::StrJoin(Left(paths), ", "));
      for (const std::string& node : Left(paths)) (void)admin().Delete(node);
    }
  }
  EXPECT_EQ(leaked, 0) << leaked << " of " << kRounds << " (" << timed_out << " timed out) " << example;
  EXPECT_EQ(bad_status, 0) << example;
  EXPECT_TRUE(testing::WatchedPaths(*session, root).empty());
  multi->reset();
  session->Close();
  RemoveAll(root);
}

// Promise (multi_lock.h): Acquire fails "Cancelled (... or the session
// closed — whichever part hears of the Close() first)". Session::Close()
// from another thread while the refused transaction's reply is held.
TEST_F(Review54Test, CloseDuringARefusedTransaction) {
  const std::string root = Path("close-refused");
  const std::vector<std::string> paths = {root + "/a", root + "/b", root + "/c"};
  MakeDirectories(paths, /*no_write=*/paths[1]);
  auto faults = std::make_shared<testing::ClientFaults>();
  faults->Add({Call::kMulti, Effect::kHoldReply, root + "/", 1});
  auto session = NewFaultySession(faults);
  auto multi = MultiLock::Create(*session, {{paths[0], LockMode::kWrite},
                                            {paths[1], LockMode::kWrite},
                                            {paths[2], LockMode::kWrite}});
  ASSERT_TRUE(multi.ok()) << multi.status();
  Pending pending = std::async(std::launch::async, [&] { return (*multi)->Acquire(absl::Seconds(30)); });
  ASSERT_TRUE(Eventually([&] { return faults->Calls(Call::kMulti, root + "/") == 1; }));
  std::thread closer([&] { session->Close(); });
  const bool early = pending.wait_for(std::chrono::seconds(2)) == std::future_status::ready;
  faults->ReleaseHeld();
  closer.join();
  ASSERT_EQ(pending.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  absl::StatusOr<MultiLockGuard> held = pending.get();
  EXPECT_TRUE(absl::IsCancelled(held.status())) << held.status() << " (returned before the reply: " << early << ")";
  EXPECT_TRUE(Eventually([&] { return Left(paths).empty(); }, absl::Seconds(5)));
  multi->reset();
  RemoveAll(root);
}

// Promise: destroying the MultiLock ends a pending Acquire (Cancelled);
// nothing left. Many rounds, each with a fresh MultiLock destroyed from
// another thread after a random spin, over a set with a no-WRITE directory
// and a directory missing at each round's start (both refusals).
TEST_F(Review54Test, DestructionAtRandomPointsOfARefusedSet) {
  const std::string root = Path("destroy-rounds");
  const std::vector<std::string> paths = {root + "/a", root + "/b", root + "/c"};
  MakeDirectories({paths[0], paths[1]}, /*no_write=*/paths[1]);
  auto faults = std::make_shared<testing::ClientFaults>();  // no rule: counts calls
  auto session = NewFaultySession(faults);
  std::mt19937 random(540);
  constexpr int kRounds = 60;
  int leaked = 0, bad = 0, cancelled = 0;
  std::string example;
  for (int round = 0; round < kRounds; ++round) {
    auto multi = MultiLock::Create(*session, {{paths[0], LockMode::kWrite},
                                              {paths[1], LockMode::kRead},
                                              {paths[2], LockMode::kWrite}});
    ASSERT_TRUE(multi.ok()) << multi.status();
    MultiLock* raw = multi->get();
    const int spin_us = std::uniform_int_distribution<int>(0, 4000)(random);
    const int multis = faults->Calls(Call::kMulti, root + "/");
    Pending pending = std::async(std::launch::async, [raw] { return raw->Acquire(absl::Seconds(30)); });
    // Destroyed only once Acquire is under way (its transaction sent).
    ASSERT_TRUE(Eventually([&] { return faults->Calls(Call::kMulti, root + "/") > multis; }));
    const absl::Time until = absl::Now() + absl::Microseconds(spin_us);
    while (absl::Now() < until) {
    }
    multi->reset();
    ASSERT_EQ(pending.wait_for(std::chrono::seconds(30)), std::future_status::ready);
    absl::StatusOr<MultiLockGuard> held = pending.get();
    if (held.ok()) {
      ASSERT_TRUE(held->Release().ok());
    } else if (absl::IsCancelled(held.status())) {
      ++cancelled;
    } else {
      ++bad;
      if (example.empty()) example = held.status().ToString();
    }
    ASSERT_TRUE(session->Exists(root).ok());
    if (!Left(paths).empty()) {
      ++leaked;
      if (example.empty()) example = absl::StrCat("spin ", spin_us, "us: ", absl::StrJoin(Left(paths), ", "));
      for (const std::string& node : Left(paths)) (void)admin().Delete(node);
    }
    (void)admin().Delete(paths[2]);
  }
  std::cout << "cancelled " << cancelled << " of " << kRounds << "\n";
  EXPECT_EQ(leaked, 0) << leaked << " of " << kRounds << ": " << example;
  EXPECT_EQ(bad, 0) << example;
  EXPECT_TRUE(testing::WatchedPaths(*session, root).empty());
  session->Close();
  RemoveAll(root);
}

// ---- Odd directories --------------------------------------------------------

// Promise: errors name the part; all or none; nothing left. Part b's
// "directory" is an ephemeral node of another session (no children
// allowed): the transaction is refused, b alone is refused too.
TEST_F(Review54Test, AnEphemeralDirectoryIsAnErrorNamingThePart) {
  const std::string root = Path("ephemeral-dir");
  const std::vector<std::string> paths = {root + "/a", root + "/b", root + "/c"};
  MakeDirectories({paths[0], paths[2]});
  ASSERT_TRUE(admin().Create(paths[1], "", CreateMode::kEphemeral).ok());
  auto session = NewSession();
  auto multi = MultiLock::Create(*session, {{paths[0], LockMode::kWrite},
                                            {paths[1], LockMode::kWrite},
                                            {paths[2], LockMode::kWrite}});
  ASSERT_TRUE(multi.ok()) << multi.status();
  const absl::Time start = absl::Now();
  absl::StatusOr<MultiLockGuard> held = (*multi)->Acquire(absl::Seconds(5));
  ASSERT_FALSE(held.ok());
  EXPECT_LT(absl::Now() - start, absl::Seconds(5) + absl::Seconds(3));
  EXPECT_NE(held.status().message().find(paths[1]), absl::string_view::npos) << held.status();
  EXPECT_FALSE(absl::IsDeadlineExceeded(held.status())) << held.status();
  ASSERT_TRUE(session->Exists(root).ok());
  EXPECT_TRUE(Left({paths[0], paths[2]}).empty()) << absl::StrJoin(Left({paths[0], paths[2]}), ", ");
  EXPECT_TRUE(testing::WatchedPaths(*session, root).empty());
  multi->reset();
  session->Close();
  ASSERT_TRUE(admin().Delete(paths[1]).ok());
  RemoveAll(root);
}

// Promise: a part excludes and is excluded by locks on the same path; one
// node per part; tokens are czxids. Nested parts: x and x/b where x/b does
// not exist yet (refused, fallback makes it), then again (x holds x/b as a
// foreign child: a count of 2, the queue read). A single ExclusiveLock on x
// from another session is refused while the set is held.
TEST_F(Review54Test, NestedParts) {
  const std::string root = Path("nested");
  const std::string x = root + "/x", xb = root + "/x/b";
  MakeDirectories({x});
  auto session = NewSession();
  auto multi = MultiLock::Create(*session, {{xb, LockMode::kWrite}, {x, LockMode::kWrite}});
  ASSERT_TRUE(multi.ok()) << multi.status();
  auto other = NewSession();
  auto single = ExclusiveLock::Create(*other, x);
  ASSERT_TRUE(single.ok());
  for (int round = 0; round < 3; ++round) {
    absl::StatusOr<MultiLockGuard> held = (*multi)->Acquire(absl::Seconds(10));
    ASSERT_TRUE(held.ok()) << round << ": " << held.status();
    EXPECT_EQ(Left({x, xb}).size(), 2u) << absl::StrJoin(Left({x, xb}), ", ");
    ExpectTokensAreCzxids(*held);
    absl::StatusOr<LockGuard> blocked = (*single)->TryAcquire();
    EXPECT_FALSE(blocked.ok()) << round;
    if (blocked.ok()) (void)blocked->Release();
    ASSERT_TRUE(held->Release().ok());
    ASSERT_TRUE(session->Exists(root).ok());
    EXPECT_TRUE(Left({x, xb}).empty());
  }
  EXPECT_TRUE(testing::WatchedPaths(*session, root).empty());
  single->reset();
  other->Close();
  multi->reset();
  session->Close();
  RemoveAll(root);
}

// ---- A ledger ---------------------------------------------------------------

// Promise: no deadlock between overlapping multi-locks; a part excludes
// and is excluded by SharedLock/ExclusiveLock holders; fencing tokens
// strictly increase across successive holders of one lock. Three sessions:
// {a:w, b:r, c:w}, {c:w, a:w} and a single exclusive lock on a, plus
// {b:w, c:r}; b forbids WRITE (every set with b takes the fallback). Never
// two writers, never a writer beside a reader; tokens of writers on a
// increase; nothing left.
TEST_F(Review54Test, LedgerOfOverlappingSetsWithAFallbackPart) {
  const std::string root = Path("ledger");
  const std::vector<std::string> paths = {root + "/a", root + "/b", root + "/c"};
  MakeDirectories(paths, /*no_write=*/paths[1]);
  std::atomic<int> writers[3] = {0, 0, 0}, readers[3] = {0, 0, 0};
  std::atomic<int> violations{0}, failures{0};
  std::mutex token_mu;
  std::vector<int64_t> a_tokens;
  std::string failure;
  auto enter = [&](int i, LockMode mode) {
    if (mode == LockMode::kWrite) {
      if (writers[i]++ != 0 || readers[i] != 0) ++violations;
    } else {
      if (readers[i]++, writers[i] != 0) ++violations;
    }
  };
  auto leave = [&](int i, LockMode mode) {
    if (mode == LockMode::kWrite) --writers[i]; else --readers[i];
  };
  auto run_multi = [&](std::vector<std::pair<int, LockMode>> set) {
    auto session = NewSession();
    std::vector<LockPart> parts;
    for (auto [i, mode] : set) parts.push_back({paths[i], mode});
    auto multi = MultiLock::Create(*session, parts);
    ASSERT_TRUE(multi.ok());
    for (int k = 0; k < 12; ++k) {
      absl::StatusOr<MultiLockGuard> held = (*multi)->Acquire(absl::Seconds(30));
      if (!held.ok()) {
        std::lock_guard<std::mutex> l(token_mu);
        ++failures;
        failure = held.status().ToString();
        continue;
      }
      for (auto [i, mode] : set) enter(i, mode);
      {
        std::lock_guard<std::mutex> l(token_mu);
        for (auto [i, mode] : set) {
          if (i == 0) a_tokens.push_back(held->fencing_token(paths[0]));
        }
      }
      std::this_thread::yield();
      for (auto [i, mode] : set) leave(i, mode);
      ASSERT_TRUE(held->Release().ok());
    }
    multi->reset();
    session->Close();
  };
  auto run_single = [&] {
    auto session = NewSession();
    auto lock = ExclusiveLock::Create(*session, paths[0]);
    ASSERT_TRUE(lock.ok());
    for (int k = 0; k < 12; ++k) {
      absl::StatusOr<LockGuard> held = (*lock)->Acquire(absl::Seconds(30));
      if (!held.ok()) {
        ++failures;
        continue;
      }
      enter(0, LockMode::kWrite);
      {
        std::lock_guard<std::mutex> l(token_mu);
        a_tokens.push_back(held->fencing_token());
      }
      std::this_thread::yield();
      leave(0, LockMode::kWrite);
      ASSERT_TRUE(held->Release().ok());
    }
    lock->reset();
    session->Close();
  };
  std::vector<std::thread> threads;
  threads.emplace_back(run_multi, std::vector<std::pair<int, LockMode>>{
                                      {0, LockMode::kWrite}, {1, LockMode::kRead}, {2, LockMode::kWrite}});
  threads.emplace_back(run_multi, std::vector<std::pair<int, LockMode>>{
                                      {2, LockMode::kWrite}, {0, LockMode::kWrite}});
  threads.emplace_back(run_multi, std::vector<std::pair<int, LockMode>>{
                                      {1, LockMode::kWrite}, {2, LockMode::kRead}});
  threads.emplace_back(run_single);
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(violations.load(), 0);
  EXPECT_EQ(failures.load(), 0) << failure;
  for (size_t k = 1; k < a_tokens.size(); ++k) {
    EXPECT_LT(a_tokens[k - 1], a_tokens[k]) << "token " << k;
  }
  EXPECT_TRUE(Left(paths).empty());
  RemoveAll(root);
}

}  // namespace
}  // namespace zkr
