package io.jakri.crd;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * The {@code x-kubernetes-map-type} of a map field in the CRD schema (server-side apply: {@code
 * granular} merges the map key by key, so writers owning different keys do not conflict). fabric8's
 * crd-generator 7.5 has no annotation for it; the build adds the marker to the generated schema
 * (see the crds README, "How the YAML is generated").
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.FIELD)
public @interface MapType {

  /** {@code granular} or {@code atomic}. */
  String value();
}
