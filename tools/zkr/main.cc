// zkr: command-line tool over the zkrecipes recipes.
//
//   zkr demo [--zk HOSTS]     the guided demo (embedded ZooKeeper unless --zk)
#include <cstdio>
#include <cstdlib>
#include <string>

#include "gflags/gflags.h"
#include "tools/zkr/demo.h"

DEFINE_string(zk, "",
              "ZooKeeper connect string host:port[,host:port...][/chroot]; default: "
              "$ZKR_CONNECT, else 127.0.0.1:2181 (demo: an embedded server)");

namespace {

constexpr char kUsage[] =
    "zkr SUBCOMMAND [flags]\n\n"
    "Subcommands:\n"
    "  demo   start an embedded ZooKeeper (unless --zk) and show the recipes at work\n\n"
    "Run 'zkr SUBCOMMAND --help' for its flags.";

}  // namespace

int main(int argc, char** argv) {
  gflags::SetUsageMessage(kUsage);
  if (argc < 2 || argv[1][0] == '-') {
    gflags::ParseCommandLineFlags(&argc, &argv, true);
    std::fprintf(stderr, "%s\n", kUsage);
    return 2;
  }
  const std::string subcommand = argv[1];
  argv[1] = argv[0];
  ++argv;
  --argc;
  gflags::ParseCommandLineFlags(&argc, &argv, true);
  if (subcommand == "demo") return zkr::cli::RunDemo(FLAGS_zk);
  std::fprintf(stderr, "zkr: unknown subcommand \"%s\"\n\n%s\n", subcommand.c_str(), kUsage);
  return 2;
}
