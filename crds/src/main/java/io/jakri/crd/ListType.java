package io.jakri.crd;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * The {@code x-kubernetes-list-type} of a list field in the CRD schema (server-side apply: {@code
 * set} merges lists of scalars element by element, so two writers each adding a node keep both).
 * fabric8's crd-generator 7.5 has no annotation for it; the build adds the marker to the generated
 * schema (see the crds README, "How the YAML is generated").
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.FIELD)
public @interface ListType {

  /** {@code atomic}, {@code set} or {@code map}. */
  String value();
}
