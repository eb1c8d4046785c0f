/* EchoServer PORT CONNS: the classic thread-per-connection Java server of
 * the compatibility suite. A java.net.ServerSocket on 127.0.0.1:PORT, and
 * for every accepted connection a new Thread that echoes each byte it
 * reads until the peer closes. Prints its pid once it listens, a line once
 * it has accepted CONNS connections (the suite then sends it SIGQUIT for a thread
 * dump while it serves); once all CONNS have come and gone, what it
 * served, and exits 0. A thread that fails to echo makes the exit status
 * 1. Blocking java.io on plain
 * sockets and one platform thread per connection: what HotSpot servers
 * written before NIO and virtual threads look like. */
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

public class EchoServer {
	static final AtomicInteger live = new AtomicInteger(), peak = new AtomicInteger(),
			failed = new AtomicInteger();

	static void serve(Socket s, CountDownLatch done) {
		try (s) {
			s.setTcpNoDelay(true);
			InputStream in = s.getInputStream();
			OutputStream out = s.getOutputStream();
			byte[] buf = new byte[4096];
			for (int r; (r = in.read(buf)) > 0;)
				out.write(buf, 0, r);
		} catch (java.io.IOException e) {
			// A peer that closes with our echo unread resets the connection.
			if (!e.getMessage().contains("reset")) {
				System.err.println("EchoServer: " + e);
				failed.incrementAndGet();
			}
		} finally {
			live.decrementAndGet();
			done.countDown();
		}
	}

	public static void main(String[] args) throws Exception {
		int port = Integer.parseInt(args[0]), conns = Integer.parseInt(args[1]);
		CountDownLatch done = new CountDownLatch(conns);
		try (ServerSocket ss = new ServerSocket(port, 4096, InetAddress.getLoopbackAddress())) {
			System.out.println("pid " + ProcessHandle.current().pid() + " listening");
			System.out.flush();
			for (int i = 0; i < conns; i++) {
				Socket s = ss.accept();
				peak.accumulateAndGet(live.incrementAndGet(), Math::max);
				new Thread(() -> serve(s, done), "conn-" + i).start();
			}
			System.out.println("accepted " + conns + " connections");
			System.out.flush();
			done.await();
		}
		System.out.println("served " + conns + " connections, " + peak.get()
				+ " at once, " + failed.get() + " failed");
		System.exit(failed.get() == 0 ? 0 : 1);
	}
}
