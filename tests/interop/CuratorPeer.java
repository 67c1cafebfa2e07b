// CuratorPeer: a real Apache Curator participant for the interop tests
// (tests/interop/README.md). It takes a lock or leadership ROUNDS times and
// writes each hold to a shared ledger, beside our participants in the same
// queue; the test's checker finds any overlap.
//
//   java -cp "$(tools/bench/compare/classpath.sh)" tests/interop/CuratorPeer.java \
//       HOSTS RECIPE PATH NAME LEDGER ROUNDS HOLD_MS
// RECIPE: mutex (InterProcessMutex), read / write (InterProcessReadWriteLock),
// latch (LeaderLatch, id NAME). ROUNDS -1: take it once and hold until killed.
// It starts once the file LEDGER.go exists, so that all contend at once.
// stdout: "ready" once connected, "held" when holding for ever. Errors: a
// message on stderr and exit code 1.

import java.io.FileOutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.locks.InterProcessLock;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.retry.ExponentialBackoffRetry;

public class CuratorPeer {
  private static final int SESSION_TIMEOUT_MS = 10_000;

  public static void main(String[] args) {
    try {
      run(args);
    } catch (Throwable t) {
      System.err.println("CuratorPeer: " + t);
      System.exit(1);
    }
    System.exit(0);
  }

  // One line, one write(2) on a file opened for appending: atomic among the
  // processes that share the ledger.
  private static void record(String ledger, String run, String mode, String what)
      throws Exception {
    final Instant now = Instant.now();
    final long micros = now.getEpochSecond() * 1_000_000L + now.getNano() / 1000;
    final byte[] line = (run + " " + mode + " " + what + " " + micros + "\n")
        .getBytes(StandardCharsets.UTF_8);
    try (FileOutputStream out = new FileOutputStream(ledger, true)) {
      out.write(line);
    }
  }

  private static void run(String[] args) throws Exception {
    if (args.length != 7) {
      throw new IllegalArgumentException(
          "usage: CuratorPeer HOSTS RECIPE PATH NAME LEDGER ROUNDS HOLD_MS");
    }
    final String hosts = args[0], recipe = args[1], path = args[2], name = args[3];
    final String ledger = args[4];
    final int rounds = Integer.parseInt(args[5]);
    final long holdMs = Long.parseLong(args[6]);
    try (CuratorFramework client = CuratorFrameworkFactory.builder()
             .connectString(hosts)
             .sessionTimeoutMs(SESSION_TIMEOUT_MS)
             .retryPolicy(new ExponentialBackoffRetry(100, 10))
             .build()) {
      client.start();
      if (!client.blockUntilConnected(30, TimeUnit.SECONDS)) {
        throw new IllegalStateException("not connected to " + hosts);
      }
      System.out.println("ready");
      System.out.flush();
      // Every participant starts at once: at LEDGER.go (the test makes it).
      while (!new java.io.File(ledger + ".go").exists()) Thread.sleep(5);
      final String mode = recipe.equals("read") ? "R" : "W";
      final InterProcessLock lock;
      switch (recipe) {
        case "mutex": lock = new InterProcessMutex(client, path); break;
        case "read": lock = new InterProcessReadWriteLock(client, path).readLock(); break;
        case "write": lock = new InterProcessReadWriteLock(client, path).writeLock(); break;
        case "latch": lock = null; break;
        default: throw new IllegalArgumentException("unknown recipe " + recipe);
      }
      for (int round = 0; rounds < 0 || round < rounds; ++round) {
        final String run = name + "-" + round;
        LeaderLatch latch = null;
        if (lock != null) {
          lock.acquire();
        } else {
          latch = new LeaderLatch(client, path, name);
          latch.start();
          latch.await();
        }
        record(ledger, run, mode, "begin");
        if (rounds < 0) {
          System.out.println("held");
          System.out.flush();
          Thread.sleep(Long.MAX_VALUE);
        }
        Thread.sleep(holdMs);
        record(ledger, run, mode, "end");
        if (lock != null) {
          lock.release();
        } else {
          latch.close();
        }
      }
    }
  }
}
