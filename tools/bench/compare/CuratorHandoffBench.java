// CuratorHandoffBench: contended handoffs on one Apache Curator
// InterProcessMutex, for `zkr bench --compare`'s mixed row (8m): CONTENDERS
// clients (one session each) acquire and release in a loop for SECONDS.
// The driver runs it alone (2 contenders: the floor) and beside its own
// participants speaking Curator's names (1 contender + ours).
//
//   java -cp "$(tools/bench/compare/classpath.sh)" CuratorHandoffBench.java \
//       <connect-string> <lock-path> <contenders> <seconds> <go-file>
// stdout: "ready" once every client is connected; the loop starts when
// <go-file> exists; then one JSON line (library, version, contenders,
// acquisitions, seconds). Errors: a message on stderr and exit code 1.

import java.io.File;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.ExponentialBackoffRetry;

public class CuratorHandoffBench {
  public static void main(String[] args) {
    try {
      run(args);
    } catch (Throwable t) {
      System.err.println("CuratorHandoffBench: " + t);
      System.exit(1);
    }
    System.exit(0);
  }

  private static void run(String[] args) throws Exception {
    if (args.length != 5) {
      throw new IllegalArgumentException(
          "usage: CuratorHandoffBench <connect-string> <lock-path> <contenders> <seconds> <go-file>");
    }
    final String connect = args[0], path = args[1];
    final int contenders = Integer.parseInt(args[2]);
    final double seconds = Double.parseDouble(args[3]);
    final File go = new File(args[4]);
    final List<CuratorFramework> clients = new ArrayList<>();
    for (int i = 0; i < contenders; ++i) {
      CuratorFramework client = CuratorFrameworkFactory.builder()
          .connectString(connect).sessionTimeoutMs(10_000)
          .retryPolicy(new ExponentialBackoffRetry(100, 10)).build();
      client.start();
      if (!client.blockUntilConnected(30, TimeUnit.SECONDS)) {
        throw new IllegalStateException("not connected to " + connect);
      }
      clients.add(client);
    }
    System.out.println("ready");
    System.out.flush();
    while (!go.exists()) Thread.sleep(1);
    final long end = System.nanoTime() + (long) (seconds * 1e9);
    final AtomicLong acquisitions = new AtomicLong();
    final List<Thread> threads = new ArrayList<>();
    final List<Throwable> errors = new ArrayList<>();
    for (CuratorFramework client : clients) {
      final InterProcessMutex mutex = new InterProcessMutex(client, path);
      Thread t = new Thread(() -> {
        try {
          while (System.nanoTime() < end) {
            mutex.acquire();
            acquisitions.incrementAndGet();
            mutex.release();
          }
        } catch (Throwable e) {
          synchronized (errors) { errors.add(e); }
        }
      });
      t.start();
      threads.add(t);
    }
    for (Thread t : threads) t.join();
    for (CuratorFramework client : clients) client.close();
    if (!errors.isEmpty()) throw new IllegalStateException(errors.get(0).toString());
    String version = CuratorFramework.class.getPackage().getImplementationVersion();
    System.out.printf("{\"library\":\"curator\",\"version\":\"%s\",\"contenders\":%d,"
            + "\"acquisitions\":%d,\"seconds\":%.3f}%n",
        version == null ? "5" : version, contenders, acquisitions.get(), seconds);
  }
}
