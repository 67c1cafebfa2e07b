// Participant's bookkeeping (recipes/participant.h): the name of our node
// as a create's reply or a recovery listing gives it. Pure: nothing is sent.
#include "recipes/participant.h"

#include <memory>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace zkr {
namespace internal {
namespace {

Participant MakeParticipant() {
  return Participant(std::make_shared<const std::string>("/locks/a"), "", NodeMode::kWrite,
                     /*weight=*/1, /*leases=*/0, SchemeFor(Dialect::kZkr, QueueKind::kSharedLock));
}

TEST(ParticipantTest, TheCreateNamesTheNode) {
  Participant participant = MakeParticipant();
  EXPECT_EQ(participant.node_name(), "");
  EXPECT_EQ(participant.node_path(), "");
  Participant::Reply reply;
  reply.created.path = "/locks/a/" + participant.prefix() + "0000000042";
  reply.created.stat.czxid = 7;
  participant.Note(Participant::CreateStep::kCreate, reply);
  EXPECT_EQ(participant.node_name(), participant.prefix() + "0000000042");
  EXPECT_EQ(participant.node_path(), "/locks/a/" + participant.prefix() + "0000000042");
  EXPECT_EQ(participant.token(), 7);
}

TEST(ParticipantTest, ASequencePastInt32MaxKeepsTheServersName) {
  Participant participant = MakeParticipant();
  Participant::Reply reply;
  reply.created.path = "/locks/a/" + participant.prefix() + "-2147483648";
  participant.Note(Participant::CreateStep::kCreate, reply);
  EXPECT_EQ(participant.node_name(), participant.prefix() + "-2147483648");
}

// A lost create is found again by our unique prefix. A revocation request
// for our node ("<node>.revoke", zkrecipes/revocation.h) starts with that
// prefix too, and is not our node, wherever the listing puts it.
TEST(ParticipantTest, RecoveryFindsOurNodeNotItsRevocationRequest) {
  for (bool request_first : {true, false}) {
    Participant participant = MakeParticipant();
    const std::string ours = participant.prefix() + "0000000007";
    const std::string request = ours + ".revoke";
    Participant::Reply reply;
    reply.children = request_first ? ChildList{"x-W-0000000001", request, ours}
                                   : ChildList{"x-W-0000000001", ours, request};
    participant.Note(Participant::CreateStep::kRecover, reply);
    EXPECT_EQ(participant.node_name(), ours) << "request listed first: " << request_first;
  }
}

TEST(ParticipantTest, RecoveryWithoutOurNodeNamesNothing) {
  Participant participant = MakeParticipant();
  Participant::Reply reply;
  reply.children = ChildList{"x-W-0000000001", participant.prefix() + "junk"};
  participant.Note(Participant::CreateStep::kRecover, reply);
  EXPECT_EQ(participant.node_name(), "");
}

}  // namespace
}  // namespace internal
}  // namespace zkr
