package io.jakri.handler.modbus;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Scripted Modbus TCP peers on loopback for the transport and discovery tests, each with a thread
 * of its own (test code only): well-behaved, paging, silent, garbage, flooding.
 */
final class FakePeers implements AutoCloseable {

  /** What a peer does with one connection. */
  interface Behaviour {
    void serve(InputStream in, OutputStream out) throws IOException;
  }

  /** One listening peer. */
  static final class Peer implements AutoCloseable {
    final ServerSocket server;
    final AtomicInteger connections = new AtomicInteger();
    private final List<Socket> sockets = new ArrayList<>();

    Peer(Behaviour behaviour) throws IOException {
      server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
      Thread acceptor =
          new Thread(
              () -> {
                while (!server.isClosed()) {
                  try {
                    Socket socket = server.accept();
                    connections.incrementAndGet();
                    synchronized (sockets) {
                      sockets.add(socket);
                    }
                    Thread handler =
                        new Thread(
                            () -> {
                              try (socket) {
                                behaviour.serve(socket.getInputStream(), socket.getOutputStream());
                              } catch (IOException e) {
                                // client went away
                              }
                            });
                    handler.setDaemon(true);
                    handler.start();
                  } catch (IOException e) {
                    return;
                  }
                }
              });
      acceptor.setDaemon(true);
      acceptor.start();
    }

    int port() {
      return server.getLocalPort();
    }

    @Override
    public void close() throws IOException {
      server.close();
      synchronized (sockets) {
        for (Socket s : sockets) {
          s.close();
        }
      }
    }
  }

  private final List<Peer> peers = new ArrayList<>();

  Peer start(Behaviour behaviour) throws IOException {
    Peer peer = new Peer(behaviour);
    peers.add(peer);
    return peer;
  }

  /** Reads one 11-byte request; null at end of stream. */
  static byte[] request(InputStream in) throws IOException {
    byte[] request = in.readNBytes(11);
    return request.length == 11 ? request : null;
  }

  /**
   * Answers every request with the objects, {@code perPage} objects a page (more follows in
   * between, as the specification's stream), the reply echoing transaction and unit.
   */
  static Behaviour identifying(int perPage, String... values) {
    return (in, out) -> {
      byte[] request;
      while ((request = request(in)) != null) {
        int first = Byte.toUnsignedInt(request[10]);
        int code = request[9];
        int last = Math.min(values.length, first + perPage);
        Object[] objects = new Object[(last - first) * 2];
        for (int id = first; id < last; id++) {
          objects[(id - first) * 2] = id;
          objects[(id - first) * 2 + 1] = values[id];
        }
        boolean more = last < values.length;
        byte[] pdu = DeviceIdCodecTest.page(code, more ? 0xFF : 0, more ? last : 0, objects);
        out.write(reply(request, pdu));
        out.flush();
      }
    };
  }

  static byte[] reply(byte[] request, byte[] pdu) {
    int transaction = ((request[0] & 0xFF) << 8) | (request[1] & 0xFF);
    return DeviceIdCodecTest.adu(transaction, request[6] & 0xFF, pdu);
  }

  /** Reads requests and never answers. */
  static final Behaviour SILENT =
      (in, out) -> {
        while (request(in) != null) {
          // say nothing
        }
      };

  /** Answers every request with bytes that are no Modbus. */
  static final Behaviour GARBAGE =
      (in, out) -> {
        while (request(in) != null) {
          out.write("HTTP/1.1 400 Bad Request\r\n\r\n".getBytes());
          out.flush();
        }
      };

  /** Sends bytes without end: well-formed frames for transactions never asked, forever. */
  static final Behaviour FLOOD =
      (in, out) -> {
        byte[] frame = DeviceIdCodecTest.adu(0xBEEF, 1, new byte[] {(byte) 0xAB, 1});
        byte[] chunk = new byte[frame.length * 512];
        for (int i = 0; i < 512; i++) {
          System.arraycopy(frame, 0, chunk, i * frame.length, frame.length);
        }
        while (true) {
          out.write(chunk);
        }
      };

  /** Sends a stream of zero bytes with a huge MBAP length. */
  static final Behaviour OVERSIZED =
      (in, out) -> {
        request(in);
        out.write(new byte[] {0, 1, 0, 0, 0x7F, (byte) 0xFF, 1});
        byte[] zeros = new byte[64 * 1024];
        while (true) {
          out.write(zeros);
        }
      };

  /** Answers exception 1 (illegal function): a Modbus device without 43/14. */
  static final Behaviour NO_IDENTIFICATION =
      (in, out) -> {
        byte[] request;
        while ((request = request(in)) != null) {
          out.write(reply(request, new byte[] {(byte) 0xAB, 1}));
          out.flush();
        }
      };

  @Override
  public void close() throws IOException {
    for (Peer peer : peers) {
      peer.close();
    }
  }
}
