package io.jakri.agent;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Assumptions;

/**
 * The Python gRPC stack the tests' peers in another language run on (Debian's python3-grpcio):
 * their code is generated at test time from unchanged .proto files with protoc and
 * grpc_python_plugin. Under {@code CI=true} a missing tool fails the test; elsewhere it is skipped.
 */
public final class PythonGrpc {

  private PythonGrpc() {}

  /** The Python interpreter to run peers with. */
  public static String python() {
    return Files.isExecutable(Path.of("/usr/bin/python3")) ? "/usr/bin/python3" : "python3";
  }

  /**
   * Generates the Python code of {@code protos} (names relative to {@code include}) into {@code
   * out}, and checks that Python can import grpc. {@code peer} names the peer in the failure.
   */
  public static void generate(String peer, Path include, Path out, String... protos)
      throws Exception {
    String problem = null;
    try {
      List<String> cmd = new ArrayList<>();
      cmd.add("protoc");
      cmd.add("-I" + include.toAbsolutePath());
      cmd.add("--python_out=" + out);
      cmd.add("--grpc_python_out=" + out);
      cmd.add("--plugin=protoc-gen-grpc_python=/usr/bin/grpc_python_plugin");
      cmd.addAll(List.of(protos));
      Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
      String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      if (p.waitFor() != 0) {
        problem = "protoc failed: " + output;
      }
      Process check =
          new ProcessBuilder(python(), "-c", "import grpc").redirectErrorStream(true).start();
      String checkOut = new String(check.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      if (check.waitFor() != 0) {
        problem = "python3-grpcio missing: " + checkOut;
      }
    } catch (IOException e) {
      problem = "protoc or python3 missing: " + e.getMessage();
    }
    if (problem != null) {
      if ("true".equals(System.getenv("CI"))) {
        throw new AssertionError(
            "CI=true: the "
                + peer
                + " needs protobuf-compiler, protobuf-compiler-grpc and python3-grpcio: "
                + problem);
      }
      Assumptions.abort(peer + " unavailable: " + problem);
    }
  }
}
