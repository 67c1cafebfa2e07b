#include "src/process_identity.h"

#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "gtest/gtest.h"

namespace zkr {
namespace {

using internal::HostName;
using internal::ProcessId;

TEST(ProcessIdentityTest, IsThisProcessAndThisHost) {
  EXPECT_EQ(ProcessId(), getpid());
  EXPECT_EQ(ProcessId(), getpid());  // kept: the same again
  char host[256] = {0};
  ASSERT_EQ(gethostname(host, sizeof(host) - 1), 0);
  EXPECT_EQ(HostName(), std::string(host[0] != '\0' ? host : "unknown-host"));
}

// The pid is kept, so a child made by fork() must not report its parent's:
// its participant ids and node data name the child.
TEST(ProcessIdentityTest, AChildOfForkHasItsOwnPid) {
  const pid_t parent = ProcessId();  // kept before the fork
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(ProcessId() == getpid() && ProcessId() != parent ? 0 : 1);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the child reported its parent's pid";
  EXPECT_EQ(ProcessId(), parent);
}

}  // namespace
}  // namespace zkr
