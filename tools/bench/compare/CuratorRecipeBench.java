// CuratorRecipeBench: Apache Curator's recipes under the shapes `zkr bench
// --compare` runs ours in (rows 8cs, 8crw, 8ce, 8cb, 8cg, 8cml). Keep each
// equivalent to the driver's own loop (tools/bench/compare_recipes.cc,
// compare_barrier_multilock.cc, compare_group.cc):
//
//   semaphore SECONDS: InterProcessSemaphoreV2 of 4 leases, 16 clients (a
//     session each, one thread each), each acquire() + returnLease() at once
//     in a loop for SECONDS; acquisitions per second.
//   rwmix SECONDS: InterProcessReadWriteLock, 16 reader clients and 2 writer
//     clients, each acquire, 100 us of work, release, in a loop for SECONDS;
//     acquisitions per second, the most readers inside at once, violations
//     (a writer inside with anyone else).
//   failover ROUNDS: LeaderLatch; per round a new client joins behind the
//     leader, 20 ms after it is queued the leader's client is closed (its
//     session ends), and the sample runs from that close() call to the new
//     leader's LeaderLatchListener.isLeader(); p50, p99 and the share of
//     samples of 50 ms or more.
//   barrier ROUNDS: DistributedDoubleBarrier of 4 clients (a session and a
//     thread each); per round, on a fresh path, every client enter()s and
//     then leave()s; the sample runs from the round's start (threads
//     started) until the last leave() returned; p50 and p99.
//   group ROUNDS: GroupMember; a watching client's CuratorCache on the group
//     path; per round a member (its own client) start()s, and the sample
//     runs from start() until the watcher's listener hears of its node's
//     creation; then it close()s and the watcher hears it go (untimed).
//     p50 and p99.
//   multilock CYCLES: InterProcessMultiLock of 4 InterProcessMutexes, one
//     client, uncontended: each acquire() + release() timed; p50 and p99.
//
//   java -cp "$(tools/bench/compare/classpath.sh)" CuratorRecipeBench.java \
//       <workload> <connect-string> <base-path> <seconds-or-rounds> <warm-up>
// The warm-up (seconds or rounds, untimed, on the same clients and recipe
// objects) runs first: the JVM needs its JIT warm.
// Uses <base-path>/curator-<workload> and deletes it at the end. stdout: one
// JSON line, nothing else. Errors: a message on stderr and exit code 1.

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.barriers.DistributedDoubleBarrier;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;
import org.apache.curator.framework.recipes.nodes.GroupMember;
import org.apache.curator.utils.ZKPaths;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.LeaderLatchListener;
import org.apache.curator.framework.recipes.locks.InterProcessLock;
import org.apache.curator.framework.recipes.locks.InterProcessMultiLock;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.zookeeper.KeeperException;

public class CuratorRecipeBench {
  private static final int SESSION_TIMEOUT_MS = 10_000;
  private static final int CONNECT_WAIT_S = 15;
  private static final long WAIT_S = 30;  // any single wait longer than this is an error
  private static final int LEASES = 4, SESSIONS = 16, READERS = 16, WRITERS = 2;
  private static final int MEMBERS = 4, PARTS = 4;
  private static final long WORK_NS = 100_000;  // a mix participant's critical section
  private static final long SETTLE_MS = 20;     // kFailoverSettle

  private static String connect;

  public static void main(String[] args) {
    try {
      run(args);
    } catch (Throwable t) {
      System.err.println("CuratorRecipeBench: " + t);
      System.exit(1);
    }
    System.exit(0);  // do not wait for any non-daemon thread a library left
  }

  private static void run(String[] args) throws Exception {
    if (args.length != 5) {
      throw new IllegalArgumentException("usage: CuratorRecipeBench "
          + "semaphore|rwmix|failover|barrier|group|multilock <connect-string> <base-path> "
          + "<seconds-or-rounds> <warm-up seconds-or-rounds>");
    }
    connect = args[1];
    final String path = args[2].replaceAll("/+$", "") + "/curator-" + args[0];
    final double amount = Double.parseDouble(args[3]);
    final double warmup = Double.parseDouble(args[4]);
    if (!(amount > 0) || !(warmup >= 0)) {
      throw new IllegalArgumentException("bad amount or warm-up: " + args[3] + " " + args[4]);
    }
    String line;
    switch (args[0]) {
      case "semaphore": line = semaphore(path, amount, warmup); break;
      case "rwmix": line = rwmix(path, amount, warmup); break;
      case "failover": line = failover(path, (int) amount, (int) warmup); break;
      case "barrier": line = barrier(path, (int) amount, (int) warmup); break;
      case "group": line = group(path, (int) amount, (int) warmup); break;
      case "multilock": line = multilock(path, (int) amount, (int) warmup); break;
      default: throw new IllegalArgumentException("unknown workload " + args[0]);
    }
    System.out.println(line);
    System.out.flush();
  }

  private static CuratorFramework client() throws Exception {
    CuratorFramework client = CuratorFrameworkFactory.builder().connectString(connect)
        .sessionTimeoutMs(SESSION_TIMEOUT_MS).retryPolicy(new ExponentialBackoffRetry(100, 3))
        .build();
    client.start();
    if (!client.blockUntilConnected(CONNECT_WAIT_S, TimeUnit.SECONDS)) {
      client.close();
      throw new IllegalStateException("no connection to " + connect);
    }
    return client;
  }

  private static List<CuratorFramework> clients(int n) throws Exception {
    List<CuratorFramework> out = new ArrayList<>();
    for (int i = 0; i < n; ++i) out.add(client());
    return out;
  }

  private static void deleteTree(CuratorFramework client, String path) throws Exception {
    try {
      client.delete().deletingChildrenIfNeeded().forPath(path);
    } catch (KeeperException.NoNodeException e) {
      // a container the server reaped already
    }
  }

  private interface Loop {
    void run() throws Exception;
  }

  // Runs each loop on its own thread until they all return; the first error.
  private static void runAll(List<Loop> loops) throws Exception {
    final List<Throwable> errors = new ArrayList<>();
    final List<Thread> threads = new ArrayList<>();
    for (Loop loop : loops) {
      Thread t = new Thread(() -> {
        try {
          loop.run();
        } catch (Throwable e) {
          synchronized (errors) { errors.add(e); }
        }
      });
      t.start();
      threads.add(t);
    }
    for (Thread t : threads) t.join();
    if (!errors.isEmpty()) throw new IllegalStateException(errors.get(0).toString());
  }

  // Runs the loops for runFor[0] (the warm-up) untimed, then sets them up
  // for the timed run.
  private static void warmUp(List<Loop> loops, AtomicLong acquisitions, double[] runFor,
                             double seconds) throws Exception {
    if (runFor[0] > 0) runAll(loops);
    acquisitions.set(0);
    runFor[0] = seconds;
  }

  // The warm-up, then the timed run; deletes the path and closes the
  // clients. Returns the timed run's wall time in seconds.
  private static double timedRun(List<Loop> loops, AtomicLong acquisitions, double[] runFor,
                                 double seconds, List<CuratorFramework> clients, String path)
      throws Exception {
    warmUp(loops, acquisitions, runFor, seconds);
    final long start = System.nanoTime();
    runAll(loops);
    final double wall = (System.nanoTime() - start) / 1e9;
    deleteTree(clients.get(0), path);
    for (CuratorFramework client : clients) client.close();
    return wall;
  }

  private static String semaphore(String path, double seconds, double warmup) throws Exception {
    final List<CuratorFramework> clients = clients(SESSIONS);
    final AtomicLong acquisitions = new AtomicLong();
    final double[] runFor = {warmup};
    final List<Loop> loops = new ArrayList<>();
    for (CuratorFramework client : clients) {
      final InterProcessSemaphoreV2 semaphore = new InterProcessSemaphoreV2(client, path, LEASES);
      loops.add(() -> {
        final long end = System.nanoTime() + (long) (runFor[0] * 1e9);
        while (System.nanoTime() < end) {
          Lease lease = semaphore.acquire(WAIT_S, TimeUnit.SECONDS);
          if (lease == null) throw new IllegalStateException("no lease within " + WAIT_S + " s");
          acquisitions.incrementAndGet();
          semaphore.returnLease(lease);
        }
      });
    }
    final double wall = timedRun(loops, acquisitions, runFor, seconds, clients, path);
    return String.format(Locale.ROOT, "{\"library\":\"curator\",\"version\":\"%s\","
            + "\"variant\":\"semaphore\",\"sessions\":%d,\"leases\":%d,\"acquisitions\":%d,"
            + "\"seconds\":%.3f,\"acquisitions_per_s\":%.1f}",
        version(), SESSIONS, LEASES, acquisitions.get(), wall, acquisitions.get() / wall);
  }

  private static String rwmix(String path, double seconds, double warmup) throws Exception {
    final List<CuratorFramework> clients = clients(READERS + WRITERS);
    final AtomicLong acquisitions = new AtomicLong();
    final double[] runFor = {warmup};
    final AtomicInteger readersIn = new AtomicInteger(), writersIn = new AtomicInteger();
    final AtomicInteger maxReaders = new AtomicInteger(), violations = new AtomicInteger();
    final List<Loop> loops = new ArrayList<>();
    for (int i = 0; i < clients.size(); ++i) {
      final boolean write = i >= READERS;
      final InterProcessReadWriteLock rw = new InterProcessReadWriteLock(clients.get(i), path);
      final InterProcessLock lock = write ? rw.writeLock() : rw.readLock();
      loops.add(() -> {
        final long end = System.nanoTime() + (long) (runFor[0] * 1e9);
        while (System.nanoTime() < end) {
          if (!lock.acquire(WAIT_S, TimeUnit.SECONDS)) {
            throw new IllegalStateException("not acquired within " + WAIT_S + " s");
          }
          acquisitions.incrementAndGet();
          if (write) {
            if (writersIn.incrementAndGet() != 1 || readersIn.get() != 0) {
              violations.incrementAndGet();
            }
          } else {
            maxReaders.accumulateAndGet(readersIn.incrementAndGet(), Math::max);
            if (writersIn.get() != 0) violations.incrementAndGet();
          }
          LockSupport.parkNanos(WORK_NS);
          (write ? writersIn : readersIn).decrementAndGet();
          lock.release();
        }
      });
    }
    final double wall = timedRun(loops, acquisitions, runFor, seconds, clients, path);
    return String.format(Locale.ROOT, "{\"library\":\"curator\",\"version\":\"%s\","
            + "\"variant\":\"rwmix\",\"readers\":%d,\"writers\":%d,\"acquisitions\":%d,"
            + "\"seconds\":%.3f,\"acquisitions_per_s\":%.1f,\"max_concurrent_readers\":%d,"
            + "\"violations\":%d}",
        version(), READERS, WRITERS, acquisitions.get(), wall, acquisitions.get() / wall,
        maxReaders.get(), violations.get());
  }

  private static final class Candidate {
    final CuratorFramework client;
    final LeaderLatch latch;
    final CountDownLatch led = new CountDownLatch(1);
    volatile long ledAt;

    Candidate(String path, int n) throws Exception {
      client = client();
      latch = new LeaderLatch(client, path, "candidate-" + n);
      latch.addListener(new LeaderLatchListener() {
        @Override public void isLeader() {
          if (led.getCount() == 0) return;
          ledAt = System.nanoTime();
          led.countDown();
        }
        @Override public void notLeader() {}
      });
      latch.start();
    }

    void awaitLeadership() throws Exception {
      if (!led.await(WAIT_S, TimeUnit.SECONDS)) throw new IllegalStateException("not elected");
    }
  }

  private static String failover(String path, int rounds, int warmup) throws Exception {
    final long[] ns = new long[rounds];
    Candidate leader = new Candidate(path, -warmup);
    leader.awaitLeadership();
    for (int round = 1 - warmup; round <= rounds; ++round) {
      Candidate next = new Candidate(path, round);
      // Queued behind the leader (its node exists), then its watch settles.
      for (int i = 0; i < 1000 && leader.latch.getParticipants().size() < 2; ++i) Thread.sleep(2);
      if (leader.latch.getParticipants().size() != 2) throw new IllegalStateException("not queued");
      Thread.sleep(SETTLE_MS);
      final long killed = System.nanoTime();
      leader.client.close();  // the leader's session ends: its node goes
      next.awaitLeadership();
      if (round >= 1) ns[round - 1] = next.ledAt - killed;
      leader = next;
    }
    leader.latch.close();
    deleteTree(leader.client, path);
    leader.client.close();
    Arrays.sort(ns);
    int slow = 0;  // the ZooKeeper client's close() sleeps 100 ms: see README.md
    for (long sample : ns) slow += sample >= 50_000_000L ? 1 : 0;
    return String.format(Locale.ROOT, "{\"library\":\"curator\",\"version\":\"%s\","
            + "\"variant\":\"failover\",\"rounds\":%d,\"p50_us\":%.1f,\"p99_us\":%.1f,"
            + "\"share_over_50ms\":%.2f}",
        version(), rounds, quantileUs(ns, 0.50), quantileUs(ns, 0.99), (double) slow / rounds);
  }

  private static String barrier(String path, int rounds, int warmup) throws Exception {
    final List<CuratorFramework> clients = clients(MEMBERS);
    final long[] ns = new long[rounds];
    for (int round = -warmup; round < rounds; ++round) {
      final String roundPath = path + "/r" + (round + warmup);
      final List<Loop> loops = new ArrayList<>();
      for (CuratorFramework client : clients) {
        final DistributedDoubleBarrier barrier =
            new DistributedDoubleBarrier(client, roundPath, MEMBERS);
        loops.add(() -> {
          if (!barrier.enter(WAIT_S, TimeUnit.SECONDS)) throw new IllegalStateException("enter");
          if (!barrier.leave(WAIT_S, TimeUnit.SECONDS)) throw new IllegalStateException("leave");
        });
      }
      final long start = System.nanoTime();
      runAll(loops);
      if (round >= 0) ns[round] = System.nanoTime() - start;
      deleteTree(clients.get(0), roundPath);
    }
    deleteTree(clients.get(0), path);
    for (CuratorFramework client : clients) client.close();
    return latencyLine("barrier", rounds, ns);
  }

  private static String group(String path, int rounds, int warmup) throws Exception {
    final CuratorFramework watcher = client(), joiner = client();
    // id -> when the watcher heard of its creation (a negative value: of its deletion)
    final ConcurrentHashMap<String, Long> heard = new ConcurrentHashMap<>();
    final CuratorCache cache = CuratorCache.build(watcher, path);
    cache.listenable().addListener(CuratorCacheListener.builder()
        .forCreates(node -> hear(heard, node.getPath(), System.nanoTime()))
        .forDeletes(node -> hear(heard, node.getPath(), -1L))
        .build());
    cache.start();
    final long[] ns = new long[rounds];
    for (int round = -warmup; round < rounds; ++round) {
      final String id = "m" + (round + warmup);
      final GroupMember member = new GroupMember(joiner, path, id, new byte[0]);
      final long start = System.nanoTime();
      member.start();
      awaitHeard(heard, id, true);
      if (round >= 0) ns[round] = heard.get(id) - start;
      member.close();
      awaitHeard(heard, id, false);
    }
    cache.close();
    deleteTree(watcher, path);
    watcher.close();
    joiner.close();
    return latencyLine("group", rounds, ns);
  }

  private static void hear(ConcurrentHashMap<String, Long> heard, String path, long at) {
    synchronized (heard) {
      heard.put(ZKPaths.getNodeFromPath(path), at);
      heard.notifyAll();
    }
  }

  // Waits until the watcher has heard of id's creation (or deletion).
  private static void awaitHeard(ConcurrentHashMap<String, Long> heard, String id, boolean created)
      throws Exception {
    final long end = System.nanoTime() + WAIT_S * 1_000_000_000L;
    synchronized (heard) {
      while (true) {
        final Long at = heard.get(id);
        if (at != null && (at > 0) == created) return;
        final long left = (end - System.nanoTime()) / 1_000_000L;
        if (left <= 0) throw new IllegalStateException("the watcher missed " + id);
        heard.wait(left);
      }
    }
  }

  private static String multilock(String path, int cycles, int warmup) throws Exception {
    final CuratorFramework client = client();
    final List<String> paths = new ArrayList<>();
    for (int i = 0; i < PARTS; ++i) paths.add(path + "/part-" + i);
    final InterProcessMultiLock lock = new InterProcessMultiLock(client, paths);
    final long[] ns = new long[cycles];
    for (int i = -warmup; i < cycles; ++i) {
      final long start = System.nanoTime();
      if (!lock.acquire(WAIT_S, TimeUnit.SECONDS)) throw new IllegalStateException("not acquired");
      lock.release();
      if (i >= 0) ns[i] = System.nanoTime() - start;
    }
    deleteTree(client, path);
    client.close();
    return latencyLine("multilock", cycles, ns);
  }

  private static String latencyLine(String variant, int count, long[] ns) {
    Arrays.sort(ns);
    return String.format(Locale.ROOT, "{\"library\":\"curator\",\"version\":\"%s\","
            + "\"variant\":\"%s\",\"count\":%d,\"p50_us\":%.1f,\"p99_us\":%.1f}",
        version(), variant, count, quantileUs(ns, 0.50), quantileUs(ns, 0.99));
  }

  // Same rule as zkr::bench::Samples::Quantile.
  private static double quantileUs(long[] sortedNs, double q) {
    return sortedNs[Math.min(sortedNs.length - 1, (int) (q * sortedNs.length))] / 1e3;
  }

  private static String version() {
    try (java.io.InputStream in = LeaderLatch.class.getResourceAsStream(
             "/META-INF/maven/org.apache.curator/curator-recipes/pom.properties")) {
      if (in != null) {
        java.util.Properties properties = new java.util.Properties();
        properties.load(in);
        String version = properties.getProperty("version");
        if (version != null && !version.isEmpty()) return version.replaceAll("[\"\\\\]", "");
      }
    } catch (Exception ignored) {
      // fall through
    }
    return "unknown";
  }
}
