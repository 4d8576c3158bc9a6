package io.jakri.testing.kube;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

@ExtendWith(RealKube.class)
class RealApiServerIT {

  @Test
  void aServiceAccountMayDoOnlyWhatRbacGrantsIt(RealApiServer api) {
    String ns = api.namespace("selftest");
    KubernetesClient sa = api.serviceAccountClient(ns, "reader");
    assertThatThrownBy(() -> sa.configMaps().inNamespace(ns).list())
        .isInstanceOf(KubernetesClientException.class)
        .satisfies(e -> assertThat(((KubernetesClientException) e).getCode()).isEqualTo(403));

    api.apply(
        """
        apiVersion: rbac.authorization.k8s.io/v1
        kind: Role
        metadata: {name: cm-reader, namespace: %1$s}
        rules: [{apiGroups: [""], resources: [configmaps], verbs: [list]}]
        ---
        apiVersion: rbac.authorization.k8s.io/v1
        kind: RoleBinding
        metadata: {name: cm-reader, namespace: %1$s}
        roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: cm-reader}
        subjects: [{kind: ServiceAccount, name: reader, namespace: %1$s}]
        """
            .formatted(ns));

    // kube-root-ca.crt is not published (no controller-manager runs): the list is empty.
    assertThat(sa.configMaps().inNamespace(ns).list().getItems()).isEmpty();
    assertThat(api.admin().serviceAccounts().inNamespace(ns).withName("default").get()).isNotNull();
  }
}
