package io.jakri.controller;

import io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReview;
import io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReviewBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.http.AsyncBody;
import io.fabric8.kubernetes.client.http.BasicBuilder;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.HttpResponse;
import io.fabric8.kubernetes.client.http.Interceptor;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * Every failed response the controller's client got from the real API server, and every RBAC
 * request attribute (verb, resource) it used. A 401/403 is judged with a SubjectAccessReview of the
 * controller's user: refused by RBAC (a rule the manifest lacks) or by admission (e.g. a Pod in a
 * namespace without its {@code default} ServiceAccount), which RBAC allows.
 */
final class Refusals {

  /** Verbs and resources used by any controller of this JVM (printed for the RBAC review). */
  private static final Set<String> USED = java.util.Collections.synchronizedSet(new TreeSet<>());

  /** One failed request. */
  record Failure(String method, String path, int code, Attributes attributes) {
    @Override
    public String toString() {
      return code + " " + method + " " + path;
    }
  }

  /** RBAC request attributes of a request path and method. */
  record Attributes(
      String verb, String group, String resource, String subresource, String namespace) {
    @Override
    public String toString() {
      return verb
          + " "
          + (group.isEmpty() ? "" : group + "/")
          + resource
          + (subresource.isEmpty() ? "" : "/" + subresource);
    }
  }

  private final KubernetesClient admin;
  private final String user;
  private final ConcurrentLinkedQueue<Failure> failures = new ConcurrentLinkedQueue<>();

  Refusals(KubernetesClient admin, String user) {
    this.admin = admin;
    this.user = user;
  }

  /** The interceptor to add to each controller client. */
  Interceptor interceptor() {
    return new Interceptor() {
      @Override
      public void before(BasicBuilder builder, HttpRequest request, RequestTags tags) {
        USED.add(attributes(request).toString());
      }

      @Override
      public void after(
          HttpRequest request,
          HttpResponse<?> response,
          AsyncBody.Consumer<List<ByteBuffer>> consumer) {
        if (response.code() >= 400) {
          failures.add(
              new Failure(
                  request.method(),
                  request.uri().getRawPath(),
                  response.code(),
                  attributes(request)));
        }
      }
    };
  }

  /** Every failed response so far. */
  List<Failure> all() {
    return List.copyOf(failures);
  }

  /** Throws when RBAC refused any request (a 401/403 the controller's rules do not allow). */
  void assertNoneByRbac() {
    List<Failure> byRbac = new ArrayList<>();
    for (Failure f : failures) {
      if ((f.code() == 401 || f.code() == 403) && !allowed(f.attributes())) {
        byRbac.add(f);
      }
    }
    System.out.println("CONTROLLER RBAC request attributes used so far: " + USED);
    if (!byRbac.isEmpty()) {
      throw new AssertionError(
          "requests of the controller refused by RBAC (controller/rbac/controller-rbac.yaml): "
              + byRbac);
    }
  }

  private boolean allowed(Attributes a) {
    SubjectAccessReview review =
        new SubjectAccessReviewBuilder()
            .withNewSpec()
            .withUser(user)
            .withGroups("system:serviceaccounts", "system:authenticated")
            .withNewResourceAttributes()
            .withVerb(a.verb())
            .withGroup(a.group())
            .withResource(a.resource())
            .withSubresource(a.subresource())
            .withNamespace(a.namespace())
            .endResourceAttributes()
            .endSpec()
            .build();
    return admin.authorization().v1().subjectAccessReview().create(review).getStatus().getAllowed();
  }

  /**
   * The request's RBAC attributes from its path: {@code
   * /api/v1/[namespaces/NS/]RESOURCE[/NAME[/SUB]]} or {@code
   * /apis/GROUP/VERSION/[namespaces/NS/]RESOURCE[/NAME[/SUB]]}.
   */
  static Attributes attributes(HttpRequest request) {
    String[] parts = request.uri().getRawPath().replaceFirst("^/", "").split("/");
    int i;
    String group;
    if ("api".equals(parts[0])) {
      group = "";
      i = 2;
    } else {
      group = parts[1];
      i = 3;
    }
    String namespace = "";
    if (parts.length > i + 2 && "namespaces".equals(parts[i])) {
      namespace = parts[i + 1];
      i += 2;
    }
    String resource = parts.length > i ? parts[i] : "";
    boolean named = parts.length > i + 1;
    String subresource = parts.length > i + 2 ? parts[i + 2] : "";
    String query = request.uri().getRawQuery();
    boolean watch = query != null && query.contains("watch=true");
    String verb =
        switch (request.method()) {
          case "GET" -> named ? "get" : watch ? "watch" : "list";
          case "POST" -> "create";
          case "PUT" -> "update";
          case "PATCH" -> "patch";
          case "DELETE" -> named ? "delete" : "deletecollection";
          default -> request.method().toLowerCase(java.util.Locale.ROOT);
        };
    return new Attributes(verb, group, resource, subresource, namespace);
  }
}
